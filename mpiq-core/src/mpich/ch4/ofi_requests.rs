//! The pending requests CH4 handed to its OFI netmod. MPICH posts a
//! receive to libfabric (`fi_trecv` in `MPIDI_OFI_do_irecv`) with its
//! source and tag packed into the match bits, and the provider matches it:
//! the request keeps the receive's buffer, count, datatype and context id
//! (4.3 on; 4.2 only the datatype and context id), never its source or
//! tag. A send's request keeps less. So each is said
//! in the reading's notes with what MPICH keeps, rather than put in its
//! communicator's list, where an unknown source would read as
//! `MPI_ANY_SOURCE` and an unknown tag as `MPI_ANY_TAG`. Reading the
//! provider's own queues is libfabric's part, not MPICH's.

use super::netmod::collective;
use super::{int, uint, MpichCh4};
use crate::decoder::DecodeError;
use crate::model::OperationStatus;
use crate::mpich::common::{CommInfo, TypeSizes};
use crate::target_read::Record;
use mpidd_read::TargetMemory;
use mpidd_types::TargetAddr;

impl MpichCh4 {
    /// The note for a pending request of the pools that CH4 handed to its
    /// OFI netmod; `None` for a receive of a collective's (its context id
    /// is its communicator's plus one), which the queues leave out as
    /// everywhere else in the decoder.
    pub(super) fn ofi_request(
        &self,
        r: &Record<'_>,
        comms: &[CommInfo],
        (status, receive): (OperationStatus, bool),
        (mem, sizes): (&dyn TargetMemory, &mut TypeSizes),
    ) -> Result<Option<String>, DecodeError> {
        let l = &self.layout;
        let comm = TargetAddr(uint(r, l.req_comm)?);
        let mut on = comms.iter().find(|c| comm.0 != 0 && c.addr == comm);
        let ofi = l.ofi.filter(|_| receive);
        if let Some(context) = ofi.and_then(|o| o.context) {
            let context = int(r, context)?;
            if collective(comms, context, |c| c.recvcontext_id) {
                return Ok(None);
            }
            if on.is_none() {
                on = comms.iter().find(|c| c.recvcontext_id == context);
            }
        }
        let place = match (on, comm.0) {
            (Some(c), _) => format!(" on `{}`", c.name),
            (None, 0) => String::new(),
            (None, _) => format!(" on the communicator at {comm}, which is not among those read"),
        };
        let status = match status {
            OperationStatus::Pending => String::new(),
            s => format!(", {s:?}"),
        };
        let Some((buf, count, datatype)) = ofi.and_then(|o| o.content) else {
            let what = if receive { "receive" } else { "send" };
            let held = if receive {
                "its source, tag, buffer and length"
            } else {
                "its destination, tag and length"
            };
            return Ok(Some(format!(
                "a pending {what}{place} handed to the OFI netmod (MPIR_Request at {}{status}): \
                 {held} are with libfabric's provider, of which MPICH keeps no copy",
                r.base
            )));
        };
        let count = int(r, count)?;
        let datatype = int(r, datatype)?;
        let (length, in_elements) = sizes.length(
            mem,
            count,
            datatype,
            l.datatype_size,
            self.globals.datatype_direct,
        );
        let into = match in_elements {
            Some(_) => {
                format!("{count} elements of datatype {datatype:#x}, whose size could not be read")
            }
            None => format!("{length} bytes"),
        };
        Ok(Some(format!(
            "a pending receive{place} posted to the OFI netmod (MPIR_Request at {}{status}): \
             {into} into {:#x}; its source and tag are with libfabric's provider, of which \
             MPICH keeps no copy",
            r.base,
            uint(r, buf)?
        )))
    }
}
