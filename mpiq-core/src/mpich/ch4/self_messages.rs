//! Which of CH4's paths holds a pending point-to-point request, and the
//! messages of its self path, read from MPICH's own fields.
//!
//! MPICH 4.0.2 sends every message on a communicator of one rank
//! (`MPI_COMM_SELF`, or `MPI_COMM_WORLD` of a 1-rank job) through CH4's
//! self path (`src/mpid/ch4/src/ch4_self.c`), never through the netmod:
//! an `MPI_Isend` with no receive waiting, or an `MPI_Irecv` with no
//! message, is queued on `ch4_self.c`'s file-local `self_send_queue` or
//! `self_recv_queue` with its envelope in `dev.ch4.self` (buffer, count,
//! datatype, tag, context id). That member shares its union with the
//! netmod's `dev.ch4.netmod.ucx.ucp_request`, so a self request read as a
//! UCX one gives a user buffer for UCX's request.
//!
//! The request itself tells the paths apart the way MPICH does: a self
//! request keeps its communicator in `MPIR_Request.comm` (and a reference
//! on it), and `MPID_Cancel_send` / `MPID_Cancel_recv` (`ch4_send.h`,
//! `ch4_recv.h`) take the self path for a request whose `comm` is set and
//! is a self communicator (`MPIDI_is_self_comm`, `ch4_self.h`:
//! `remote_size == 1` and an intracommunicator). The UCX netmod makes its
//! requests with `MPIR_Request_create_from_pool`, which leaves `comm`
//! NULL (`MPIDI_UCX_send`, `MPIDI_UCX_recv`). A request with another
//! communicator is neither's: its kind cannot be told, and it is listed by
//! address only.

use mpidd_types::TargetAddr;

use super::{int, uint, MpichCh4};
use crate::decoder::DecodeError;
use crate::list_walk::at;
use crate::model::{OperationStatus, PendingOperation, Protocol};
use crate::mpich::common::{posted_receive, CommInfo, TypeSizes};
use crate::target_read::{read_int, Record};
use mpidd_read::TargetMemory;
use mpihandles::MpichConstants;

/// Where CH4 keeps a pending point-to-point request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ch4Path {
    /// Handed to the netmod (UCX): `comm` is NULL (4.0), or set by a
    /// netmod that keeps it (4.1 on) on a communicator of more than one rank.
    Netmod,
    /// CH4's self path: `comm`, at this address, is a self communicator.
    SelfQueue(TargetAddr),
    /// `comm` is set, at this address, and is not a self communicator:
    /// not a request MPICH 4.0.2's ch4:ucx makes for point-to-point.
    Unknown(TargetAddr),
}

/// A message of CH4's self path, as its request holds it.
pub(super) struct SelfMessage {
    /// The communicator's index, when it is among those read.
    pub(super) comm: Option<usize>,
    pub(super) buffer: u64,
    pub(super) count: i64,
    pub(super) tag: i64,
    /// The context id it matches on (its communicator's `context_id`).
    pub(super) context: i64,
    pub(super) length: i64,
    pub(super) notes: Vec<String>,
}

impl MpichCh4 {
    /// The path of the pending point-to-point request `r`.
    pub(super) fn request_path(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
    ) -> Result<Ch4Path, DecodeError> {
        let l = &self.layout;
        let comm = TargetAddr(uint(r, l.req_comm)?);
        if comm.0 == 0 {
            return Ok(Ch4Path::Netmod);
        }
        let kind = read_int(
            mem,
            at(comm, l.comm_kind.offset),
            l.comm_kind.size.clamp(1, 8) as usize,
            "MPIR_Request.comm->comm_kind",
        )?;
        let remote_size = read_int(
            mem,
            at(comm, l.comm_remote_size.offset),
            l.comm_remote_size.size.clamp(1, 8) as usize,
            "MPIR_Request.comm->remote_size",
        )?;
        // 3.4 has no self path (`self_msg` is `None`).
        Ok(
            if remote_size == 1 && i128::from(kind) == l.intracomm && l.self_msg.is_some() {
                Ch4Path::SelfQueue(comm)
            } else if l.netmod_keeps_comm {
                Ch4Path::Netmod
            } else {
                Ch4Path::Unknown(comm)
            },
        )
    }

    /// The self message of request `r`, whose communicator is at `comm`.
    pub(super) fn self_message(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        comm: TargetAddr,
        comms: &[CommInfo],
        types: &mut TypeSizes,
    ) -> Result<SelfMessage, DecodeError> {
        let Some(s) = self.layout.self_msg else {
            // `request_path` gives a self request only with the layout.
            return Err(DecodeError::Layouts(vec![mpidd_read::LayoutError {
                type_name: "MPIR_Request".to_string(),
                member: Some("dev.ch4.self".to_string()),
                reason: "this MPICH has no self path".to_string(),
            }]));
        };
        let context = int(r, s.context)?;
        // The request holds a reference on its communicator, which is then
        // among the live ones; the context id, which the self path matches
        // on, finds it otherwise.
        let ci = comms
            .iter()
            .position(|c| c.addr == comm)
            .or_else(|| comms.iter().position(|c| c.context_id == context));
        let count = int(r, s.count)?;
        let datatype = int(r, s.datatype)?;
        let (length, more) = types.length(
            mem,
            count,
            datatype,
            self.layout.datatype_size,
            self.globals.datatype_direct,
        );
        Ok(SelfMessage {
            comm: ci,
            buffer: uint(r, s.buf)?,
            count,
            tag: int(r, s.tag)?,
            context,
            length,
            notes: more.into_iter().collect(),
        })
    }
}

impl SelfMessage {
    /// A receive waiting in the self queue. CH4 keeps no source for it
    /// (`MPIDI_Self_irecv` ignores it): the one rank there is, 0, is the
    /// only one it can match.
    pub(super) fn receive(
        &self,
        status: OperationStatus,
        comm: &CommInfo,
        wild: MpichConstants,
    ) -> PendingOperation {
        // The interface carries five lines of 63 characters each.
        let mut extra = vec![
            "on CH4's self path (a communicator of one rank)".to_string(),
            "the source is rank 0, which CH4 does not record".to_string(),
        ];
        extra.extend(self.notes.iter().cloned());
        PendingOperation {
            buffer: self.buffer,
            desired_count: Some(self.count),
            extra_text: extra,
            ..posted_receive(status, comm, (0, self.tag), self.length, wild)
        }
    }

    /// A send waiting in the self queue for this process's own receive.
    pub(super) fn send(&self, status: OperationStatus, comm: &CommInfo) -> PendingOperation {
        let mut extra = vec![
            "Non-blocking send".to_string(),
            "on CH4's self path: waits for this process's own receive".to_string(),
        ];
        extra.extend(self.notes.iter().cloned());
        PendingOperation {
            buffer: self.buffer,
            desired_count: Some(self.count),
            extra_text: extra,
            ..PendingOperation::message(status, (0, comm.world_of(0)), self.tag, self.length)
        }
    }

    /// The same send as the message its receiver (this process) has not
    /// received: CH4 copies nothing until a receive matches, so the data
    /// is still in the sender's buffer.
    pub(super) fn unexpected(
        &self,
        status: OperationStatus,
        comm: &CommInfo,
        request: TargetAddr,
    ) -> PendingOperation {
        let mut extra = vec![
            "sent by this process to itself on CH4's self path".to_string(),
            format!("MPIR_Request at {request}"),
            "its data is still in the sender's buffer".to_string(),
        ];
        extra.extend(self.notes.iter().cloned());
        PendingOperation {
            buffer: self.buffer,
            extra_text: extra,
            protocol: Some(Protocol::SelfSend),
            ..PendingOperation::message(status, (0, comm.world_of(0)), self.tag, self.length)
        }
    }
}
