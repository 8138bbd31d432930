//! Interprets MPI handles found in a target (a live process or a core
//! file) the way a debugger should show them.
//!
//! An `MPI_Comm` is an `int` to a debugger. This crate says what it
//! means: the communicator's name, this process's rank, its members, its
//! topology and error handler, whether the application or the
//! implementation freed it. It covers every kind of handle the MPI standard
//! has (communicator, group, datatype, error handler, operation, info,
//! request, window, file) and statuses in user memory.
//!
//! - [`model`]: the serde model of what is shown. A field an implementation
//!   does not keep is an explicit [`Availability::NotAvailable`] with the
//!   reason, never a made-up value.
#![cfg_attr(
    feature = "views",
    doc = r#"- [`HandleResolver`]: a handle (C value or Fortran INTEGER) to a
  [`HandleView`], per implementation. [`Mpich`] decodes MPICH's handle
  bits ([`mpich_handle_bits`]), finds the object in the builtin array,
  the direct array or the allocator's indirect blocks, tells freed
  objects by the allocator's free list, and decodes each kind with
  every offset and size from the library's debug info through
  [`Layouts`] (the library's DWARF through the
  [`TypeOracle`](mpidd_read::TypeOracle), a layout profile, or a
  [`LayoutTable`]). [`Ompi`] decodes Open MPI 4.1's: pointers checked
  by the class their object carries, Fortran INTEGERs through the
  exported f2c pointer arrays, every layout question declared in
  [`OMPI_HANDLE_LAYOUT`] so that a layout profile can serve Debian's
  stripped build ([`ompi_ask_layouts`], [`ompi_missing_layouts`]).
  `SyntheticOmpi` (with the `synthetic` feature) lays out an Open MPI
  process for tests and fuzzing.

- Text: [`HandleView`] and [`StatusView`] implement
  [`Display`](std::fmt::Display) with the text `mpidd handle` prints.

"#
)]
#![cfg_attr(
    not(feature = "views"),
    doc = "- The handle views (`HandleResolver`, `Mpich`, `Ompi`, `open_resolver`, \
    their text form) are behind the feature `views`, on by default.\n"
)]
//! - [`read_ucx_worker`]: what a UCP worker of UCX (under MPICH's
//!   `ch4:ucx` or Open MPI's UCX PML) holds of tagged traffic: receives
//!   posted and not matched, unexpected messages with their protocol,
//!   length and sender, and the sends and receives of its request pool
//!   still in progress, with UCX's own layouts (its DWARF, or the shipped
//!   profile of Debian's libucp, whose questions [`ask_ucx_worker_layouts`]
//!   asks).
//! - [`read_ofi_endpoint`]: what a libfabric endpoint of a software
//!   provider (`shm`, `ofi_rxm` under `tcp` and `verbs`) holds of tagged
//!   traffic: receives posted and not matched, unexpected messages with
//!   their source, length and protocol, and shm's sends in flight, with
//!   libfabric's own layouts (its DWARF, or the shipped profile of
//!   Debian's libfabric, whose questions [`ask_ofi_layouts`] asks); of a
//!   hardware-matching provider, [`ofi_hardware_matching`] says what
//!   cannot be seen.
//!
//! Every read is bounded by [`Limits`], and every
//! failure is a typed [`HandleError`] naming the handle, the address or the
//! missing type.
//!
//! # Example
//!
//! `MPI_COMM_WORLD` as one rank of an MPICH job sees it, from the rank's
//! core file, with the layouts of MPICH's objects from the library's
//! DWARF (for a stripped library, build the resolver with
//! `Mpich::from_parts` over a layout profile). This is
//! `examples/comm_world.rs`, which `scripts/check-examples.sh` runs on a
//! core of a rank of the reference MPICH:
//!
//! ```no_run
#![doc = include_str!("../examples/comm_world.rs")]
//! ```
//!
//! MPICH's `MPI_GROUP_EMPTY` in a hand-made big-endian 32-bit target, with
//! every layout given in a table:
//!
//! ```
//! use mpidd_read::{Limits, SymbolTable, SyntheticMemory};
//! use mpidd_types::{TargetAbi, TargetAddr};
//! use mpihandles::{Availability, Details, HandleKind, HandleResolver, LayoutTable, Mpich};
//!
//! // struct { int handle; int ref_count; int size; int rank; void *map; }
//! let mut layouts = LayoutTable::default();
//! layouts
//!     .add_enum("MPII_Object_kind", &[("MPIR_COMM", 1), ("MPIR_GROUP", 2)])
//!     .add_type("MPIR_Group", 20)
//!     .add_member("MPIR_Group", "handle", 0, 4)
//!     .add_member("MPIR_Group", "ref_count", 4, 4)
//!     .add_member("MPIR_Group", "size", 8, 4)
//!     .add_member("MPIR_Group", "rank", 12, 4)
//!     .add_member("MPIR_Group", "lrank_to_lpid", 16, 4);
//! let mut group = Vec::new();
//! for word in [0x4800_0000u32, 1, 0, (-32766i32) as u32, 0] {
//!     group.extend(word.to_be_bytes());
//! }
//! let mut memory = SyntheticMemory::new(TargetAbi::POWERPC);
//! memory.map(TargetAddr(0x1000), group);
//! let mut symbols = SymbolTable::new();
//! symbols.insert("libmpi.so", "MPIR_Group_builtin", TargetAddr(0x1000), 20);
//! symbols.insert("libmpi.so", "MPIR_Comm_builtin", TargetAddr(0x2000), 0);
//!
//! let mpich = Mpich::from_parts(&memory, &symbols, &layouts, Limits::default())?;
//! let view = mpich.resolve(HandleKind::Group, 0x4800_0000)?;
//! assert_eq!(view.predefined_name.as_deref(), Some("MPI_GROUP_EMPTY"));
//! assert_eq!(view.fortran_index, Availability::Value(0x4800_0000));
//! let Details::Group(g) = &view.details else { unreachable!() };
//! assert_eq!(g.size, Availability::Value(0));
//! assert_eq!(g.rank, Availability::Value(None), "not a member");
//! // A communicator handle is not a group.
//! assert!(mpich.resolve(HandleKind::Group, 0x4400_0000).is_err());
//! # Ok::<(), mpihandles::HandleError>(())
//! ```

#![forbid(unsafe_code)]
// Without `views`, the parts of the object model only the views read
// (Open MPI's OPAL classes, MPICH's handle lookup) are still built, so that
// the model is one body of code whichever features are on.
#![cfg_attr(not(feature = "views"), allow(dead_code))]

/// The items inside are the handle views: built only with the feature
/// `views`. The object model around them serves the queue decoders of
/// `mpiq-core` without them.
macro_rules! views {
    ($($item:item)*) => { $(#[cfg(feature = "views")] $item)* };
}

mod error;
mod layout_check;
pub mod model;
mod mpich;
mod ofi;
mod ompi;
mod target;
mod ucx;

// The resolvers, `open_resolver`, type maps and the text form.
views! {
    mod handle_resolver;
    mod open_resolver;
    mod render_view;
    mod type_map;
    pub use handle_resolver::HandleResolver;
    pub use mpich::{mpich_missing_layouts, Mpich};
    pub use ompi::Ompi;
    pub use open_resolver::{
        open_resolver, ChosenResolver, OpenResolverError, OpenedResolver, ProfileLayouts,
    };
}

pub use error::HandleError;
pub use layout_check::{check_layouts, LayoutsRefused};
pub use model::{
    AccessMode, Attribute, Availability, CHandle, CommDetails, CommKind, Constructor,
    DatatypeDetails, Details, ErrhandlerDetails, FileDetails, GeneralizedRequest, GroupDetails,
    HandleEncoding, HandleKind, HandleRef, HandleView, Hole, InfoDetails, InfoEntry, ObjectState,
    OpDetails, Peer, RequestDetails, RequestKind, StatusView, Topology, TypeArgument, TypeMap,
    TypeMapEntry, WinDetails,
};
pub use mpich::handle_bits as mpich_handle_bits;
pub use mpich::{
    abi_predefined, ask_ch4_map_layouts, ask_ucx_layouts, builtin_mpich_objects, ch4_world_ranks,
    derive_mpich_layouts, live_mpich_objects, mpich_ucx_tag, mpich_ucx_workers, ucx_receive,
    ucx_receive_with, ucx_send, ucx_send_with, ucx_world_ranks_by_endpoint, AbiHandle, DeriveError,
    DerivedLayouts, LiveObject, MpichConstants, MpichUcxTag, UcxOperation, ABI_BUILTIN_LIMIT,
};
pub use ofi::{
    ask_ofi_layouts, ofi_hardware_matching, ofi_layouts_missing, read_ofi_endpoint,
    read_ofi_info_provider, read_ofi_provider_name, OfiEndpointQueues, OfiError, OfiPostedReceive,
    OfiProtocol, OfiProvider, OfiSend, OfiUnexpected,
};
pub use ucx::{
    ask_ucx_worker_layouts, read_ucx_worker, ucx_layouts_missing, ucx_worker_layouts_missing,
    UcxError, UcxPostedReceive, UcxProtocol, UcxReceiveRequest, UcxRequestReader, UcxSendRequest,
    UcxSender, UcxUnexpected, UcxWorkerQueues,
};
// Defined in mpidd-read; re-exported because they appear in this crate's
// own signatures, so a user need not name mpidd-read for them.
#[doc(no_inline)]
pub use mpidd_read::{LayoutError, LayoutTable, Layouts, Limits, Member, Target, TargetParts};
pub use ompi::{ompi_ask_layouts, ompi_missing_layouts, OMPI_HANDLE_LAYOUT};
#[cfg(feature = "synthetic")]
pub use ompi::{
    CommSpec, SyntheticOmpi, OMPI_SYMBOLS, SYNTHETIC_BASE, SYNTHETIC_OBJECT, SYNTHETIC_SIZE,
};
