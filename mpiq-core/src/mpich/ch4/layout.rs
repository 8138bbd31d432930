//! What the CH4 decoder reads, and where: every member it needs, asked of
//! the library's layouts at once (a missing one is named with all the
//! others), and what it can do without (the communicator list and the
//! send queue of a build with debugger support, the shared-memory, UCX and OFI
//! members of the request, derived datatypes' sizes).

use mpidd_read::LayoutError;
use mpihandles::{Layouts, Member};

use crate::mpich::common::{GroupLayout, Pmap5Layout};

/// Offsets of everything the decoder reads.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    /// `MPIR_All_communicators`' sequence number and head: only in an
    /// MPICH built with debugger support, like the list itself.
    pub(super) list: Option<(Member, Member)>,
    pub(super) comm_size: u64,
    pub(super) comm_name: Member,
    pub(super) comm_next: Member,
    pub(super) comm_rank: Member,
    pub(super) comm_remote_size: Member,
    pub(super) comm_local_size: Member,
    pub(super) comm_kind: Member,
    /// `MPIR_COMM_KIND__INTRACOMM`'s value, for `MPIDI_is_self_comm`.
    pub(super) intracomm: i128,
    pub(super) comm_context_id: Member,
    pub(super) comm_recvcontext_id: Member,
    pub(super) comm_local_group: Member,
    pub(super) group: GroupLayout,
    /// Where MPIDIG keeps its posted and unexpected lists.
    pub(super) queues: MpidigQueues,
    pub(super) req_size: u64,
    pub(super) req_kind: Member,
    pub(super) req_cc: Member,
    pub(super) req_cc_ptr: Member,
    pub(super) req_comm: Member,
    /// `dev.is_local` and `dev.anysource_partner_request`: absent when
    /// CH4 runs without a shared-memory module (`MPIDI_CH4_DIRECT_NETMOD`,
    /// the default with UCX), where every operation is the netmod's.
    pub(super) req_is_local: Option<Member>,
    pub(super) req_partner: Option<Member>,
    pub(super) am_req: Member,
    pub(super) am_buffer: Member,
    pub(super) am_count: Member,
    pub(super) am_datatype: Member,
    pub(super) am_source: Member,
    pub(super) am_tag: Member,
    pub(super) am_context: Member,
    pub(super) ext_status: Member,
    /// `dev.ch4.netmod.ucx.ucp_request` (4.0), `dev.ch4.netmod.ucx.s.ucp_request`
    /// (4.1 on), when the netmod is UCX.
    pub(super) ucx_request: Option<Member>,
    /// Whether the UCX netmod sets `MPIR_Request.comm` on the requests it
    /// takes (4.1 on, `MPIDI_UCX_recv`), where 4.0's leaves it NULL.
    pub(super) netmod_keeps_comm: bool,
    /// `dev.ch4.am.u.send.dest`: a send's destination on the
    /// shared-memory path (MPIDIG's).
    pub(super) am_send_dest: Option<Member>,
    /// What the OFI netmod keeps of a receive it hands to libfabric, in a
    /// build with that netmod.
    pub(super) ofi: Option<OfiLayout>,
    /// `dev.ch4.self`, CH4's self messages (`MPIDI_self_request_t`);
    /// `None` before 4.0, which has no self path.
    pub(super) self_msg: Option<SelfLayout>,
    /// What 3.4's MPIDIG keeps of a send on the shared-memory path.
    pub(super) shm_send_34: Option<ShmSend34Layout>,
    /// `MPIR_Request_kind_t`'s values for a receive and a send.
    pub(super) kind_recv: i128,
    pub(super) kind_send: Option<i128>,
    pub(super) sendq: Option<SendqLayout>,
    pub(super) datatype_size: Option<(u64, u64)>,
}

/// The stand-in for a member found missing, which the error names.
const ABSENT: Member = Member {
    offset: 0,
    size: 0,
    array_len: None,
};

/// Where MPIDIG keeps its lists, which moved between releases.
#[derive(Clone, Copy, Debug)]
pub(super) enum MpidigQueues {
    /// From 4.0: `MPIDI_global.per_vci[i].posted_list` and `.unexp_list`,
    /// `MPIR_Request`s chained through `next`.
    PerVci {
        /// `MPIR_Request.next`, which chains them.
        req_next: Member,
        n_vcis: Member,
        per_vci: Member,
        per_vci_size: u64,
        posted: Member,
        unexp: Member,
    },
    /// 3.4 (configured with its default per-communicator queues):
    /// `MPIR_Comm.dev.ch4.am.posted_list` and `.unexp_list` of each
    /// communicator a message's context id leads to, `MPIDIG_rreq_t`s
    /// (each request's MPIDIG extension) chained through `next`, each
    /// pointing back to its `MPIR_Request` through `request`.
    PerComm {
        posted: Member,
        unexp: Member,
        rreq_size: u64,
        rreq_next: Member,
        rreq_request: Member,
    },
}

impl MpidigQueues {
    /// 4.0's lists, else 3.4's, else the errors naming both.
    fn resolve(t: &dyn Layouts) -> Result<MpidigQueues, Vec<LayoutError>> {
        const V: &str = "MPIDI_per_vci_t";
        let per_vci = (|| {
            Ok(MpidigQueues::PerVci {
                req_next: t.member("MPIR_Request", "next")?,
                n_vcis: t.member("MPIDI_CH4_Global_t", "n_vcis")?,
                per_vci: t.member("MPIDI_CH4_Global_t", "per_vci")?,
                per_vci_size: t.size_of(V)?,
                posted: t.member(V, "posted_list")?,
                unexp: t.member(V, "unexp_list")?,
            })
        })();
        let per_comm = || -> Result<MpidigQueues, LayoutError> {
            const Q: &str = "MPIDIG_rreq_t";
            Ok(MpidigQueues::PerComm {
                posted: t.member("MPIR_Comm", "dev.ch4.am.posted_list")?,
                unexp: t.member("MPIR_Comm", "dev.ch4.am.unexp_list")?,
                rreq_size: t.size_of(Q)?,
                rreq_next: t.member(Q, "next")?,
                rreq_request: t.member(Q, "request")?,
            })
        };
        match per_vci {
            Ok(q) => Ok(q),
            Err(e) => per_comm().map_err(|e34| vec![e, e34]),
        }
    }
}

/// What MPICH 3.4's MPIDIG keeps of a pending send on the shared-memory
/// path (`MPIDIG_isend_impl`, `ch4/generic/am/mpidig_am_send.h`): a
/// rendezvous send's buffer, count, datatype, own rank and context id in
/// its extension's `sreq`, its destination in `dev.ch4.am.rank`; an eager
/// one keeps none of them (only a build with debugger support keeps its
/// buffer, count and datatype). POSIX's request header
/// (`dev.ch4.am.shm_am.posix.req_hdr`) is set while POSIX holds the send
/// in its postponed queue, and NULL otherwise.
#[derive(Clone, Copy, Debug)]
pub(super) struct ShmSend34Layout {
    pub(super) dest: Member,
    pub(super) posix_req_hdr: Member,
    pub(super) buf: Member,
    pub(super) count: Member,
    pub(super) datatype: Member,
    pub(super) own_rank: Member,
    pub(super) context: Member,
}

impl ShmSend34Layout {
    fn resolve(t: &dyn Layouts) -> Result<ShmSend34Layout, LayoutError> {
        const R: &str = "MPIR_Request";
        const E: &str = "MPIDIG_req_ext_t";
        Ok(ShmSend34Layout {
            dest: t.member(R, "dev.ch4.am.rank")?,
            posix_req_hdr: t.member(R, "dev.ch4.am.shm_am.posix.req_hdr")?,
            buf: t.member(E, "sreq.src_buf")?,
            count: t.member(E, "sreq.count")?,
            datatype: t.member(E, "sreq.datatype")?,
            own_rank: t.member(E, "sreq.rank")?,
            context: t.member(E, "sreq.context_id")?,
        })
    }
}

/// `MPIR_Request.dev.ch4.self` (`MPIDI_self_request_t`, `ch4/include/mpidpre.h`):
/// the envelope of a message on a communicator of one rank, which CH4
/// keeps in its own queues (`ch4_self.c`) and never hands to a netmod.
#[derive(Clone, Copy, Debug)]
pub(super) struct SelfLayout {
    pub(super) buf: Member,
    pub(super) count: Member,
    pub(super) datatype: Member,
    pub(super) tag: Member,
    pub(super) context: Member,
}

/// `MPIR_Request.dev.ch4.netmod.ofi` (`MPIDI_OFI_request_t`, its
/// `direct` part from 5.0): what `MPIDI_OFI_do_irecv` keeps of a receive
/// it posts to libfabric. Its source and tag go to the provider only; 4.2
/// keeps neither buffer nor count either, only the datatype and the
/// context id (`util_id`).
#[derive(Clone, Copy, Debug)]
pub(super) struct OfiLayout {
    /// The context id the receive matches.
    pub(super) context: Option<Member>,
    /// Its buffer, count and datatype (4.3 on).
    pub(super) content: Option<(Member, Member, Member)>,
}

impl OfiLayout {
    fn resolve(t: &dyn Layouts) -> Option<OfiLayout> {
        let m = |name: &str| {
            t.member("MPIR_Request", &format!("dev.ch4.netmod.ofi.direct.{name}"))
                .or_else(|_| t.member("MPIR_Request", &format!("dev.ch4.netmod.ofi.{name}")))
                .ok()
        };
        let l = OfiLayout {
            context: m("context_id").or_else(|| m("util_id")),
            content: m("buf")
                .zip(m("count"))
                .zip(m("datatype"))
                .map(|((b, c), d)| (b, c, d)),
        };
        (l.context.is_some() || l.content.is_some()).then_some(l)
    }
}

/// The records of `MPIR_Sendq_head`, when MPICH was built with debugger
/// support: `MPIR_Sendq` up to 4.0.2, `MPIR_Debugq` (whose request is
/// `req`) from 4.0.3.
#[derive(Clone, Copy, Debug)]
pub(super) struct SendqLayout {
    /// Whether the records are `MPIR_Debugq`s, which CH4's `MPID_Isend`
    /// writes for blocking sends too (`MPID_Send` is `MPID_Isend`), where
    /// 4.0.2's binding layer recorded nonblocking ones only.
    pub(super) blocking_too: bool,
    pub(super) size: u64,
    pub(super) sreq: Member,
    pub(super) tag: Member,
    pub(super) rank: Member,
    pub(super) context: Member,
    pub(super) next: Member,
}

impl Layout {
    pub(super) fn resolve(t: &dyn Layouts) -> Result<Layout, Vec<LayoutError>> {
        const R: &str = "MPIR_Request";
        // 4.0 keeps a receive's envelope in its MPIDIG part; from 4.1
        // MPIDIG matches on the request's own status instead
        // (`MPIDIG_match_request`).
        let mut missing = Vec::new();
        let mut envelope = |ch4: &str, status: &str| -> Member {
            t.member(R, ch4)
                .or_else(|_| t.member(R, status))
                .unwrap_or_else(|e| {
                    missing.push(e);
                    ABSENT
                })
        };
        let queues = MpidigQueues::resolve(t);
        let per_comm = matches!(queues, Ok(MpidigQueues::PerComm { .. }));
        // 3.4 keeps the envelope in MPIDIG's request itself.
        let (source, tag, context) = if per_comm {
            ("dev.ch4.am.rank", "dev.ch4.am.tag", "dev.ch4.am.context_id")
        } else {
            (
                "dev.ch4.am.u.recv.source",
                "dev.ch4.am.u.recv.tag",
                "dev.ch4.am.u.recv.context_id",
            )
        };
        let am_source = envelope(source, "status.MPI_SOURCE");
        let am_tag = envelope(tag, "status.MPI_TAG");
        let queues = queues.unwrap_or_else(|e| {
            missing.extend(e);
            MpidigQueues::PerComm {
                posted: ABSENT,
                unexp: ABSENT,
                rreq_size: 0,
                rreq_next: ABSENT,
                rreq_request: ABSENT,
            }
        });
        // 5.0's groups: an lpid map or an offset and stride (`MPIR_Pmap`).
        let g = |p: &str| t.member("MPIR_Group", p).map(|m| m.offset);
        let pmap5 = match (
            g("pmap.use_map"),
            g("pmap.u.map"),
            g("pmap.u.stride.offset"),
            g("pmap.u.stride.stride"),
        ) {
            (Ok(use_map), Ok(map), Ok(offset), Ok(stride)) => Some(Pmap5Layout {
                use_map,
                map,
                offset,
                stride,
            }),
            _ => None,
        };
        let mut m = |ty: &str, path: &str| -> Member {
            t.member(ty, path).unwrap_or_else(|e| {
                missing.push(e);
                ABSENT
            })
        };
        const C: &str = "MPIR_Comm";
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
            intracomm: 0,
            comm_context_id: m(C, "context_id"),
            comm_recvcontext_id: m(C, "recvcontext_id"),
            comm_local_group: m(C, "local_group"),
            group: GroupLayout {
                size: m("MPIR_Group", "size").offset,
                pmap: if pmap5.is_some() {
                    0
                } else {
                    m("MPIR_Group", "lrank_to_lpid").offset
                },
                pmap_size: 0,
                pmap_lpid: if pmap5.is_some() {
                    0
                } else {
                    m("MPII_Group_pmap_t", "lpid").offset
                },
                pmap5,
            },
            queues,
            req_size: 0,
            req_kind: m(R, "kind"),
            req_cc: m(R, "cc"),
            req_cc_ptr: m(R, "cc_ptr"),
            req_comm: m(R, "comm"),
            req_is_local: t.member(R, "dev.is_local").ok(),
            req_partner: t
                .member(R, "dev.anysource_partner_request")
                .or_else(|_| t.member(R, "dev.anysrc_partner"))
                .ok(),
            am_req: m(R, "dev.ch4.am.req"),
            am_buffer: m(R, "dev.ch4.am.buffer"),
            am_count: m(R, "dev.ch4.am.count"),
            am_datatype: m(R, "dev.ch4.am.datatype"),
            am_source,
            am_tag,
            am_context: m(R, context),
            ext_status: m("MPIDIG_req_ext_t", "status"),
            ucx_request: t
                .member(R, "dev.ch4.netmod.ucx.ucp_request")
                .or_else(|_| t.member(R, "dev.ch4.netmod.ucx.s.ucp_request"))
                .ok(),
            netmod_keeps_comm: t.member(R, "dev.ch4.netmod.ucx.s.ucp_request").is_ok(),
            am_send_dest: t.member(R, "dev.ch4.am.u.send.dest").ok(),
            ofi: OfiLayout::resolve(t),
            // 3.4 has no self path; from 4.0 it is asked for.
            self_msg: (!per_comm).then(|| SelfLayout {
                buf: m(R, "dev.ch4.self.buf"),
                count: m(R, "dev.ch4.self.count"),
                datatype: m(R, "dev.ch4.self.datatype"),
                tag: m(R, "dev.ch4.self.tag"),
                context: m(R, "dev.ch4.self.context_id"),
            }),
            shm_send_34: None,
            kind_recv: 0,
            kind_send: None,
            sendq: None,
            datatype_size: None,
        };
        // A 3.4 build with a shared-memory module keeps its pending sends
        // there: without these members they could not be told from the
        // netmod's.
        if per_comm && l.req_is_local.is_some() {
            match ShmSend34Layout::resolve(t) {
                Ok(s) => l.shm_send_34 = Some(s),
                Err(e) => missing.push(e),
            }
        }
        let mut size = |ty: &str| {
            t.size_of(ty).unwrap_or_else(|e| {
                missing.push(e);
                0
            })
        };
        l.comm_size = size(C);
        if l.group.pmap5.is_none() {
            l.group.pmap_size = size("MPII_Group_pmap_t");
        }
        l.req_size = size(R);
        match t.member_enumerators(C, "comm_kind") {
            Ok(kinds) => match kinds.iter().find(|(n, _)| n == "MPIR_COMM_KIND__INTRACOMM") {
                Some((_, v)) => l.intracomm = *v,
                None => missing.push(LayoutError {
                    type_name: C.to_string(),
                    member: Some("comm_kind".to_string()),
                    reason: "its enumeration has no MPIR_COMM_KIND__INTRACOMM".to_string(),
                }),
            },
            Err(e) => missing.push(e),
        }
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
        // Only with debugger support, and only needed for the send queue:
        // 4.0.2's record type, else 4.0.3's.
        let (record, request) = match t.size_of("MPIR_Sendq") {
            Ok(_) => ("MPIR_Sendq", "sreq"),
            Err(_) => ("MPIR_Debugq", "req"),
        };
        let q = |p: &str| t.member(record, p);
        if let (Ok(size), Ok(sreq), Ok(tag), Ok(rank), Ok(context), Ok(next)) = (
            t.size_of(record),
            q(request),
            q("tag"),
            q("rank"),
            q("context_id"),
            q("next"),
        ) {
            l.sendq = Some(SendqLayout {
                blocking_too: record == "MPIR_Debugq",
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
