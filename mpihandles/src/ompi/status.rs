//! Open MPI's `MPI_Status` (`ompi_status_public_t`): the public
//! `MPI_SOURCE`, `MPI_TAG` and `MPI_ERROR`, and the private `_ucount`
//! (the byte count) and `_cancelled`.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, HandleKind, StatusView};
use crate::ompi::resolver::Ompi;
use crate::target::at;

/// The status at `addr` (user memory, or a request's), with the element
/// count of `datatype` (a pointer) when given.
pub(crate) fn read(
    o: &Ompi<'_>,
    addr: TargetAddr,
    datatype: Option<i64>,
) -> Result<StatusView, HandleError> {
    let l = &o.l.status;
    let m = &l.m;
    let r = o.ctx.record_sized(addr, l.size, l.name)?;
    let bytes = r.uint(m.ucount)?;
    let count_bytes = i64::try_from(bytes)
        .map(Availability::Value)
        .unwrap_or_else(|_| {
            Availability::not_available(format!("{bytes} bytes do not fit 63 bits"))
        });
    let elements = match (datatype, count_bytes.value()) {
        (None, _) => Availability::not_available(
            "a status does not say its datatype: give one to count elements",
        ),
        (Some(_), None) => Availability::not_available("the byte count is not available"),
        (Some(dt), Some(&bytes)) => elements(o, dt, bytes).into(),
    };
    Ok(StatusView {
        address: Some(addr),
        source: r.int(m.source)? as i32,
        tag: r.int(m.tag)? as i32,
        error: r.int(m.error)? as i32,
        count_bytes,
        cancelled: Availability::Value(r.int(m.cancelled)? != 0),
        elements,
    })
}

/// Whole elements of the datatype `datatype` in `bytes`, as
/// `MPI_Get_count` counts them.
fn elements(o: &Ompi<'_>, datatype: i64, bytes: i64) -> Result<i64, HandleError> {
    let addr = TargetAddr(u64::try_from(datatype).map_err(|_| HandleError::BadValue {
        kind: HandleKind::Datatype,
        value: datatype,
        reason: "Open MPI's handles are pointers, never negative".to_string(),
    })?);
    o.check_class(HandleKind::Datatype, addr)?;
    let f = o.l.datatype.m.size;
    let size = o
        .ctx
        .int(at(addr, f.offset), f.size, "ompi_datatype_t.super.size")?;
    if size <= 0 || bytes % size != 0 {
        return Err(HandleError::Unsupported(format!(
            "{bytes} bytes are not a whole number of {size}-byte elements (MPI_UNDEFINED)"
        )));
    }
    Ok(bytes / size)
}
