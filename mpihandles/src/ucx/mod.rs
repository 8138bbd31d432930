//! UCX, the communication library under MPICH's `ch4:ucx` and Open MPI's
//! UCX PML: what UCX keeps of the tagged operations an MPI library handed
//! it, read with UCX's own layouts whatever the MPI library's come from.
//!
//! - [`request`]: the one `ucp_request_t` an MPI library points to (tag,
//!   tag mask, buffer, length, endpoint).
//! - [`worker`]: a UCP worker's whole tagged traffic
//!   ([`read_ucx_worker`]): the receives posted to its expected queues and
//!   the messages in its unexpected list ([`tag_match`]), the sends and
//!   receives of its request pool still in progress ([`pool`]), and the
//!   sends its endpoints keep until their peer answers ([`endpoints`]).
//! - [`layout`]: every size and offset these ask of the layout source, and
//!   the list of questions a profile answers; [`flags`]: UCX 1.13's flag
//!   bits, which no layout source holds.
//!
//! It knows no MPI library: how one packs its envelope into UCX's 64-bit
//! tag, and where it keeps its endpoints and workers, is that library's
//! (MPICH's in `mpich/ch4_ucx.rs`). It stands on the crate's root (the
//! target reader, errors) alone, and must not import `mpich/` or `ompi/`.

mod endpoints;
mod error;
mod flags;
mod layout;
mod pool;
mod request;
mod tag_match;
mod worker;

pub use error::UcxError;
pub use request::{ucx_layouts_missing, UcxRequestReader};
pub use worker::{
    ask_ucx_worker_layouts, read_ucx_worker, ucx_worker_layouts_missing, UcxPostedReceive,
    UcxProtocol, UcxReceiveRequest, UcxSendRequest, UcxSender, UcxUnexpected, UcxWorkerQueues,
};
