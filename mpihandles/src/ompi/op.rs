//! Open MPI reduction operations (`ompi_op_t`): a name (`MPI_SUM` for the
//! predefined ones), a type (`op_type`, an `enum ompi_op_type`), flags
//! (predefined, commutative, the language of a user function) and, for a
//! user operation, the function (`o_func`, whose first word is the
//! function whatever the language).

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, Details, OpDetails};
use crate::ompi::constants::{OP_COMMUTE, OP_CXX, OP_FORTRAN, OP_INTRINSIC, OP_JAVA};
use crate::ompi::resolver::{Decoded, Ompi};

pub(crate) fn decode(o: &Ompi<'_>, addr: TargetAddr) -> Result<Decoded, HandleError> {
    let l = &o.l.op;
    let m = &l.m;
    let r = o.ctx.record_sized(addr, l.size, l.name)?;
    let flags = r.uint(m.flags)?;
    let intrinsic = flags & OP_INTRINSIC != 0;
    let language = if intrinsic {
        Availability::not_available("a predefined operation has no user function")
    } else {
        Availability::Value(
            if flags & OP_FORTRAN != 0 {
                "Fortran"
            } else if flags & OP_CXX != 0 {
                "C++"
            } else if flags & OP_JAVA != 0 {
                "Java"
            } else {
                "C"
            }
            .to_string(),
        )
    };
    let user_function = if intrinsic {
        Availability::Value(None)
    } else {
        let p = r.ptr(m.func)?;
        Availability::Value((!p.is_null()).then_some(p))
    };
    let name = r.chars(m.name)?;
    Ok(Decoded {
        details: Details::Op(OpDetails {
            // A user operation's type is the enumeration's count,
            // OMPI_OP_NUM_OF_TYPES.
            op_kind: Availability::Value(if intrinsic {
                m.types.name(r.int(m.op_type)?)
            } else {
                "user".to_string()
            }),
            commutative: Availability::Value(flags & OP_COMMUTE != 0),
            language,
            user_function,
        }),
        predefined: intrinsic,
        name: Some(name),
        f2c: Availability::Value(r.int(m.f2c)?),
        freed_by_application: Availability::not_available(
            "Open MPI keeps no mark of MPI_Op_free: freeing drops a reference",
        ),
        freed: None,
        notes: Vec::new(),
    })
}
