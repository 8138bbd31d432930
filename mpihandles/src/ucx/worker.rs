//! What a UCP worker holds of tagged traffic: receives posted and not yet
//! matched, messages that arrived before any receive matched them, and
//! requests still in progress, read from the worker's tag matching
//! (`ucp_worker_t.tm`) and request pool (`ucp_worker_t.req_mp`).

use mpidd_read::{LayoutError, LayoutNeed, Layouts, Limits, TargetMemory};
use mpidd_types::TargetAddr;
use serde::Serialize;

use super::error::UcxError;
use super::flags::PTR_MAP_KEY_INDIRECT;
use super::layout::{
    EndpointLayout, HeaderLayout, PoolLayout, RequestLayout, TagMatchLayout, UCX_NEEDS,
};
use super::{endpoints, pool, tag_match};
use crate::target::Ctx;

/// What one UCP worker (`ucp_worker_h`) holds of tagged traffic.
///
/// Tags are UCX's 64-bit tags as the MPI library built them: how they pack
/// the MPI envelope is the MPI library's business, not this reader's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UcxWorkerQueues {
    /// The worker read.
    pub worker: TargetAddr,
    /// Receives posted and not matched yet (the expected queues: the
    /// wildcard queue and the hash of full-mask tags), in posting order.
    pub posted: Vec<UcxPostedReceive>,
    /// Messages that arrived before a receive matched them, in arrival
    /// order (`ucp_tag_match_t.unexpected.all`).
    pub unexpected: Vec<UcxUnexpected>,
    /// Tagged sends not completed: those of the worker's request pool, in
    /// pool order, then those only the endpoints' lists of sends awaiting
    /// their peer's answer hold (requests the MPI library allocated itself,
    /// such as Open MPI's blocking sends).
    pub sends: Vec<UcxSendRequest>,
    /// Tagged receives not completed, from the worker's request pool, in
    /// pool order: those also in [`posted`](Self::posted) wait for a
    /// match, the others were matched and wait for their data (a
    /// rendezvous transfer, the remaining fragments).
    pub receives: Vec<UcxReceiveRequest>,
    /// What could not be read, and why (the request pool without its
    /// layouts, unexpected messages' lengths without their headers').
    pub notes: Vec<String>,
}

/// A receive posted to the worker and not matched yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UcxPostedReceive {
    /// UCX's request (`ucp_request_t *`).
    pub request: TargetAddr,
    /// Its user part, right after UCX's request: the pointer MPI libraries
    /// keep (MPICH's `ucp_request`, Open MPI's `ompi_request_t`).
    pub user: TargetAddr,
    /// The tag matched where the mask's bits are set.
    pub tag: u64,
    /// The mask: a clear bit matches either value of the tag's bit.
    pub tag_mask: u64,
    /// The user's buffer.
    pub buffer: u64,
    /// Its length in bytes.
    pub length: u64,
    /// The worker's tag-matching sequence number given when it was posted
    /// (`recv.tag.sn`): the posting order across all expected queues.
    pub sequence: u64,
}

/// How an unexpected message is being sent, or how a send request sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum UcxProtocol {
    /// Eager: the data came with the message (or, for a long message, its
    /// first fragment did).
    Eager,
    /// Eager and synchronous: the sender (an `MPI_Ssend`) waits for an
    /// acknowledgment that a receive matched it.
    EagerSync,
    /// Rendezvous: only a request to send came; the data stays with the
    /// sender, which waits until a receive matches.
    Rendezvous,
    /// Not told by what UCX keeps: the descriptor's flags (`uint16_t`), or
    /// the request's (`uint32_t`), as found.
    Unknown(u32),
}

/// The sender of an unexpected message, as its header records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UcxSender {
    /// The id of the receiver's endpoint to the sender, as the sender
    /// wrote it (`ucp_request_hdr_t.ep_id`).
    pub ep_id: u64,
    /// The sender's request id (`ucp_request_hdr_t.req_id`): the
    /// `ucp_request_t.id` of the send waiting in the sender's process.
    pub req_id: u64,
}

impl UcxSender {
    /// The address of the sender's `ucp_request_t` in the sender's
    /// process, when the id is one: UCX's ids are the request's address
    /// unless its endpoints use indirect ids (peer error handling, or
    /// `UCX_PROTO_INDIRECT_ID=on`), whose ids have their lowest bit set
    /// (`ucs_ptr_map_put`, `src/ucs/datastruct/ptr_map.inl`). It ties an
    /// unexpected message to the send of another process waiting for it.
    pub fn request(&self) -> Option<TargetAddr> {
        direct(self.req_id)
    }

    /// The receiver's own endpoint to the sender (a `ucp_ep_h` of the
    /// process read, which the MPI library maps to a rank), when the id is
    /// its address: as for [`request`](Self::request), unless endpoints use
    /// indirect ids.
    pub fn endpoint(&self) -> Option<TargetAddr> {
        direct(self.ep_id)
    }
}

/// The address an id of UCX's is, unless it is an indirect one.
fn direct(id: u64) -> Option<TargetAddr> {
    (id != 0 && id & PTR_MAP_KEY_INDIRECT == 0).then_some(TargetAddr(id))
}

/// A message that arrived before any receive matched it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UcxUnexpected {
    /// Its receive descriptor (`ucp_recv_desc_t *`); the header follows it.
    pub descriptor: TargetAddr,
    /// The sender's tag.
    pub tag: u64,
    /// How it is sent.
    pub protocol: UcxProtocol,
    /// The first fragment of a message sent eagerly in several.
    pub first_of_several: bool,
    /// The message's length in bytes, as UCX recorded it: the payload of a
    /// single-fragment eager message, the total of a fragmented one, the
    /// size a rendezvous request announces. `None` when the protocol is
    /// unknown or the headers' layouts are missing (see the notes).
    pub length: Option<u64>,
    /// The sender, where the header records it (synchronous eager and
    /// rendezvous messages).
    pub sender: Option<UcxSender>,
    /// The descriptor's flags (`UCP_RECV_DESC_FLAG_*`).
    pub flags: u16,
}

/// A tagged send that has not completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UcxSendRequest {
    /// UCX's request.
    pub request: TargetAddr,
    /// Its user part (see [`UcxPostedReceive::user`]).
    pub user: TargetAddr,
    /// The tag sent.
    pub tag: u64,
    /// The user's buffer.
    pub buffer: u64,
    /// Its length in bytes.
    pub length: u64,
    /// The endpoint (`ucp_ep_h`) it is sent on: its destination.
    pub endpoint: u64,
    /// Synchronous (`UCP_REQUEST_FLAG_SYNC`): it completes only once a
    /// receive matched it.
    pub synchronous: bool,
    /// How it is sent: `Rendezvous` for a send that is not synchronous yet
    /// waits for its peer's answer (its endpoint lists it, as UCX 1.13 does
    /// only for rendezvous and synchronous sends); otherwise `Unknown` with
    /// the request's flags, as UCX's request does not say more.
    pub protocol: UcxProtocol,
}

/// A tagged receive that has not completed, from the request pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UcxReceiveRequest {
    /// UCX's request.
    pub request: TargetAddr,
    /// Its user part (see [`UcxPostedReceive::user`]).
    pub user: TargetAddr,
    /// The tag it matches where the mask's bits are set.
    pub tag: u64,
    /// The mask.
    pub tag_mask: u64,
    /// The user's buffer.
    pub buffer: u64,
    /// Its length in bytes.
    pub length: u64,
    /// Whether it is in the expected queues (waiting for a match); if not,
    /// it was matched and its data is still arriving.
    pub posted: bool,
}

/// Whether `layouts` describes what [`read_ucx_worker`] needs (UCX's
/// request and the worker's tag matching), and if not, the first question
/// it cannot answer. The headers' and the request pool's layouts are
/// optional: without them the reading says what it could not read.
pub fn ucx_worker_layouts_missing(layouts: &dyn Layouts) -> Option<LayoutError> {
    RequestLayout::of(layouts)
        .and_then(|_| TagMatchLayout::of(layouts))
        .err()
}

/// Asks `layouts` every question the UCX readers may ask (the worker's,
/// the single request's), so that a layout profile records them all.
pub fn ask_ucx_worker_layouts(layouts: &dyn Layouts) {
    LayoutNeed::ask_all(UCX_NEEDS, layouts);
    // The later places of members UCX 1.14 and later moved, asked only
    // when UCX 1.13's are not there.
    let _ = RequestLayout::of(layouts);
    let _ = EndpointLayout::of(layouts);
}

/// Reads what the UCP worker at `worker` (a `ucp_worker_h`) holds of tagged
/// traffic: posted receives, unexpected messages, the requests of its pool
/// still in progress, and the sends its endpoints keep awaiting an answer.
///
/// The worker is the MPI library's to find (MPICH's
/// `MPIDI_UCX_global.ctx[vci].worker`, Open MPI's
/// `ompi_pml_ucx.ucp_worker`). Every size and offset comes from `layouts`
/// (UCX's DWARF, or a profile of its build, such as the one mpidd ships for
/// Debian 12's libucp); UCX's flag bits are UCX 1.13's. Every list is
/// cycle-checked and bounded by `limits` (`max_list_len` entries per list
/// and in all the expected queues together, `max_table_entries` pool
/// elements, `max_record_bytes` per read, `max_total_bytes` of pool). A
/// failure names the record and its address; the headers', the pool's or
/// the endpoints' layouts missing is a note, not a failure.
///
/// `mpihandles/tests/ucx_worker_live.rs` reads a real worker this way,
/// live and from a core.
pub fn read_ucx_worker(
    mem: &dyn TargetMemory,
    layouts: &dyn Layouts,
    worker: TargetAddr,
    limits: &Limits,
) -> Result<UcxWorkerQueues, UcxError> {
    let rl = RequestLayout::of(layouts)?;
    let tl = TagMatchLayout::of(layouts)?;
    let ctx = Ctx::without_symbols(mem, layouts, *limits);
    let mut out = UcxWorkerQueues {
        worker,
        ..UcxWorkerQueues::default()
    };
    // Before anything is read through them, the layouts must read the
    // worker's request pool as UCX names it: layouts chosen by a release
    // family rather than the build are believed only then.
    let pool = PoolLayout::of(layouts);
    if let Ok(pl) = &pool {
        pool::check_request_pool(&ctx, pl, &rl, worker)?;
    }
    out.posted = tag_match::posted(&ctx, &tl, &rl, worker)?;
    let headers = match HeaderLayout::of(layouts) {
        Ok(h) => Some(h),
        Err(e) => {
            out.notes.push(format!(
                "unexpected messages' lengths and senders are not read: {e}"
            ));
            None
        }
    };
    out.unexpected = tag_match::unexpected(&ctx, &tl, headers.as_ref(), worker)?;
    match pool {
        Ok(pl) => {
            let posted: std::collections::HashSet<TargetAddr> =
                out.posted.iter().map(|p| p.request).collect();
            let (sends, receives) = pool::in_progress(&ctx, &pl, &rl, worker, &posted)?;
            out.sends = sends;
            out.receives = receives;
        }
        Err(e) => out.notes.push(format!(
            "the worker's request pool (sends in progress) is not read: {e}"
        )),
    }
    match EndpointLayout::of(layouts) {
        Ok(el) => {
            let mut known: std::collections::HashMap<TargetAddr, usize> = out
                .sends
                .iter()
                .enumerate()
                .map(|(i, s)| (s.request, i))
                .collect();
            for answered in endpoints::answered_sends(&ctx, &el, &rl, worker)? {
                match known.get(&answered.request) {
                    Some(&i) => out.sends[i].protocol = answered.protocol,
                    None => {
                        known.insert(answered.request, out.sends.len());
                        out.sends.push(answered);
                    }
                }
            }
        }
        Err(e) => out.notes.push(format!(
            "the endpoints' sends awaiting an answer are not read: {e}"
        )),
    }
    Ok(out)
}
