//! The sends that wait for an answer from their peer, found through the
//! worker's endpoints rather than its request pool.
//!
//! UCX 1.13 gives a tagged send an id when it must be answered: a
//! rendezvous send (`ucp_tag_send_start_rndv`, `src/ucp/tag/tag_rndv.c`)
//! and a synchronous one (`ucp_tag_send_req`, `src/ucp/tag/tag_send.c`),
//! and then links it into its endpoint's `proto_reqs`
//! (`ucp_send_request_id_alloc`, `src/ucp/core/ucp_request.inl`). That
//! holds for requests an MPI library allocated itself
//! (`UCP_OP_ATTR_FIELD_REQUEST`, as Open MPI's blocking sends do on their
//! stack), which no pool holds.
//!
//! The endpoints are a ring from `ucp_worker_t.all_eps` through each
//! endpoint's `ucp_ep_ext_gen_t.ep_list`; `proto_reqs` is a
//! `ucs_hlist_head_t` whose `ptr` is the first request's link
//! (`send.list`), the links forming a ring (`src/ucs/datastruct/hlist.h`).

use std::collections::HashSet;

use mpidd_read::ReadError;
use mpidd_types::TargetAddr;

use super::error::UcxError;
use super::flags::REQUEST_COMPLETED;
use super::layout::{EndpointLayout, RequestLayout, EP_EXT_GEN, LIST_LINK, REQUEST};
use super::request::tag_send;
use super::worker::{UcxProtocol, UcxSendRequest};
use crate::target::{at, Ctx};

/// The tagged sends not completed that the worker's endpoints list in
/// `proto_reqs`, each with its protocol where that tells it: a send with
/// an id that is not synchronous is a rendezvous send.
pub(crate) fn answered_sends(
    ctx: &Ctx<'_>,
    el: &EndpointLayout,
    rl: &RequestLayout,
    worker: TargetAddr,
) -> Result<Vec<UcxSendRequest>, UcxError> {
    let max = ctx.limits.max_list_len;
    let head = at(worker, el.all_eps.offset);
    let next_of = |link: TargetAddr, what: &'static str| -> Result<TargetAddr, UcxError> {
        Ok(ctx
            .record_sized(link, el.link_size, what)?
            .ptr(el.link_next)?)
    };
    let mut endpoints = HashSet::new();
    let mut requests = HashSet::new();
    let mut out = Vec::new();
    let mut link = next_of(head, LIST_LINK)?;
    while link != head {
        if link.is_null() {
            return Err(UcxError::corrupt(
                "ucp_worker_t",
                worker,
                "its list of endpoints (all_eps) reaches a NULL link",
            ));
        }
        if endpoints.len() as u64 >= max {
            return Err(ReadError::LimitExceeded {
                what: "the worker's endpoints (ucp_worker_t.all_eps)",
                addr: head,
                count: endpoints.len() as u64,
                max,
                limit: "max_list_len",
            }
            .into());
        }
        if !endpoints.insert(link) {
            return Err(ReadError::Cycle {
                what: "ucp_ep_ext_gen_t.ep_list.next",
                addr: link,
            }
            .into());
        }
        let ext = TargetAddr(link.0.wrapping_sub(el.ep_list.offset));
        let first = ctx
            .record_sized(
                at(ext, el.proto_reqs.offset),
                el.hlist_ptr.offset.saturating_add(el.hlist_ptr.size),
                EP_EXT_GEN,
            )?
            .ptr(el.hlist_ptr)?;
        let mut req_link = first;
        while !req_link.is_null() {
            if requests.len() as u64 >= max {
                return Err(ReadError::LimitExceeded {
                    what: "an endpoint's requests (ucp_ep_ext_gen_t.proto_reqs)",
                    addr: ext,
                    count: requests.len() as u64,
                    max,
                    limit: "max_list_len",
                }
                .into());
            }
            if !requests.insert(req_link) {
                return Err(ReadError::Cycle {
                    what: "ucp_request_t.send.list.next",
                    addr: req_link,
                }
                .into());
            }
            let request = TargetAddr(req_link.0.wrapping_sub(el.send_list.offset));
            let r = ctx.record_sized(request, rl.size, REQUEST)?;
            let flags = r.uint(rl.flags)? as u32;
            let send = if flags & REQUEST_COMPLETED == 0 {
                tag_send(ctx, rl, &r, flags)?
            } else {
                None
            };
            if let Some(send) = send {
                let synchronous = send.synchronous;
                out.push(UcxSendRequest {
                    request,
                    user: at(request, rl.size),
                    tag: r.uint(rl.send_tag)?,
                    buffer: send.buffer,
                    length: send.length,
                    endpoint: r.uint(rl.send_ep)?,
                    synchronous,
                    // Eager-sync and rendezvous sends alike wait for an
                    // answer; only a rendezvous one is not synchronous.
                    protocol: if synchronous {
                        UcxProtocol::Unknown(flags)
                    } else {
                        UcxProtocol::Rendezvous
                    },
                });
            }
            let next = mpidd_read::Member {
                offset: el
                    .send_list
                    .offset
                    .saturating_add(el.hlist_list.offset)
                    .saturating_add(el.link_next.offset),
                size: el.link_next.size,
                array_len: None,
            };
            req_link = r.ptr(next)?;
            if req_link == first {
                break;
            }
        }
        link = next_of(link, LIST_LINK)?;
    }
    Ok(out)
}
