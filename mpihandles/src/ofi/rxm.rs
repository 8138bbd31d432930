//! The `ofi_rxm` provider's queues (libfabric 1.17, `prov/rxm/src`), the
//! RDM layer libfabric puts over a message provider (`tcp;ofi_rxm`,
//! `verbs;ofi_rxm`), which matches every receive itself: its endpoint
//! (`struct rxm_ep`) has a receive queue for `fi_trecv` (`trecv_queue`)
//! and one for `fi_recv` (`recv_queue`), each a `struct rxm_recv_queue`
//! with a `dlist_entry` ring of posted `rxm_recv_entry` (`recv_list`) and
//! one of unexpected messages (`unexp_msg_list`), each the `unexp_msg` of
//! the receive buffer (`rxm_rx_buf`) the message arrived in, whose packet
//! header announces its length and protocol.

use mpidd_read::Layouts;
use mpidd_types::TargetAddr;

use super::dlist::{container, head, links};
use super::error::OfiError;
use super::flags::{
    FI_ADDR_UNSPEC, RXM_CTRL_EAGER, RXM_CTRL_RNDV_REQ, RXM_CTRL_SEG, RXM_RECV_QUEUE_MSG,
    RXM_RECV_QUEUE_TAGGED,
};
use super::layout::{
    ListLayout, RxmLayout, PEER_ADDR, RXM_CONN, RXM_RECV_ENTRY, RXM_RECV_QUEUE, RXM_RX_BUF,
};
use super::model::{source, OfiPostedReceive, OfiProtocol, OfiUnexpected};
use super::shm::{buffers, span};
use crate::target::{at, Ctx};

/// What the rxm endpoint holds.
pub(crate) struct RxmQueues {
    pub(crate) posted: Vec<OfiPostedReceive>,
    pub(crate) unexpected: Vec<OfiUnexpected>,
}

/// Reads the rxm endpoint at `ep` (its `util_ep` at its start).
pub(crate) fn read(
    ctx: &Ctx<'_>,
    layouts: &dyn Layouts,
    ll: &ListLayout,
    ep: TargetAddr,
) -> Result<RxmQueues, OfiError> {
    let rl = RxmLayout::of(layouts)?;
    let mut out = RxmQueues {
        posted: Vec::new(),
        unexpected: Vec::new(),
    };
    for (member, tagged, kind) in [
        (rl.trecv_queue, true, RXM_RECV_QUEUE_TAGGED),
        (rl.recv_queue, false, RXM_RECV_QUEUE_MSG),
    ] {
        let queue = at(ep, member.offset);
        let q = ctx.record_sized(queue, rl.q_size, RXM_RECV_QUEUE)?;
        // Each queue points back to its endpoint and says which it is:
        // layouts that read both so are this build's.
        let back = q.ptr(rl.q_ep)?;
        let found = q.uint(rl.q_type)?;
        if back != ep || found != kind {
            return Err(OfiError::misfit(
                ep,
                format!(
                    "its receive queue at {queue} reads as of endpoint {back} and type {found}, \
                     not of this endpoint and type {kind}"
                ),
            ));
        }
        let (recv_what, unexp_what) = if tagged {
            (
                "rxm's posted tagged receives (rxm_ep.trecv_queue.recv_list)",
                "rxm's unexpected tagged messages (rxm_ep.trecv_queue.unexp_msg_list)",
            )
        } else {
            (
                "rxm's posted receives (rxm_ep.recv_queue.recv_list)",
                "rxm's unexpected messages (rxm_ep.recv_queue.unexp_msg_list)",
            )
        };
        for link in links(
            ctx,
            ll,
            head(queue, rl.q_recv_list.offset),
            recv_what,
            RXM_RECV_QUEUE,
        )? {
            out.posted.push(posted_entry(ctx, ll, &rl, link, tagged)?);
        }
        for link in links(
            ctx,
            ll,
            head(queue, rl.q_unexp_list.offset),
            unexp_what,
            RXM_RECV_QUEUE,
        )? {
            out.unexpected
                .push(unexpected_entry(ctx, &rl, link, tagged)?);
        }
    }
    Ok(out)
}

fn posted_entry(
    ctx: &Ctx<'_>,
    ll: &ListLayout,
    rl: &RxmLayout,
    link: TargetAddr,
    tagged: bool,
) -> Result<OfiPostedReceive, OfiError> {
    let entry = container(link, rl.entry_link.offset);
    let r = ctx.record_sized(entry, rl.entry_size, RXM_RECV_ENTRY)?;
    let count = r.uint(rl.entry_iov_count)?;
    let (buffer, length) = buffers(ll, &r, rl.entry_iov, count, RXM_RECV_ENTRY)?;
    Ok(OfiPostedReceive {
        entry,
        tagged,
        tag: if tagged { r.uint(rl.entry_tag)? } else { 0 },
        ignore: if tagged { r.uint(rl.entry_ignore)? } else { 0 },
        source: source(r.uint(rl.entry_addr)?),
        buffer,
        length,
        context: r.ptr(rl.entry_context)?,
    })
}

fn unexpected_entry(
    ctx: &Ctx<'_>,
    rl: &RxmLayout,
    link: TargetAddr,
    tagged: bool,
) -> Result<OfiUnexpected, OfiError> {
    let buf = container(link, rl.buf_link.offset);
    let b = ctx.record_sized(buf, rl.buf_size, RXM_RX_BUF)?;
    // As rxm_get_unexp_addr: the address the message came with, else
    // that of its connection's peer.
    let mut addr = b.uint(rl.buf_addr)?;
    if addr == FI_ADDR_UNSPEC {
        let conn = b.ptr(rl.buf_conn)?;
        if !conn.is_null() {
            let c = ctx.record_sized(conn, span(&[rl.conn_peer]), RXM_CONN)?;
            let peer = c.ptr(rl.conn_peer)?;
            if !peer.is_null() {
                let p = ctx.record_sized(peer, span(&[rl.peer_fi_addr]), PEER_ADDR)?;
                addr = p.uint(rl.peer_fi_addr)?;
            }
        }
    }
    let protocol = match b.uint(rl.buf_ctrl_type)? {
        RXM_CTRL_EAGER => OfiProtocol::Eager,
        RXM_CTRL_SEG => OfiProtocol::FirstSegment,
        RXM_CTRL_RNDV_REQ => OfiProtocol::Rendezvous,
        other => OfiProtocol::Unknown(other),
    };
    Ok(OfiUnexpected {
        entry: buf,
        tagged,
        tag: if tagged { b.uint(rl.buf_tag)? } else { 0 },
        source: source(addr),
        length: b.uint(rl.buf_size_hdr)?,
        protocol,
    })
}
