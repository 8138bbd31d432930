//! MPICH's message queues with the CH4 device, read natively.
//!
//! CH4 keeps pending point-to-point operations in three places (MPICH
//! 4.0.2, `src/mpid/ch4`; docs/ch4.md has the details and evidence):
//! - the MPIDIG lists of every VCI, `MPIDI_global.per_vci[i].posted_list`
//!   and `.unexp_list`: `MPIR_Request`s chained through `next`, with their
//!   match in `dev.ch4.am.u.recv`. They carry the active-message path (a
//!   shared-memory module, or a netmod's active messages). `ch4:ucx` is
//!   configured with no shared-memory module (`MPIDI_CH4_DIRECT_NETMOD`),
//!   so there they hold little;
//! - `MPIR_Sendq_head`, the binding layer's list of nonblocking sends
//!   (`MPII_SENDQ_REMEMBER`), as under CH3;
//! - nowhere but the request pools: receives the UCX netmod hands to
//!   `ucp_tag_recv_nbx` keep only a pointer to UCX's own request
//!   (`dev.ch4.netmod.ucx.ucp_request`; even `comm` stays NULL). Their
//!   communicator, source and tag are in UCX's tag (`ucp_request_t`'s
//!   `recv.tag.tag` and `recv.tag.tag_mask`), readable only when UCX's
//!   types are in the layout source. Without them each such receive is
//!   still reported, in the diagnostics, saying what is missing.
//!
//! Every offset comes from the library's types through the layout source;
//! world ranks come from the communicator's group, else from CH4's rank
//! map ([`mpihandles::ch4_world_ranks`]); the few constants MPICH keeps in
//! macros (the MPIDIG request status bits,
//! the UCX tag's field widths) are named where they are used, with the
//! header that defines them.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use mpidd_read::Limits;
use mpidd_types::TargetAddr;
use mpihandles::{HandleError, HandleKind, Layouts, LiveObject, Member};

use crate::decoder::{DecodeError, QueueDecoder};
use crate::model::{
    Communicator, OperationStatus, PendingOperation, ProcessQueues, Protocol, Queue,
};
use crate::mpich::common::{
    at, symbol, walk, CommFinder, CommInfo, GroupLayout, ListShape, Span, TypeSizes, COMM_NAME_LEN,
    MPICH_ANY_SOURCE, MPICH_ANY_TAG, TRIES,
};
use crate::target_read::{read_bytes, read_int, read_pointer, Budgeted, Record};
use mpidd_read::LayoutError;
use mpidd_read::Target;
use mpidd_read::TargetMemory;

/// `MPIDIG_REQ_PEER_SSEND` (`ch4/include/mpidpre.h`): the sender of an
/// unexpected message waits for its match (`MPI_Ssend`, `MPI_Issend`).
const MPIDIG_REQ_PEER_SSEND: u64 = 1 << 1;
/// `MPIDIG_REQ_RTS`: only a request to send came; the data waits at the
/// sender.
const MPIDIG_REQ_RTS: u64 = 1 << 7;
/// Offsets of everything the decoder reads.
#[derive(Clone, Debug)]
struct Layout {
    /// `MPIR_All_communicators`' sequence number and head: only in an
    /// MPICH built with debugger support, like the list itself.
    list: Option<(Member, Member)>,
    comm_size: u64,
    comm_name: Member,
    comm_next: Member,
    comm_rank: Member,
    comm_remote_size: Member,
    comm_local_size: Member,
    comm_kind: Member,
    comm_context_id: Member,
    comm_recvcontext_id: Member,
    comm_local_group: Member,
    group: GroupLayout,
    n_vcis: Member,
    per_vci: Member,
    per_vci_size: u64,
    vci_posted: Member,
    vci_unexp: Member,
    req_size: u64,
    req_kind: Member,
    req_cc: Member,
    req_cc_ptr: Member,
    req_comm: Member,
    req_next: Member,
    /// `dev.is_local` and `dev.anysource_partner_request`: absent when
    /// CH4 runs without a shared-memory module (`MPIDI_CH4_DIRECT_NETMOD`,
    /// the default with UCX), where every operation is the netmod's.
    req_is_local: Option<Member>,
    req_partner: Option<Member>,
    am_req: Member,
    am_buffer: Member,
    am_count: Member,
    am_datatype: Member,
    am_source: Member,
    am_tag: Member,
    am_context: Member,
    ext_status: Member,
    /// `dev.ch4.netmod.ucx.ucp_request`, when the netmod is UCX.
    ucx_request: Option<Member>,
    /// `MPIR_Request_kind_t`'s values for a receive and a send.
    kind_recv: i128,
    kind_send: Option<i128>,
    sendq: Option<SendqLayout>,
    datatype_size: Option<(u64, u64)>,
}

/// `MPIR_Sendq`, when MPICH was built with debugger support.
#[derive(Clone, Copy, Debug)]
struct SendqLayout {
    size: u64,
    sreq: Member,
    tag: Member,
    rank: Member,
    context: Member,
    next: Member,
}

/// Each world rank by its UCX endpoint's address, read once per reading
/// when a send needs it, or why it could not be.
type Endpoints = std::cell::OnceCell<Result<HashMap<u64, i64>, String>>;

impl Layout {
    fn resolve(t: &dyn Layouts) -> Result<Layout, Vec<LayoutError>> {
        let mut missing = Vec::new();
        let mut m = |ty: &str, path: &str| -> Member {
            t.member(ty, path).unwrap_or_else(|e| {
                missing.push(e);
                Member {
                    offset: 0,
                    size: 0,
                    array_len: None,
                }
            })
        };
        const C: &str = "MPIR_Comm";
        const R: &str = "MPIR_Request";
        let list = t
            .member("MPIR_Comm_list", "sequence_number")
            .and_then(|seq| Ok((seq, t.member("MPIR_Comm_list", "head")?)))
            .ok();
        let mut l = Layout {
            list,
            comm_size: 0,
            comm_name: m(C, "name"),
            comm_next: m(C, "comm_next"),
            comm_rank: m(C, "rank"),
            comm_remote_size: m(C, "remote_size"),
            comm_local_size: m(C, "local_size"),
            comm_kind: m(C, "comm_kind"),
            comm_context_id: m(C, "context_id"),
            comm_recvcontext_id: m(C, "recvcontext_id"),
            comm_local_group: m(C, "local_group"),
            group: GroupLayout {
                size: m("MPIR_Group", "size").offset,
                pmap: m("MPIR_Group", "lrank_to_lpid").offset,
                pmap_size: 0,
                pmap_lpid: m("MPII_Group_pmap_t", "lpid").offset,
            },
            n_vcis: m("MPIDI_CH4_Global_t", "n_vcis"),
            per_vci: m("MPIDI_CH4_Global_t", "per_vci"),
            per_vci_size: 0,
            vci_posted: m("MPIDI_per_vci_t", "posted_list"),
            vci_unexp: m("MPIDI_per_vci_t", "unexp_list"),
            req_size: 0,
            req_kind: m(R, "kind"),
            req_cc: m(R, "cc"),
            req_cc_ptr: m(R, "cc_ptr"),
            req_comm: m(R, "comm"),
            req_next: m(R, "next"),
            req_is_local: t.member(R, "dev.is_local").ok(),
            req_partner: t.member(R, "dev.anysource_partner_request").ok(),
            am_req: m(R, "dev.ch4.am.req"),
            am_buffer: m(R, "dev.ch4.am.buffer"),
            am_count: m(R, "dev.ch4.am.count"),
            am_datatype: m(R, "dev.ch4.am.datatype"),
            am_source: m(R, "dev.ch4.am.u.recv.source"),
            am_tag: m(R, "dev.ch4.am.u.recv.tag"),
            am_context: m(R, "dev.ch4.am.u.recv.context_id"),
            ext_status: m("MPIDIG_req_ext_t", "status"),
            ucx_request: t.member(R, "dev.ch4.netmod.ucx.ucp_request").ok(),
            kind_recv: 0,
            kind_send: None,
            sendq: None,
            datatype_size: None,
        };
        let mut size = |ty: &str| {
            t.size_of(ty).unwrap_or_else(|e| {
                missing.push(e);
                0
            })
        };
        l.comm_size = size(C);
        l.group.pmap_size = size("MPII_Group_pmap_t");
        l.per_vci_size = size("MPIDI_per_vci_t");
        l.req_size = size(R);
        match t.member_enumerators(R, "kind") {
            Ok(kinds) => match kinds.iter().find(|(n, _)| n == "MPIR_REQUEST_KIND__RECV") {
                Some((_, v)) => {
                    l.kind_recv = *v;
                    l.kind_send = kinds
                        .iter()
                        .find(|(n, _)| n == "MPIR_REQUEST_KIND__SEND")
                        .map(|(_, v)| *v);
                }
                None => missing.push(LayoutError {
                    type_name: R.to_string(),
                    member: Some("kind".to_string()),
                    reason: "its enumeration has no MPIR_REQUEST_KIND__RECV".to_string(),
                }),
            },
            Err(e) => missing.push(e),
        }
        // Only with debugger support, and only needed for the send queue.
        let q = |p: &str| t.member("MPIR_Sendq", p);
        if let (Ok(size), Ok(sreq), Ok(tag), Ok(rank), Ok(context), Ok(next)) = (
            t.size_of("MPIR_Sendq"),
            q("sreq"),
            q("tag"),
            q("rank"),
            q("context_id"),
            q("next"),
        ) {
            l.sendq = Some(SendqLayout {
                size,
                sreq,
                tag,
                rank,
                context,
                next,
            });
        }
        if let (Ok(size), Ok(m)) = (
            t.size_of("MPIR_Datatype"),
            t.member("MPIR_Datatype", "size"),
        ) {
            l.datatype_size = Some((size, m.offset));
        }
        if missing.is_empty() {
            Ok(l)
        } else {
            Err(missing)
        }
    }
}

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
    layout: Layout,
    globals: Globals,
    cache: Mutex<Option<(i64, Vec<CommInfo>)>>,
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

/// What the request pools add to the MPIDIG lists and the send queue.
#[derive(Default)]
struct PoolFindings {
    /// Receives that went to the netmod, by communicator index.
    receives: Vec<Vec<PendingOperation>>,
    /// Sends that went to the netmod and no send queue holds, by
    /// communicator index.
    sends: Vec<Vec<PendingOperation>>,
    /// Operations whose communicator is unknown, described.
    unplaced: Vec<String>,
    /// Whether every pending send of the pools was read with its
    /// communicator and tag: the pools were read, and UCX's types describe
    /// its send requests.
    sends_readable: bool,
    /// Why the pools could not be read, if they could not.
    error: Option<String>,
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
                symbol(
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
            mpidi_global: symbol(
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
        Ok(MpichCh4 {
            name: format!("native MPICH {version} decoder ({device})"),
            layout,
            globals,
            cache: Mutex::new(None),
        })
    }

    /// Asks `layouts` the layout questions this decoder asks up front,
    /// for a layout profile ([`DecoderKind::ask_layouts`](crate::DecoderKind)).
    /// The rank maps and request pools are read through `mpihandles`,
    /// whose questions are asked as it meets each object.
    pub fn ask_layouts(layouts: &dyn Layouts) {
        let _ = Layout::resolve(layouts);
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

    fn read_communicators(
        &self,
        target: &dyn Target,
        mem: &dyn TargetMemory,
        limits: &Limits,
    ) -> Result<Vec<CommInfo>, DecodeError> {
        let l = &self.layout;
        let types = target.layouts();
        let mut comms = Vec::new();
        match self.globals.all_communicators {
            Some((list, _, head)) => {
                let head = read_pointer(mem, at(list, head.offset), "MPIR_All_communicators.head")?;
                walk(
                    mem,
                    head,
                    ListShape {
                        next_offset: l.comm_next.offset,
                        span: Span {
                            start: 0,
                            end: l.comm_size,
                        },
                        what: "MPIR_Comm",
                        end: TargetAddr(0),
                    },
                    limits,
                    |r| {
                        comms.push(self.communicator(mem, types, limits, r)?);
                        Ok(())
                    },
                )?;
            }
            None => {
                let pool = |found: Result<Vec<LiveObject>, HandleError>, what: &str| {
                    found.map_err(|e| {
                        DecodeError::unsupported(format!("the communicator pool ({what}): {e}"))
                    })
                };
                let (symbols, comm) = (target.symbols(), HandleKind::Comm);
                let builtin = pool(
                    mpihandles::builtin_mpich_objects(mem, symbols, types, *limits, comm),
                    "predefined",
                )?;
                let allocated = pool(
                    mpihandles::live_mpich_objects(mem, symbols, types, *limits, comm),
                    "allocated",
                )?;
                let order = mem.abi().byte_order;
                for object in builtin.iter().chain(&allocated) {
                    let r = Record {
                        base: object.addr,
                        start: 0,
                        bytes: &object.bytes,
                        order,
                        what: "MPIR_Comm",
                    };
                    comms.push(self.communicator(mem, types, limits, &r)?);
                }
            }
        }
        comms.sort_by_key(|c| (c.recvcontext_id, c.addr.0));
        Ok(comms)
    }

    /// One communicator, with its world ranks when they can be read.
    fn communicator(
        &self,
        mem: &dyn TargetMemory,
        types: &dyn Layouts,
        limits: &Limits,
        r: &Record<'_>,
    ) -> Result<CommInfo, DecodeError> {
        let l = &self.layout;
        let word = mem.abi().address_bytes();
        let addr = r.base;
        let kind = int(r, l.comm_kind)?;
        let size = if kind == 0 {
            int(r, l.comm_local_size)?
        } else {
            int(r, l.comm_remote_size)?
        };
        let group = TargetAddr(r.uint(l.comm_local_group.offset, word)?);
        let name = r.chars(l.comm_name.offset, COMM_NAME_LEN)?;
        // An intercommunicator's peers are its remote side, which only the
        // map (`dev.ch4.map`) gives.
        let map = || {
            mpihandles::ch4_world_ranks(mem, types, *limits, addr, "dev.ch4.map", size)
                .map_err(|e| DecodeError::unsupported(format!("its rank map: {e}")))
        };
        let world = if kind == 0 && group.0 != 0 {
            l.group
                .world_ranks(mem, group, size, limits)
                .or_else(|_| map())
        } else {
            map()
        };
        let (world, world_error) = match world {
            Ok(w) => (Some(w), None),
            Err(e) => (
                None,
                Some(format!(
                    "communicator `{name}` (MPIR_Comm at {addr}): no world ranks: {e}"
                )),
            ),
        };
        Ok(CommInfo {
            addr,
            name,
            context_id: uint(r, l.comm_context_id)? as i64,
            recvcontext_id: uint(r, l.comm_recvcontext_id)? as i64,
            rank: int(r, l.comm_rank)?,
            size,
            world,
            world_error,
        })
    }

    /// The communicators, from the cache while the list's sequence number
    /// is `seq`; read afresh every time without the list, which has no
    /// sequence number to tell a change.
    fn communicators_for(
        &self,
        target: &dyn Target,
        mem: &dyn TargetMemory,
        seq: Option<i64>,
        limits: &Limits,
    ) -> Result<Vec<CommInfo>, DecodeError> {
        let Some(seq) = seq else {
            return self.read_communicators(target, mem, limits);
        };
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((cached, comms)) = cache.as_ref() {
            if *cached == seq {
                return Ok(comms.clone());
            }
        }
        let comms = self.read_communicators(target, mem, limits)?;
        *cache = Some((seq, comms.clone()));
        Ok(comms)
    }

    /// The posted and unexpected lists of every VCI, appended to `posted`
    /// and `unexpected` by communicator; every request met is added to
    /// `seen`.
    #[allow(clippy::too_many_arguments)]
    fn mpidig_lists(
        &self,
        mem: &dyn TargetMemory,
        comms: &[CommInfo],
        limits: &Limits,
        types: &mut TypeSizes,
        seen: &mut HashSet<u64>,
        posted: &mut [Vec<PendingOperation>],
        unexpected: &mut [Vec<PendingOperation>],
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let g = self.globals.mpidi_global;
        let n_vcis = read_int(mem, at(g, l.n_vcis.offset), 4, "MPIDI_global.n_vcis")?;
        // `per_vci` is an array of MPIDI_CH4_MAX_VCIS entries; `n_vcis`
        // of them are in use.
        let max = l
            .per_vci
            .array_len
            .unwrap_or(l.per_vci.size / l.per_vci_size.max(1));
        let n = u64::try_from(n_vcis).unwrap_or(0).min(max);
        for vci in 0..n {
            let base = at(g, l.per_vci.offset + vci * l.per_vci_size);
            for (unexp, list, out) in [
                (false, l.vci_posted, &mut *posted),
                (true, l.vci_unexp, &mut *unexpected),
            ] {
                let first = read_pointer(mem, at(base, list.offset), "MPIDI_per_vci_t list head")?;
                let mut finder = CommFinder::default();
                walk(
                    mem,
                    first,
                    ListShape {
                        next_offset: l.req_next.offset,
                        span: Span {
                            start: 0,
                            end: l.req_size,
                        },
                        what: if unexp {
                            "MPIDIG unexpected list (MPIR_Request)"
                        } else {
                            "MPIDIG posted list (MPIR_Request)"
                        },
                        end: TargetAddr(0),
                    },
                    limits,
                    |r| {
                        seen.insert(r.base.0);
                        let context = uint(r, l.am_context)? as i64;
                        let Some(ci) = finder.find(comms, context, |c| c.recvcontext_id) else {
                            return Ok(());
                        };
                        let op = self.mpidig_operation(mem, r, &comms[ci], unexp, types)?;
                        out[ci].push(op);
                        Ok(())
                    },
                )?;
            }
        }
        Ok(())
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
        Ok(if cc == 0 {
            OperationStatus::Complete
        } else {
            OperationStatus::Pending
        })
    }

    fn mpidig_operation(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        comm: &CommInfo,
        unexpected: bool,
        types: &mut TypeSizes,
    ) -> Result<PendingOperation, DecodeError> {
        let l = &self.layout;
        let status = self.status(mem, r)?;
        let rank = int(r, l.am_source)?;
        let tag = int(r, l.am_tag)?;
        let buffer = uint(r, l.am_buffer)?;
        let count = int(r, l.am_count)?;
        let world = |rank: i64| world_of(comm, rank);
        if unexpected {
            // An unexpected message is received as bytes: `count` is its
            // size and `datatype` MPI_BYTE (`create_unexp_rreq`).
            let ext = TargetAddr(uint(r, l.am_req)?);
            let flags = if ext.0 == 0 {
                None
            } else {
                Some(read_int(
                    mem,
                    at(ext, l.ext_status.offset),
                    l.ext_status.size.clamp(1, 8) as usize,
                    "MPIDIG_req_ext_t.status",
                )? as u64)
            };
            return Ok(PendingOperation {
                status,
                desired_local_rank: rank,
                desired_global_rank: world(rank),
                tag_wild: false,
                desired_tag: tag,
                desired_length: count,
                system_buffer: buffer != 0,
                buffer,
                actual_local_rank: rank,
                actual_global_rank: world(rank),
                actual_tag: tag,
                actual_length: count,
                extra_text: Vec::new(),
                desired_count: None,
                protocol: flags.map(|f| {
                    if f & MPIDIG_REQ_RTS != 0 {
                        Protocol::Rendezvous
                    } else {
                        Protocol::Eager
                    }
                }),
                synchronous: flags.map(|f| f & MPIDIG_REQ_PEER_SSEND != 0),
            });
        }
        let datatype = int(r, l.am_datatype)?;
        let any_source = rank == MPICH_ANY_SOURCE;
        let any_tag = tag == MPICH_ANY_TAG;
        let (length, extra) = self.length(mem, count, datatype, types);
        Ok(PendingOperation {
            status,
            desired_local_rank: if any_source { -1 } else { rank },
            desired_global_rank: if any_source { -1 } else { world(rank) },
            tag_wild: any_tag,
            desired_tag: if any_tag { -1 } else { tag },
            desired_length: length,
            system_buffer: false,
            buffer,
            actual_local_rank: -1,
            actual_global_rank: -1,
            actual_tag: -1,
            actual_length: -1,
            extra_text: extra,
            desired_count: Some(count),
            protocol: None,
            synchronous: None,
        })
    }

    /// Bytes of `count` elements of `datatype`, or the count when the
    /// datatype's size cannot be read (said in the extra text).
    fn length(
        &self,
        mem: &dyn TargetMemory,
        count: i64,
        datatype: i64,
        types: &mut TypeSizes,
    ) -> (i64, Vec<String>) {
        match types.size_of(
            mem,
            datatype,
            self.layout.datatype_size,
            self.globals.datatype_direct,
        ) {
            Some(size) => (count.saturating_mul(size as i64), Vec::new()),
            None => (
                count,
                vec![format!(
                    "length in elements: datatype {datatype:#x} has no readable size"
                )],
            ),
        }
    }

    /// Receives that no MPIDIG list holds and sends that no send queue
    /// holds, from the request pools: those the netmod took.
    #[allow(clippy::too_many_arguments)]
    fn netmod_operations(
        &self,
        target: &dyn Target,
        mem: &dyn TargetMemory,
        types: &dyn Layouts,
        comms: &[CommInfo],
        limits: &Limits,
        seen: &HashSet<u64>,
    ) -> PoolFindings {
        let mut found = PoolFindings {
            receives: vec![Vec::new(); comms.len()],
            sends: vec![Vec::new(); comms.len()],
            unplaced: Vec::new(),
            sends_readable: false,
            error: None,
        };
        let objects = match mpihandles::live_mpich_objects(
            mem,
            target.symbols(),
            types,
            *limits,
            HandleKind::Request,
        ) {
            Ok(objects) => objects,
            Err(e) => {
                found.error = Some(format!(
                    "the request pools could not be read, so receives handed to the netmod are \
                     missing: {e}"
                ));
                return found;
            }
        };
        let ucx = match mpihandles::ucx_layouts_missing(types) {
            None => Ok(()),
            Some(e) => Err(e),
        };
        found.sends_readable = ucx.is_ok();
        // Read only when a send needs it; its failure is said there.
        let endpoints = Endpoints::default();
        let order = mem.abi().byte_order;
        let mut any = false;
        for object in objects {
            let r = Record {
                base: object.addr,
                start: 0,
                bytes: &object.bytes,
                order,
                what: "MPIR_Request",
            };
            match self.netmod_receive(mem, types, &r, comms, seen) {
                Ok(Some((Some(ci), op))) => {
                    any = true;
                    found.receives[ci].push(op)
                }
                Ok(Some((None, op))) => {
                    any = true;
                    found.unplaced.push(format!(
                    "a pending receive posted to UCX (MPIR_Request at {}) whose communicator is \
                     unknown: {}",
                    r.base,
                    op.extra_text.join("; ")
                ))
                }
                Ok(None) => {
                    match self.netmod_send(&r, comms, seen, &endpoints, (mem, types, limits)) {
                        Ok(Some((Some(ci), op))) => {
                            any = true;
                            found.sends[ci].push(op)
                        }
                        Ok(Some((None, op))) => {
                            any = true;
                            found.unplaced.push(format!(
                                "a pending send handed to UCX (MPIR_Request at {}) whose \
                             communicator is unknown: {}",
                                r.base,
                                op.extra_text.join("; ")
                            ))
                        }
                        Ok(None) => {}
                        Err(e) => {
                            found.error.get_or_insert_with(|| {
                                format!(
                                    "a request of the pools at {} could not be read: {e}",
                                    r.base
                                )
                            });
                        }
                    }
                }
                Err(e) => {
                    found.error.get_or_insert_with(|| {
                        format!(
                            "a request of the pools at {} could not be read: {e}",
                            r.base
                        )
                    });
                }
            }
        }
        if let (true, Err(e)) = (any, &ucx) {
            found.unplaced.push(format!("UCX's types: {e}"));
        }
        found
    }

    /// A request of the pools of kind `kind` that no list holds, that the
    /// netmod took and that has not completed: its status, the index of
    /// its communicator when the request names one, and MPICH's pointer to
    /// UCX's request. `None` for any other request.
    #[allow(clippy::type_complexity)]
    fn netmod_request(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        kind: i128,
        comms: &[CommInfo],
        seen: &HashSet<u64>,
    ) -> Result<Option<(OperationStatus, Option<usize>, TargetAddr)>, DecodeError> {
        let l = &self.layout;
        if seen.contains(&r.base.0) || i128::from(int(r, l.req_kind)?) != kind {
            return Ok(None);
        }
        // Requests of the shared-memory path are MPIDIG's: a matched one
        // is no longer pending for a debugger.
        if let Some(local) = l.req_is_local {
            if int(r, local)? != 0 {
                return Ok(None);
            }
        }
        // The netmod half of an MPI_ANY_SOURCE receive, whose shared-memory
        // half is the one the application holds (and is listed).
        let partner = match l.req_partner {
            Some(p) => uint(r, p)?,
            None => 0,
        };
        if partner != 0 && seen.contains(&partner) {
            return Ok(None);
        }
        let status = self.status(mem, r)?;
        if status == OperationStatus::Complete {
            return Ok(None);
        }
        let Some(ucp_member) = l.ucx_request else {
            return Ok(None);
        };
        let comm_addr = uint(r, l.req_comm)?;
        let ci = comms
            .iter()
            .position(|c| c.addr.0 == comm_addr && comm_addr != 0);
        Ok(Some((status, ci, TargetAddr(uint(r, ucp_member)?))))
    }

    /// A receive of the pools that no MPIDIG list holds and that has not
    /// completed, with the index of its communicator when known: MPICH
    /// 4.0.2's UCX netmod leaves `MPIR_Request.comm` NULL
    /// (`MPIR_Request_create_from_pool` in `MPIDI_UCX_recv`), so the
    /// communicator comes from the context id of UCX's tag.
    #[allow(clippy::type_complexity)]
    fn netmod_receive(
        &self,
        mem: &dyn TargetMemory,
        types: &dyn Layouts,
        r: &Record<'_>,
        comms: &[CommInfo],
        seen: &HashSet<u64>,
    ) -> Result<Option<(Option<usize>, PendingOperation)>, DecodeError> {
        let Some((status, mut ci, ucp)) =
            self.netmod_request(mem, r, self.layout.kind_recv, comms, seen)?
        else {
            return Ok(None);
        };
        let mut op = unknown_operation(status);
        if ucp.0 == 0 {
            op.extra_text
                .push("posted to UCX; its UCX request pointer is NULL".to_string());
            return Ok(Some((ci, op)));
        }
        let u = match mpihandles::ucx_receive(mem, types, ucp) {
            Ok(u) => u,
            Err(mpihandles::UcxError::Layouts(_)) => {
                op.extra_text.push(format!(
                    "posted to UCX: communicator, source, tag and buffer are in UCX's request at \
                     {ucp}, unreadable without UCX's types (ucp_request_t)"
                ));
                return Ok(Some((ci, op)));
            }
            Err(mpihandles::UcxError::Read(e)) => return Err(e.into()),
        };
        op.buffer = u.buffer;
        op.desired_length = u.length as i64;
        if ci.is_none() {
            ci = comms.iter().position(|c| c.recvcontext_id == u.context_id);
        }
        let Some(index) = ci else {
            op.extra_text.push(format!(
                "posted to UCX with context id {}, which is no communicator's",
                u.context_id
            ));
            return Ok(Some((None, op)));
        };
        if let Some(rank) = u.rank {
            op.desired_local_rank = rank;
            op.desired_global_rank = world_of(&comms[index], rank);
        }
        match u.tag {
            Some(tag) => op.desired_tag = tag,
            None => op.tag_wild = true,
        }
        op.extra_text.push("posted to UCX".to_string());
        Ok(Some((ci, op)))
    }

    /// A send of the pools that no send queue holds and that has not
    /// completed, with the index of its communicator when known. UCX's tag
    /// gives the communicator (the context id the send uses) and the tag;
    /// the destination is the rank whose endpoint the send uses, in CH4's
    /// address vector.
    #[allow(clippy::type_complexity)]
    fn netmod_send(
        &self,
        r: &Record<'_>,
        comms: &[CommInfo],
        seen: &HashSet<u64>,
        endpoints: &Endpoints,
        (mem, types, limits): (&dyn TargetMemory, &dyn Layouts, &Limits),
    ) -> Result<Option<(Option<usize>, PendingOperation)>, DecodeError> {
        let Some(kind_send) = self.layout.kind_send else {
            return Ok(None);
        };
        let Some((status, mut ci, ucp)) = self.netmod_request(mem, r, kind_send, comms, seen)?
        else {
            return Ok(None);
        };
        let mut op = unknown_operation(status);
        if ucp.0 == 0 {
            op.extra_text
                .push("sent through UCX; its UCX request pointer is NULL".to_string());
            return Ok(Some((ci, op)));
        }
        let u = match mpihandles::ucx_send(mem, types, ucp) {
            Ok(u) => u,
            Err(mpihandles::UcxError::Layouts(_)) => {
                op.extra_text.push(format!(
                    "sent through UCX: communicator, tag, buffer and length are in UCX's \
                     request at {ucp}, unreadable without UCX's types (ucp_request_t)"
                ));
                return Ok(Some((ci, op)));
            }
            Err(mpihandles::UcxError::Read(e)) => return Err(e.into()),
        };
        op.buffer = u.buffer;
        op.desired_length = u.length as i64;
        op.actual_length = op.desired_length;
        op.desired_tag = u.tag.unwrap_or(-1);
        op.actual_tag = op.desired_tag;
        if ci.is_none() {
            ci = comms.iter().position(|c| c.context_id == u.context_id);
        }
        let Some(index) = ci else {
            op.extra_text.push(format!(
                "sent through UCX with context id {}, which is no communicator's",
                u.context_id
            ));
            return Ok(Some((None, op)));
        };
        let ep = u.endpoint.unwrap_or(0);
        let endpoints = endpoints.get_or_init(|| {
            mpihandles::ucx_world_ranks_by_endpoint(mem, types, *limits, self.globals.mpidi_global)
                .map_err(|e| e.to_string())
        });
        match endpoints {
            Ok(by_ep) => match by_ep.get(&ep) {
                Some(&world) => {
                    let local = comms[index]
                        .world
                        .as_ref()
                        .and_then(|w| w.iter().position(|&r| r == world))
                        .map_or(-1, |i| i as i64);
                    op.desired_global_rank = world;
                    op.desired_local_rank = local;
                    op.actual_global_rank = world;
                    op.actual_local_rank = local;
                    op.extra_text.push("sent through UCX".to_string());
                }
                None => op.extra_text.push(format!(
                    "sent through UCX to endpoint {ep:#x}, which is no world rank's"
                )),
            },
            Err(e) => op.extra_text.push(format!(
                "sent through UCX; its destination is the endpoint {ep:#x}, whose rank is \
                 unknown: {e}"
            )),
        }
        Ok(Some((ci, op)))
    }

    /// The nonblocking sends of `MPIR_Sendq_head`, by communicator.
    #[allow(clippy::too_many_arguments)]
    fn send_queue(
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
                    let (length, more) = self.length(mem, count, datatype, types);
                    extra.extend(more);
                    (length, Some(count), uint(&r, l.am_buffer)?)
                } else {
                    extra.push(
                        "sent through UCX: MPICH keeps neither its buffer nor its length"
                            .to_string(),
                    );
                    (-1, None, 0)
                };
                let global = world_of(comm, rank);
                out[ci].push(PendingOperation {
                    status: self.status(mem, &r)?,
                    desired_local_rank: rank,
                    desired_global_rank: global,
                    tag_wild: false,
                    desired_tag: tag,
                    desired_length: length,
                    system_buffer: false,
                    buffer,
                    actual_local_rank: rank,
                    actual_global_rank: global,
                    actual_tag: tag,
                    actual_length: length,
                    extra_text: extra,
                    desired_count: count,
                    protocol: None,
                    synchronous: None,
                });
                Ok(())
            },
        )
    }
}

/// A pending operation of which nothing but its status is known yet.
fn unknown_operation(status: OperationStatus) -> PendingOperation {
    PendingOperation {
        status,
        desired_local_rank: -1,
        desired_global_rank: -1,
        tag_wild: false,
        desired_tag: -1,
        desired_length: -1,
        system_buffer: false,
        buffer: 0,
        actual_local_rank: -1,
        actual_global_rank: -1,
        actual_tag: -1,
        actual_length: -1,
        extra_text: Vec::new(),
        desired_count: None,
        protocol: None,
        synchronous: None,
    }
}

/// The world rank of `rank` in `comm`, or −1.
fn world_of(comm: &CommInfo, rank: i64) -> i64 {
    usize::try_from(rank)
        .ok()
        .and_then(|i| comm.world.as_ref()?.get(i).copied())
        .unwrap_or(-1)
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
        let mut first = self.sequence(mem)?;
        let mut last = first;
        for _ in 0..TRIES {
            let comms = self.communicators_for(target, mem, first, limits)?;
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
                        &mut sends,
                    )?;
                    Some(sends)
                }
                _ => None,
            };
            let pools = self.netmod_operations(target, mem, types, &comms, limits, &seen);
            last = self.sequence(mem)?;
            if last != first {
                first = last;
                continue;
            }
            let rank = comms
                .iter()
                .find(|c| c.recvcontext_id == 0)
                .map_or(-1, |world| world.rank);
            let read = |operations| Queue::Read {
                operations,
                truncated: false,
            };
            let mut diagnostics: Vec<String> =
                comms.iter().filter_map(|c| c.world_error.clone()).collect();
            diagnostics.extend(pools.unplaced);
            let sends_readable = pools.sends_readable && pools.error.is_none();
            diagnostics.extend(pools.error);
            match (&sends, sends_readable) {
                (Some(_), _) => {}
                (None, true) => diagnostics.push(
                    "MPIR_Sendq_head is missing (MPICH built without debugger support): the \
                     pending sends are those of the request pools, blocking ones included"
                        .to_string(),
                ),
                (None, false) => diagnostics.push(
                    "MPIR_Sendq_head is missing: this MPICH does not record pending sends"
                        .to_string(),
                ),
            }
            if self.globals.all_communicators.is_none() {
                diagnostics.push(
                    "MPIR_All_communicators is missing (MPICH built without debugger support): \
                     the communicators were read from their object pool"
                        .to_string(),
                );
            }
            let sends_known = sends.is_some() || sends_readable;
            let mut sends = sends.unwrap_or_else(lists).into_iter();
            let out: Vec<Communicator> = comms
                .into_iter()
                .zip(posted.into_iter().zip(unexpected))
                .zip(pools.receives.into_iter().zip(pools.sends))
                .map(|((c, (mut posted, unexpected)), (netmod, netmod_sends))| {
                    posted.extend(netmod);
                    let mut queued = sends.next().unwrap_or_default();
                    queued.extend(netmod_sends);
                    Communicator {
                        name: c.name,
                        size: c.size,
                        local_rank: c.rank,
                        unique_id: c.addr.0,
                        context_id: Some(c.context_id),
                        recv_context_id: Some(c.recvcontext_id),
                        group: c.world,
                        pending_sends: if sends_known {
                            read(queued)
                        } else {
                            Queue::NoInformation
                        },
                        pending_receives: read(posted),
                        unexpected_messages: read(unexpected),
                    }
                })
                .collect();
            return Ok(ProcessQueues {
                source: self.name.clone(),
                global_rank: rank,
                communicators: out,
                truncated: false,
                diagnostics,
            });
        }
        Err(DecodeError::KeptChanging {
            tries: TRIES,
            first: first.unwrap_or(-1),
            last: last.unwrap_or(-1),
        })
    }
}
