//! Open MPI info objects (`ompi_info_t`): an `opal_info_t`, the list of
//! key=value pairs in the order they were set, and `i_freed`, which
//! `MPI_Info_free` sets before it drops its reference.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, Details, InfoDetails};
use crate::ompi::opal::info_entries;
use crate::ompi::resolver::{Decoded, Ompi};
use crate::target::at;

pub(crate) fn decode(o: &Ompi<'_>, addr: TargetAddr) -> Result<Decoded, HandleError> {
    let l = &o.l.info;
    let m = &l.m;
    let r = o.ctx.record_sized(addr, l.size, l.name)?;
    Ok(Decoded {
        details: Details::Info(InfoDetails {
            entries: info_entries(&o.ctx, &o.l, at(addr, m.opal.offset)).into(),
        }),
        predefined: false,
        name: None,
        f2c: Availability::Value(r.int(m.f2c)?),
        freed_by_application: Availability::Value(r.uint(m.freed)? != 0),
        freed: None,
        notes: Vec::new(),
    })
}
