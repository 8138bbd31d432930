//! MPICH reduction operations (`MPIR_Op`): `kind` (an `MPIR_Op_kind`, whose
//! user kinds say whether the function commutes), `language` and
//! `function`. MPICH makes no objects for its predefined operations.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, OpDetails};
use crate::mpich::callbacks::{language, user_function};
use crate::mpich::resolver::Mpich;

const O: &str = "MPIR_Op";

/// `addr` is `None` for a predefined operation.
pub(crate) fn decode(m: &Mpich<'_>, addr: Option<TargetAddr>) -> Result<OpDetails, HandleError> {
    let ctx = &m.ctx;
    let Some(addr) = addr else {
        return Ok(OpDetails {
            op_kind: Availability::not_available(
                "MPICH implements its predefined operations without objects",
            ),
            // The MPI standard makes every predefined operation commutative.
            commutative: Availability::Value(true),
            language: Availability::not_available("a predefined operation has no user function"),
            user_function: Availability::Value(None),
        });
    };
    let r = ctx.record(addr, O)?;
    let kind = (|| -> Result<String, HandleError> {
        let v = r.int(ctx.m(O, "kind")?)?;
        Ok(ctx
            .enumerator(O, "kind", v)?
            .unwrap_or_else(|| v.to_string()))
    })();
    let commutative = match &kind {
        Ok(name) if name.contains("NONCOMMUTE") => Availability::Value(false),
        Ok(name) if name.contains("USER") => Availability::Value(true),
        Ok(name) => Availability::not_available(format!(
            "{name} is not a kind of user operation this decoder knows"
        )),
        Err(e) => Availability::not_available(e.to_string()),
    };
    Ok(OpDetails {
        op_kind: kind.into(),
        commutative,
        language: language(ctx, &r, O, "language"),
        user_function: user_function(ctx, &r, O, "function"),
    })
}
