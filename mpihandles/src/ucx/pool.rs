//! The worker's request pool (`ucp_worker_t.req_mp`, a `ucs_mpool_t`; UCX
//! 1.13: `src/ucs/datastruct/mpool.{h,c,inl}`), for the requests still in
//! progress.
//!
//! The pool's chunks are a NULL-ended list from `data->chunks`. A chunk's
//! element `i` is at `elems + i * align_up(elem_size, alignment)`
//! (`ucs_mpool_chunk_elem`, `ucs_mpool_elem_total_size`); each element is
//! a `ucs_mpool_elem_t` header then the object (`elem + 1`). An allocated
//! element's header holds the pool's address (`elem->mpool = mp` in
//! `ucs_mpool_get_inline`), a free one's the next free element or NULL, so
//! an element is in use exactly when its header is the pool's address.
//! Requests an MPI library allocated itself (`UCP_OP_ATTR_FIELD_REQUEST`)
//! are in no pool, and not found here.

use std::collections::HashSet;

use mpidd_read::ReadError;
use mpidd_types::TargetAddr;

use super::error::UcxError;
use super::flags::{REQUEST_COMPLETED, REQUEST_RECV_TAG};
use super::layout::{PoolLayout, RequestLayout, MPOOL, MPOOL_CHUNK, MPOOL_DATA};
use super::request::tag_send;
use super::worker::{UcxProtocol, UcxReceiveRequest, UcxSendRequest};
use crate::target::{at, unsigned, Ctx, Rec};

/// The tagged sends and receives of the pool that have not completed;
/// `posted` are the requests found in the expected queues.
pub(crate) fn in_progress(
    ctx: &Ctx<'_>,
    pl: &PoolLayout,
    rl: &RequestLayout,
    worker: TargetAddr,
    posted: &HashSet<TargetAddr>,
) -> Result<(Vec<UcxSendRequest>, Vec<UcxReceiveRequest>), UcxError> {
    let mp = at(worker, pl.req_mp.offset);
    let data = ctx.record_sized(mp, pl.mp_size, MPOOL)?.ptr(pl.mp_data)?;
    if data.is_null() {
        return Err(UcxError::corrupt(MPOOL, mp, "its data is NULL"));
    }
    let d = ctx.record_sized(data, pl.data_size, MPOOL_DATA)?;
    let stride = stride(&d, pl, rl)?;
    ctx.limits
        .check_record_bytes("an element of ucs_mpool_t", data, stride)?;
    let mut sends = Vec::new();
    let mut receives = Vec::new();
    let limits = &ctx.limits;
    let mut seen = HashSet::new();
    let mut elements = 0u64;
    let mut bytes_read = 0u64;
    let element = Element { mp, pl, rl, posted };
    let mut chunk = d.ptr(pl.chunks)?;
    while !chunk.is_null() {
        if seen.len() as u64 >= limits.max_list_len {
            return Err(ReadError::LimitExceeded {
                what: "the chunks of the request pool (ucs_mpool_data_t.chunks)",
                addr: data,
                count: seen.len() as u64,
                max: limits.max_list_len,
                limit: "max_list_len",
            }
            .into());
        }
        if !seen.insert(chunk) {
            return Err(ReadError::Cycle {
                what: "ucs_mpool_chunk_t.next",
                addr: chunk,
            }
            .into());
        }
        let c = ctx.record_sized(chunk, pl.chunk_size, MPOOL_CHUNK)?;
        let count = c.uint(pl.chunk_num_elems)?;
        elements = elements.saturating_add(count);
        if elements > limits.max_table_entries {
            return Err(ReadError::LimitExceeded {
                what: "ucs_mpool_chunk_t.num_elems (the request pool's elements)",
                addr: chunk,
                count: elements,
                max: limits.max_table_entries,
                limit: "max_table_entries",
            }
            .into());
        }
        let elems = c.ptr(pl.chunk_elems)?;
        let len = count
            .checked_mul(stride)
            .ok_or(ReadError::AddressOverflow {
                what: "ucs_mpool_chunk_t.elems",
                addr: elems,
                len: u64::MAX,
            })?;
        bytes_read = bytes_read.saturating_add(len);
        if bytes_read > limits.max_total_bytes {
            return Err(ReadError::LimitExceeded {
                what: "the request pool's chunks",
                addr: chunk,
                count: bytes_read,
                max: limits.max_total_bytes,
                limit: "max_total_bytes",
            }
            .into());
        }
        let bytes = ctx.bytes(elems, len, "ucs_mpool_chunk_t.elems")?;
        for (i, raw) in bytes.chunks_exact(stride as usize).enumerate() {
            let elem = at(elems, i as u64 * stride);
            element.read(ctx, elem, raw, &mut sends, &mut receives)?;
        }
        chunk = c.ptr(pl.chunk_next)?;
    }
    Ok((sends, receives))
}

/// The name UCX gives the worker's request pool (`ucp_worker_init_mpools`,
/// `src/ucp/core/ucp_worker.c`, from 1.13 to 1.20 alike).
pub(crate) const REQUEST_POOL_NAME: &str = "ucp_requests";

/// Whether the layouts read the worker at `worker` as UCX made it: its
/// request pool's data named [`REQUEST_POOL_NAME`], with an element size
/// that holds UCX's request. A wrong offset of the pool in the worker, of
/// the data in the pool or of the name in the data reads another name, or
/// none; a wrong `sizeof(ucp_request_t)` larger than the elements is
/// caught by the size. Run before anything else is read through layouts
/// that no build key vouches for (a release family's).
pub(crate) fn check_request_pool(
    ctx: &Ctx<'_>,
    pl: &PoolLayout,
    rl: &RequestLayout,
    worker: TargetAddr,
) -> Result<(), UcxError> {
    let misfit = |reason: String| UcxError::LayoutsDoNotFit { worker, reason };
    let mp = at(worker, pl.req_mp.offset);
    let data = ctx
        .record_sized(mp, pl.mp_size, MPOOL)
        .and_then(|r| r.ptr(pl.mp_data))
        .map_err(|e| {
            misfit(format!(
                "its request pool (ucp_worker_t.req_mp at {mp}) does not read: {e}"
            ))
        })?;
    if data.is_null() {
        return Err(misfit(format!(
            "its request pool (ucp_worker_t.req_mp at {mp}) has no data"
        )));
    }
    let d = ctx
        .record_sized(data, pl.data_size, MPOOL_DATA)
        .map_err(|e| {
            misfit(format!(
                "the request pool's data at {data} does not read: {e}"
            ))
        })?;
    let name_at = d
        .ptr(pl.name)
        .map_err(|e| misfit(format!("the request pool's name does not read: {e}")))?;
    let name = if name_at.is_null() {
        None
    } else {
        ctx.string(name_at).ok()
    };
    if name.as_deref() != Some(REQUEST_POOL_NAME) {
        return Err(misfit(format!(
            "its request pool's name (ucs_mpool_data_t.name at {data}) reads {}, not {REQUEST_POOL_NAME:?}",
            match &name {
                Some(n) => format!("{n:?}"),
                None => format!("nothing (pointer {name_at})"),
            }
        )));
    }
    // Named as UCX names it, the pool is read where the layouts say: an
    // element size that cannot be UCX's is then corruption, not a misfit.
    stride(&d, pl, rl)?;
    Ok(())
}

/// The distance between two elements of a chunk:
/// `ucs_align_up_pow2(elem_size, alignment)`, refused when the pool's data
/// cannot be UCX's (a size of 0, an alignment not a power of two, an
/// element too small for UCX's request).
fn stride(d: &Rec, pl: &PoolLayout, rl: &RequestLayout) -> Result<u64, UcxError> {
    let elem_size = d.uint(pl.elem_size)?;
    let alignment = d.uint(pl.alignment)?;
    let corrupt = |reason: String| UcxError::corrupt(MPOOL_DATA, d.base, reason);
    if elem_size == 0 {
        return Err(corrupt("its elem_size is 0".to_string()));
    }
    if !alignment.is_power_of_two() {
        return Err(corrupt(format!(
            "its alignment {alignment} is not a power of two"
        )));
    }
    let least = pl.elem_header.saturating_add(rl.size);
    if elem_size < least {
        return Err(corrupt(format!(
            "its elem_size {elem_size} cannot hold a ucp_request_t after the element's header \
             ({least} bytes)"
        )));
    }
    elem_size
        .checked_add(alignment - 1)
        .map(|n| n & !(alignment - 1))
        .ok_or_else(|| corrupt(format!("its elem_size {elem_size} overflows")))
}

/// What one element of a chunk is read with.
#[derive(Clone, Copy)]
struct Element<'a> {
    /// The pool's address: the header of an element in use.
    mp: TargetAddr,
    pl: &'a PoolLayout,
    rl: &'a RequestLayout,
    posted: &'a HashSet<TargetAddr>,
}

impl Element<'_> {
    /// The element at `elem`, whose bytes (a whole stride) are `raw`.
    fn read(
        &self,
        ctx: &Ctx<'_>,
        elem: TargetAddr,
        raw: &[u8],
        sends: &mut Vec<UcxSendRequest>,
        receives: &mut Vec<UcxReceiveRequest>,
    ) -> Result<(), UcxError> {
        let order = ctx.order();
        let header_len = self.pl.elem_header.clamp(1, 8) as usize;
        let start = self.pl.elem_header;
        let end = start.saturating_add(self.rl.size);
        let (Some(header), Some(obj)) = (
            raw.get(..header_len),
            usize::try_from(start)
                .ok()
                .zip(usize::try_from(end).ok())
                .and_then(|(s, e)| raw.get(s..e)),
        ) else {
            // `stride` checked that an element holds its header and a request.
            return Ok(());
        };
        if TargetAddr(unsigned(header, order)) != self.mp {
            return Ok(());
        }
        let request = at(elem, self.pl.elem_header);
        let r = Rec {
            base: request,
            bytes: obj.to_vec(),
            order,
            what: "ucp_request_t",
        };
        let rl = self.rl;
        let flags = r.uint(rl.flags)? as u32;
        if flags & REQUEST_COMPLETED != 0 {
            return Ok(());
        }
        let user = at(request, rl.size);
        if let Some(send) = tag_send(ctx, rl, &r, flags)? {
            sends.push(UcxSendRequest {
                request,
                user,
                tag: r.uint(rl.send_tag)?,
                buffer: send.buffer,
                length: send.length,
                endpoint: r.uint(rl.send_ep)?,
                synchronous: send.synchronous,
                protocol: UcxProtocol::Unknown(flags),
            });
        } else if flags & REQUEST_RECV_TAG != 0 {
            receives.push(UcxReceiveRequest {
                request,
                user,
                tag: r.uint(rl.recv_tag)?,
                tag_mask: r.uint(rl.recv_mask)?,
                buffer: r.uint(rl.recv_buffer)?,
                length: r.uint(rl.recv_length)?,
                posted: self.posted.contains(&request),
            });
        }
        Ok(())
    }
}
