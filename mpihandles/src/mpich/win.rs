//! MPICH windows (`MPIR_Win`): `base`, `size`, `disp_unit`, `comm_ptr` (a
//! duplicate of the communicator the window was created over), `name`,
//! `create_flavor`, `model`, `errhandler`; with the CH3 device, the hints
//! it took from the info (`info_args`) and the state of its epochs
//! (`states`).

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, HandleKind, InfoEntry, WinDetails};
use crate::mpich::resolver::Mpich;
use crate::target::Rec;

const W: &str = "MPIR_Win";

pub(crate) fn decode(m: &Mpich<'_>, addr: TargetAddr) -> Result<WinDetails, HandleError> {
    let ctx = &m.ctx;
    let r = ctx.record(addr, W)?;
    let int = |path: &str| -> Availability<i64> {
        ctx.m(W, path)
            .map_err(HandleError::from)
            .and_then(|f| Ok(r.int(f)?))
            .into()
    };
    let flavor = (|| -> Result<String, HandleError> {
        let v = r.int(ctx.m(W, "create_flavor")?)?;
        // `create_flavor` is a plain int holding an `MPIR_Win_flavor`.
        Ok(ctx
            .layouts
            .enum_name("MPIR_Win_flavor", i128::from(v))?
            .unwrap_or_else(|| v.to_string()))
    })()
    .into();
    Ok(WinDetails {
        name: ctx
            .m(W, "name")
            .map_err(HandleError::from)
            .and_then(|f| Ok(r.chars(f)?))
            .into(),
        base: ctx
            .m(W, "base")
            .map_err(HandleError::from)
            .and_then(|f| Ok(r.ptr(f)?))
            .into(),
        size: int("size"),
        disp_unit: int("disp_unit").map(|v| v as i32),
        communicator: m.reference_in(&r, W, "comm_ptr", HandleKind::Comm),
        flavor,
        model: int("model").map(|v| v as i32),
        errhandler: m.reference_in(&r, W, "errhandler", HandleKind::Errhandler),
        info: Availability::not_available(
            "MPICH keeps no copy of the info a window was created with, only the hints it \
             understood (see hints)",
        ),
        hints: int_members(m, &r, "info_args").into(),
        synchronization: (|| -> Result<Vec<InfoEntry>, HandleError> {
            let mut out = Vec::new();
            for (name, f) in ctx.layouts.member_fields(W, "states")? {
                let v = r.int(f)?;
                let state = ctx
                    .enumerator(W, &format!("states.{name}"), v)
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| v.to_string());
                out.push(InfoEntry {
                    key: name,
                    value: state,
                });
            }
            Ok(out)
        })()
        .into(),
    })
}

/// Every named member of the struct member `path`, as name = number.
fn int_members(m: &Mpich<'_>, r: &Rec, path: &str) -> Result<Vec<InfoEntry>, HandleError> {
    m.ctx
        .layouts
        .member_fields(W, path)?
        .into_iter()
        .map(|(name, f)| {
            Ok(InfoEntry {
                key: name,
                value: r.int(f)?.to_string(),
            })
        })
        .collect()
}
