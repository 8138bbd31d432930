//! `MPI_Status` in MPICH: the public `MPI_SOURCE`, `MPI_TAG` and
//! `MPI_ERROR`, and two private ints, `count_lo` and
//! `count_hi_and_cancelled`, that hold the byte count (low 32 bits, then
//! the high bits shifted left by one) and the cancelled flag (bit 0 of the
//! second), as MPICH's `MPIR_STATUS_SET_COUNT` and
//! `MPIR_STATUS_SET_CANCEL_BIT` store them. A Fortran status is the same
//! five integers.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, HandleKind, StatusView};
use crate::mpich::handle_bits::int_handle;
use crate::mpich::pools::{locate, spec};
use crate::mpich::resolver::Mpich;
use crate::target::at;

const S: &str = "MPI_Status";

pub(crate) fn read(
    m: &Mpich<'_>,
    addr: TargetAddr,
    datatype: Option<i64>,
) -> Result<StatusView, HandleError> {
    let ctx = &m.ctx;
    let r = ctx.record(addr, S)?;
    let count = (|| -> Result<(i64, bool), HandleError> {
        let lo = r.uint(ctx.m(S, "count_lo")?)? & 0xffff_ffff;
        let hi = r.uint(ctx.m(S, "count_hi_and_cancelled")?)? & 0xffff_ffff;
        Ok((((hi >> 1) << 32 | lo) as i64, hi & 1 == 1))
    })();
    let (count_bytes, cancelled) = match count {
        Ok((c, x)) => (Availability::Value(c), Availability::Value(x)),
        Err(e) => (
            Availability::not_available(e.to_string()),
            Availability::not_available(e.to_string()),
        ),
    };
    let elements = match (datatype, count_bytes.value()) {
        (None, _) => Availability::not_available(
            "a status does not say its datatype: give one to count elements",
        ),
        (Some(_), None) => Availability::not_available("the byte count is not available"),
        (Some(dt), Some(&bytes)) => elements(m, dt, bytes).into(),
    };
    Ok(StatusView {
        address: Some(addr),
        source: r.int(ctx.m(S, "MPI_SOURCE")?)? as i32,
        tag: r.int(ctx.m(S, "MPI_TAG")?)? as i32,
        error: r.int(ctx.m(S, "MPI_ERROR")?)? as i32,
        count_bytes,
        cancelled,
        elements,
    })
}

/// Whole elements of the datatype in `bytes`, as `MPI_Get_count` counts
/// them.
fn elements(m: &Mpich<'_>, datatype: i64, bytes: i64) -> Result<i64, HandleError> {
    let ctx = &m.ctx;
    let raw = int_handle(HandleKind::Datatype, datatype)?;
    let spec = spec(HandleKind::Datatype)
        .ok_or_else(|| HandleError::Unsupported("no datatype pool".to_string()))?;
    let l = locate(ctx, &spec, raw)?;
    let addr = l.addr.ok_or_else(|| {
        HandleError::Unsupported(format!("datatype {raw:#x} has no object to give its size"))
    })?;
    let f = ctx.m("MPIR_Datatype", "size")?;
    let size = ctx.int(at(addr, f.offset), f.size, "MPIR_Datatype.size")?;
    if size <= 0 || bytes % size != 0 {
        return Err(HandleError::Unsupported(format!(
            "{bytes} bytes are not a whole number of {size}-byte elements (MPI_UNDEFINED)"
        )));
    }
    Ok(bytes / size)
}
