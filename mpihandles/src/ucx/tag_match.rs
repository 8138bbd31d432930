//! The worker's tag matching (`ucp_tag_match_t`, UCX 1.13:
//! `src/ucp/tag/tag_match.h`): the expected queues and the list of
//! unexpected messages.
//!
//! An expected queue is a `ucs_queue_head_t` whose `ptail` points at the
//! last element's `next`; that `next` itself is stale (UCX never clears
//! it), so a walk stops at `ptail`, not at NULL. The unexpected list is a
//! `ucs_list_link_t` ring through each descriptor's
//! `tag_list[UCP_RDESC_ALL_LIST]`, back to the worker's own link.

use std::collections::HashSet;

use mpidd_read::ReadError;
use mpidd_types::TargetAddr;

use super::error::UcxError;
use super::flags::{
    EXPECTED_HASH_QUEUES, RDESC_ALL_LIST, RDESC_EAGER, RDESC_EAGER_OFFLOAD, RDESC_EAGER_ONLY,
    RDESC_EAGER_SYNC, RDESC_RNDV,
};
use super::layout::{
    HeaderLayout, RequestLayout, TagMatchLayout, QUEUE_HEAD, RECV_DESC, REQUEST, REQUEST_QUEUE,
    TAG_HDR, TAG_MATCH,
};
use super::worker::{UcxPostedReceive, UcxProtocol, UcxSender, UcxUnexpected};
use crate::target::{at, Ctx, Rec};

/// The bytes of a record from the start up to the end of `members`.
fn span(members: &[mpidd_read::Member]) -> u64 {
    members
        .iter()
        .map(|m| m.offset.saturating_add(m.size))
        .max()
        .unwrap_or(0)
}

/// The posted receives of every expected queue, in posting order.
pub(crate) fn posted(
    ctx: &Ctx<'_>,
    tl: &TagMatchLayout,
    rl: &RequestLayout,
    worker: TargetAddr,
) -> Result<Vec<UcxPostedReceive>, UcxError> {
    let tm = at(worker, tl.tm.offset);
    let tm_rec = ctx.record_sized(
        tm,
        span(&[tl.wildcard, tl.hash, tl.sn, tl.unexpected_all]),
        TAG_MATCH,
    )?;
    let mut walk = QueueWalk {
        ctx,
        tl,
        rl,
        seen: HashSet::new(),
        out: Vec::new(),
    };
    walk.queue(
        at(tm, tl.wildcard.offset.saturating_add(tl.rq_queue.offset)),
        "the wildcard expected queue",
    )?;
    let hash = tm_rec.ptr(tl.hash)?;
    if hash.is_null() {
        return Err(UcxError::corrupt(
            TAG_MATCH,
            tm,
            "its expected hash (expected.hash) is NULL",
        ));
    }
    let buckets = ctx.records(hash, EXPECTED_HASH_QUEUES, tl.rq_size, REQUEST_QUEUE)?;
    for b in &buckets {
        walk.queue_from(b, "an expected queue of the tag hash")?;
    }
    let mut posted = walk.out;
    posted.sort_by_key(|p| p.sequence);
    Ok(posted)
}

struct QueueWalk<'a, 'c> {
    ctx: &'a Ctx<'c>,
    tl: &'a TagMatchLayout,
    rl: &'a RequestLayout,
    /// Every queue element met in any queue: one met twice is a cycle.
    seen: HashSet<TargetAddr>,
    out: Vec<UcxPostedReceive>,
}

impl QueueWalk<'_, '_> {
    /// The queue of the `ucp_request_queue_t` at `queue` (its
    /// `ucs_queue_head_t`).
    fn queue(&mut self, queue: TargetAddr, what: &'static str) -> Result<(), UcxError> {
        let q = self.ctx.record_sized(
            queue,
            span(&[self.tl.queue_head, self.tl.queue_ptail]),
            QUEUE_HEAD,
        )?;
        self.walk(&q, queue, what)
    }

    /// The queue of a `ucp_request_queue_t` read whole in `rq`.
    fn queue_from(&mut self, rq: &Rec, what: &'static str) -> Result<(), UcxError> {
        let off = self.tl.rq_queue.offset;
        let shifted = |m: mpidd_read::Member| mpidd_read::Member {
            offset: m.offset.saturating_add(off),
            ..m
        };
        let head = rq.ptr(shifted(self.tl.queue_head))?;
        let ptail = rq.ptr(shifted(self.tl.queue_ptail))?;
        let queue = at(rq.base, off);
        self.walk_links(queue, head, ptail, what)
    }

    fn walk(&mut self, q: &Rec, queue: TargetAddr, what: &'static str) -> Result<(), UcxError> {
        let head = q.ptr(self.tl.queue_head)?;
        let ptail = q.ptr(self.tl.queue_ptail)?;
        self.walk_links(queue, head, ptail, what)
    }

    /// From the queue's `head` to the element whose `next` is `ptail`.
    fn walk_links(
        &mut self,
        queue: TargetAddr,
        head: TargetAddr,
        ptail: TargetAddr,
        what: &'static str,
    ) -> Result<(), UcxError> {
        let max = self.ctx.limits.max_list_len;
        let mut link = at(queue, self.tl.queue_head.offset);
        let mut elem = head;
        while link != ptail {
            if elem.is_null() {
                return Err(UcxError::corrupt(
                    QUEUE_HEAD,
                    queue,
                    format!("{what} ends in NULL at {link} before its tail {ptail}"),
                ));
            }
            if self.seen.len() as u64 >= max {
                return Err(ReadError::LimitExceeded {
                    what,
                    addr: queue,
                    count: self.seen.len() as u64,
                    max,
                    limit: "max_list_len",
                }
                .into());
            }
            if !self.seen.insert(elem) {
                return Err(ReadError::Cycle {
                    what: "ucp_request_t.recv.queue.next",
                    addr: elem,
                }
                .into());
            }
            let request = TargetAddr(elem.0.wrapping_sub(self.rl.recv_queue.offset));
            let r = self.ctx.record_sized(request, self.rl.size, REQUEST)?;
            self.out.push(UcxPostedReceive {
                request,
                user: at(request, self.rl.size),
                tag: r.uint(self.rl.recv_tag)?,
                tag_mask: r.uint(self.rl.recv_mask)?,
                buffer: r.uint(self.rl.recv_buffer)?,
                length: r.uint(self.rl.recv_length)?,
                sequence: r.uint(self.rl.recv_sn)?,
            });
            link = at(elem, self.tl.elem_next.offset);
            let next = mpidd_read::Member {
                offset: self
                    .rl
                    .recv_queue
                    .offset
                    .saturating_add(self.tl.elem_next.offset),
                size: self.tl.elem_next.size,
                array_len: None,
            };
            elem = r.ptr(next)?;
        }
        Ok(())
    }
}

/// The unexpected messages, in arrival order.
pub(crate) fn unexpected(
    ctx: &Ctx<'_>,
    tl: &TagMatchLayout,
    headers: Option<&HeaderLayout>,
    worker: TargetAddr,
) -> Result<Vec<UcxUnexpected>, UcxError> {
    let head = at(
        worker,
        tl.tm.offset.saturating_add(tl.unexpected_all.offset),
    );
    let link_rec = ctx.record_sized(head, tl.link_size, "ucs_list_link_t")?;
    // The link in `tag_list[UCP_RDESC_ALL_LIST]`, from the descriptor's start.
    let element = match tl.rdesc_tag_list.array_len {
        Some(n) if n > RDESC_ALL_LIST => tl.rdesc_tag_list.size / n,
        _ => {
            return Err(UcxError::Layouts(mpidd_read::LayoutError::new(
                RECV_DESC,
                Some("tag_list"),
                "not an array of two list links",
            )))
        }
    };
    let link_off = tl
        .rdesc_tag_list
        .offset
        .saturating_add(RDESC_ALL_LIST.saturating_mul(element));
    let max = ctx.limits.max_list_len;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut link = link_rec.ptr(tl.link_next)?;
    while link != head {
        if link.is_null() {
            return Err(UcxError::corrupt(
                TAG_MATCH,
                head,
                "the unexpected list (unexpected.all) reaches a NULL link",
            ));
        }
        if seen.len() as u64 >= max {
            return Err(ReadError::LimitExceeded {
                what: "the unexpected list (ucp_tag_match_t.unexpected.all)",
                addr: head,
                count: seen.len() as u64,
                max,
                limit: "max_list_len",
            }
            .into());
        }
        if !seen.insert(link) {
            return Err(ReadError::Cycle {
                what: "ucp_recv_desc_t.tag_list[UCP_RDESC_ALL_LIST].next",
                addr: link,
            }
            .into());
        }
        let rdesc = TargetAddr(link.0.wrapping_sub(link_off));
        let d = ctx.record_sized(rdesc, tl.rdesc_size, RECV_DESC)?;
        out.push(descriptor(ctx, tl, headers, rdesc, &d)?);
        let next = mpidd_read::Member {
            offset: link_off.saturating_add(tl.link_next.offset),
            size: tl.link_next.size,
            array_len: None,
        };
        link = d.ptr(next)?;
    }
    Ok(out)
}

/// One unexpected message from its descriptor `d` at `rdesc` and the
/// header after it.
fn descriptor(
    ctx: &Ctx<'_>,
    tl: &TagMatchLayout,
    headers: Option<&HeaderLayout>,
    rdesc: TargetAddr,
    d: &Rec,
) -> Result<UcxUnexpected, UcxError> {
    let flags = d.uint(tl.rdesc_flags)? as u16;
    let length = d.uint(tl.rdesc_length)?;
    let payload_offset = d.uint(tl.rdesc_payload_offset)?;
    let hdr = at(rdesc, tl.rdesc_size);
    let tag_rec = ctx.record_sized(hdr, tl.tag_hdr_size, TAG_HDR)?;
    let tag = tag_rec.uint(tl.tag_hdr_tag)?;
    let protocol = if flags & RDESC_RNDV != 0 {
        UcxProtocol::Rendezvous
    } else if flags & RDESC_EAGER != 0 && flags & RDESC_EAGER_SYNC != 0 {
        UcxProtocol::EagerSync
    } else if flags & RDESC_EAGER != 0 {
        UcxProtocol::Eager
    } else {
        UcxProtocol::Unknown(u32::from(flags))
    };
    let first_of_several = matches!(protocol, UcxProtocol::Eager | UcxProtocol::EagerSync)
        && flags & RDESC_EAGER_ONLY == 0;
    let mut msg = UcxUnexpected {
        descriptor: rdesc,
        tag,
        protocol,
        first_of_several,
        length: None,
        sender: None,
        flags,
    };
    // A message through a transport's tag offload carries no UCP header
    // but the tag's.
    if flags & RDESC_EAGER_OFFLOAD != 0 {
        if !first_of_several {
            msg.length = length.checked_sub(payload_offset);
        }
        return Ok(msg);
    }
    let Some(h) = headers else {
        return Ok(msg);
    };
    let sender = |rec: &Rec, req: mpidd_read::Member| -> Result<UcxSender, UcxError> {
        let field = |m: mpidd_read::Member| mpidd_read::Member {
            offset: req.offset.saturating_add(m.offset),
            ..m
        };
        Ok(UcxSender {
            ep_id: rec.uint(field(h.req_ep_id))?,
            req_id: rec.uint(field(h.req_req_id))?,
        })
    };
    match (protocol, first_of_several) {
        (UcxProtocol::Rendezvous, _) => {
            let r = ctx.record_sized(hdr, h.rts_size, "ucp_rndv_rts_hdr_t")?;
            msg.length = Some(r.uint(h.rts_total)?);
            msg.sender = Some(sender(&r, h.rts_sreq)?);
        }
        (UcxProtocol::Eager, false) => {
            msg.length = Some(single_payload(rdesc, length, payload_offset)?);
        }
        (UcxProtocol::Eager, true) => {
            let r = ctx.record_sized(hdr, h.first_size, "ucp_eager_first_hdr_t")?;
            msg.length = Some(r.uint(h.first_total_len)?);
        }
        (UcxProtocol::EagerSync, false) => {
            let r = ctx.record_sized(hdr, h.sync_size, "ucp_eager_sync_hdr_t")?;
            msg.length = Some(single_payload(rdesc, length, payload_offset)?);
            msg.sender = Some(sender(&r, h.sync_req)?);
        }
        (UcxProtocol::EagerSync, true) => {
            let r = ctx.record_sized(hdr, h.sync_first_size, "ucp_eager_sync_first_hdr_t")?;
            msg.length = Some(r.uint(h.sync_first_total_len)?);
            msg.sender = Some(sender(&r, h.sync_first_req)?);
        }
        (UcxProtocol::Unknown(_), _) => {}
    }
    Ok(msg)
}

/// The payload of a single-fragment message: what the descriptor received
/// past the header.
fn single_payload(rdesc: TargetAddr, length: u64, payload_offset: u64) -> Result<u64, UcxError> {
    length.checked_sub(payload_offset).ok_or_else(|| {
        UcxError::corrupt(
            RECV_DESC,
            rdesc,
            format!("its length {length} is shorter than its header ({payload_offset} bytes)"),
        )
    })
}
