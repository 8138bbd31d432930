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
//! (`mpi.h`).

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{
    Availability, GeneralizedRequest, HandleKind, HandleRef, Peer, RequestDetails, RequestKind,
};
use crate::mpich::Mpich;
use crate::mpich_pools;
use crate::mpich_status;
use crate::target::Rec;

const R: &str = "MPIR_Request";
const ANY_SOURCE: i64 = -2;
const PROC_NULL: i64 = -1;
const ANY_TAG: i64 = -1;

pub(crate) fn decode(m: &Mpich<'_>, addr: TargetAddr) -> Result<RequestDetails, HandleError> {
    let ctx = &m.ctx;
    let r = ctx.record(addr, R)?;
    let raw_kind = r.int(ctx.m(R, "kind")?)?;
    let kinds = ctx.layouts.member_enumerators(R, "kind")?;
    let kind_name = kinds
        .iter()
        .find(|(_, v)| *v == i128::from(raw_kind))
        .map(|(n, _)| n.clone());
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
    let communicator = (|| -> Result<Option<HandleRef>, HandleError> {
        let ptr = r.ptr(ctx.m(R, "comm")?)?;
        if ptr.is_null() {
            return Ok(None);
        }
        Ok(Some(m.reference_at(HandleKind::Comm, ptr, "MPIR_Comm")?))
    })()
    .into();
    let point_to_point = matches!(
        request_kind,
        RequestKind::Send
            | RequestKind::Receive
            | RequestKind::PersistentSend
            | RequestKind::PersistentReceive
            | RequestKind::MatchedProbe
    );
    let (peer, tag) = if point_to_point {
        match envelope(m, &r, &request_kind) {
            Ok((rank, tag)) => (
                rank.map(|rank| match rank {
                    ANY_SOURCE => Peer::AnySource,
                    PROC_NULL => Peer::ProcNull,
                    n => Peer::Rank(n as i32),
                }),
                tag.map(|tag| (tag != ANY_TAG).then_some(tag as i32)),
            ),
            Err(e) => (
                Availability::not_available(e.to_string()),
                Availability::not_available(e.to_string()),
            ),
        }
    } else {
        let why = "not a point-to-point request";
        (
            Availability::not_available(why),
            Availability::not_available(why),
        )
    };
    let status = match complete.value() {
        Some(true) if !persistent => (|| -> Result<_, HandleError> {
            let f = ctx.m(R, "status")?;
            mpich_status::read(m, r.addr_of(f), None).map(|mut s| {
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
    let language = crate::mpich_errhandler::language(ctx, &g, F, "greq_lang");
    Ok(GeneralizedRequest {
        query_fn: g.ptr(ctx.m(F, "U.C.query_fn")?)?,
        free_fn: g.ptr(ctx.m(F, "U.C.free_fn")?)?,
        cancel_fn: g.ptr(ctx.m(F, "U.C.cancel_fn")?)?,
        extra_state: g.ptr(ctx.m(F, "grequest_extra_state")?)?,
        language,
    })
}

/// Requests MPICH has handed out and not freed whose pointer member
/// `path` is `target`, in allocation order.
pub(crate) fn referring_to(
    m: &Mpich<'_>,
    path: &str,
    target: TargetAddr,
) -> Result<Vec<HandleRef>, HandleError> {
    let ctx = &m.ctx;
    let Some(spec) = mpich_pools::spec(HandleKind::Request) else {
        return Ok(Vec::new());
    };
    let member = ctx.m(R, path)?;
    let handle = ctx.m(R, "handle")?;
    let mut out = Vec::new();
    for r in mpich_pools::live_objects(ctx, &spec)? {
        if r.ptr(member)? == target {
            out.push(m.reference(HandleKind::Request, r.int(handle)? as u32));
        }
    }
    Ok(out)
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
/// UCX's own request.
fn envelope(
    m: &Mpich<'_>,
    r: &Rec,
    kind: &RequestKind,
) -> Result<(Availability<i64>, Availability<i64>), HandleError> {
    let ctx = &m.ctx;
    if let (Ok(rank), Ok(tag)) = (
        ctx.m(R, "dev.match.parts.rank"),
        ctx.m(R, "dev.match.parts.tag"),
    ) {
        return Ok((
            Availability::Value(r.int(rank)?),
            Availability::Value(r.int(tag)?),
        ));
    }
    if matches!(
        kind,
        RequestKind::PersistentSend | RequestKind::PersistentReceive
    ) {
        return Ok((
            Availability::Value(r.int(ctx.m(R, "dev.ch4.preq.rank")?)?),
            Availability::Value(r.int(ctx.m(R, "dev.ch4.preq.tag")?)?),
        ));
    }
    let local = r.int(ctx.m(R, "dev.is_local")?)? != 0;
    if *kind == RequestKind::Send {
        let entry = ctx
            .m(R, "u.send.dbg_next")
            .ok()
            .map(|f| r.ptr(f))
            .transpose()?
            .filter(|p| !p.is_null());
        if let Some(entry) = entry {
            let q = ctx.record(entry, "MPIR_Sendq")?;
            return Ok((
                Availability::Value(q.int(ctx.m("MPIR_Sendq", "rank")?)?),
                Availability::Value(q.int(ctx.m("MPIR_Sendq", "tag")?)?),
            ));
        }
        let no_tag = "CH4 keeps a send's tag only in the debugger's send queue, which does not \
                      hold this send (a blocking send, or MPICH without debugger support)";
        if local {
            return Ok((
                Availability::Value(r.int(ctx.m(R, "dev.ch4.am.u.send.dest")?)?),
                Availability::not_available(no_tag),
            ));
        }
        return Ok((
            Availability::not_available(
                "sent through the network module: its peer is only in the network library's request",
            ),
            Availability::not_available(no_tag),
        ));
    }
    if local {
        return Ok((
            Availability::Value(r.int(ctx.m(R, "dev.ch4.am.u.recv.source")?)?),
            Availability::Value(r.int(ctx.m(R, "dev.ch4.am.u.recv.tag")?)?),
        ));
    }
    let why = "posted to the network module (UCX): its source and tag are only in UCX's request";
    Ok((
        Availability::not_available(why),
        Availability::not_available(why),
    ))
}
