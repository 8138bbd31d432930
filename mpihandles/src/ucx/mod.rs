//! UCX, the communication library under MPICH's `ch4:ucx` and Open MPI's
//! UCX PML: what UCX keeps of an operation an MPI library handed to its
//! tag matching ([`request`]: `ucp_request_t`'s tag, tag mask, buffer,
//! length and endpoint), read with UCX's own layouts whatever the MPI
//! library's come from.
//!
//! It knows no MPI library: how one packs its envelope into UCX's 64-bit
//! tag, and where it keeps its endpoints, is that library's (MPICH's in
//! `mpich/ch4_ucx.rs`). It stands on the crate's root (the target reader,
//! errors) alone, and must not import `mpich/` or `ompi/`.

mod request;

pub(crate) use request::{receive, send};
pub use request::{ucx_layouts_missing, UcxError};
