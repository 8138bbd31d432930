//! MPICH's message queues with the CH3 device, read natively.
//!
//! What MPICH keeps for debuggers:
//! - `MPIR_All_communicators`, an `MPIR_Comm_list` whose `sequence_number`
//!   changes whenever a communicator is created or freed, and whose `head`
//!   chains every `MPIR_Comm` through `comm_next`;
//! - `MPID_Recvq_posted_head_ptr` and `MPID_Recvq_unexpected_head_ptr`,
//!   pointers to the heads of the two receive queues of `MPIR_Request`s
//!   (chained through `next`), whose match fields sit in
//!   `dev.match.parts` (`tag`, `rank`, `context_id`);
//! - `MPIR_Sendq_head`, a list of `MPIR_Sendq` records for the nonblocking
//!   sends the application has not completed.
//!
//! Every offset comes from the library's own types through a
//! [`Layouts`]; a missing one stops the decoder before it reads
//! anything. Scalar widths are MPICH's declarations: `int` is 4 bytes,
//! context ids 2, ranks in a match 2, `MPI_Aint`, `intptr_t` and pointers
//! the target's address width.
//!
//! Beyond what MPICH's own `libtvmpich.so` reports, this decoder gives
//! `MPI_COMM_WORLD` ranks (from the communicator's group, or its virtual
//! connection table), reports MPICH's `MPI_ANY_SOURCE` (−2) as −1 and
//! `MPI_ANY_TAG` as `tag_wild`, and gives lengths in bytes wherever the
//! datatype's size can be read (predefined types and types in the direct
//! pool), with the element count alongside.

use std::cell::RefCell;
use std::sync::Mutex;

use mpidd_read::{Limits, SymbolSource};
use mpidd_types::TargetAddr;

use crate::decoder::{DecodeError, QueueDecoder};
use crate::model::{
    Communicator, OperationStatus, PendingOperation, ProcessQueues, Protocol, Queue,
};
use crate::mpich::common::{
    at, checked_count, symbol, walk, CommFinder, CommInfo, GroupLayout, ListShape, Span, TypeSizes,
    COMM_NAME_LEN, MPICH_ANY_SOURCE, MPICH_ANY_TAG, TRIES,
};
use crate::target_read::{read_bytes, read_int, read_pointer, Budgeted, Record};
use mpidd_read::Target;
use mpidd_read::TargetMemory;
use mpidd_read::{LayoutError, Layouts};

/// The globals without which there are no queues to read.
const REQUIRED_SYMBOLS: [&str; 3] = [
    "MPIR_All_communicators",
    "MPID_Recvq_posted_head_ptr",
    "MPID_Recvq_unexpected_head_ptr",
];

/// A request's `dev.state` word, decoded with the masks of MPICH 4.0.2's
/// `src/mpid/ch3/include/mpidimpl.h` (`MPIDI_Request_get_msg_type`,
/// `MPIDI_Request_get_sync_send_flag`, `MPIDI_Request_get_type`). The
/// request-creation hook zeroes it (`ch3u_request.c`), so a request whose
/// kind was never set reads as "no message" rather than as stale bits.
#[derive(Clone, Copy, Debug)]
struct RequestState(u64);

impl RequestState {
    /// `MPIDI_REQUEST_MSG_MASK` (`0x3 << MPIDI_REQUEST_MSG_SHIFT`, shift 0).
    const MSG_MASK: u64 = 0x3;
    /// `MPIDI_REQUEST_EAGER_MSG`: set by the eager, eager-short,
    /// eager-sync and ready-send packet handlers.
    const EAGER_MSG: u64 = 1;
    /// `MPIDI_REQUEST_RNDV_MSG`: set by the RTS handlers (CH3's and
    /// nemesis's large-message transfer).
    const RNDV_MSG: u64 = 2;
    /// `MPIDI_REQUEST_SELF_MSG`: set by `MPIDI_Isend_self`.
    const SELF_MSG: u64 = 3;
    /// `MPIDI_REQUEST_SYNC_SEND_MASK` (`0x1 << 3`): set on an unexpected
    /// eager-sync message, whose sender waits for the acknowledgement
    /// sent when a receive matches (`ch3u_eagersync.c`).
    const SYNC_SEND_MASK: u64 = 1 << 3;
    /// `MPIDI_REQUEST_TYPE_MASK` (`0x3F << MPIDI_REQUEST_TYPE_SHIFT`).
    const TYPE_MASK: u64 = 0x3f << Self::TYPE_SHIFT;
    /// `MPIDI_REQUEST_TYPE_SHIFT`.
    const TYPE_SHIFT: u32 = 4;
    /// `MPIDI_REQUEST_TYPE_SEND`, `_RSEND`, `_SSEND` and `_BSEND`.
    const TYPE_SEND: u64 = 1;
    const TYPE_RSEND: u64 = 2;
    const TYPE_SSEND: u64 = 3;
    const TYPE_BSEND: u64 = 4;

    /// How the message travels, from the message kind; `None` when MPICH
    /// has not set it (eager sends of data never do on the sender's side).
    fn protocol(self) -> Option<Protocol> {
        match self.0 & Self::MSG_MASK {
            Self::EAGER_MSG => Some(Protocol::Eager),
            Self::RNDV_MSG => Some(Protocol::Rendezvous),
            Self::SELF_MSG => Some(Protocol::SelfSend),
            _ => None,
        }
    }

    /// Whether the sender of an unexpected message waits for its match,
    /// as far as MPICH records it: only eager messages carry the flag (a
    /// rendezvous request-to-send carries none, and its sender waits for
    /// the match whatever it called), and a self message keeps it in the
    /// sender's request, not here.
    fn unexpected_synchronous(self) -> Option<bool> {
        (self.protocol() == Some(Protocol::Eager)).then_some(self.0 & Self::SYNC_SEND_MASK != 0)
    }

    /// Whether a send request is a synchronous one, from its request type;
    /// `None` for a type that is not a point-to-point send.
    fn send_synchronous(self) -> Option<bool> {
        match (self.0 & Self::TYPE_MASK) >> Self::TYPE_SHIFT {
            Self::TYPE_SSEND => Some(true),
            Self::TYPE_SEND | Self::TYPE_RSEND | Self::TYPE_BSEND => Some(false),
            _ => None,
        }
    }
}

/// Offsets of everything the decoder reads.
#[derive(Clone, Debug)]
struct Layout {
    list_seq: u64,
    list_head: u64,
    comm_size: u64,
    comm_name: u64,
    comm_next: u64,
    comm_rank: u64,
    comm_remote_size: u64,
    comm_local_size: u64,
    comm_kind: u64,
    comm_context_id: u64,
    comm_recvcontext_id: u64,
    comm_local_group: u64,
    comm_vcrt: u64,
    vcrt_size: u64,
    vcrt_table: u64,
    vc_pg_rank: u64,
    group_size: u64,
    group_pmap: u64,
    pmap_size: u64,
    pmap_lpid: u64,
    req_cc: u64,
    req_next: u64,
    req_match_tag: u64,
    req_match_rank: u64,
    req_match_context: u64,
    req_user_buf: u64,
    req_user_count: u64,
    req_datatype: u64,
    req_recv_data_sz: u64,
    req_tmpbuf: u64,
    /// `dev.state`: the message kind and send flags (see [`RequestState`]).
    req_state: u64,
    /// The fields of a posted receive.
    req_posted: Span,
    /// The fields of an unexpected message.
    req_unexpected: Span,
    /// The fields of the request behind a pending send.
    req_send: Span,
    sendq_sreq: u64,
    sendq_tag: u64,
    sendq_rank: u64,
    sendq_context: u64,
    sendq_next: u64,
    sendq_size: u64,
    datatype_size: Option<(u64, u64)>,
}

impl Layout {
    /// Every offset, or every type and member that is missing (all of
    /// them, so one message says everything the debug info lacks).
    fn resolve(t: &dyn Layouts, word: u64) -> Result<Layout, Vec<LayoutError>> {
        let missing = RefCell::new(Vec::new());
        let note = |r: Result<u64, LayoutError>| {
            r.unwrap_or_else(|e| {
                missing.borrow_mut().push(e);
                0
            })
        };
        // One question per type, whose answer gives its size (noted only
        // where it is used) and the members asked for.
        fn members<const N: usize>(
            t: &dyn Layouts,
            note: &dyn Fn(Result<u64, LayoutError>) -> u64,
            ty: &str,
            names: [&str; N],
            size: bool,
        ) -> (u64, [u64; N]) {
            let size = if size { note(t.size_of(ty)) } else { 0 };
            let offsets = std::array::from_fn(|i| note(t.member_offset(ty, names[i])));
            (size, offsets)
        }
        // Offsets of nested members are sums, and corrupt debug info can
        // make them overflow; such a member is as unusable as a missing one.
        let sum = |ty: &str, path: &str, parts: &[u64]| {
            parts
                .iter()
                .try_fold(0u64, |acc, &p| acc.checked_add(p))
                .unwrap_or_else(|| {
                    missing.borrow_mut().push(LayoutError {
                        type_name: ty.to_string(),
                        member: Some(path.to_string()),
                        reason: format!(
                            "its offset, the sum of {parts:?}, overflows: the debug info is corrupt"
                        ),
                    });
                    0
                })
        };
        let (_, [list_seq, list_head]) = members(
            t,
            &note,
            "MPIR_Comm_list",
            ["sequence_number", "head"],
            false,
        );
        let (
            comm_size,
            [comm_name, comm_next, comm_rank, comm_remote_size, comm_local_size, comm_kind, comm_context_id, comm_recvcontext_id, comm_local_group, comm_dev],
        ) = members(
            t,
            &note,
            "MPIR_Comm",
            [
                "name",
                "comm_next",
                "rank",
                "remote_size",
                "local_size",
                "comm_kind",
                "context_id",
                "recvcontext_id",
                "local_group",
                "dev",
            ],
            true,
        );
        let (_, [ch3_vcrt]) = members(t, &note, "MPIDI_CH3I_comm_t", ["vcrt"], false);
        let (_, [vcrt_size, vcrt_table]) =
            members(t, &note, "MPIDI_VCRT", ["size", "vcr_table"], false);
        let (_, [vc_pg_rank]) = members(t, &note, "MPIDI_VC", ["pg_rank"], false);
        let (_, [group_size, group_pmap]) =
            members(t, &note, "MPIR_Group", ["size", "lrank_to_lpid"], false);
        let (pmap_size, [pmap_lpid]) = members(t, &note, "MPII_Group_pmap_t", ["lpid"], true);
        let (_, [req_cc, req_next, req_dev]) =
            members(t, &note, "MPIR_Request", ["cc", "next", "dev"], false);
        let (_, [dreq_match, user_buf, user_count, datatype, recv_data_sz, tmpbuf, state]) =
            members(
                t,
                &note,
                "MPIDI_Request",
                [
                    "match",
                    "user_buf",
                    "user_count",
                    "datatype",
                    "recv_data_sz",
                    "tmpbuf",
                    "state",
                ],
                false,
            );
        let (_, [match_parts]) = members(t, &note, "MPIDI_Message_match", ["parts"], false);
        let (_, [part_tag, part_rank, part_context]) = members(
            t,
            &note,
            "MPIDI_Message_match_parts_t",
            ["tag", "rank", "context_id"],
            false,
        );
        let (sendq_size, [sendq_sreq, sendq_tag, sendq_rank, sendq_context, sendq_next]) = members(
            t,
            &note,
            "MPIR_Sendq",
            ["sreq", "tag", "rank", "context_id", "next"],
            true,
        );
        let parts = sum(
            "MPIR_Request",
            "dev.match.parts",
            &[req_dev, dreq_match, match_parts],
        );
        let part = |member: &str, offset: u64| {
            sum(
                "MPIR_Request",
                &format!("dev.match.parts.{member}"),
                &[parts, offset],
            )
        };
        let dev = |member: &str, offset: u64| {
            sum("MPIR_Request", &format!("dev.{member}"), &[req_dev, offset])
        };
        let mut l = Layout {
            list_seq,
            list_head,
            comm_size,
            comm_name,
            comm_next,
            comm_rank,
            comm_remote_size,
            comm_local_size,
            comm_kind,
            comm_context_id,
            comm_recvcontext_id,
            comm_local_group,
            comm_vcrt: sum("MPIR_Comm", "dev.vcrt", &[comm_dev, ch3_vcrt]),
            vcrt_size,
            vcrt_table,
            vc_pg_rank,
            group_size,
            group_pmap,
            pmap_size,
            pmap_lpid,
            req_cc,
            req_next,
            req_match_tag: part("tag", part_tag),
            req_match_rank: part("rank", part_rank),
            req_match_context: part("context_id", part_context),
            req_user_buf: dev("user_buf", user_buf),
            req_user_count: dev("user_count", user_count),
            req_datatype: dev("datatype", datatype),
            req_recv_data_sz: dev("recv_data_sz", recv_data_sz),
            req_tmpbuf: dev("tmpbuf", tmpbuf),
            req_state: dev("state", state),
            req_posted: Span::default(),
            req_unexpected: Span::default(),
            req_send: Span::default(),
            sendq_sreq,
            sendq_tag,
            sendq_rank,
            sendq_context,
            sendq_next,
            sendq_size,
            // Only needed for lengths in bytes of derived datatypes.
            datatype_size: {
                match (
                    t.size_of("MPIR_Datatype"),
                    t.member_offset("MPIR_Datatype", "size"),
                ) {
                    (Ok(size), Ok(offset)) => Some((size, offset)),
                    _ => None,
                }
            },
        };
        // Where each request field ends; the windows of the three queues
        // are cut from these once, not per request.
        let fields = [
            ("cc", l.req_cc, 4),
            ("next", l.req_next, word),
            ("dev.match.parts.tag", l.req_match_tag, 4),
            ("dev.match.parts.rank", l.req_match_rank, 2),
            ("dev.match.parts.context_id", l.req_match_context, 2),
            ("dev.user_buf", l.req_user_buf, word),
            ("dev.user_count", l.req_user_count, word),
            ("dev.datatype", l.req_datatype, 4),
            ("dev.recv_data_sz", l.req_recv_data_sz, word),
            ("dev.tmpbuf", l.req_tmpbuf, word),
            // `unsigned int state` (mpidpre.h).
            ("dev.state", l.req_state, 4),
        ]
        .map(|(path, offset, width)| (offset, sum("MPIR_Request", path, &[offset, width])));
        let span = |which: &[usize]| Span {
            start: which.iter().map(|&i| fields[i].0).min().unwrap_or(0),
            end: which.iter().map(|&i| fields[i].1).max().unwrap_or(0),
        };
        l.req_posted = span(&[0, 1, 2, 3, 4, 5, 6, 7]);
        l.req_unexpected = span(&[0, 1, 2, 3, 4, 8, 9, 10]);
        l.req_send = span(&[0, 5, 6, 7, 10]);
        let missing = missing.into_inner();
        if missing.is_empty() {
            Ok(l)
        } else {
            Err(missing)
        }
    }
}

/// Addresses of MPICH's debugger globals in this process.
#[derive(Clone, Copy, Debug)]
struct Globals {
    all_communicators: TargetAddr,
    posted_head_ptr: TargetAddr,
    unexpected_head_ptr: TargetAddr,
    sendq_head: Option<TargetAddr>,
    datatype_direct: Option<TargetAddr>,
}

/// The MPICH CH3 decoder. An instance belongs to one process: it caches
/// that process's communicators by their sequence number.
pub struct MpichCh3 {
    name: String,
    layout: Layout,
    globals: Globals,
    cache: Mutex<Option<(i64, Vec<CommInfo>)>>,
}

impl std::fmt::Debug for MpichCh3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpichCh3")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl MpichCh3 {
    /// A decoder for the MPICH in `target`, whose version string and
    /// device were read from it. Fails, naming what is missing, when a
    /// symbol or type the decoder needs is not there.
    pub fn new(target: &dyn Target, version: &str, device: &str) -> Result<Self, DecodeError> {
        const LOCAL: &str =
            "MPICH keeps it as a local symbol: the library's .symtab (or its debug file) is needed";
        let globals = Globals {
            all_communicators: symbol(
                target,
                "MPIR_All_communicators",
                "MPICH built without debugger support (--enable-debuginfo)",
            )?,
            posted_head_ptr: symbol(target, "MPID_Recvq_posted_head_ptr", LOCAL)?,
            unexpected_head_ptr: symbol(target, "MPID_Recvq_unexpected_head_ptr", LOCAL)?,
            sendq_head: target.symbols().lookup("MPIR_Sendq_head").map(|s| s.addr),
            datatype_direct: target
                .symbols()
                .lookup("MPIR_Datatype_direct")
                .map(|s| s.addr),
        };
        let word = target.memory().abi().address_bytes() as u64;
        Ok(MpichCh3 {
            name: format!("native MPICH {version} decoder ({device})"),
            layout: Layout::resolve(target.layouts(), word).map_err(DecodeError::Layouts)?,
            globals,
            cache: Mutex::new(None),
        })
    }

    /// Asks `layouts` every layout question this decoder asks, for a
    /// layout profile ([`DecoderKind::ask_layouts`](crate::DecoderKind)).
    pub fn ask_layouts(layouts: &dyn Layouts) {
        // The word size only places the request span; 8 is as good as any.
        let _ = Layout::resolve(layouts, 8);
    }

    /// The layouts this decoder cannot do without that `layouts` lacks.
    pub fn missing_layouts(layouts: &dyn Layouts) -> Vec<LayoutError> {
        Layout::resolve(layouts, 8).err().unwrap_or_default()
    }

    /// Everything this decoder needs that the image lacks: symbols, types
    /// and members, each named. Empty when the image has what it needs.
    /// Needs no process, so a debugger can ask before it attaches.
    pub fn missing(types: &dyn Layouts, symbols: &dyn SymbolSource) -> Vec<String> {
        let mut out: Vec<String> = REQUIRED_SYMBOLS
            .iter()
            .filter(|name| symbols.lookup(name).is_none())
            .map(|name| format!("the symbol `{name}`"))
            .collect();
        // The word size only places the request span; 8 is as good as any.
        if let Err(missing) = Layout::resolve(types, 8) {
            out.extend(missing.iter().map(|e| format!("the {e}")));
        }
        out
    }

    fn sequence(&self, mem: &dyn TargetMemory) -> Result<i64, DecodeError> {
        Ok(read_int(
            mem,
            at(self.globals.all_communicators, self.layout.list_seq),
            4,
            "MPIR_All_communicators.sequence_number",
        )?)
    }

    fn read_communicators(
        &self,
        mem: &dyn TargetMemory,
        limits: &Limits,
    ) -> Result<Vec<CommInfo>, DecodeError> {
        let l = &self.layout;
        let head = read_pointer(
            mem,
            at(self.globals.all_communicators, l.list_head),
            "MPIR_All_communicators.head",
        )?;
        let word = mem.abi().address_bytes();
        let mut comms = Vec::new();
        walk(
            mem,
            head,
            ListShape {
                next_offset: l.comm_next,
                span: Span {
                    start: 0,
                    end: l.comm_size,
                },
                what: "MPIR_Comm",
                end: TargetAddr(0),
            },
            limits,
            |r| {
                let addr = r.base;
                let kind = r.int(l.comm_kind, 4)?;
                let remote_size = r.int(l.comm_remote_size, 4)?;
                let size = if kind == 0 {
                    r.int(l.comm_local_size, 4)?
                } else {
                    remote_size
                };
                let group = TargetAddr(r.uint(l.comm_local_group, word)?);
                let vcrt = TargetAddr(r.uint(l.comm_vcrt, word)?);
                let name = r.chars(l.comm_name, COMM_NAME_LEN)?;
                let (world, world_error) =
                    match self.world_ranks(mem, kind == 0, group, vcrt, size, limits) {
                        Ok(world) => (Some(world), None),
                        Err(e) => (
                            None,
                            Some(format!(
                                "communicator `{name}` (MPIR_Comm at {addr}): no world ranks: {e}"
                            )),
                        ),
                    };
                comms.push(CommInfo {
                    addr,
                    name,
                    context_id: r.uint(l.comm_context_id, 2)? as i64,
                    recvcontext_id: r.uint(l.comm_recvcontext_id, 2)? as i64,
                    rank: r.int(l.comm_rank, 4)?,
                    size,
                    world,
                    world_error,
                });
                Ok(())
            },
        )?;
        comms.sort_by_key(|c| (c.recvcontext_id, c.addr.0));
        Ok(comms)
    }

    /// The `MPI_COMM_WORLD` rank of each of the `size` peers of a
    /// communicator (local ranks of an intracommunicator, remote ranks of
    /// an intercommunicator).
    ///
    /// An intracommunicator's `local_group` is made lazily (by
    /// `MPI_Comm_group`, or a communicator constructor), so it is used when
    /// it is there and the CH3 connection table (`dev.vcrt`) otherwise; an
    /// intercommunicator's peers are its remote side, which only the table
    /// maps. Either must account for exactly `size` peers: a list of
    /// another length is an error, never an answer.
    fn world_ranks(
        &self,
        mem: &dyn TargetMemory,
        intra: bool,
        group: TargetAddr,
        vcrt: TargetAddr,
        size: i64,
        limits: &Limits,
    ) -> Result<Vec<i64>, DecodeError> {
        if intra && group.0 != 0 {
            let from_group = self.group_world_ranks(mem, group, size, limits);
            if from_group.is_ok() {
                return from_group;
            }
            // The table may still answer; if it cannot either, the
            // group's failure is the one to report, being read first.
            return self
                .vcrt_world_ranks(mem, vcrt, size, limits)
                .or(from_group);
        }
        self.vcrt_world_ranks(mem, vcrt, size, limits)
    }

    /// World ranks from an `MPIR_Group`, whose `size` must be the
    /// communicator's `expected` size.
    fn group_world_ranks(
        &self,
        mem: &dyn TargetMemory,
        group: TargetAddr,
        expected: i64,
        limits: &Limits,
    ) -> Result<Vec<i64>, DecodeError> {
        let l = &self.layout;
        GroupLayout {
            size: l.group_size,
            pmap: l.group_pmap,
            pmap_size: l.pmap_size,
            pmap_lpid: l.pmap_lpid,
        }
        .world_ranks(mem, group, expected, limits)
    }

    /// World ranks from the first `expected` entries of an `MPIDI_VCRT`.
    ///
    /// CH3 does not give every communicator a table of its own size: when
    /// a new communicator's members are the first ones of its parent, in
    /// order (`dup_vcrt` in `ch3u_comm.c`: an irregular map that is the
    /// identity, as for the node communicator of the node holding world
    /// ranks 0 and 1), it shares the parent's table, and only its prefix
    /// is the communicator's. So the table may be longer than the
    /// communicator, but never shorter.
    fn vcrt_world_ranks(
        &self,
        mem: &dyn TargetMemory,
        vcrt: TargetAddr,
        expected: i64,
        limits: &Limits,
    ) -> Result<Vec<i64>, DecodeError> {
        if vcrt.0 == 0 {
            return Err(mpidd_read::ReadError::ShortRead {
                what: "MPIDI_VCRT",
                addr: vcrt,
                wanted: 1,
                got: 0,
            }
            .into());
        }
        let l = &self.layout;
        let word = mem.abi().address_bytes() as u64;
        let found = read_int(mem, at(vcrt, l.vcrt_size), 4, "MPIDI_VCRT.size")?;
        if found < expected {
            return Err(DecodeError::MemberCount {
                what: "MPIDI_VCRT",
                addr: vcrt,
                expected,
                found,
            });
        }
        let n = checked_count(expected, "MPIDI_VCRT.vcr_table", vcrt, limits)?;
        let table = read_bytes(
            mem,
            at(vcrt, l.vcrt_table),
            n.saturating_mul(word),
            "MPIDI_VCRT.vcr_table",
            limits,
        )?;
        let r = Record {
            base: at(vcrt, l.vcrt_table),
            start: 0,
            bytes: &table,
            order: mem.abi().byte_order,
            what: "MPIDI_VCRT.vcr_table",
        };
        (0..n)
            .map(|i| {
                let vc = TargetAddr(r.uint(i * word, word as usize)?);
                Ok(read_int(mem, at(vc, l.vc_pg_rank), 4, "MPIDI_VC.pg_rank")?)
            })
            .collect()
    }

    /// Bytes per element of the datatype with this handle.
    fn datatype_size(
        &self,
        mem: &dyn TargetMemory,
        handle: i64,
        cache: &mut TypeSizes,
    ) -> Option<u64> {
        cache.size_of(
            mem,
            handle,
            self.layout.datatype_size,
            self.globals.datatype_direct,
        )
    }

    /// Appends the requests of one receive queue to `out`, one list per
    /// communicator of `comms` (requests of no known communicator are
    /// left out).
    #[allow(clippy::too_many_arguments)]
    fn receive_queue(
        &self,
        mem: &dyn TargetMemory,
        head_ptr: TargetAddr,
        unexpected: bool,
        comms: &[CommInfo],
        limits: &Limits,
        types: &mut TypeSizes,
        out: &mut [Vec<PendingOperation>],
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let (what, span) = if unexpected {
            ("unexpected receive queue (MPIR_Request)", l.req_unexpected)
        } else {
            ("posted receive queue (MPIR_Request)", l.req_posted)
        };
        let head_var = read_pointer(mem, head_ptr, "receive queue head pointer")?;
        let first = read_pointer(mem, head_var, "receive queue head")?;
        let word = mem.abi().address_bytes();
        let mut comm_of = CommFinder::default();
        walk(
            mem,
            first,
            ListShape {
                next_offset: l.req_next,
                span,
                what,
                end: TargetAddr(0),
            },
            limits,
            |r| {
                let context = r.uint(l.req_match_context, 2)? as i64;
                let Some(ci) = comm_of.find(comms, context, |c| c.recvcontext_id) else {
                    return Ok(());
                };
                let comm = &comms[ci];
                let tag = r.int(l.req_match_tag, 4)?;
                let rank = r.int(l.req_match_rank, 2)?;
                let cc = r.int(l.req_cc, 4)?;
                let world = |rank: i64| -> i64 {
                    usize::try_from(rank)
                        .ok()
                        .and_then(|i| comm.world.as_ref()?.get(i).copied())
                        .unwrap_or(-1)
                };
                let status = if cc == 0 {
                    OperationStatus::Complete
                } else {
                    OperationStatus::Pending
                };
                let op = if unexpected {
                    let bytes_arrived = r.int(l.req_recv_data_sz, word)?;
                    let tmpbuf = r.uint(l.req_tmpbuf, word)?;
                    let state = RequestState(r.uint(l.req_state, 4)?);
                    PendingOperation {
                        status,
                        desired_local_rank: rank,
                        desired_global_rank: world(rank),
                        tag_wild: false,
                        desired_tag: tag,
                        desired_length: bytes_arrived,
                        // Eager data waits in a library buffer; a rendezvous
                        // request has none until its receive is posted.
                        system_buffer: tmpbuf != 0,
                        buffer: tmpbuf,
                        actual_local_rank: rank,
                        actual_global_rank: world(rank),
                        actual_tag: tag,
                        actual_length: bytes_arrived,
                        extra_text: Vec::new(),
                        desired_count: None,
                        // From the message kind, not from `tmpbuf`: a
                        // zero-length eager message has no buffer either.
                        protocol: state.protocol(),
                        synchronous: state.unexpected_synchronous(),
                    }
                } else {
                    let count = r.int(l.req_user_count, word)?;
                    let datatype = r.int(l.req_datatype, 4)?;
                    let any_source = rank == MPICH_ANY_SOURCE;
                    let any_tag = tag == MPICH_ANY_TAG;
                    let local = if any_source { -1 } else { rank };
                    let (length, extra) = match self.datatype_size(mem, datatype, types) {
                        Some(size) => (count.saturating_mul(size as i64), Vec::new()),
                        None => (
                            count,
                            vec![format!(
                                "length in elements: datatype {datatype:#x} has no readable size"
                            )],
                        ),
                    };
                    PendingOperation {
                        status,
                        desired_local_rank: local,
                        desired_global_rank: if any_source { -1 } else { world(rank) },
                        tag_wild: any_tag,
                        desired_tag: if any_tag { -1 } else { tag },
                        desired_length: length,
                        system_buffer: false,
                        buffer: r.uint(l.req_user_buf, word)?,
                        actual_local_rank: -1,
                        actual_global_rank: -1,
                        actual_tag: -1,
                        actual_length: -1,
                        extra_text: extra,
                        desired_count: Some(count),
                        // A posted receive has no sender yet.
                        protocol: None,
                        synchronous: None,
                    }
                };
                out[ci].push(op);
                Ok(())
            },
        )
    }

    /// Appends the pending sends to `out`, one list per communicator of
    /// `comms`, as [`MpichCh3::receive_queue`] does.
    fn send_queue(
        &self,
        mem: &dyn TargetMemory,
        head: TargetAddr,
        comms: &[CommInfo],
        limits: &Limits,
        types: &mut TypeSizes,
        out: &mut [Vec<PendingOperation>],
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let first = read_pointer(mem, head, "MPIR_Sendq_head")?;
        let word = mem.abi().address_bytes();
        let order = mem.abi().byte_order;
        let span = l.req_send;
        let what = "MPIR_Sendq.sreq (MPIR_Request)";
        let len = span.end.saturating_sub(span.start);
        let mut buf = Vec::new();
        let mut comm_of = CommFinder::default();
        walk(
            mem,
            first,
            ListShape {
                next_offset: l.sendq_next,
                span: Span {
                    start: 0,
                    end: l.sendq_size,
                },
                what: "send queue (MPIR_Sendq)",
                end: TargetAddr(0),
            },
            limits,
            |r| {
                let context = r.int(l.sendq_context, 4)?;
                let Some(ci) = comm_of.find(comms, context, |c| c.context_id) else {
                    return Ok(());
                };
                let comm = &comms[ci];
                let rank = r.int(l.sendq_rank, 4)?;
                let tag = r.int(l.sendq_tag, 4)?;
                let sreq = TargetAddr(r.uint(l.sendq_sreq, word)?);
                if buf.is_empty() {
                    limits.check_record_bytes(what, sreq, len)?;
                    buf = vec![0u8; len as usize];
                }
                let q = Record {
                    base: sreq,
                    start: span.start,
                    bytes: mem.view(at(sreq, span.start), &mut buf, what)?,
                    order,
                    what: "MPIR_Request",
                };
                let count = q.int(l.req_user_count, word)?;
                let datatype = q.int(l.req_datatype, 4)?;
                let state = RequestState(q.uint(l.req_state, 4)?);
                let mut extra = vec!["Non-blocking send".to_string()];
                let length = match self.datatype_size(mem, datatype, types) {
                    Some(size) => count.saturating_mul(size as i64),
                    None => {
                        extra.push(format!(
                            "length in elements: datatype {datatype:#x} has no readable size"
                        ));
                        count
                    }
                };
                let global = usize::try_from(rank)
                    .ok()
                    .and_then(|i| comm.world.as_ref()?.get(i).copied())
                    .unwrap_or(-1);
                out[ci].push(PendingOperation {
                    status: if q.int(l.req_cc, 4)? == 0 {
                        OperationStatus::Complete
                    } else {
                        OperationStatus::Pending
                    },
                    desired_local_rank: rank,
                    desired_global_rank: global,
                    tag_wild: false,
                    desired_tag: tag,
                    desired_length: length,
                    system_buffer: false,
                    buffer: q.uint(l.req_user_buf, word)?,
                    actual_local_rank: rank,
                    actual_global_rank: global,
                    actual_tag: tag,
                    actual_length: length,
                    extra_text: extra,
                    desired_count: Some(count),
                    protocol: state.protocol(),
                    synchronous: state.send_synchronous(),
                });
                Ok(())
            },
        )
    }

    fn communicators_for(
        &self,
        mem: &dyn TargetMemory,
        seq: i64,
        limits: &Limits,
    ) -> Result<Vec<CommInfo>, DecodeError> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((cached, comms)) = cache.as_ref() {
            if *cached == seq {
                return Ok(comms.clone());
            }
        }
        let comms = self.read_communicators(mem, limits)?;
        *cache = Some((seq, comms.clone()));
        Ok(comms)
    }
}

impl QueueDecoder for MpichCh3 {
    fn name(&self) -> &str {
        &self.name
    }

    fn read_queues(
        &self,
        target: &dyn Target,
        limits: &Limits,
    ) -> Result<ProcessQueues, DecodeError> {
        let budget = Budgeted::new(target.memory(), limits);
        let mem: &dyn TargetMemory = &budget;
        let mut first = self.sequence(mem)?;
        let mut last = first;
        for _ in 0..TRIES {
            let comms = self.communicators_for(mem, first, limits)?;
            let mut types = TypeSizes::default();
            let lists = || vec![Vec::new(); comms.len()];
            let (mut posted, mut unexpected) = (lists(), lists());
            self.receive_queue(
                mem,
                self.globals.posted_head_ptr,
                false,
                &comms,
                limits,
                &mut types,
                &mut posted,
            )?;
            self.receive_queue(
                mem,
                self.globals.unexpected_head_ptr,
                true,
                &comms,
                limits,
                &mut types,
                &mut unexpected,
            )?;
            let sends = match self.globals.sendq_head {
                Some(head) => {
                    let mut sends = lists();
                    self.send_queue(mem, head, &comms, limits, &mut types, &mut sends)?;
                    Some(sends)
                }
                None => None,
            };
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
            let mut sends = sends.map(Vec::into_iter);
            let mut diagnostics: Vec<String> =
                comms.iter().filter_map(|c| c.world_error.clone()).collect();
            // Each queue's operations move in whole, never one by one.
            let out: Vec<Communicator> = comms
                .into_iter()
                .zip(posted.into_iter().zip(unexpected))
                .map(|(c, (posted, unexpected))| Communicator {
                    name: c.name,
                    size: c.size,
                    local_rank: c.rank,
                    unique_id: c.addr.0,
                    context_id: Some(c.context_id),
                    recv_context_id: Some(c.recvcontext_id),
                    group: c.world,
                    pending_sends: match sends.as_mut().and_then(Iterator::next) {
                        Some(ops) => read(ops),
                        None => Queue::NoInformation,
                    },
                    pending_receives: read(posted),
                    unexpected_messages: read(unexpected),
                })
                .collect();
            if self.globals.sendq_head.is_none() {
                diagnostics.push(
                    "MPIR_Sendq_head is missing: this MPICH does not record pending sends"
                        .to_string(),
                );
            }
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
            first,
            last,
        })
    }
}
