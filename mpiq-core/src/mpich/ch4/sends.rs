//! The sends of `MPIR_Sendq_head` (`MPII_SENDQ_REMEMBER`) in an MPICH
//! built with debugger support: the binding layer's nonblocking ones up to
//! 4.0.2, every send `MPID_Isend` did not complete at once from 4.0.3.

use std::collections::HashSet;

use mpidd_read::Limits;
use mpidd_types::TargetAddr;

use super::layout::SendqLayout;
use super::self_messages::Ch4Path;
use super::{int, uint, MpichCh4};
use crate::decoder::DecodeError;
use crate::list_walk::{walk, ListShape, Span};
use crate::model::PendingOperation;
use crate::mpich::common::{CommFinder, CommInfo, TypeSizes};
use crate::target_read::{read_bytes, read_pointer, Record};
use mpidd_read::TargetMemory;
use mpihandles::Layouts;

impl MpichCh4 {
    /// The sends of `MPIR_Sendq_head`, by communicator.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn send_queue(
        &self,
        mem: &dyn TargetMemory,
        head: TargetAddr,
        q: SendqLayout,
        comms: &[CommInfo],
        limits: &Limits,
        types: &mut TypeSizes,
        seen: &mut HashSet<u64>,
        (ucx_types, out): (&dyn Layouts, &mut [Vec<PendingOperation>]),
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let first = read_pointer(mem, head, "MPIR_Sendq_head")?;
        let mut finder = CommFinder::default();
        walk(
            mem,
            first,
            ListShape {
                next_offset: q.next.offset,
                span: Span {
                    start: 0,
                    end: q.size,
                },
                what: "send queue (MPIR_Sendq)",
                end: TargetAddr(0),
            },
            limits,
            |s| {
                let context = int(s, q.context)?;
                let Some(ci) = finder.find(comms, context, |c| c.context_id) else {
                    return Ok(());
                };
                let comm = &comms[ci];
                let rank = int(s, q.rank)?;
                let tag = int(s, q.tag)?;
                let sreq = TargetAddr(uint(s, q.sreq)?);
                seen.insert(sreq.0);
                let bytes = read_bytes(
                    mem,
                    sreq,
                    l.req_size,
                    "MPIR_Sendq.sreq (MPIR_Request)",
                    limits,
                )?;
                let r = Record {
                    base: sreq,
                    start: 0,
                    bytes: &bytes,
                    order: mem.abi().byte_order,
                    what: "MPIR_Request",
                };
                let mut extra = vec![if q.blocking_too {
                    "Send (MPIR_Sendq_head: blocking or not)".to_string()
                } else {
                    "Non-blocking send".to_string()
                }];
                let local = match l.req_is_local {
                    Some(m) => int(&r, m)? != 0,
                    None => false,
                };
                let path = self.request_path(mem, &r)?;
                let (length, count, buffer) = if let Ch4Path::SelfQueue(comm_addr) = path {
                    // A self message's buffer and length are MPICH's own;
                    // its unexpected twin is listed from the pools.
                    let m = self.self_message(mem, &r, comm_addr, comms, types)?;
                    extra.push("on CH4's self path: waits for this process's own receive".into());
                    extra.extend(m.notes);
                    (m.length, Some(m.count), m.buffer)
                } else if local {
                    let count = int(&r, l.am_count)?;
                    let datatype = int(&r, l.am_datatype)?;
                    let (length, more) = types.length(
                        mem,
                        count,
                        datatype,
                        l.datatype_size,
                        self.globals.datatype_direct,
                    );
                    extra.extend(more);
                    (length, Some(count), uint(&r, l.am_buffer)?)
                } else {
                    match self.ucx_send_buffer(mem, ucx_types, &r, path)? {
                        Some((buffer, length)) => {
                            extra.push("sent through UCX".to_string());
                            (length, None, buffer)
                        }
                        None => {
                            extra.push(
                                "sent through UCX: MPICH keeps neither its buffer nor its length"
                                    .to_string(),
                            );
                            (-1, None, 0)
                        }
                    }
                };
                out[ci].push(PendingOperation {
                    buffer,
                    extra_text: extra,
                    desired_count: count,
                    ..PendingOperation::message(
                        self.status(mem, &r)?,
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

impl MpichCh4 {
    /// The buffer and length UCX's request keeps for a send of the send
    /// queue the netmod took, when UCX's types are known; MPICH keeps
    /// neither.
    fn ucx_send_buffer(
        &self,
        mem: &dyn TargetMemory,
        types: &dyn Layouts,
        r: &Record<'_>,
        path: Ch4Path,
    ) -> Result<Option<(u64, i64)>, DecodeError> {
        let Some(member) = self.layout.ucx_request else {
            return Ok(None);
        };
        let ucp = TargetAddr(uint(r, member)?);
        if path != Ch4Path::Netmod || ucp.0 == 0 {
            return Ok(None);
        }
        match mpihandles::ucx_send(mem, types, ucp) {
            Ok(u) => Ok(Some((u.buffer, u.length as i64))),
            Err(mpihandles::UcxError::Layouts(_)) => Ok(None),
            Err(e) => Err(super::netmod::ucx_failure(e)),
        }
    }
}
