//! MPICH requests (`MPIR_Request`).
//!
//! `kind` says what the request is (its enumerators, read from the debug
//! info, name send, receive, persistent, generalized...); `cc_ptr` points
//! at the completion counter, 0 once complete (a started persistent
//! request's points into its real request, `u.persist.real_request`);
//! `comm` is the communicator; `status` holds a completed operation's
//! status. The peer and tag are where the CH3 device keeps its matching
//! information, `dev.match.parts`, sign-extended from their own widths:
//! MPICH's `MPI_ANY_SOURCE` is -2, `MPI_PROC_NULL` -1 and `MPI_ANY_TAG` -1
//! (`mpi.h`), and in its `libmpi_abi` the MPI-5 ABI's
//! ([`MpichConstants`](crate::MpichConstants)).

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{
    Availability, GeneralizedRequest, HandleKind, HandleRef, Peer, RequestDetails, RequestKind,
};
use crate::mpich::callbacks::language;
use crate::mpich::ch4_ucx::{ucx_receive, ucx_send, ucx_world_ranks_by_endpoint};
use crate::mpich::resolver::Mpich;
use crate::mpich::status;
use crate::target::Rec;
use crate::ucx::ucx_layouts_missing;

const R: &str = "MPIR_Request";

/// Why a point-to-point request can have no communicator. Under CH4 the
/// network module's send and receive (`MPIDI_UCX_send`, `MPIDI_UCX_recv`,
/// `ch4/netmod/ucx/`) neither set `comm` (`MPIR_Request_create_from_pool`
/// leaves it NULL) nor hold a reference on the communicator, which the
/// application may then free while the operation is pending: MPICH then
/// returns the communicator object to its allocator at once.
const NO_COMM: &str = "MPICH recorded no communicator for this request (MPIR_Request.comm is \
                       NULL): CH4 hands operations to its network module (UCX) without one, and \
                       the context id is then only in UCX's own request";

pub(crate) fn decode(m: &Mpich<'_>, addr: TargetAddr) -> Result<RequestDetails, HandleError> {
    let ctx = &m.ctx;
    let r = ctx.record(addr, R)?;
    let raw_kind = r.int(ctx.m(R, "kind")?)?;
    let kind_name = ctx.enumerator(R, "kind", raw_kind)?;
    let request_kind = match kind_name
        .as_deref()
        .map(|n| n.trim_start_matches("MPIR_REQUEST_KIND__"))
    {
        Some("SEND") => RequestKind::Send,
        Some("RECV") => RequestKind::Receive,
        Some("PREQUEST_SEND") => RequestKind::PersistentSend,
        Some("PREQUEST_RECV") => RequestKind::PersistentReceive,
        Some("PREQUEST_COLL") => RequestKind::PersistentCollective,
        Some("PART_SEND") => RequestKind::PartitionedSend,
        Some("PART_RECV") => RequestKind::PartitionedReceive,
        Some("GREQUEST") => RequestKind::Generalized,
        Some("COLL") => RequestKind::Collective,
        Some("MPROBE") => RequestKind::MatchedProbe,
        Some("RMA") => RequestKind::Rma,
        Some(_) => RequestKind::Other(kind_name.clone().unwrap_or_default()),
        None => RequestKind::Other(raw_kind.to_string()),
    };
    let persistent = matches!(
        request_kind,
        RequestKind::PersistentSend
            | RequestKind::PersistentReceive
            | RequestKind::PersistentCollective
    );
    let complete = completion(m, &r);
    let active: Availability<bool> = if persistent {
        let path = if request_kind == RequestKind::PersistentCollective {
            "u.persist_coll.real_request"
        } else {
            "u.persist.real_request"
        };
        ctx.m(R, path)
            .map_err(HandleError::from)
            .and_then(|f| Ok(!r.ptr(f)?.is_null()))
            .into()
    } else {
        Availability::not_available("only persistent requests are started and stopped")
    };
    let point_to_point = matches!(
        request_kind,
        RequestKind::Send
            | RequestKind::Receive
            | RequestKind::PersistentSend
            | RequestKind::PersistentReceive
            | RequestKind::MatchedProbe
    );
    let envelope = if point_to_point {
        envelope(m, &r, &request_kind).unwrap_or_else(|e| Envelope::unknown(e.to_string()))
    } else {
        Envelope::unknown("not a point-to-point request".to_string())
    };
    let comm_ptr = ctx
        .m(R, "comm")
        .map_err(HandleError::from)
        .and_then(|f| Ok(r.ptr(f)?));
    let communicator = match comm_ptr {
        Ok(ptr) if ptr.is_null() && point_to_point && ctx.m(R, "dev.ch4").is_ok() => {
            match &envelope.context {
                Some(c) => c.clone(),
                None => Availability::not_available(NO_COMM),
            }
        }
        Ok(ptr) if ptr.is_null() => Availability::Value(None),
        Ok(ptr) => m
            .reference_at(HandleKind::Comm, ptr, "MPIR_Comm")
            .map(Some)
            .into(),
        Err(e) => Availability::not_available(e.to_string()),
    };
    let wild = m.constants;
    let peer = envelope.rank.map(|rank| match rank {
        r if r == wild.any_source => Peer::AnySource,
        r if r == wild.proc_null => Peer::ProcNull,
        n => Peer::Rank(n as i32),
    });
    let tag = envelope
        .tag
        .map(|tag| (tag != wild.any_tag).then_some(tag as i32));
    let status = match complete.value() {
        Some(true) if !persistent => (|| -> Result<_, HandleError> {
            let f = ctx.m(R, "status")?;
            status::read(m, r.addr_of(f), None).map(|mut s| {
                s.address = None;
                s
            })
        })()
        .into(),
        _ => Availability::not_available("the request has not completed"),
    };
    let generalized = if request_kind == RequestKind::Generalized {
        generalized(m, &r).into()
    } else {
        Availability::not_available("not a generalized request")
    };
    let created_by = match request_kind {
        RequestKind::PersistentReceive => Availability::Value("MPI_Recv_init".to_string()),
        RequestKind::Generalized => Availability::Value("MPI_Grequest_start".to_string()),
        _ => Availability::not_available(
            "MPICH does not record the call: a send's mode (standard, buffered, synchronous, \
             ready) is in CH3's packed request state bits, whose layout the debug info does not \
             describe",
        ),
    };
    Ok(RequestDetails {
        persistent: Availability::Value(persistent),
        request_kind: Availability::Value(request_kind),
        active,
        complete,
        created_by,
        communicator,
        peer,
        tag,
        status,
        generalized,
    })
}

/// Whether the counter `cc_ptr` points at is 0.
fn completion(m: &Mpich<'_>, r: &Rec) -> Availability<bool> {
    let ctx = &m.ctx;
    (|| -> Result<bool, HandleError> {
        let cc = ctx.m(R, "cc")?;
        let ptr = r.ptr(ctx.m(R, "cc_ptr")?)?;
        let value = if ptr == r.addr_of(cc) {
            r.int(cc)?
        } else {
            ctx.int(ptr, cc.size, "completion counter (*MPIR_Request.cc_ptr)")?
        };
        Ok(value == 0)
    })()
    .into()
}

fn generalized(m: &Mpich<'_>, r: &Rec) -> Result<GeneralizedRequest, HandleError> {
    const F: &str = "MPIR_Grequest_fns";
    let ctx = &m.ctx;
    let fns = r.ptr(ctx.m(R, "u.ureq.greq_fns")?)?;
    let g = ctx.record(fns, F)?;
    let language = language(ctx, &g, F, "greq_lang");
    Ok(GeneralizedRequest {
        query_fn: g.ptr(ctx.m(F, "U.C.query_fn")?)?,
        free_fn: g.ptr(ctx.m(F, "U.C.free_fn")?)?,
        cancel_fn: g.ptr(ctx.m(F, "U.C.cancel_fn")?)?,
        extra_state: g.ptr(ctx.m(F, "grequest_extra_state")?)?,
        language,
    })
}

/// The peer rank and tag of a point-to-point request, each where the
/// device keeps it.
///
/// CH3 keeps both in `dev.match.parts`. CH4 (MPICH 4.0) keeps them by
/// path: a persistent request in `dev.ch4.preq`; a receive on the
/// active-message path (shared memory, `dev.is_local` set) in
/// `dev.ch4.am.u.recv`; a send's destination there in `u.send.dest` but
/// its tag only in the debugger's send-queue entry (`u.send.dbg_next`, an
/// `MPIR_Sendq`, which has both). Receives handed to UCX keep them only in
/// UCX's own request; a CH4 built without a shared-memory module (no
/// `dev.is_local`) hands every one to it.
fn envelope(m: &Mpich<'_>, r: &Rec, kind: &RequestKind) -> Result<Envelope, HandleError> {
    let ctx = &m.ctx;
    if let (Ok(rank), Ok(tag)) = (
        ctx.m(R, "dev.match.parts.rank"),
        ctx.m(R, "dev.match.parts.tag"),
    ) {
        return Ok(Envelope::known(r.int(rank)?, r.int(tag)?));
    }
    if matches!(
        kind,
        RequestKind::PersistentSend | RequestKind::PersistentReceive
    ) {
        return Ok(Envelope::known(
            r.int(ctx.m(R, "dev.ch4.preq.rank")?)?,
            r.int(ctx.m(R, "dev.ch4.preq.tag")?)?,
        ));
    }
    // A CH4 built with a network module and no shared-memory module
    // (`MPIDI_CH4_DIRECT_NETMOD`, as ch4:ucx always is) has no `is_local`:
    // every point-to-point operation goes to the network module.
    let local = match ctx.m(R, "dev.is_local") {
        Ok(f) => r.int(f)? != 0,
        Err(_) => false,
    };
    match ch4_self_path(m, r)? {
        Some(SelfPath::SelfComm) => {
            // CH4's self path: the only peer is rank 0 of a one-rank
            // communicator, and the tag is in `dev.ch4.self`.
            return Ok(Envelope::known(0, r.int(ctx.m(R, "dev.ch4.self.tag")?)?));
        }
        Some(SelfPath::Neither) => {
            return Ok(Envelope::unknown(
                "its communicator is set and has more than one rank: neither the network                  module's (whose requests keep none) nor CH4's self path's, so its peer and tag                  cannot be told"
                    .to_string(),
            ))
        }
        None => {}
    }
    if *kind == RequestKind::Send {
        let entry = ctx
            .m(R, "u.send.dbg_next")
            .ok()
            .map(|f| r.ptr(f))
            .transpose()?
            .filter(|p| !p.is_null());
        if let Some(entry) = entry {
            const Q: &str = "MPIR_Sendq";
            let q = ctx.record(entry, Q)?;
            let mut e = Envelope::known(q.int(ctx.m(Q, "rank")?)?, q.int(ctx.m(Q, "tag")?)?);
            let id = q.int(ctx.m(Q, "context_id")?)?;
            e.context = Some(comm_of_context(m, "context_id", id, "the send-queue entry"));
            return Ok(e);
        }
        if let Some(ucp) = ucx_request(m, r)? {
            return ucx_send_envelope(m, ucp);
        }
        let no_tag = "CH4 keeps a send's tag only in the debugger's send queue, which does not \
                      hold this send (a blocking send, or MPICH without debugger support)";
        if local {
            return Ok(Envelope {
                rank: Availability::Value(r.int(ctx.m(R, "dev.ch4.am.u.send.dest")?)?),
                tag: Availability::not_available(no_tag),
                context: None,
            });
        }
        return Ok(Envelope {
            rank: Availability::not_available(
                "sent through the network module: its peer is only in the network library's request",
            ),
            tag: Availability::not_available(no_tag),
            context: None,
        });
    }
    if let Some(ucp) = ucx_request(m, r)? {
        if *kind == RequestKind::Receive {
            let u = ucx_receive(ctx.mem, ctx.layouts, ucp)?;
            return Ok(Envelope {
                rank: Availability::Value(u.rank.unwrap_or(m.constants.any_source)),
                tag: Availability::Value(u.tag.unwrap_or(m.constants.any_tag)),
                context: Some(comm_of_context(
                    m,
                    "recvcontext_id",
                    u.context_id,
                    "UCX's tag",
                )),
            });
        }
    }
    if local {
        return Ok(Envelope::known(
            r.int(ctx.m(R, "dev.ch4.am.u.recv.source")?)?,
            r.int(ctx.m(R, "dev.ch4.am.u.recv.tag")?)?,
        ));
    }
    let why = "posted to the network module (UCX): its source and tag are only in UCX's request";
    Ok(Envelope::unknown(why.to_string()))
}

/// Which of CH4's paths a request with a communicator is on.
enum SelfPath {
    /// CH4's self path (`ch4_self.c`): `comm` is an intracommunicator of
    /// one rank, and the envelope is in `dev.ch4.self`.
    SelfComm,
    /// `comm` is set but is no self communicator.
    Neither,
}

/// How MPICH 4.0 tells a CH4 request's path (`MPID_Cancel_send`,
/// `MPIDI_is_self_comm`): the UCX netmod's requests keep no communicator,
/// a self message's keeps its one-rank intracommunicator. `None` for a
/// request without one, or a build without CH4's self requests: the
/// member `dev.ch4.self` shares its union with UCX's request pointer, so
/// a self request must never be read as a UCX one.
fn ch4_self_path(m: &Mpich<'_>, r: &Rec) -> Result<Option<SelfPath>, HandleError> {
    let ctx = &m.ctx;
    if ctx.m(R, "dev.ch4.self.tag").is_err() {
        return Ok(None);
    }
    let comm = r.ptr(ctx.m(R, "comm")?)?;
    if comm.is_null() {
        return Ok(None);
    }
    const C: &str = "MPIR_Comm";
    let c = ctx.record(comm, C)?;
    let kind = c.int(ctx.m(C, "comm_kind")?)?;
    let intra = ctx
        .enumerator(C, "comm_kind", kind)?
        .is_some_and(|n| n.ends_with("INTRACOMM"));
    let remote_size = c.int(ctx.m(C, "remote_size")?)?;
    Ok(if intra && remote_size == 1 {
        Some(SelfPath::SelfComm)
    } else if ctx.m(R, "dev.ch4.netmod.ucx.s.ucp_request").is_ok() {
        // From 4.1 the UCX netmod keeps the communicator of the requests
        // it takes (`MPIDI_UCX_recv`): the network module's path.
        None
    } else {
        Some(SelfPath::Neither)
    })
}

/// A point-to-point request's peer and tag, as [`envelope`] found them.
struct Envelope {
    rank: Availability<i64>,
    tag: Availability<i64>,
    /// The communicator found by a context id: a CH4 request handed to the
    /// network module keeps none, and its context id is then only in the
    /// debugger's send-queue entry or UCX's tag.
    context: Option<Availability<Option<HandleRef>>>,
}

impl Envelope {
    fn known(rank: i64, tag: i64) -> Envelope {
        Envelope {
            rank: Availability::Value(rank),
            tag: Availability::Value(tag),
            context: None,
        }
    }

    fn unknown(why: String) -> Envelope {
        Envelope {
            rank: Availability::not_available(why.clone()),
            tag: Availability::not_available(why),
            context: None,
        }
    }
}

/// MPICH's pointer to UCX's request for a request handed to the UCX
/// netmod, when UCX's types are known (else the caller says why the
/// envelope is unknown).
fn ucx_request(m: &Mpich<'_>, r: &Rec) -> Result<Option<TargetAddr>, HandleError> {
    let ctx = &m.ctx;
    // `dev.ch4.netmod.ucx.s.ucp_request` from 4.1.
    let Ok(member) = ctx
        .m(R, "dev.ch4.netmod.ucx.ucp_request")
        .or_else(|_| ctx.m(R, "dev.ch4.netmod.ucx.s.ucp_request"))
    else {
        return Ok(None);
    };
    if ucx_layouts_missing(ctx.layouts).is_some() {
        return Ok(None);
    }
    Ok(Some(r.ptr(member)?).filter(|p| !p.is_null()))
}

/// A send handed to UCX: its tag and communicator from UCX's tag, its
/// destination from the endpoint it uses, found in CH4's address vector
/// as a world rank and turned into the communicator's rank.
fn ucx_send_envelope(m: &Mpich<'_>, ucp: TargetAddr) -> Result<Envelope, HandleError> {
    let ctx = &m.ctx;
    let u = ucx_send(ctx.mem, ctx.layouts, ucp)?;
    let found = with_context_id(m, "context_id", u.context_id);
    let context = comm_of_context(m, "context_id", u.context_id, "UCX's tag");
    let invalid = |reason: String| HandleError::Invalid {
        kind: HandleKind::Request,
        value: 0,
        reason,
    };
    let rank = (|| -> Result<i64, HandleError> {
        let global = ctx.symbol("MPIDI_global", "CH4's address vector")?;
        let by_endpoint =
            ucx_world_ranks_by_endpoint(ctx.mem, ctx.layouts, ctx.limits, global.addr)?;
        let ep = u.endpoint.unwrap_or(0);
        let world = *by_endpoint
            .get(&ep)
            .ok_or_else(|| invalid(format!("UCX's endpoint {ep:#x} is no world rank's")))?;
        let [(_, comm)] = found?[..] else {
            return Err(invalid(format!(
                "world rank {world}, in a communicator that context id {} does not single out",
                u.context_id
            )));
        };
        let ranks = crate::mpich::comm::decode(m, comm)?.local_world_ranks;
        ranks
            .value()
            .and_then(|w| w.iter().position(|&r| r == world))
            .map(|i| i as i64)
            .ok_or_else(|| invalid(format!("world rank {world} is not in its communicator")))
    })();
    Ok(Envelope {
        rank: rank.into(),
        tag: Availability::Value(u.tag.unwrap_or(m.constants.any_tag)),
        context: Some(context),
    })
}

/// The communicators, predefined or handed out and not freed, whose
/// `member` (a context id) is `id`, with their addresses.
fn with_context_id(
    m: &Mpich<'_>,
    member: &str,
    id: i64,
) -> Result<Vec<(HandleRef, TargetAddr)>, HandleError> {
    let context = m.ctx.m("MPIR_Comm", member)?;
    m.objects_where(HandleKind::Comm, |r| Ok(r.int(context)? == id))
}

/// The communicator whose `member` (`context_id` for a send,
/// `recvcontext_id` for a receive) is `id`, among the predefined and the
/// live ones; `source` says where the id was read. MPICH allocates context ids per process,
/// but an intercommunicator's send context id is its peer group's, which
/// may equal a local one; more than one match is reported, not guessed.
fn comm_of_context(
    m: &Mpich<'_>,
    member: &str,
    id: i64,
    source: &str,
) -> Availability<Option<HandleRef>> {
    match with_context_id(m, member, id) {
        Ok(found) => match found.as_slice() {
            [(one, _)] => Availability::Value(Some(one.clone())),
            [] => Availability::not_available(format!(
                "{source} names context id {id}, which no live communicator has (the \
                 application freed it)"
            )),
            many => Availability::not_available(format!(
                "{source} names context id {id}, which {} live communicators share",
                many.len()
            )),
        },
        Err(e) => Availability::not_available(format!(
            "{source} names context id {id}, but the communicators could not be read: {e}"
        )),
    }
}
