//! The user's functions MPICH keeps in its objects (error handlers,
//! operations, generalized requests): the function, and the language it
//! was written in (an `MPIR_Lang_t`).

use crate::error::HandleError;
use crate::model::Availability;
use crate::target::{Ctx, Rec};
use mpidd_types::TargetAddr;

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

/// The function in the member `path` of `object_type`, a function pointer
/// or a union of them (one per language or kind of object, whose first
/// word is the function); `None` when it is NULL.
pub(crate) fn user_function(
    ctx: &Ctx<'_>,
    r: &Rec,
    object_type: &'static str,
    path: &str,
) -> Availability<Option<TargetAddr>> {
    (|| -> Result<_, HandleError> {
        let f = ctx.m(object_type, path)?;
        let word = mpidd_read::Member {
            size: ctx.word(),
            ..f
        };
        let p = r.ptr(word)?;
        Ok((!p.is_null()).then_some(p))
    })()
    .into()
}
