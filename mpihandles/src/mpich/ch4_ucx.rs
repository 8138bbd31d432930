//! What MPICH's CH4 device keeps of an operation it handed to UCX, and
//! how it packs the envelope into UCX's tag.
//!
//! MPICH's UCX netmod (MPICH 4.0.2, `src/mpid/ch4/netmod/ucx/`) keeps only
//! a pointer to the user part of UCX's request
//! (`MPIR_Request.dev.ch4.netmod.ucx.ucp_request`), which
//! [`crate::ucx`] reads. The tag there is the one MPICH built
//! (`MPIDI_UCX_init_tag`: the context id in the top 16 bits, then
//! `CH4_UCX_RANKBITS` = 16 bits of the sender's rank, the MPI tag below);
//! a send's destination is only its endpoint, which CH4's address vector
//! maps back to a world rank. Both the queue decoder and the request views
//! read these through this module.

use std::collections::HashMap;

use mpidd_read::{LayoutError, Layouts, Limits, Member, TargetMemory};
use mpidd_types::TargetAddr;

use crate::target::{at, Ctx};
use crate::ucx::{self, ucx_layouts_missing, UcxError};

/// `MPIDI_UCX_CONTEXT_ID_BITS` (`netmod/ucx/ucx_types.h`): the context id
/// is the UCX tag's top 16 bits.
const CONTEXT_BITS: u32 = 16;
/// `CH4_UCX_RANKBITS`, configure's `--with-ch4-ucx-rankbits` (default 16,
/// which Debian keeps): the source rank's bits, below the context id.
const RANK_BITS: u32 = 16;
const TAG_BITS: u32 = 64 - CONTEXT_BITS - RANK_BITS;

/// An operation MPICH handed to UCX, as UCX's request describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UcxOperation {
    /// The context id MPICH put in the tag: a receive's communicator's
    /// receive context id, a send's communicator's (send) context id.
    pub context_id: i64,
    /// The source rank in the communicator a receive matches (`None` for
    /// `MPI_ANY_SOURCE`); for a send, the sender's own rank.
    pub rank: Option<i64>,
    /// The MPI tag (`None` for a receive's `MPI_ANY_TAG`).
    pub tag: Option<i64>,
    /// The user's buffer.
    pub buffer: u64,
    /// Its length in bytes.
    pub length: u64,
    /// A send's endpoint (its destination), `None` for a receive.
    pub endpoint: Option<u64>,
}

/// Asks `layouts` every question this module asks, for a layout profile:
/// UCX's request, and CH4's address vector only where UCX's request is
/// described, as it serves nothing else; MPICH's UCX workers.
pub fn ask_ucx_layouts(layouts: &dyn Layouts) {
    if ucx_layouts_missing(layouts).is_none() {
        let _ = AvLayout::of(layouts);
    }
    let _ = WorkersLayout::of(layouts);
}

/// The envelope MPICH packed into a UCX tag (`MPIDI_UCX_init_tag`,
/// `netmod/ucx/ucx_impl.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpichUcxTag {
    /// The context id: the sender's communicator's `context_id` plus the
    /// context offset (0 for point-to-point, 1 for collectives), which is
    /// the receiver's `recvcontext_id` (plus the same offset).
    pub context_id: i64,
    /// The sender's rank in that communicator.
    pub rank: i64,
    /// The MPI tag, with MPICH's error bits (`MPIR_TAG_ERROR_BIT` and
    /// `MPIR_TAG_PROC_FAILURE_BIT`, the top of MPICH's 31 usable bits) as
    /// the sender set them: clear on an application's messages.
    pub tag: i64,
}

/// The envelope of the UCX tag `tag` as MPICH's UCX netmod builds it: the
/// context id in the top 16 bits, then `CH4_UCX_RANKBITS` bits of the
/// sender's rank, the MPI tag below.
pub fn mpich_ucx_tag(tag: u64) -> MpichUcxTag {
    let (context_id, rank, tag) = split_tag(tag);
    MpichUcxTag {
        context_id,
        rank,
        tag,
    }
}

/// Where MPICH's UCX netmod keeps its workers: `MPIDI_UCX_global`
/// (`MPIDI_UCX_global_t`, `netmod/ucx/ucx_types.h`), one UCX context per
/// VCI in `ctx[MPIDI_CH4_MAX_VCIS]`, `num_vnis` of them in use
/// (`MPIDI_UCX_init_local`, `ucx_init.c`).
struct WorkersLayout {
    ctx: Member,
    num_vnis: Member,
    context_size: u64,
    worker: Member,
}

impl WorkersLayout {
    fn of(t: &dyn Layouts) -> Result<WorkersLayout, LayoutError> {
        Ok(WorkersLayout {
            ctx: t.member("MPIDI_UCX_global_t", "ctx")?,
            // `num_vcis` from 4.1 on.
            num_vnis: t
                .member("MPIDI_UCX_global_t", "num_vnis")
                .or_else(|_| t.member("MPIDI_UCX_global_t", "num_vcis"))?,
            context_size: t.size_of("MPIDI_UCX_context_t")?,
            worker: t.member("MPIDI_UCX_context_t", "worker")?,
        })
    }
}

/// The UCP workers (`ucp_worker_h`) MPICH's UCX netmod uses, one per VCI
/// in use, read from `MPIDI_UCX_global` at `ucx_global`. `num_vnis` is
/// bounded by the array's length and by [`Limits::max_table_entries`];
/// a NULL worker (a VCI not set up yet) is left out.
pub fn mpich_ucx_workers(
    mem: &dyn TargetMemory,
    layouts: &dyn Layouts,
    limits: Limits,
    ucx_global: TargetAddr,
) -> Result<Vec<TargetAddr>, UcxError> {
    let w = WorkersLayout::of(layouts)?;
    let ctx = Ctx::without_symbols(mem, layouts, limits);
    let num_vnis = ctx.int(
        at(ucx_global, w.num_vnis.offset),
        w.num_vnis.size,
        "MPIDI_UCX_global.num_vnis",
    )?;
    let n = ctx.count(num_vnis, ucx_global, "MPIDI_UCX_global.num_vnis")?;
    let capacity = w
        .ctx
        .array_len
        .unwrap_or(w.ctx.size / w.context_size.max(1));
    let mut workers = Vec::new();
    for vci in 0..n.min(capacity) {
        let context = at(ucx_global, w.ctx.offset + vci * w.context_size);
        let worker = ctx.pointer(
            at(context, w.worker.offset),
            "MPIDI_UCX_global.ctx[vci].worker",
        )?;
        if worker.0 != 0 {
            workers.push(worker);
        }
    }
    Ok(workers)
}

/// The three fields of MPICH's UCX tag (`MPIDI_UCX_init_tag`): context
/// id, rank, MPI tag.
fn split_tag(tag: u64) -> (i64, i64, i64) {
    let rank_mask = ((1u64 << RANK_BITS) - 1) << TAG_BITS;
    (
        (tag >> (TAG_BITS + RANK_BITS)) as i64,
        ((tag & rank_mask) >> TAG_BITS) as i64,
        (tag & ((1u64 << TAG_BITS) - 1)) as i64,
    )
}

/// The receive UCX holds for MPICH's `ucp_request` pointer `user`.
pub fn ucx_receive(
    mem: &dyn TargetMemory,
    layouts: &dyn Layouts,
    user: TargetAddr,
) -> Result<UcxOperation, UcxError> {
    ucx_receive_with(&ucx::UcxRequestReader::new(layouts)?, mem, layouts, user)
}

/// [`ucx_receive`] with UCX's request layout resolved once by `reader`,
/// for the many requests of one reading.
pub fn ucx_receive_with(
    reader: &ucx::UcxRequestReader,
    mem: &dyn TargetMemory,
    layouts: &dyn Layouts,
    user: TargetAddr,
) -> Result<UcxOperation, UcxError> {
    let r = reader.receive(mem, layouts, user)?;
    let (context_id, rank, mpi_tag) = split_tag(r.tag);
    // MPIDI_UCX_tag_mask clears the rank bits for MPI_ANY_SOURCE, and for
    // MPI_ANY_TAG the usable tag bits (MPIR_TAG_USABLE_BITS), the lowest
    // among them; bits above them may stay set.
    let (_, rank_bits, _) = split_tag(r.tag_mask);
    Ok(UcxOperation {
        context_id,
        rank: (rank_bits != 0).then_some(rank),
        tag: (r.tag_mask & 1 != 0).then_some(mpi_tag),
        buffer: r.buffer,
        length: r.length,
        endpoint: None,
    })
}

/// The send UCX holds for MPICH's `ucp_request` pointer `user`.
pub fn ucx_send(
    mem: &dyn TargetMemory,
    layouts: &dyn Layouts,
    user: TargetAddr,
) -> Result<UcxOperation, UcxError> {
    ucx_send_with(&ucx::UcxRequestReader::new(layouts)?, mem, layouts, user)
}

/// [`ucx_send`] with UCX's request layout resolved once by `reader`.
pub fn ucx_send_with(
    reader: &ucx::UcxRequestReader,
    mem: &dyn TargetMemory,
    layouts: &dyn Layouts,
    user: TargetAddr,
) -> Result<UcxOperation, UcxError> {
    let s = reader.send(mem, layouts, user)?;
    let (context_id, rank, mpi_tag) = split_tag(s.tag);
    Ok(UcxOperation {
        context_id,
        rank: Some(rank),
        tag: Some(mpi_tag),
        buffer: s.buffer,
        length: s.length,
        endpoint: Some(s.endpoint),
    })
}

/// Where CH4 keeps each world rank's UCX endpoint: the address vector
/// `MPIDI_global.avt_mgr.av_table0`, whose entries hold
/// `netmod.ucx.dest[vci][vci]` (`netmod/ucx/ucx_pre.h`); VCI 0's is the
/// one a send on VCI 0 uses.
struct AvLayout {
    table0: Member,
    size: Member,
    table: u64,
    entry_size: u64,
    dest: Member,
}

impl AvLayout {
    fn of(t: &dyn Layouts) -> Result<AvLayout, LayoutError> {
        Ok(AvLayout {
            table0: t.member("MPIDI_CH4_Global_t", "avt_mgr.av_table0")?,
            size: t.member("MPIDI_av_table_t", "size")?,
            table: t.member_offset("MPIDI_av_table_t", "table")?,
            entry_size: t.size_of("MPIDI_av_entry_t")?,
            dest: t.member("MPIDI_av_entry_t", "netmod.ucx.dest")?,
        })
    }
}

/// Each world rank by the address of its UCX endpoint (VCI 0), from CH4's
/// address vector in `MPIDI_global` (at `mpidi_global`). At most
/// [`Limits::max_table_entries`] ranks.
pub fn ucx_world_ranks_by_endpoint(
    mem: &dyn TargetMemory,
    layouts: &dyn Layouts,
    limits: Limits,
    mpidi_global: TargetAddr,
) -> Result<HashMap<u64, i64>, UcxError> {
    let av = AvLayout::of(layouts)?;
    let ctx = Ctx::without_symbols(mem, layouts, limits);
    let table = ctx.pointer(
        at(mpidi_global, av.table0.offset),
        "MPIDI_global.avt_mgr.av_table0",
    )?;
    let size = ctx.int(
        at(table, av.size.offset),
        av.size.size,
        "MPIDI_av_table_t.size",
    )?;
    let n = ctx.count(size, table, "MPIDI_av_table_t.size")?;
    let bytes = ctx.bytes(
        at(table, av.table),
        n.saturating_mul(av.entry_size),
        "MPIDI_av_table_t.table",
    )?;
    let word = ctx.word() as usize;
    let mut by_endpoint = HashMap::new();
    for rank in 0..n {
        let start = (rank * av.entry_size + av.dest.offset) as usize;
        let Some(raw) = bytes.get(start..start + word) else {
            break;
        };
        let ep = mpidd_read::decode_uint(raw, ctx.order());
        if ep != 0 {
            by_endpoint.entry(ep).or_insert(rank as i64);
        }
    }
    Ok(by_endpoint)
}
