//! MPICH's message queues with the CH4 device, read natively.
//!
//! CH4 keeps pending point-to-point operations in three places (MPICH
//! 4.0.2, `src/mpid/ch4`; docs/ch4.md has the details and evidence):
//! - the MPIDIG lists of every VCI, `MPIDI_global.per_vci[i].posted_list`
//!   and `.unexp_list`: `MPIR_Request`s chained through `next`, with their
//!   match in `dev.ch4.am.u.recv`. They carry the active-message path (a
//!   shared-memory module, or a netmod's active messages). `ch4:ucx` is
//!   configured with no shared-memory module (`MPIDI_CH4_DIRECT_NETMOD`),
//!   so there they hold little. MPICH 3.4 keeps them per communicator
//!   instead (`MPIR_Comm.dev.ch4.am.posted_list`, lists of `MPIDIG_rreq_t`
//!   pointing back to their requests), with the envelope in `dev.ch4.am`;
//! - `MPIR_Sendq_head`, the binding layer's list of nonblocking sends
//!   (`MPII_SENDQ_REMEMBER`), as under CH3; from 4.0.3 CH4's `MPID_Isend`
//!   fills it, for blocking sends too, with `MPIR_Debugq` records, beside
//!   the receive and unexpected lists that `--enable-debuginfo` adds
//!   (read as a source of their own by `read_debugger_lists`, through
//!   `mpich::debugger_lists`);
//! - nowhere but the request pools: receives the UCX netmod hands to
//!   `ucp_tag_recv_nbx` keep only a pointer to UCX's own request
//!   (`dev.ch4.netmod.ucx.ucp_request`; even `comm` stays NULL). Their
//!   communicator, source and tag are in UCX's tag (`ucp_request_t`'s
//!   `recv.tag.tag` and `recv.tag.tag_mask`), readable only when UCX's
//!   types are in the layout source. Without them each such receive is
//!   still reported, in the diagnostics, saying what is missing;
//! - CH4's self path (`ch4_self.c`), for every message on a communicator
//!   of one rank: its own queues, with the envelope in `dev.ch4.self`,
//!   also found in the request pools and told from the netmod's requests
//!   by `MPIR_Request.comm` (`self_messages`).
//!
//! Every offset comes from the library's types through the layout source;
//! world ranks come from the communicator's group, else from CH4's rank
//! map ([`mpihandles::ch4_world_ranks`]); the few constants MPICH keeps in
//! macros (the MPIDIG request status bits,
//! the UCX tag's field widths) are named where they are used, with the
//! header that defines them.
//!
//! The folder, one file per place: `layout` (the members asked),
//! `communicators` (the list or the pool, and the rank maps), `mpidig`
//! (the MPIDIG lists), `sends` (the send queue), `shm_sends_34` (what
//! 3.4 keeps of a send on the shared-memory path), `netmod` (the requests
//! of the pools: those the UCX netmod took, read from UCX's own requests,
//! and the others) and `self_messages` (which path a request is on, and
//! the self path's messages). This file holds the
//! decoder and puts one reading together. It stands on `mpich::common`,
//! the decoder trait and error, and `mpihandles` (pools, rank maps, UCX
//! requests); only `mpich` imports it, and nothing here imports CH3's
//! decoder, Open MPI's, `detect` or `mqs`.

mod communicators;
mod layout;
mod mpidig;
mod netmod;
mod netmod_choice;
mod ofi_requests;
mod self_messages;
mod sends;
mod shm_sends_34;
mod ucx_unexpected;

use std::collections::HashSet;

use mpidd_read::Limits;
use mpidd_types::TargetAddr;
use mpihandles::{Layouts, Member};

use crate::decoder::{required_symbol, DecodeError, QueueDecoder};
use crate::list_walk::at;
use crate::model::{OperationStatus, ProcessQueues};
use crate::mpich::common::{
    process_queues, read_consistently, request_status, CommCache, TypeSizes,
};
use crate::mpich::debugger_lists::{read_debugger_lists, DebugHeads, DebugqLayout};
use crate::read_ahead::ReadAhead;
use crate::target_read::{read_int, Budgeted, Record};
use layout::Layout;
use mpidd_read::LayoutError;
use mpidd_read::Target;
use mpidd_read::TargetMemory;
use mpihandles::MpichConstants;
use ucx_unexpected::other_netmod_unexpected;

/// Addresses of the globals the decoder starts from.
#[derive(Clone, Copy, Debug)]
struct Globals {
    /// `MPIR_All_communicators` and its layout's members; `None` in an
    /// MPICH built without debugger support (Debian's), whose
    /// communicators are found in their object pool instead.
    all_communicators: Option<(TargetAddr, Member, Member)>,
    mpidi_global: TargetAddr,
    sendq_head: Option<TargetAddr>,
    datatype_direct: Option<TargetAddr>,
}

/// The MPICH CH4 decoder. An instance belongs to one process: it caches
/// that process's communicators by their sequence number.
pub struct MpichCh4 {
    name: String,
    /// The wildcards' values in the library's own code (the MPI-5 ABI's
    /// in `libmpi_abi`).
    constants: MpichConstants,
    /// The netmods the build carries, in its order (`ucx`, `ofi`).
    netmods: Vec<String>,
    layout: Layout,
    globals: Globals,
    cache: CommCache,
    /// The debugger lists' heads and records, or why they cannot be read.
    debugger_lists: Result<(DebugHeads, DebugqLayout), String>,
    /// What a reading of the debugger lists is called.
    lists_name: String,
}

impl std::fmt::Debug for MpichCh4 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpichCh4")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Reads a member of its own size (1 to 8 bytes) from a record.
fn int(r: &Record<'_>, m: Member) -> Result<i64, mpidd_read::ReadError> {
    r.int(m.offset, m.size.clamp(1, 8) as usize)
}

fn uint(r: &Record<'_>, m: Member) -> Result<u64, mpidd_read::ReadError> {
    r.uint(m.offset, m.size.clamp(1, 8) as usize)
}

impl MpichCh4 {
    /// A decoder for the MPICH in `target`, whose version string and
    /// device were read from it. Fails, naming what is missing, when a
    /// symbol or type the decoder needs is not there.
    pub fn new(target: &dyn Target, version: &str, device: &str) -> Result<Self, DecodeError> {
        let types = target.layouts();
        let layout = Layout::resolve(types).map_err(DecodeError::Layouts)?;
        let list = target.symbols().lookup("MPIR_All_communicators");
        let all_communicators = match (list, layout.list) {
            (Some(list), Some((seq, head))) => Some((list.addr, seq, head)),
            _ => {
                // Without debugger support there is no list: the
                // communicator pool is read instead, which needs its
                // allocator.
                required_symbol(
                    target,
                    "MPIR_Comm_mem",
                    "neither MPIR_All_communicators (MPICH built with --enable-debuginfo) nor \
                     the communicator pool is known: the library's .symtab, its debug file or \
                     a layout profile with its symbols is needed",
                )?;
                None
            }
        };
        let globals = Globals {
            all_communicators,
            mpidi_global: required_symbol(
                target,
                "MPIDI_global",
                "CH4's global state is a local symbol: the library's .symtab (or its debug file) is needed",
            )?,
            sendq_head: target.symbols().lookup("MPIR_Sendq_head").map(|s| s.addr),
            datatype_direct: target
                .symbols()
                .lookup("MPIR_Datatype_direct")
                .map(|s| s.addr),
        };
        // The library that holds CH4's state is the one whose code put
        // the wildcards in its requests.
        let constants = target
            .symbols()
            .lookup("MPIDI_global")
            .map_or(MpichConstants::MPICH, |s| {
                MpichConstants::of_library(&s.object)
            });
        let debugger_lists = match (
            DebugHeads::find(target.symbols()),
            DebugqLayout::resolve(types),
        ) {
            (Ok(heads), Ok(l)) => Ok((heads, l)),
            (Err(names), _) => Err(format!(
                "{} missing: MPICH keeps its three debugger lists only when built with \
                 --enable-debuginfo, from 4.0.3",
                names.join(", ")
            )),
            (_, Err(missing)) => Err(DecodeError::Layouts(missing).to_string()),
        };
        Ok(MpichCh4 {
            debugger_lists,
            lists_name: format!("MPICH {version} debugger lists ({device})"),
            name: format!("native MPICH {version} decoder ({device})"),
            constants,
            netmods: netmod_choice::netmods_of(device),
            layout,
            globals,
            cache: CommCache::default(),
        })
    }

    /// Asks `layouts` the layout questions this decoder asks up front,
    /// for a layout profile ([`DecoderKind::ask_layouts`](crate::DecoderKind)).
    /// The rank maps and request pools are read through `mpihandles`,
    /// whose questions are asked as it meets each object.
    pub fn ask_layouts(layouts: &dyn Layouts) {
        let _ = Layout::resolve(layouts);
        let _ = DebugqLayout::resolve(layouts);
        // UCX's worker is described by UCX's own profile, which layers
        // under the MPI library's: its questions are not asked here.
        mpihandles::ask_ucx_layouts(layouts);
        mpihandles::ask_ch4_map_layouts(layouts, "dev.ch4.map");
    }

    /// The layouts this decoder cannot do without that `layouts` lacks.
    pub fn missing_layouts(layouts: &dyn Layouts) -> Vec<LayoutError> {
        Layout::resolve(layouts).err().unwrap_or_default()
    }

    /// The communicator list's sequence number, which changes whenever a
    /// communicator is made or freed; `None` without the list.
    fn sequence(&self, mem: &dyn TargetMemory) -> Result<Option<i64>, DecodeError> {
        let Some((list, seq, _)) = self.globals.all_communicators else {
            return Ok(None);
        };
        Ok(Some(read_int(
            mem,
            at(list, seq.offset),
            4,
            "MPIR_All_communicators.sequence_number",
        )?))
    }

    fn status(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
    ) -> Result<OperationStatus, DecodeError> {
        let l = &self.layout;
        let ptr = TargetAddr(uint(r, l.req_cc_ptr)?);
        let cc = if ptr == at(r.base, l.req_cc.offset) || ptr.0 == 0 {
            int(r, l.req_cc)?
        } else {
            read_int(mem, ptr, 4, "*MPIR_Request.cc_ptr")?
        };
        Ok(request_status(cc))
    }
}

impl QueueDecoder for MpichCh4 {
    fn name(&self) -> &str {
        &self.name
    }

    fn read_queues(
        &self,
        target: &dyn Target,
        limits: &Limits,
    ) -> Result<ProcessQueues, DecodeError> {
        let types = target.layouts();
        let budget = Budgeted::new(target.memory(), limits);
        let mem: &dyn TargetMemory = &budget;
        // A build with more than one netmod runs one, which decides where
        // the network's unexpected messages are.
        let netmod = netmod_choice::chosen_netmod(target, limits, &self.netmods);
        // UCX's requests and worker can be read; another netmod's (OFI's)
        // are with its transport. A device string naming none (a build
        // before CH4's netmods were named in it) is taken as UCX, the only
        // netmod whose families are known then.
        let ucx_runs = netmod.as_ref().is_none_or(|n| n.name == "ucx");
        let (comms, posted, unexpected, sends, (pools, ucx)) = read_consistently(
            || self.sequence(mem),
            |seq| {
                let comms = self
                    .cache
                    .get_or_read(seq, || self.read_communicators(target, mem, limits))?;
                let mut types_cache = TypeSizes::default();
                let lists = || vec![Vec::new(); comms.len()];
                let (mut posted, mut unexpected) = (lists(), lists());
                let mut seen = HashSet::new();
                self.mpidig_lists(
                    mem,
                    &comms,
                    limits,
                    &mut types_cache,
                    &mut seen,
                    &mut posted,
                    &mut unexpected,
                )?;
                let sends = match (self.globals.sendq_head, self.layout.sendq) {
                    (Some(head), Some(q)) => {
                        let mut sends = lists();
                        self.send_queue(
                            mem,
                            head,
                            q,
                            &comms,
                            limits,
                            &mut types_cache,
                            &mut seen,
                            (types, &mut sends),
                        )?;
                        Some(sends)
                    }
                    _ => None,
                };
                let mut pools = self.netmod_operations(
                    ucx_runs,
                    target,
                    mem,
                    types,
                    &comms,
                    limits,
                    &seen,
                    &mut types_cache,
                );
                // The expected queues link UCX's requests the pools led to:
                // answered from the bytes the pools' batch read.
                let ucx = match &netmod {
                    Some(n) if !ucx_runs => other_netmod_unexpected(n, comms.len()),
                    _ => {
                        let ahead =
                            ReadAhead::holding(mem, std::mem::take(&mut pools.ucx_requests));
                        self.ucx_unexpected(target, &ahead, types, &comms, limits)
                    }
                };
                Ok((comms, posted, unexpected, sends, (pools, ucx)))
            },
        )?;
        let mut notes = pools.unplaced;
        if let Some(n) = netmod.as_ref().filter(|_| self.netmods.len() > 1) {
            notes.push(format!("the rank runs the {} netmod: {}", n.name, n.how));
        }
        notes.extend(ucx.notes);
        let sends_readable = pools.sends_readable && pools.error.is_none();
        notes.extend(pools.error);
        match (&sends, sends_readable) {
            (Some(_), _) => {}
            (None, true) => notes.push(format!(
                "MPIR_Sendq_head is missing (MPICH built without debugger support): the \
                 pending sends are those of the request pools, blocking ones included{}",
                if ucx_runs {
                    ""
                } else {
                    "; those handed to the OFI netmod are in these notes"
                }
            )),
            (None, false) => notes.push(
                "MPIR_Sendq_head is missing: this MPICH does not record pending sends".to_string(),
            ),
        }
        if matches!(self.layout.queues, layout::MpidigQueues::PerComm { .. }) {
            // 3.4 queues a message for a communicator the rank has not
            // made yet by its context id (`MPIDIG_context_id_to_uelist`).
            notes.push(
                "MPICH 3.4 keeps the unexpected messages of communicators this rank has not \
                 created yet apart (MPIDI_global.comm_req_lists): not read"
                    .to_string(),
            );
        }
        if self.globals.all_communicators.is_none() {
            notes.push(
                "MPIR_All_communicators is missing (MPICH built without debugger support): \
                 the communicators were read from their object pool"
                    .to_string(),
            );
        }
        // What the netmod took joins the lists: its receives the posted
        // ones, its sends those of the send queue, or stand for them where
        // MPICH keeps none but UCX's requests can be read.
        let mut posted = posted;
        for (list, netmod) in posted.iter_mut().zip(pools.receives) {
            list.extend(netmod);
        }
        let mut unexpected = unexpected;
        for ((list, own), ucx) in unexpected
            .iter_mut()
            .zip(pools.unexpected)
            .zip(ucx.unexpected)
        {
            list.extend(own);
            list.extend(ucx);
        }
        let sends = (sends.is_some() || sends_readable).then(|| {
            let mut sends = sends.unwrap_or_else(|| vec![Vec::new(); comms.len()]);
            for (list, netmod) in sends.iter_mut().zip(pools.sends) {
                list.extend(netmod);
            }
            sends
        });
        Ok(process_queues(
            &self.name,
            comms,
            (posted, unexpected, sends),
            notes,
        ))
    }

    fn read_debugger_lists(
        &self,
        target: &dyn Target,
        limits: &Limits,
    ) -> Result<ProcessQueues, DecodeError> {
        let (heads, l) = self
            .debugger_lists
            .as_ref()
            .map_err(|why| DecodeError::unsupported(format!("no debugger lists: {why}")))?;
        let budget = Budgeted::new(target.memory(), limits);
        let mem: &dyn TargetMemory = &budget;
        // The communicators are those the native reading places its
        // operations in, so the two readings pair communicator by
        // communicator.
        let (comms, placed) = read_consistently(
            || self.sequence(mem),
            |seq| {
                let comms = self
                    .cache
                    .get_or_read(seq, || self.read_communicators(target, mem, limits))?;
                let placed = read_debugger_lists(mem, heads, l, &comms, self.constants, limits)?;
                Ok((comms, placed))
            },
        )?;
        Ok(process_queues(
            &self.lists_name,
            comms,
            (placed.posted, placed.unexpected, Some(placed.sends)),
            placed.notes,
        ))
    }
}
