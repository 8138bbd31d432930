//! The messages that arrived before a receive matched them: a peer's
//! `unexpected_frags`, and those that arrived out of order
//! (`frags_cant_match`, a ring of rings), each told by its first
//! fragment's header.

use mpidd_read::Limits;
use mpidd_types::TargetAddr;

use super::receives::QueueOps;
use super::OmpiOb1;
use crate::decoder::DecodeError;
use crate::list_walk::{at, walk, ListShape};
use crate::model::{OperationStatus, PendingOperation, Protocol};
use crate::ompi::communicators::CommInfo;
use crate::target_read::{read_bytes, Record};
use mpidd_read::TargetMemory;

/// ob1's header types (`pml_ob1_hdr.h`, `MCA_BTL_TAG_PML` 0x40 + n): the
/// first fragment of an eager message, of a rendezvous, and of a
/// rendezvous whose data the receiver fetches by RDMA get.
const HDR_TYPE_MATCH: u64 = 0x41;
const HDR_TYPE_RNDV: u64 = 0x42;
const HDR_TYPE_RGET: u64 = 0x43;
/// `OMPI_PML_OB1_MATCH_HDR_LEN` without heterogeneous support: the bytes
/// of a match header on the wire (its struct is padded to more).
const MATCH_HDR_LEN: u64 = 14;

impl OmpiOb1 {
    /// A fragment that arrived before a receive matched it.
    pub(super) fn fragment(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        comm: &CommInfo,
        limits: &Limits,
        out_of_order: bool,
    ) -> Result<PendingOperation, DecodeError> {
        let l = &self.layout;
        let f = &l.frag;
        let hdr_type = f.hdr_type.uint(r)?;
        let src = f.src.int(r)?;
        let tag = f.tag.int(r)?;
        let segments = f.num_segments.uint(r)?;
        if segments > f.segments_len {
            return Err(DecodeError::Corrupt {
                what: "mca_pml_ob1_recv_frag_t",
                addr: r.base,
                reason: format!(
                    "num_segments {segments} is more than the {} segments it has room for",
                    f.segments_len
                ),
            });
        }
        // What came with the envelope: the segments' bytes, headers
        // included.
        let mut carried: u64 = 0;
        let mut first_segment = 0u64;
        for i in 0..segments {
            let base = f.segments.saturating_add(i.saturating_mul(l.seg_size));
            let (addr, len) = if i == 0 {
                (
                    r.uint(base.saturating_add(l.seg_addr.offset), l.seg_addr.size)?,
                    r.uint(base.saturating_add(l.seg_len.offset), l.seg_len.size)?,
                )
            } else {
                let seg = read_bytes(
                    mem,
                    at(r.base, base),
                    l.seg_size,
                    "mca_pml_ob1_recv_frag_t.segments",
                    limits,
                )?;
                let s = Record {
                    base: at(r.base, base),
                    start: 0,
                    bytes: &seg,
                    order: mem.abi().byte_order,
                    what: "mca_btl_base_segment_t",
                };
                (l.seg_addr.uint(&s)?, l.seg_len.uint(&s)?)
            };
            if i == 0 {
                first_segment = addr;
            }
            carried = carried.saturating_add(len);
        }
        let (protocol, length, synchronous, header, kind) = match hdr_type {
            HDR_TYPE_MATCH => (
                Some(Protocol::Eager),
                carried.saturating_sub(MATCH_HDR_LEN),
                Some(false),
                MATCH_HDR_LEN,
                "eager",
            ),
            HDR_TYPE_RNDV => {
                let length = f.msg_length.uint(r)?;
                let data = carried.saturating_sub(l.rndv_hdr_size);
                // ob1 sends a message that fits the eager limit as a
                // rendezvous only when it is synchronous
                // (mca_pml_ob1_send_request_start_btl), and then whole.
                let sync = (data == length).then_some(true);
                (
                    Some(Protocol::Rendezvous),
                    length,
                    sync,
                    l.rndv_hdr_size,
                    "rendezvous",
                )
            }
            HDR_TYPE_RGET => (
                Some(Protocol::Rendezvous),
                f.msg_length.uint(r)?,
                None,
                0,
                "rendezvous (RDMA get)",
            ),
            other => {
                return Err(DecodeError::Corrupt {
                    what: "mca_pml_ob1_recv_frag_t",
                    addr: r.base,
                    reason: format!("header type {other:#x} is not a first fragment's"),
                })
            }
        };
        let length = i64::try_from(length).unwrap_or(i64::MAX);
        let mut extra = vec![format!(
            "{kind}, sequence {}, fragment at {}",
            f.seq.uint(r)?,
            r.base
        )];
        if out_of_order {
            extra.push(
                "arrived out of order: waits for an earlier message of its sender".to_string(),
            );
        }
        Ok(PendingOperation {
            system_buffer: true,
            buffer: if first_segment == 0 || header == 0 {
                0
            } else {
                first_segment.wrapping_add(header)
            },
            extra_text: extra,
            protocol,
            synchronous,
            ..PendingOperation::message(
                OperationStatus::Pending,
                (src, comm.world_of(src)),
                tag,
                length,
            )
        })
    }

    /// The fragments of a peer's `frags_cant_match`: a ring of range heads
    /// linked through their list items, each head's `range` another ring
    /// of the fragments that follow it in sequence.
    pub(super) fn cant_match(
        &self,
        mem: &dyn TargetMemory,
        first: TargetAddr,
        comm: &CommInfo,
        limits: &Limits,
        out: &mut QueueOps<PendingOperation>,
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let mut ranges = Vec::new();
        self.walk_ring(
            mem,
            first,
            "frags_cant_match (mca_pml_ob1_recv_frag_t)",
            limits,
            |r| {
                let range = l.frag.range.addr(r)?;
                if range.0 != 0 {
                    ranges.push(range);
                }
                out.push(self.fragment(mem, r, comm, limits, true)?, r.base)
            },
        )?;
        for range in ranges {
            self.walk_ring(
                mem,
                range,
                "frags_cant_match range (mca_pml_ob1_recv_frag_t)",
                limits,
                |r| out.push(self.fragment(mem, r, comm, limits, true)?, r.base),
            )?;
        }
        Ok(())
    }

    /// Visits each fragment of the ring that starts at `first` (read as
    /// `what`), in ring order. The first is read by hand: the walk of the
    /// others ends where the ring began.
    fn walk_ring(
        &self,
        mem: &dyn TargetMemory,
        first: TargetAddr,
        what: &'static str,
        limits: &Limits,
        mut visit: impl FnMut(&Record<'_>) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let buf = read_bytes(
            mem,
            at(first, l.frag_span.start),
            l.frag_span.end - l.frag_span.start,
            what,
            limits,
        )?;
        let rec = Record {
            base: first,
            start: l.frag_span.start,
            bytes: &buf,
            order: mem.abi().byte_order,
            what: "mca_pml_ob1_recv_frag_t",
        };
        visit(&rec)?;
        let next = l.frag.next.addr(&rec)?;
        let shape = ListShape {
            next_offset: l.frag.next.offset,
            span: l.frag_span,
            what: "frags_cant_match (mca_pml_ob1_recv_frag_t)",
            end: first,
        };
        walk(mem, next, shape, limits, visit)
    }
}
