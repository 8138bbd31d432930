//! libfabric (OFI), the communication library under MPICH's `ch4:ofi`,
//! Open MPI's OFI MTL and Intel MPI: what its software providers keep of
//! the tagged operations an MPI library handed them, read with
//! libfabric's own layouts whatever the MPI library's come from.
//!
//! - [`endpoint`]: one endpoint's traffic ([`read_ofi_endpoint`]): which
//!   provider it is of, read from the rank, and the check that the
//!   layouts read it as libfabric made it.
//! - [`shm`]: the `shm` provider's receive context (posted receives,
//!   unexpected messages) and its sends in flight; [`rxm`]: the
//!   `ofi_rxm` provider's receive queues, under which `tcp` and `verbs`
//!   carry RDM traffic, and [`rxm_sends`] its transmit buffers in flight; [`dlist`]: the rings both keep them in.
//! - [`hardware`]: the providers that match in the NIC or in a library of
//!   their own (`cxi`, `psm2`, `psm3`), of which one line is said; [`info`]:
//!   the provider an `fi_info` names, which names those too.
//! - [`layout`]: every size and offset these ask of the layout source;
//!   [`flags`]: the constants no layout source holds; [`model`]: what
//!   the reader gives.
//!
//! It knows no MPI library: how one packs its envelope into libfabric's
//! 64-bit tag, and where it keeps its endpoints, is that library's. It
//! stands on the crate's root (the target reader, errors) alone, and must
//! not import `mpich/`, `ompi/` or `ucx/`.

mod dlist;
mod endpoint;
mod error;
mod flags;
mod hardware;
mod info;
mod layout;
mod model;
mod rxm;
mod rxm_sends;
mod shm;

pub use endpoint::{
    ask_ofi_layouts, ofi_layouts_missing, read_ofi_endpoint, read_ofi_provider_name,
};
pub use error::OfiError;
pub use hardware::ofi_hardware_matching;
pub use info::read_ofi_info_provider;
pub use model::{
    OfiEndpointQueues, OfiPostedReceive, OfiProtocol, OfiProvider, OfiSend, OfiUnexpected,
};
