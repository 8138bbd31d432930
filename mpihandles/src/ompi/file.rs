//! Open MPI files (`ompi_file_t`): the communicator, file name and access
//! mode given to `MPI_File_open`, its info (`super.s_info`, the hints
//! given), its error handler, and the I/O component's own data
//! (`f_io_selected_data`), which for OMPIO, Debian's default, is a
//! `mca_common_ompio_data_t` holding the atomic mode.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{AccessMode, Availability, Details, FileDetails, HandleKind};
use crate::ompi::opal::subscriber_info;
use crate::ompi::resolver::{Decoded, Ompi};
use crate::target::at;

pub(crate) fn decode(o: &Ompi<'_>, addr: TargetAddr) -> Result<Decoded, HandleError> {
    let ctx = &o.ctx;
    let l = &o.l.file;
    let m = &l.m;
    let r = ctx.record_sized(addr, l.size, l.name)?;
    let filename = r.ptr(m.filename)?;
    let component = r.chars(m.component)?;
    let atomic = match (&o.l.ompio, component.as_str()) {
        (Ok(ompio), "ompio") => (|| -> Result<bool, HandleError> {
            let data = r.ptr(m.selected_data)?;
            if data.is_null() {
                return Err(HandleError::Inconsistent {
                    addr,
                    reason: "OMPIO keeps no data for the file".to_string(),
                });
            }
            let f = ompio.atomicity;
            Ok(ctx.int(at(data, f.offset), f.size, "ompio_file_t.f_atomicity")? != 0)
        })()
        .into(),
        (Err(e), "ompio") => Availability::not_available(format!(
            "OMPIO's layout is not known ({e}): mca_io_ompio.so's debug info, or a layout \
             profile that holds it, is needed"
        )),
        (_, other) => Availability::not_available(format!(
            "the file is served by the {other:?} I/O component; only OMPIO's data is read"
        )),
    };
    Ok(Decoded {
        details: Details::File(FileDetails {
            filename: if filename.is_null() {
                Availability::not_available("the file keeps no name")
            } else {
                ctx.string(filename).map_err(HandleError::from).into()
            },
            communicator: Availability::Value(o.reference_opt(HandleKind::Comm, r.ptr(m.comm)?)),
            access_mode: Availability::Value(AccessMode::from_bits(r.int(m.amode)? as i32)),
            info: subscriber_info(ctx, &o.l, &r, m.info),
            errhandler: Availability::Value(
                o.reference_opt(HandleKind::Errhandler, r.ptr(m.errhandler)?),
            ),
            atomic,
            pending_operations: Availability::not_available(
                "Open MPI keeps no count of a file's nonblocking operations",
            ),
        }),
        predefined: false,
        name: None,
        f2c: Availability::Value(r.int(m.f2c)?),
        freed_by_application: Availability::not_available(
            "MPI_File_close frees the file at once (it is collective): a live file was not closed",
        ),
        freed: None,
        notes: vec![format!("I/O component: {component}")],
    })
}
