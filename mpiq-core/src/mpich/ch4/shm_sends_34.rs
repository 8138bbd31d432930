//! MPICH 3.4's pending sends on the shared-memory path, from what its
//! MPIDIG keeps of them (`MPIDIG_isend_impl`, `ch4/generic/am/mpidig_am_send.h`).
//!
//! 3.4 leaves a request's `comm` NULL and, without debugger support,
//! keeps the envelope of a rendezvous send only (over the shared-memory
//! eager limit): its buffer, count, datatype, own rank and context id in
//! its MPIDIG extension's `sreq`, its destination in `dev.ch4.am.rank`.
//! An eager send is sent at once, or held in POSIX's postponed queue with
//! its header (`dev.ch4.am.shm_am.posix.req_hdr` set). An eager
//! synchronous send sent at once stays pending until its acknowledgement
//! with nothing of its own kept: its extension then holds whatever an
//! earlier request left there. So only a send that cannot be one of
//! those is put in its communicator's list: a synchronous rendezvous send,
//! whose completion counter holds two (the acknowledgement MPIDIG waits
//! for, `MPIR_cc_incr`, and the data the receiver has not asked for yet).
//! Any other is said in the notes with what its record would mean.

use mpidd_types::TargetAddr;

use super::layout::ShmSend34Layout;
use super::netmod::collective;
use super::{int, uint, MpichCh4};
use crate::decoder::DecodeError;
use crate::list_walk::at;
use crate::model::{OperationStatus, PendingOperation};
use crate::mpich::common::{CommInfo, TypeSizes};
use crate::target_read::{read_int, Record};
use mpidd_read::TargetMemory;

/// Where a pending 3.4 send on the shared-memory path goes.
pub(super) enum ShmSend34 {
    /// In its communicator's list (by index).
    Listed(usize, PendingOperation),
    /// In the reading's notes.
    Note(String),
    /// A collective's, left out as everywhere in the decoder.
    Collective,
}

impl MpichCh4 {
    /// A pending send of `r` on 3.4's shared-memory path; `None` when `r`
    /// is not one (another release, or not local).
    pub(super) fn shm_send_34(
        &self,
        r: &Record<'_>,
        comms: &[CommInfo],
        status: OperationStatus,
        (mem, sizes): (&dyn TargetMemory, &mut TypeSizes),
    ) -> Result<Option<ShmSend34>, DecodeError> {
        let l = &self.layout;
        let (Some(s), Some(local)) = (l.shm_send_34, l.req_is_local) else {
            return Ok(None);
        };
        if int(r, local)? == 0 {
            return Ok(None);
        }
        let at_request = format!(
            "a pending send on the shared-memory path (MPIR_Request at {})",
            r.base
        );
        if uint(r, s.posix_req_hdr)? != 0 {
            return Ok(Some(ShmSend34::Note(format!(
                "{at_request} that POSIX holds in its postponed queue: MPICH 3.4 keeps its \
                 envelope only in the header queued there, which is not read"
            ))));
        }
        let ext = TargetAddr(uint(r, l.am_req)?);
        if ext.0 == 0 {
            return Ok(Some(ShmSend34::Note(format!(
                "{at_request}: its MPIDIG extension (dev.ch4.am.req) is NULL"
            ))));
        }
        let record = Rendezvous::read(mem, ext, s)?;
        if collective(comms, record.context, |c| c.context_id) {
            return Ok(Some(ShmSend34::Collective));
        }
        let dest = int(r, s.dest)?;
        let comm = comms
            .iter()
            .position(|c| c.context_id == record.context && c.rank == record.own_rank);
        let Some(ci) = comm.filter(|&ci| (0..comms[ci].size).contains(&dest)) else {
            return Ok(Some(ShmSend34::Note(format!(
                "{at_request}: MPICH 3.4 keeps no envelope of an eager send, and its MPIDIG \
                 extension does not read as a rendezvous send's (context id {} with own rank \
                 {}, which no communicator read has, or destination {dest} outside it)",
                record.context, record.own_rank
            ))));
        };
        let comm = &comms[ci];
        let (length, more) = sizes.length(
            mem,
            record.count,
            record.datatype,
            l.datatype_size,
            self.globals.datatype_direct,
        );
        if self.completion_count(mem, r)? < 2 {
            let bytes = match more {
                Some(_) => format!(
                    "{} elements of datatype {:#x}",
                    record.count, record.datatype
                ),
                None => format!("{length} bytes"),
            };
            return Ok(Some(ShmSend34::Note(format!(
                "{at_request} on `{}`: as a rendezvous send it would be {bytes} from {:#x} to \
                 rank {dest} (world rank {}), but MPICH 3.4 keeps nothing of a synchronous \
                 eager send waiting for its acknowledgement, whose MPIDIG extension then holds \
                 an earlier request's, and the two cannot be told apart",
                comm.name,
                record.buffer,
                comm.world_of(dest)
            ))));
        }
        let mut op = PendingOperation::message(status, (dest, comm.world_of(dest)), -1, length);
        op.buffer = record.buffer;
        op.desired_count = Some(record.count);
        op.synchronous = Some(true);
        op.extra_text.push(
            "a synchronous rendezvous send on the shared-memory path: MPICH keeps its tag only \
             in the header it sent"
                .into(),
        );
        op.extra_text.extend(more);
        Ok(Some(ShmSend34::Listed(ci, op)))
    }

    /// The request's completion counter (`*cc_ptr`).
    fn completion_count(&self, mem: &dyn TargetMemory, r: &Record<'_>) -> Result<i64, DecodeError> {
        let l = &self.layout;
        let ptr = TargetAddr(uint(r, l.req_cc_ptr)?);
        Ok(if ptr == at(r.base, l.req_cc.offset) || ptr.0 == 0 {
            int(r, l.req_cc)?
        } else {
            read_int(mem, ptr, 4, "*MPIR_Request.cc_ptr")?
        })
    }
}

/// `MPIDIG_req_ext_t.sreq`, as a rendezvous send leaves it.
struct Rendezvous {
    buffer: u64,
    count: i64,
    datatype: i64,
    own_rank: i64,
    context: i64,
}

impl Rendezvous {
    fn read(
        mem: &dyn TargetMemory,
        ext: TargetAddr,
        s: ShmSend34Layout,
    ) -> Result<Rendezvous, DecodeError> {
        let field = |m: mpihandles::Member, what: &'static str| {
            read_int(mem, at(ext, m.offset), m.size.clamp(1, 8) as usize, what)
        };
        Ok(Rendezvous {
            buffer: field(s.buf, "MPIDIG_req_ext_t.sreq.src_buf")? as u64,
            count: field(s.count, "MPIDIG_req_ext_t.sreq.count")?,
            datatype: field(s.datatype, "MPIDIG_req_ext_t.sreq.datatype")?,
            own_rank: field(s.own_rank, "MPIDIG_req_ext_t.sreq.rank")?,
            // An unsigned 16-bit id (`MPIR_Context_id_t`).
            context: field(s.context, "MPIDIG_req_ext_t.sreq.context_id")?
                & (u64::MAX >> (64 - 8 * s.context.size.clamp(1, 8))) as i64,
        })
    }
}
