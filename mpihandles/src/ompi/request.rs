//! Open MPI requests (`ompi_request_t`).
//!
//! Every request has a type (`req_type`: point-to-point, file,
//! generalized, one-sided, collective...), a state (`req_state`: inactive,
//! active, cancelled, or invalid once freed), `req_persistent`,
//! `req_complete` (`REQUEST_COMPLETED` once complete for MPI) and its
//! status. A point-to-point request is the PML's: ob1's begin with
//! `mca_pml_base_request_t`, which keeps whether the application freed it
//! (`req_free_called`), send or receive, the communicator, the peer and the
//! tag; a send's mode (`mca_pml_base_send_request_t.req_send_mode`) tells
//! which call made it. A generalized request (`ompi_grequest_t`) keeps the
//! application's query, free and cancel functions and their extra state.
//!
//! ob1's requests come from free lists and return to them when freed,
//! marked `OMPI_REQUEST_INVALID`: such a request is shown as freed, and
//! its memory may already hold a newer request. The UCX PML's request is
//! the `ompi_request_t` alone, the user part of UCX's request; its peer
//! and tag are UCX's, which `mpidd queues` reads.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{
    Availability, Details, GeneralizedRequest, HandleKind, Peer, RequestDetails, RequestKind,
};
use crate::ompi::constants::{ANY_SOURCE, ANY_TAG, PROC_NULL, REQUEST_COMPLETED};
use crate::ompi::resolver::{Decoded, Ompi};
use crate::ompi::status;
use crate::target::at;

pub(crate) fn decode(o: &Ompi<'_>, addr: TargetAddr) -> Result<Decoded, HandleError> {
    let ctx = &o.ctx;
    let l = &o.l.request;
    let m = &l.m;
    let r = ctx.record_sized(addr, l.size, l.name)?;
    let req_type = m.types.name(r.int(m.req_type)?);
    let state = m.states.name(r.int(m.state)?);
    let f2c = Availability::Value(r.int(m.f2c)?);
    if state == "OMPI_REQUEST_INVALID" {
        return Ok(Decoded {
            details: Details::Undecoded {
                reason: "the request was freed: Open MPI returned it to its free list, and its \
                         memory holds what it last held, or a newer request"
                    .to_string(),
            },
            predefined: false,
            name: None,
            f2c,
            freed_by_application: Availability::not_available(
                "the request was freed, by the application or once complete",
            ),
            freed: Some(format!("its state is {state}")),
            notes: Vec::new(),
        });
    }
    let persistent = r.uint(m.persistent)? != 0;
    let complete = r.uint(m.complete)? == REQUEST_COMPLETED;
    let status = if complete {
        status::read(o, at(addr, m.status.offset), None).into()
    } else {
        Availability::not_available("the request has not completed")
    };
    let active = if persistent {
        Availability::Value(state == "OMPI_REQUEST_ACTIVE")
    } else {
        Availability::not_available("only persistent requests are started and stopped")
    };
    let none = format!("a {req_type} request has none");
    let mut details = RequestDetails {
        request_kind: Availability::Value(match req_type.as_str() {
            "OMPI_REQUEST_GEN" => RequestKind::Generalized,
            "OMPI_REQUEST_IO" => RequestKind::File,
            "OMPI_REQUEST_COLL" if persistent => RequestKind::PersistentCollective,
            "OMPI_REQUEST_COLL" => RequestKind::Collective,
            "OMPI_REQUEST_WIN" => RequestKind::Rma,
            other => RequestKind::Other(other.to_string()),
        }),
        persistent: Availability::Value(persistent),
        active,
        complete: Availability::Value(complete),
        created_by: match req_type.as_str() {
            "OMPI_REQUEST_GEN" => Availability::Value("MPI_Grequest_start".to_string()),
            _ => Availability::not_available(format!(
                "a {req_type} request does not say which call made it"
            )),
        },
        communicator: Availability::not_available(none.clone()),
        peer: Availability::not_available(none.clone()),
        tag: Availability::not_available(none),
        status,
        generalized: Availability::not_available("not a generalized request"),
    };
    let mut freed_by_application = Availability::not_available(format!(
        "Open MPI keeps no such mark on a {req_type} request"
    ));
    match req_type.as_str() {
        "OMPI_REQUEST_PML" if o.pml.as_deref() == Some("ucx") => {
            // The UCX PML's request is a bare ompi_request_t, the user part
            // of UCX's request (`mca_pml_ucx_request_init`): no
            // mca_pml_base_request_t follows it.
            let comm = r.ptr(m.mpi_object)?;
            details.communicator = Availability::Value(o.reference_opt(HandleKind::Comm, comm));
            let why = "the UCX PML keeps it in UCX's request (ucp_request_t), right before \
                       this one; `mpidd queues` shows the operation, naming this request";
            details.request_kind = Availability::not_available(why);
            details.peer = Availability::not_available(why);
            details.tag = Availability::not_available(why);
            freed_by_application = Availability::not_available(
                "the UCX PML keeps no such mark: a request the application freed returns to \
                 UCX's pool",
            );
        }
        "OMPI_REQUEST_PML" => {
            freed_by_application = pml(o, addr, persistent, &mut details)?;
        }
        "OMPI_REQUEST_GEN" => {
            details.generalized = generalized(o, addr).into();
        }
        "OMPI_REQUEST_COLL" => {
            let comm = r.ptr(m.mpi_object)?;
            details.communicator = Availability::Value(o.reference_opt(HandleKind::Comm, comm));
        }
        _ => {}
    }
    Ok(Decoded {
        details: Details::Request(details),
        predefined: false,
        name: None,
        f2c,
        freed_by_application,
        freed: None,
        notes: vec![format!("state: {state}")],
    })
}

/// Fills in what a PML request keeps, and says whether the application
/// freed it.
fn pml(
    o: &Ompi<'_>,
    addr: TargetAddr,
    persistent: bool,
    d: &mut RequestDetails,
) -> Result<Availability<bool>, HandleError> {
    let ctx = &o.ctx;
    let l = &o.l.pml;
    let m = &l.m;
    let r = ctx.record_sized(addr, l.size, l.name)?;
    let kind = m.types.name(r.int(m.req_type)?);
    let send = kind == "MCA_PML_REQUEST_SEND";
    d.request_kind = Availability::Value(match (kind.as_str(), persistent) {
        ("MCA_PML_REQUEST_SEND", false) => RequestKind::Send,
        ("MCA_PML_REQUEST_SEND", true) => RequestKind::PersistentSend,
        ("MCA_PML_REQUEST_RECV", false) => RequestKind::Receive,
        ("MCA_PML_REQUEST_RECV", true) => RequestKind::PersistentReceive,
        ("MCA_PML_REQUEST_IMPROBE" | "MCA_PML_REQUEST_MPROBE", _) => RequestKind::MatchedProbe,
        (other, _) => RequestKind::Other(other.to_string()),
    });
    d.created_by = if send {
        (|| -> Result<String, HandleError> {
            let f = m.send_mode;
            let mode = m
                .send_modes
                .name(ctx.int(at(addr, f.offset), f.size, "req_send_mode")?);
            Ok(match (mode.as_str(), persistent) {
                ("MCA_PML_BASE_SEND_SYNCHRONOUS", false) => "MPI_Issend",
                ("MCA_PML_BASE_SEND_SYNCHRONOUS", true) => "MPI_Ssend_init",
                ("MCA_PML_BASE_SEND_BUFFERED", false) => "MPI_Ibsend",
                ("MCA_PML_BASE_SEND_BUFFERED", true) => "MPI_Bsend_init",
                ("MCA_PML_BASE_SEND_READY", false) => "MPI_Irsend",
                ("MCA_PML_BASE_SEND_READY", true) => "MPI_Rsend_init",
                (_, false) => "MPI_Isend",
                (_, true) => "MPI_Send_init",
            }
            .to_string())
        })()
        .into()
    } else if kind == "MCA_PML_REQUEST_RECV" {
        Availability::Value(
            if persistent {
                "MPI_Recv_init"
            } else {
                "MPI_Irecv"
            }
            .to_string(),
        )
    } else {
        Availability::not_available(format!("a {kind} request"))
    };
    d.communicator = Availability::Value(o.reference_opt(HandleKind::Comm, r.ptr(m.comm)?));
    // The members after the convertor are ob1's layout of the base
    // request; the cm PML keeps its own there.
    if o.pml.as_deref() == Some("ob1") {
        let peer = r.int(m.peer)?;
        d.peer = Availability::Value(match peer {
            ANY_SOURCE => Peer::AnySource,
            PROC_NULL => Peer::ProcNull,
            p => Peer::Rank(p as i32),
        });
        let tag = r.int(m.tag)?;
        d.tag = Availability::Value((tag != ANY_TAG).then_some(tag as i32));
    } else {
        let why = format!(
            "the {} PML keeps its requests' peer and tag in its own layout; only ob1's is read",
            o.pml.as_deref().unwrap_or("selected")
        );
        d.peer = Availability::not_available(why.clone());
        d.tag = Availability::not_available(why);
    }
    Ok(Availability::Value(r.int(m.free_called)? != 0))
}

fn generalized(o: &Ompi<'_>, addr: TargetAddr) -> Result<GeneralizedRequest, HandleError> {
    let l = &o.l.greq;
    let m = &l.m;
    let r = o.ctx.record_sized(addr, l.size, l.name)?;
    Ok(GeneralizedRequest {
        query_fn: r.ptr(m.query)?,
        free_fn: r.ptr(m.free)?,
        cancel_fn: r.ptr(m.cancel)?,
        extra_state: r.ptr(m.state)?,
        language: Availability::Value(
            if r.uint(m.funcs_are_c)? != 0 {
                "C"
            } else {
                "Fortran"
            }
            .to_string(),
        ),
    })
}
