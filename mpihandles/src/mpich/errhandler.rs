//! MPICH error handlers (`MPIR_Errhandler`): `kind` (which objects it is
//! for, an `MPII_Object_kind`), `language` and `errfn`, the user function.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, ErrhandlerDetails};
use crate::mpich::resolver::Mpich;
use crate::mpich::{comm, win};
use crate::target::{Ctx, Rec};

const E: &str = "MPIR_Errhandler";

pub(crate) fn decode(
    m: &Mpich<'_>,
    addr: TargetAddr,
    predefined: bool,
) -> Result<ErrhandlerDetails, HandleError> {
    let ctx = &m.ctx;
    let attached_to = (|| -> Result<_, HandleError> {
        let mut list = comm::referring_to(m, &["errhandler"], addr)?;
        list.extend(win::referring_to(m, "errhandler", addr)?);
        Ok(list)
    })()
    .into();
    if predefined {
        // MPICH fills only the handle of its predefined error handlers.
        return Ok(ErrhandlerDetails {
            object_kind: Availability::not_available(
                "a predefined error handler serves every kind of object",
            ),
            language: Availability::not_available(
                "a predefined error handler has no user function",
            ),
            user_function: Availability::Value(None),
            attached_to,
        });
    }
    let r = ctx.record(addr, E)?;
    let object_kind = (|| -> Result<String, HandleError> {
        let v = r.int(ctx.m(E, "kind")?)?;
        let name = ctx
            .layouts
            .member_enumerators(E, "kind")?
            .into_iter()
            .find(|(_, k)| *k == i128::from(v))
            .map(|(n, _)| n);
        Ok(match name.as_deref() {
            Some("MPIR_COMM") => "communicator".to_string(),
            Some("MPIR_WIN") => "window".to_string(),
            Some("MPIR_FILE") => "file".to_string(),
            Some("MPIR_SESSION") => "session".to_string(),
            Some(other) => other.to_string(),
            None => format!("object kind {v}"),
        })
    })()
    .into();
    Ok(ErrhandlerDetails {
        object_kind,
        language: language(ctx, &r, E, "language"),
        user_function: (|| -> Result<_, HandleError> {
            let f = ctx.m(E, "errfn")?;
            // A union of the per-kind function pointer types: its first
            // word is the function.
            let word = mpidd_read::Member {
                size: ctx.word(),
                ..f
            };
            let p = r.ptr(word)?;
            Ok((!p.is_null()).then_some(p))
        })()
        .into(),
        attached_to,
    })
}

/// The language member `path` of `object_type` (an `MPIR_Lang_t`), by the
/// enumerator's name: `C`, `Fortran`, `Fortran 90`, `C++`.
pub(crate) fn language(
    ctx: &Ctx<'_>,
    r: &Rec,
    object_type: &'static str,
    path: &str,
) -> Availability<String> {
    (|| -> Result<String, HandleError> {
        let v = r.int(ctx.m(object_type, path)?)?;
        let names = ctx.layouts.member_enumerators(object_type, path)?;
        let Some((name, _)) = names.iter().find(|(_, k)| *k == i128::from(v)) else {
            return Err(HandleError::Unsupported(format!(
                "language {v} is not an enumerator of MPIR_Lang_t in this build (it has {})",
                names
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        Ok(match name.trim_start_matches("MPIR_LANG__") {
            "C" => "C".to_string(),
            "FORTRAN" => "Fortran".to_string(),
            "FORTRAN90" => "Fortran 90".to_string(),
            "CXX" => "C++".to_string(),
            other => other.to_string(),
        })
    })()
    .into()
}
