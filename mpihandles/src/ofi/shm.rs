//! The `shm` provider's queues (libfabric 1.17, `prov/shm/src`): its
//! endpoint's shared receive context (`struct smr_srx_ctx`, which
//! `smr_ep.srx` points to through its `fid_ep`) keeps four `dlist_entry`
//! rings of `smr_rx_entry`: the receives posted with `fi_trecv`
//! (`trecv_queue`) and `fi_recv` (`recv_queue`), and the messages no
//! receive matched, tagged and untagged (`unexp_tagged_queue`,
//! `unexp_msg_queue`), each entry linked through its `peer_entry`
//! (`fi_peer_rx_entry`, castable to a `dlist_entry`). An unexpected
//! entry's `peer_context` is the command context (`smr_cmd_ctx`) holding a
//! copy of the sender's command, whose header has the length and how the
//! data comes. The sends the provider keeps until the receiver takes
//! their data are the entries of the endpoint's free stack `pend_fs` that
//! are not on its free list.

use std::collections::HashSet;

use mpidd_read::{Layouts, Member, ReadError};
use mpidd_types::TargetAddr;

use super::dlist::{container, head, links};
use super::error::OfiError;
use super::flags::{
    FI_CLASS_SRX_CTX, OP_TAGGED, SMR_IOV_LIMIT, SMR_SRC_INJECT, SMR_SRC_INLINE, SMR_SRC_IOV,
    SMR_SRC_IPC, SMR_SRC_MMAP, SMR_SRC_SAR,
};
use super::layout::{
    ListLayout, ShmLayout, ShmSendLayout, SMR_CMD_CTX, SMR_EP, SMR_MAP, SMR_PEND_FS, SMR_RX_ENTRY,
    SMR_SRX, SMR_TX_ENTRY,
};
use super::model::{source, OfiPostedReceive, OfiProtocol, OfiSend, OfiUnexpected};
use crate::target::{at, Ctx, Rec};

/// The bytes of a record from the start up to the end of `members`.
pub(crate) fn span(members: &[Member]) -> u64 {
    members
        .iter()
        .map(|m| m.offset.saturating_add(m.size))
        .max()
        .unwrap_or(0)
}

/// A member `offset` bytes further into the record (an element of an
/// array member, a member of a struct member).
pub(crate) fn shifted(m: Member, offset: u64, size: u64) -> Member {
    Member {
        offset: m.offset.saturating_add(offset),
        size,
        array_len: None,
    }
}

/// What the shm endpoint at `ep` holds.
pub(crate) struct ShmQueues {
    pub(crate) posted: Vec<OfiPostedReceive>,
    pub(crate) unexpected: Vec<OfiUnexpected>,
    pub(crate) sends: Vec<OfiSend>,
    pub(crate) notes: Vec<String>,
}

/// Reads the shm endpoint at `ep` (its `util_ep` is at its start), whose
/// address vector is `av` (a `util_av *` at the start of an `smr_av`).
pub(crate) fn read(
    ctx: &Ctx<'_>,
    layouts: &dyn Layouts,
    ll: &ListLayout,
    ep: TargetAddr,
    av: TargetAddr,
) -> Result<ShmQueues, OfiError> {
    let sl = ShmLayout::of(layouts)?;
    let ep_rec = ctx.record_sized(ep, span(&[sl.ep_srx]), SMR_EP)?;
    let srx = ep_rec.ptr(sl.ep_srx)?;
    if srx.is_null() {
        return Err(OfiError::corrupt(
            SMR_EP,
            ep,
            "it has no receive context (srx is NULL): it was never enabled",
        ));
    }
    // `srx` is the context's `peer_srx.ep_fid`, whose `fid` (and so its
    // `fclass`) starts it.
    let ctx_addr = container(srx, sl.srx_fclass.offset);
    let srx_rec = ctx.record_sized(
        ctx_addr,
        span(&[
            sl.srx_fclass,
            sl.srx_context,
            sl.recv_queue,
            sl.trecv_queue,
            sl.unexp_msg_queue,
            sl.unexp_tagged_queue,
        ]),
        SMR_SRX,
    )?;
    let fclass = srx_rec.uint(sl.srx_fclass)?;
    if fclass != FI_CLASS_SRX_CTX {
        return Err(OfiError::misfit(
            ep,
            format!(
                "its receive context {srx} has fid class {fclass}, not FI_CLASS_SRX_CTX \
                 ({FI_CLASS_SRX_CTX})"
            ),
        ));
    }
    let own = srx_rec.ptr(sl.srx_context)?;
    if own != ctx_addr {
        return Err(OfiError::misfit(
            ep,
            format!(
                "its receive context {srx}'s fid.context is {own}, not the smr_srx_ctx at \
                 {ctx_addr} (an shm endpoint that shares another provider's receive context, \
                 as a peer provider, keeps no queue of its own)"
            ),
        ));
    }
    check_iov(&sl)?;
    let mut posted = Vec::new();
    for (queue, tagged, what) in [
        (
            sl.trecv_queue,
            true,
            "shm's posted tagged receives (smr_srx_ctx.trecv_queue)",
        ),
        (
            sl.recv_queue,
            false,
            "shm's posted receives (smr_srx_ctx.recv_queue)",
        ),
    ] {
        for link in links(ctx, ll, head(ctx_addr, queue.offset), what, SMR_SRX)? {
            posted.push(posted_entry(ctx, ll, &sl, link, tagged)?);
        }
    }
    let mut unexpected = Vec::new();
    for (queue, tagged, what) in [
        (
            sl.unexp_tagged_queue,
            true,
            "shm's unexpected tagged messages (smr_srx_ctx.unexp_tagged_queue)",
        ),
        (
            sl.unexp_msg_queue,
            false,
            "shm's unexpected messages (smr_srx_ctx.unexp_msg_queue)",
        ),
    ] {
        for link in links(ctx, ll, head(ctx_addr, queue.offset), what, SMR_SRX)? {
            unexpected.push(unexpected_entry(ctx, &sl, link, tagged)?);
        }
    }
    let mut notes = Vec::new();
    let sends = match ShmSendLayout::of(layouts) {
        Ok(tl) => sends(ctx, ll, &tl, ep, av)?,
        Err(e) => {
            notes.push(format!("shm's sends in flight are not read: {e}"));
            Vec::new()
        }
    };
    Ok(ShmQueues {
        posted,
        unexpected,
        sends,
        notes,
    })
}

/// An entry's `iov` must be the array of `SMR_IOV_LIMIT` the readers
/// bound its count by.
fn check_iov(sl: &ShmLayout) -> Result<(), OfiError> {
    match sl.rx_iov.array_len {
        Some(n) if n == SMR_IOV_LIMIT => Ok(()),
        other => Err(OfiError::Layouts(mpidd_read::LayoutError::new(
            SMR_RX_ENTRY,
            Some("iov"),
            format!("not an array of {SMR_IOV_LIMIT} iovecs ({other:?})"),
        ))),
    }
}

/// The first buffer and the total length of the `count` iovecs of the
/// array member `iov` of `rec`.
pub(crate) fn buffers(
    ll: &ListLayout,
    rec: &Rec,
    iov: Member,
    count: u64,
    record: &'static str,
) -> Result<(u64, u64), OfiError> {
    let limit = iov.array_len.unwrap_or(0);
    if count > limit {
        return Err(OfiError::corrupt(
            record,
            rec.base,
            format!("it has {count} buffers, more than its {limit} iovecs"),
        ));
    }
    let mut first = 0;
    let mut total = 0u64;
    for i in 0..count {
        let off = i.saturating_mul(ll.iov_size);
        let base = rec.uint(shifted(iov, off + ll.iov_base.offset, ll.iov_base.size))?;
        let len = rec.uint(shifted(iov, off + ll.iov_len.offset, ll.iov_len.size))?;
        if i == 0 {
            first = base;
        }
        total = total.checked_add(len).ok_or_else(|| {
            OfiError::corrupt(record, rec.base, "its buffers' lengths overflow 64 bits")
        })?;
    }
    Ok((first, total))
}

fn posted_entry(
    ctx: &Ctx<'_>,
    ll: &ListLayout,
    sl: &ShmLayout,
    link: TargetAddr,
    tagged: bool,
) -> Result<OfiPostedReceive, OfiError> {
    let entry = container(link, sl.rx_link.offset);
    let r = ctx.record_sized(entry, sl.rx_size, SMR_RX_ENTRY)?;
    let count = r.uint(sl.rx_count)?;
    let (buffer, length) = buffers(ll, &r, sl.rx_iov, count, SMR_RX_ENTRY)?;
    Ok(OfiPostedReceive {
        entry,
        tagged,
        tag: if tagged { r.uint(sl.rx_tag)? } else { 0 },
        ignore: if tagged { r.uint(sl.rx_ignore)? } else { 0 },
        source: source(r.uint(sl.rx_addr)?),
        buffer,
        length,
        context: r.ptr(sl.rx_context)?,
    })
}

fn unexpected_entry(
    ctx: &Ctx<'_>,
    sl: &ShmLayout,
    link: TargetAddr,
    tagged: bool,
) -> Result<OfiUnexpected, OfiError> {
    let entry = container(link, sl.rx_link.offset);
    let r = ctx.record_sized(entry, sl.rx_size, SMR_RX_ENTRY)?;
    let cmd_ctx = r.ptr(sl.rx_peer_context)?;
    if cmd_ctx.is_null() {
        return Err(OfiError::corrupt(
            SMR_RX_ENTRY,
            entry,
            "an unexpected message's entry without its command (peer_entry.peer_context is NULL)",
        ));
    }
    let h = sl.cmd_ctx;
    let c = ctx.record_sized(cmd_ctx, sl.cmd_ctx_size, SMR_CMD_CTX)?;
    Ok(OfiUnexpected {
        entry,
        tagged,
        tag: if tagged { r.uint(sl.rx_tag)? } else { 0 },
        source: source(r.uint(sl.rx_addr)?),
        length: c.uint(h.size)?,
        protocol: protocol(c.uint(h.op_src)?),
    })
}

/// shm's `op_src`.
fn protocol(op_src: u64) -> OfiProtocol {
    match op_src {
        SMR_SRC_INLINE => OfiProtocol::Inline,
        SMR_SRC_INJECT => OfiProtocol::Inject,
        SMR_SRC_IOV => OfiProtocol::Iov,
        SMR_SRC_MMAP => OfiProtocol::Mmap,
        SMR_SRC_SAR => OfiProtocol::Segmented,
        SMR_SRC_IPC => OfiProtocol::Ipc,
        other => OfiProtocol::Unknown(other),
    }
}

/// The send entries of the endpoint's `pend_fs` that are not free: a
/// free stack (`OFI_DECLARE_FREESTACK`) is its `size`, the first free
/// entry (`next`, the address of that entry's own `next`, which starts
/// it) and its array of entries, each a `next` and the `smr_tx_entry`.
fn sends(
    ctx: &Ctx<'_>,
    ll: &ListLayout,
    tl: &ShmSendLayout,
    ep: TargetAddr,
    av: TargetAddr,
) -> Result<Vec<OfiSend>, OfiError> {
    let ep_rec = ctx.record_sized(ep, span(&[tl.ep_pend_fs]), SMR_EP)?;
    let fs = ep_rec.ptr(tl.ep_pend_fs)?;
    if fs.is_null() {
        return Ok(Vec::new());
    }
    let header = ctx.record_sized(fs, span(&[tl.fs_size, tl.fs_next]), SMR_PEND_FS)?;
    let size = header.uint(tl.fs_size)?;
    let size = ctx.count(
        i64::try_from(size).unwrap_or(i64::MAX),
        fs,
        "smr_pend_fs.size",
    )?;
    let first = at(fs, tl.fs_entries);
    let entries = ctx.records(first, size, tl.entry_size, SMR_PEND_FS)?;
    // libfabric links a free entry through the word right before its
    // `buf` (`ofi_freestack_get_next`), which is the entry's `next` only
    // when `buf` follows it without padding: `smr_tx_entry` is aligned to
    // 16 bytes (its command's header is), so in 1.17 that word is padding
    // and `next` is unused. The free list holds those words' addresses.
    let word = ctx.word();
    let link_offset = tl.entry_buf.offset.checked_sub(word).ok_or_else(|| {
        OfiError::Layouts(mpidd_read::LayoutError::new(
            "smr_pend_fs_entry",
            Some("buf"),
            "it starts before the free stack's link word",
        ))
    })?;
    let index = |link: TargetAddr| -> Option<u64> {
        let off = link.0.checked_sub(first.0)?.checked_sub(link_offset)?;
        (off % tl.entry_size == 0 && off / tl.entry_size < size).then_some(off / tl.entry_size)
    };
    let mut free = HashSet::new();
    let mut next = header.ptr(tl.fs_next)?;
    while !next.is_null() {
        let Some(i) = index(next) else {
            return Err(OfiError::corrupt(
                SMR_PEND_FS,
                fs,
                format!("its free list reaches {next}, which is none of its {size} entries"),
            ));
        };
        if !free.insert(i) {
            return Err(ReadError::Cycle {
                what: "smr_pend_fs's free list (the word before smr_pend_fs_entry.buf)",
                addr: next,
            }
            .into());
        }
        let e = &entries[i as usize];
        next = TargetAddr(e.uint(Member {
            offset: link_offset,
            size: word,
            array_len: None,
        })?);
    }
    let map = peer_map(ctx, tl, av)?;
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if free.contains(&(i as u64)) {
            continue;
        }
        let tx = at(e.base, tl.entry_buf.offset);
        let t = ctx.record_sized(tx, tl.tx_size, SMR_TX_ENTRY)?;
        let h = tl.tx;
        let count = t.uint(tl.tx_iov_count)?;
        let (buffer, _) = buffers(ll, &t, tl.tx_iov, count, SMR_TX_ENTRY)?;
        let tagged = t.uint(h.op)? == OP_TAGGED;
        let peer = t.int(tl.tx_peer_id)?;
        out.push(OfiSend {
            entry: tx,
            tagged,
            tag: if tagged { t.uint(h.tag)? } else { 0 },
            length: t.uint(h.size)?,
            buffer: Some(buffer),
            context: t.ptr(tl.tx_context)?,
            destination: match &map {
                Some((peers, n)) => destination(ctx, tl, *peers, *n, peer)?,
                None => None,
            },
            protocol: protocol(t.uint(h.op_src)?),
        });
    }
    Ok(out)
}

/// The address vector's `smr_map`'s `peers` array and its length, when
/// the endpoint has an address vector.
fn peer_map(
    ctx: &Ctx<'_>,
    tl: &ShmSendLayout,
    av: TargetAddr,
) -> Result<Option<(TargetAddr, u64)>, OfiError> {
    if av.is_null() {
        return Ok(None);
    }
    let av_rec = ctx.record_sized(av, span(&[tl.av_map]), "smr_av")?;
    let map = av_rec.ptr(tl.av_map)?;
    if map.is_null() {
        return Ok(None);
    }
    let n = tl.map_peers.array_len.unwrap_or(0);
    Ok(Some((at(map, tl.map_peers.offset), n)))
}

/// The `fi_addr_t` the map gives shm's peer index `peer`.
fn destination(
    ctx: &Ctx<'_>,
    tl: &ShmSendLayout,
    peers: TargetAddr,
    n: u64,
    peer: i64,
) -> Result<Option<u64>, OfiError> {
    let Some(i) = u64::try_from(peer).ok().filter(|&i| i < n) else {
        return Err(OfiError::corrupt(
            SMR_TX_ENTRY,
            peers,
            format!("a send to peer {peer}, outside the map's {n} peers"),
        ));
    };
    let p = ctx.record_sized(
        at(peers, i.saturating_mul(tl.peer_size)),
        tl.peer_size,
        SMR_MAP,
    )?;
    Ok(source(p.uint(tl.peer_fiaddr)?))
}
