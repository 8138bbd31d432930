//! MPICH: its object model, and the handle views built on it.
//!
//! The object model is how MPICH keeps its objects in memory: how an int
//! handle packs storage, kind and index ([`handle_bits`]), and what a
//! handle of the MPI-5 standard ABI is in those terms ([`abi`]); where each
//! kind's objects live, in builtin arrays, direct arrays and the
//! allocators' indirect blocks, and which are free ([`pools`]); the names
//! of predefined handles whose objects carry none ([`predefined`]); CH4's
//! rank maps ([`ch4_map`]) and what CH4's UCX netmod keeps of an operation
//! ([`ch4_ucx`]); attribute lists and topologies ([`attr`]); the user
//! functions objects keep ([`callbacks`]). `mpiq-core`'s MPICH queue
//! decoders stand on it too, through the crate root's re-exports.
//!
//! The views stand on it: [`resolver`] is the process every view reads
//! ([`Mpich`]), with the references between objects both ways; one file
//! per kind builds that kind's details ([`comm`], [`group`], [`datatype`],
//! [`errhandler`], [`file`] (ROMIO's), [`info`], [`op`], [`request`],
//! [`status`], [`win`]); [`handle_view`] turns a handle into its
//! [`HandleView`](crate::HandleView), the fields every kind shares, and
//! dispatches to the kind's view. A view may use another below it (a
//! communicator takes its members' world ranks from its group, a request
//! its peer's from its communicator), never [`handle_view`] and never in a
//! loop.
//!
//! It stands on the crate's shared root (the view model, the target
//! reader, type maps, errors) and on [`crate::ucx`]. Only the crate root
//! imports it: Open MPI's folder and UCX's must not.

mod abi;
mod abi_table;
mod ch4_map;
mod ch4_ucx;
mod derived_layouts;
pub mod handle_bits;
pub(crate) mod pools;
mod predefined;

pub use abi::{abi_predefined, AbiHandle, MpichConstants, ABI_BUILTIN_LIMIT};
pub use ch4_map::{ask_ch4_map_layouts, ch4_world_ranks};
pub use ch4_ucx::{
    ask_ucx_layouts, mpich_ucx_tag, mpich_ucx_workers, ucx_receive, ucx_receive_with, ucx_send,
    ucx_send_with, ucx_world_ranks_by_endpoint, MpichUcxTag, UcxOperation,
};
pub use derived_layouts::{derive_mpich_layouts, DeriveError, DerivedLayouts};
pub use pools::{builtin_mpich_objects, live_mpich_objects, LiveObject};
// The views (feature `views`).
views! {
    mod attr;
    mod callbacks;
    mod comm;
    mod datatype;
    mod errhandler;
    mod file;
    mod group;
    mod handle_view;
    mod info;
    mod op;
    mod request;
    mod resolver;
    mod status;
    mod win;
    pub use resolver::{mpich_missing_layouts, Mpich};
}
