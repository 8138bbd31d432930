//! CH3's three queues: the posted and unexpected receive queues of
//! `MPIR_Request`s, and the `MPIR_Sendq` list of nonblocking sends.

use mpidd_read::Limits;
use mpidd_types::TargetAddr;

use super::layout::RequestState;
use super::{MpichCh3, QueueHead};
use crate::decoder::DecodeError;
use crate::list_walk::{at, walk, ListShape, Span};
use crate::model::PendingOperation;
use crate::mpich::common::{posted_receive, request_status, CommFinder, CommInfo, TypeSizes};
use crate::target_read::{read_pointer, Record};
use mpidd_read::TargetMemory;

impl MpichCh3 {
    /// Appends the requests of one receive queue to `out`, one list per
    /// communicator of `comms` (requests of no known communicator are
    /// left out).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn receive_queue(
        &self,
        mem: &dyn TargetMemory,
        head: QueueHead,
        unexpected: bool,
        comms: &[CommInfo],
        limits: &Limits,
        types: &mut TypeSizes,
        out: &mut [Vec<PendingOperation>],
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let (what, span) = if unexpected {
            ("unexpected receive queue (MPIR_Request)", l.req_unexpected)
        } else {
            ("posted receive queue (MPIR_Request)", l.req_posted)
        };
        let head_var = match head {
            QueueHead::Pointer(ptr) => read_pointer(mem, ptr, "receive queue head pointer")?,
            QueueHead::Variable(var) => var,
        };
        let first = read_pointer(mem, head_var, "receive queue head")?;
        let word = mem.abi().address_bytes();
        let mut comm_of = CommFinder::default();
        walk(
            mem,
            first,
            ListShape {
                next_offset: l.req_next,
                span,
                what,
                end: TargetAddr(0),
            },
            limits,
            |r| {
                let context = r.uint(l.req_match_context, 2)? as i64;
                let Some(ci) = comm_of.find(comms, context, |c| c.recvcontext_id) else {
                    return Ok(());
                };
                let comm = &comms[ci];
                let tag = r.int(l.req_match_tag, 4)?;
                let rank = r.int(l.req_match_rank, 2)?;
                let status = request_status(r.int(l.req_cc, 4)?);
                let op = if unexpected {
                    let bytes_arrived = r.int(l.req_recv_data_sz, word)?;
                    let tmpbuf = r.uint(l.req_tmpbuf, word)?;
                    let state = RequestState(r.uint(l.req_state, 4)?);
                    PendingOperation {
                        // Eager data waits in a library buffer; a rendezvous
                        // request has none until its receive is posted.
                        system_buffer: tmpbuf != 0,
                        buffer: tmpbuf,
                        // From the message kind, not from `tmpbuf`: a
                        // zero-length eager message has no buffer either.
                        protocol: state.protocol(),
                        synchronous: state.unexpected_synchronous(),
                        ..PendingOperation::message(
                            status,
                            (rank, comm.world_of(rank)),
                            tag,
                            bytes_arrived,
                        )
                    }
                } else {
                    let count = r.int(l.req_user_count, word)?;
                    let datatype = r.int(l.req_datatype, 4)?;
                    let (length, extra) = types.length(
                        mem,
                        count,
                        datatype,
                        l.datatype_size,
                        self.globals.datatype_direct,
                    );
                    PendingOperation {
                        buffer: r.uint(l.req_user_buf, word)?,
                        extra_text: extra.into_iter().collect(),
                        desired_count: Some(count),
                        ..posted_receive(status, comm, (rank, tag), length, self.constants)
                    }
                };
                out[ci].push(op);
                Ok(())
            },
        )
    }

    /// Appends the pending sends to `out`, one list per communicator of
    /// `comms`, as [`MpichCh3::receive_queue`] does.
    pub(super) fn send_queue(
        &self,
        mem: &dyn TargetMemory,
        head: TargetAddr,
        comms: &[CommInfo],
        limits: &Limits,
        types: &mut TypeSizes,
        out: &mut [Vec<PendingOperation>],
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let first = read_pointer(mem, head, "MPIR_Sendq_head")?;
        let word = mem.abi().address_bytes();
        let order = mem.abi().byte_order;
        let span = l.req_send;
        let what = "MPIR_Sendq.sreq (MPIR_Request)";
        let len = span.end.saturating_sub(span.start);
        let mut buf = Vec::new();
        let mut comm_of = CommFinder::default();
        walk(
            mem,
            first,
            ListShape {
                next_offset: l.sendq_next,
                span: Span {
                    start: 0,
                    end: l.sendq_size,
                },
                what: "send queue (MPIR_Sendq)",
                end: TargetAddr(0),
            },
            limits,
            |r| {
                let context = r.int(l.sendq_context, 4)?;
                let Some(ci) = comm_of.find(comms, context, |c| c.context_id) else {
                    return Ok(());
                };
                let comm = &comms[ci];
                let rank = r.int(l.sendq_rank, 4)?;
                let tag = r.int(l.sendq_tag, 4)?;
                let sreq = TargetAddr(r.uint(l.sendq_sreq, word)?);
                if buf.is_empty() {
                    limits.check_record_bytes(what, sreq, len)?;
                    buf = vec![0u8; len as usize];
                }
                let q = Record {
                    base: sreq,
                    start: span.start,
                    bytes: mem.view(at(sreq, span.start), &mut buf, what)?,
                    order,
                    what: "MPIR_Request",
                };
                let count = q.int(l.req_user_count, word)?;
                let datatype = q.int(l.req_datatype, 4)?;
                let state = RequestState(q.uint(l.req_state, 4)?);
                let (length, extra) = types.length(
                    mem,
                    count,
                    datatype,
                    l.datatype_size,
                    self.globals.datatype_direct,
                );
                out[ci].push(PendingOperation {
                    buffer: q.uint(l.req_user_buf, word)?,
                    extra_text: std::iter::once("Non-blocking send".to_string())
                        .chain(extra)
                        .collect(),
                    desired_count: Some(count),
                    protocol: state.protocol(),
                    synchronous: state.send_synchronous(),
                    ..PendingOperation::message(
                        request_status(q.int(l.req_cc, 4)?),
                        (rank, comm.world_of(rank)),
                        tag,
                        length,
                    )
                });
                Ok(())
            },
        )
    }
}
