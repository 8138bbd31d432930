//! MPICH info objects (`MPIR_Info`): up to 4.0 the handle's object heads
//! a list chained through `next`, whose other nodes each hold one `key`
//! and `value` (C strings); from 4.1 it holds an array of `size`
//! `struct info_entry` (`key`, `value`) at `entries`.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, HandleKind, InfoDetails, InfoEntry};
use crate::mpich::pools::{locate, spec};
use crate::mpich::resolver::Mpich;
use crate::target::Ctx;

const I: &str = "MPIR_Info";

pub(crate) fn decode(m: &Mpich<'_>, addr: TargetAddr) -> Result<InfoDetails, HandleError> {
    Ok(InfoDetails {
        entries: Availability::Value(entries(&m.ctx, addr)?),
    })
}

/// The pairs of the info list headed by the object at `head`. The walk
/// stops at [`Limits::max_list_len`](mpidd_read::Limits::max_list_len)
/// nodes, and a loop is an error.
pub(crate) fn entries(ctx: &Ctx<'_>, head: TargetAddr) -> Result<Vec<InfoEntry>, HandleError> {
    let Ok(next) = ctx.m(I, "next") else {
        return array_entries(ctx, head);
    };
    let key = ctx.m(I, "key")?;
    let value = ctx.m(I, "value")?;
    let mut out = Vec::new();
    // The head holds no pair: it only starts the list.
    ctx.walk_list(
        head,
        TargetAddr::NULL,
        "info list",
        "MPIR_Info.next",
        |node| {
            let r = ctx.record(node, I)?;
            if node != head {
                out.push(InfoEntry {
                    key: ctx.string(r.ptr(key)?)?,
                    value: ctx.string(r.ptr(value)?)?,
                });
            }
            Ok(r.ptr(next)?)
        },
    )?;
    Ok(out)
}

/// The pairs of the info object with handle `raw`; `MPI_INFO_NULL` has
/// none.
pub(crate) fn entries_of_handle(ctx: &Ctx<'_>, raw: u32) -> Result<Vec<InfoEntry>, HandleError> {
    let Some(spec) = spec(HandleKind::Info) else {
        return Ok(Vec::new());
    };
    match locate(ctx, &spec, raw) {
        Ok(l) => match l.addr {
            Some(addr) => entries(ctx, addr),
            None => Ok(Vec::new()),
        },
        Err(HandleError::Null { .. }) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The pairs of the 4.1-on info object at `addr`: `size` entries of its
/// `entries` array, at most [`Limits::max_table_entries`](mpidd_read::Limits).
fn array_entries(ctx: &Ctx<'_>, addr: TargetAddr) -> Result<Vec<InfoEntry>, HandleError> {
    const E: &str = "struct info_entry";
    let r = ctx.record(addr, I)?;
    let size = r.int(ctx.m(I, "size")?)?;
    let n = ctx.count(size, addr, "MPIR_Info.size")?;
    let array = r.ptr(ctx.m(I, "entries")?)?;
    let (key, value) = (ctx.m(E, "key")?, ctx.m(E, "value")?);
    let stride = ctx.size_of(E)?;
    let mut out = Vec::new();
    for i in 0..n {
        let e = ctx.record(crate::target::at(array, i * stride), E)?;
        out.push(InfoEntry {
            key: ctx.string(e.ptr(key)?)?,
            value: ctx.string(e.ptr(value)?)?,
        });
    }
    Ok(out)
}
