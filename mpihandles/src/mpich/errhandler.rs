//! MPICH error handlers (`MPIR_Errhandler`): `kind` (which objects it is
//! for, an `MPII_Object_kind`), `language` and `errfn`, the user function.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, ErrhandlerDetails, HandleKind};
use crate::mpich::callbacks::{language, user_function};
use crate::mpich::resolver::Mpich;

const E: &str = "MPIR_Errhandler";

pub(crate) fn decode(
    m: &Mpich<'_>,
    addr: TargetAddr,
    predefined: bool,
) -> Result<ErrhandlerDetails, HandleError> {
    let ctx = &m.ctx;
    let attached_to = (|| -> Result<_, HandleError> {
        let mut list = m.referring(HandleKind::Comm, &["errhandler"], addr)?;
        list.extend(m.referring(HandleKind::Win, &["errhandler"], addr)?);
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
        Ok(match ctx.enumerator(E, "kind", v)?.as_deref() {
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
        // A union of the per-kind function pointer types.
        user_function: user_function(ctx, &r, E, "errfn"),
        attached_to,
    })
}
