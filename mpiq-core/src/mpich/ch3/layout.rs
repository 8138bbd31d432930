//! What the CH3 decoder reads, and where: the offsets of every member it
//! reads, asked of the library's layouts all at once (so a missing one is
//! named with all the others before anything is read), and the meaning of
//! a request's `dev.state` bits.

use std::cell::RefCell;

use crate::list_walk::Span;
use crate::model::Protocol;
use mpidd_read::{LayoutError, Layouts};

/// A request's `dev.state` word, decoded with the masks of MPICH 4.0.2's
/// `src/mpid/ch3/include/mpidimpl.h` (`MPIDI_Request_get_msg_type`,
/// `MPIDI_Request_get_sync_send_flag`, `MPIDI_Request_get_type`). The
/// request-creation hook zeroes it (`ch3u_request.c`), so a request whose
/// kind was never set reads as "no message" rather than as stale bits.
#[derive(Clone, Copy, Debug)]
pub(super) struct RequestState(pub(super) u64);

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
    pub(super) fn protocol(self) -> Option<Protocol> {
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
    pub(super) fn unexpected_synchronous(self) -> Option<bool> {
        (self.protocol() == Some(Protocol::Eager)).then_some(self.0 & Self::SYNC_SEND_MASK != 0)
    }

    /// Whether a send request is a synchronous one, from its request type;
    /// `None` for a type that is not a point-to-point send.
    pub(super) fn send_synchronous(self) -> Option<bool> {
        match (self.0 & Self::TYPE_MASK) >> Self::TYPE_SHIFT {
            Self::TYPE_SSEND => Some(true),
            Self::TYPE_SEND | Self::TYPE_RSEND | Self::TYPE_BSEND => Some(false),
            _ => None,
        }
    }
}

/// Offsets of everything the decoder reads.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    /// `MPIR_Comm_list`'s `sequence_number` and `head`: `None` for a build
    /// without debugger support (no `--enable-debuginfo`), which has no
    /// such type and keeps its communicators only in their pool.
    pub(super) comm_list: Option<(u64, u64)>,
    pub(super) comm_size: u64,
    pub(super) comm_name: u64,
    pub(super) comm_next: u64,
    pub(super) comm_rank: u64,
    pub(super) comm_remote_size: u64,
    pub(super) comm_local_size: u64,
    pub(super) comm_kind: u64,
    pub(super) comm_context_id: u64,
    pub(super) comm_recvcontext_id: u64,
    pub(super) comm_local_group: u64,
    pub(super) comm_vcrt: u64,
    pub(super) vcrt_size: u64,
    pub(super) vcrt_table: u64,
    pub(super) vc_pg_rank: u64,
    pub(super) group_size: u64,
    pub(super) group_pmap: u64,
    pub(super) pmap_size: u64,
    pub(super) pmap_lpid: u64,
    pub(super) req_cc: u64,
    pub(super) req_next: u64,
    pub(super) req_match_tag: u64,
    pub(super) req_match_rank: u64,
    pub(super) req_match_context: u64,
    pub(super) req_user_buf: u64,
    pub(super) req_user_count: u64,
    pub(super) req_datatype: u64,
    pub(super) req_recv_data_sz: u64,
    pub(super) req_tmpbuf: u64,
    /// `dev.state`: the message kind and send flags (see [`RequestState`]).
    pub(super) req_state: u64,
    /// The fields of a posted receive.
    pub(super) req_posted: Span,
    /// The fields of an unexpected message.
    pub(super) req_unexpected: Span,
    /// The fields of the request behind a pending send.
    pub(super) req_send: Span,
    /// Whether the build has `MPIR_Sendq` (debugger support): the fields
    /// below are then its members.
    pub(super) has_sendq: bool,
    pub(super) sendq_sreq: u64,
    pub(super) sendq_tag: u64,
    pub(super) sendq_rank: u64,
    pub(super) sendq_context: u64,
    pub(super) sendq_next: u64,
    pub(super) sendq_size: u64,
    pub(super) datatype_size: Option<(u64, u64)>,
}

impl Layout {
    /// Every offset, or every type and member that is missing (all of
    /// them, so one message says everything the debug info lacks).
    pub(super) fn resolve(t: &dyn Layouts, word: u64) -> Result<Layout, Vec<LayoutError>> {
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
        // The debugger's own types exist only in a build with debugger
        // support; a build whose `MPIR_Comm` is described without them has
        // none. Where `MPIR_Comm` is not described either (no debug info),
        // they are missing like the rest.
        let comm_known = t.size_of("MPIR_Comm").is_ok();
        let debugger_type =
            |ty: &str, member: &str| !comm_known || t.member_offset(ty, member).is_ok();
        let comm_list = debugger_type("MPIR_Comm_list", "head").then(|| {
            let (_, [seq, head]) = members(
                t,
                &note,
                "MPIR_Comm_list",
                ["sequence_number", "head"],
                false,
            );
            (seq, head)
        });
        let has_sendq = debugger_type("MPIR_Sendq", "sreq");
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
        let (_, [req_cc, req_dev]) = members(t, &note, "MPIR_Request", ["cc", "dev"], false);
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
        let (sendq_size, [sendq_sreq, sendq_tag, sendq_rank, sendq_context, sendq_next]) =
            if has_sendq {
                members(
                    t,
                    &note,
                    "MPIR_Sendq",
                    ["sreq", "tag", "rank", "context_id", "next"],
                    true,
                )
            } else {
                (0, [0; 5])
            };
        // The receive queues chain through `MPIR_Request.next` from 4.0 on;
        // before (upstream d4d6f2e108, "ch3: Use MPIR_Request list
        // pointers"), through the device's own `dev.next`.
        let req_next = match t.member_offset("MPIR_Request", "next") {
            Ok(offset) => offset,
            Err(e) => match t.member_offset("MPIDI_Request", "next") {
                Ok(offset) => sum("MPIR_Request", "dev.next", &[req_dev, offset]),
                Err(_) => note(Err(e)),
            },
        };
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
            comm_list,
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
            has_sendq,
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
