//! rxm's sends in flight (libfabric 1.17, `prov/rxm/src`): every message
//! rxm sends goes out of a transmit buffer (`rxm_tx_buf`) of its
//! endpoint's pool (`rxm_ep.tx_pool`, an `ofi_bufpool` of regions, each
//! `attr.chunk_cnt` buffers of `entry_size` bytes after its first, each
//! buffer after its `ofi_bufpool_hdr`). A buffer not on the pool's free
//! list holds a message rxm has not finished sending: an eager or
//! segmented one the message provider has not completed, or a rendezvous
//! request whose data the receiver has not taken. Its packet has the tag
//! and length, its state what it waits for.

use std::collections::HashSet;

use mpidd_read::{Member, ReadError};
use mpidd_types::TargetAddr;

use super::error::OfiError;
use super::flags::{
    OFI_BUFPOOL_INDEXED, OP_TAGGED, RXM_CTRL_EAGER, RXM_CTRL_RNDV_REQ, RXM_CTRL_SEG,
    RXM_RNDV_READ_DONE_WAIT, RXM_RNDV_TX, RXM_RNDV_WRITE_DATA_WAIT, RXM_RNDV_WRITE_DONE_WAIT,
    RXM_SAR_TX, RXM_TX,
};
use super::layout::{RxmSendLayout, BUFPOOL, BUFPOOL_REGION, RXM_EP, RXM_TX_BUF};
use super::model::{OfiProtocol, OfiSend};
use super::shm::span;
use crate::target::{at, Ctx};

/// The tagged sends of the rxm endpoint at `ep` still in flight, in the
/// pool's order.
pub(crate) fn sends(
    ctx: &Ctx<'_>,
    sl: &RxmSendLayout,
    ep: TargetAddr,
) -> Result<Vec<OfiSend>, OfiError> {
    let e = ctx.record_sized(ep, span(&[sl.ep_tx_pool]), RXM_EP)?;
    let pool = e.ptr(sl.ep_tx_pool)?;
    if pool.is_null() {
        return Ok(Vec::new());
    }
    let p = ctx.record_sized(
        pool,
        span(&[
            sl.pool_free_head,
            sl.pool_entry_size,
            sl.pool_entry_cnt,
            sl.pool_region_table,
            sl.pool_region_cnt,
            sl.pool_chunk_cnt,
            sl.pool_flags,
        ]),
        BUFPOOL,
    )?;
    if p.uint(sl.pool_flags)? & OFI_BUFPOOL_INDEXED != 0 {
        return Err(OfiError::corrupt(
            BUFPOOL,
            pool,
            "rxm's transmit pool is indexed (OFI_BUFPOOL_INDEXED), which rxm never makes it",
        ));
    }
    let entry_size = p.uint(sl.pool_entry_size)?;
    if entry_size < sl.hdr_size.saturating_add(sl.tx_size) {
        return Err(OfiError::corrupt(
            BUFPOOL,
            pool,
            format!("its entries of {entry_size} bytes cannot hold a transmit buffer"),
        ));
    }
    let count = |m: Member, what| -> Result<u64, OfiError> {
        let n = p.uint(m)?;
        Ok(ctx.count(i64::try_from(n).unwrap_or(i64::MAX), pool, what)?)
    };
    let regions = count(sl.pool_region_cnt, "ofi_bufpool.region_cnt")?;
    let chunk = count(sl.pool_chunk_cnt, "ofi_bufpool.attr.chunk_cnt")?;
    let total = regions.saturating_mul(chunk);
    let entries = count(sl.pool_entry_cnt, "ofi_bufpool.entry_cnt")?;
    if total != entries {
        return Err(OfiError::corrupt(
            BUFPOOL,
            pool,
            format!("its {regions} regions of {chunk} buffers are not its {entries} entries"),
        ));
    }
    let word = ctx.word();
    let table = p.ptr(sl.pool_region_table)?;
    let slots = ctx.records(table, regions, word, "ofi_bufpool.region_table")?;
    // Every buffer's header, region by region.
    let mut headers = Vec::new();
    for slot in &slots {
        let region = slot.ptr(Member {
            offset: 0,
            size: word,
            array_len: None,
        })?;
        let r = ctx.record_sized(region, span(&[sl.region_mem]), BUFPOOL_REGION)?;
        let mem = r.ptr(sl.region_mem)?;
        for i in 0..chunk {
            let buf = at(mem, i.saturating_mul(entry_size));
            headers.push(TargetAddr(buf.0.wrapping_sub(sl.hdr_size)));
        }
    }
    let known: HashSet<TargetAddr> = headers.iter().copied().collect();
    // The free list, through each free header's `entry.slist.next`.
    let mut free = HashSet::new();
    let mut next = p.ptr(sl.pool_free_head)?;
    while !next.is_null() {
        if !known.contains(&next) {
            return Err(OfiError::corrupt(
                BUFPOOL,
                pool,
                format!("its free list reaches {next}, which is none of its buffers' headers"),
            ));
        }
        if !free.insert(next) {
            return Err(ReadError::Cycle {
                what: "rxm's free transmit buffers (ofi_bufpool_hdr.entry.slist.next)",
                addr: next,
            }
            .into());
        }
        let h = ctx.record_sized(next, span(&[sl.hdr_next]), "ofi_bufpool_hdr")?;
        next = h.ptr(sl.hdr_next)?;
    }
    let mut out = Vec::new();
    for hdr in headers {
        if free.contains(&hdr) {
            continue;
        }
        let buf = at(hdr, sl.hdr_size);
        let t = ctx.record_sized(buf, sl.tx_size, RXM_TX_BUF)?;
        let waiting = matches!(
            t.uint(sl.tx_state)?,
            RXM_TX
                | RXM_SAR_TX
                | RXM_RNDV_TX
                | RXM_RNDV_READ_DONE_WAIT
                | RXM_RNDV_WRITE_DATA_WAIT
                | RXM_RNDV_WRITE_DONE_WAIT
        );
        let protocol = match t.uint(sl.tx_ctrl_type)? {
            RXM_CTRL_EAGER => OfiProtocol::Eager,
            RXM_CTRL_SEG => OfiProtocol::FirstSegment,
            RXM_CTRL_RNDV_REQ => OfiProtocol::Rendezvous,
            // Control messages (credits, rendezvous acknowledgments,
            // atomics) carry no message of the caller's.
            _ => continue,
        };
        if !waiting || t.uint(sl.tx_op)? != OP_TAGGED {
            continue;
        }
        out.push(OfiSend {
            entry: buf,
            tagged: true,
            tag: t.uint(sl.tx_tag)?,
            length: t.uint(sl.tx_length)?,
            buffer: None,
            context: t.ptr(sl.tx_context)?,
            destination: None,
            protocol,
        });
    }
    Ok(out)
}
