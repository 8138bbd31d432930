//! The nonblocking sends of `MPIR_Sendq_head`, the binding layer's list
//! (`MPII_SENDQ_REMEMBER`) in an MPICH built with debugger support.

use std::collections::HashSet;

use mpidd_read::Limits;
use mpidd_types::TargetAddr;

use super::layout::SendqLayout;
use super::{int, uint, MpichCh4};
use crate::decoder::DecodeError;
use crate::list_walk::{walk, ListShape, Span};
use crate::model::PendingOperation;
use crate::mpich::common::{CommFinder, CommInfo, TypeSizes};
use crate::target_read::{read_bytes, read_pointer, Record};
use mpidd_read::TargetMemory;

impl MpichCh4 {
    /// The nonblocking sends of `MPIR_Sendq_head`, by communicator.
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
        out: &mut [Vec<PendingOperation>],
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
                let mut extra = vec!["Non-blocking send".to_string()];
                let local = match l.req_is_local {
                    Some(m) => int(&r, m)? != 0,
                    None => false,
                };
                let (length, count, buffer) = if local {
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
                    extra.push(
                        "sent through UCX: MPICH keeps neither its buffer nor its length"
                            .to_string(),
                    );
                    (-1, None, 0)
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
