//! MPI message queues as a debugger shows them: per communicator, the
//! pending sends, the posted receives and the unexpected messages.
//!
//! - [`model`]: communicators and pending operations, named as in the
//!   message-queue interface (`mqs_communicator`, `mqs_pending_operation`),
//!   serde-ready.
//! - [`MqsLibrary`]: the debugger side of that interface. It loads a
//!   vendor's message-queue library (for example MPICH's `libtvmpich.so`),
//!   answers its callbacks from an [`MqsTarget`] (memory, symbols and the
//!   DWARF [`TypeOracle`](mpidd_read::TypeOracle) of `mpidd-read`), drives
//!   its iterators with bounds, and converts what it returns into the model.
//! - Native decoders ([`QueueDecoder`], picked by [`detect`]): the same
//!   model read directly from target memory with offsets from a
//!   [`Layouts`] (the DWARF oracle, a table or a layout profile). [`MpichCh3`] reads
//!   MPICH with the CH3 device and also gives world ranks, wildcards as the
//!   interface defines them, and lengths in bytes.
//! - [`compare`]: the differences between two readings (a native decoder
//!   against a vendor library).
//! - [`world_rank`]: a process's `MPI_COMM_WORLD` rank (MPICH's or Open
//!   MPI's), read from the process, which the libraries ask the debugger
//!   for.
//!
//! # Example
//!
//! ```
//! use mpiq_core::model::{sign_extend_int, OperationStatus, QueueKind};
//!
//! // A vendor library that zero-extended MPI_ANY_SOURCE from a 32-bit int:
//! assert_eq!(sign_extend_int(4294967295, 4), -1);
//! assert_eq!(OperationStatus::from_raw(1), OperationStatus::Matched);
//! assert_eq!(QueueKind::UnexpectedMessages.op_class(), 2);
//! ```
//!
//! Loading a library and reading a process:
//!
//! ```no_run
//! use mpiq_core::{MqsLibrary, MqsLimits, MqsTarget, TargetTypeSizes};
//! use mpidd_read::{CoreTarget, TypeOracle};
//! use std::path::Path;
//!
//! let core = CoreTarget::open(Path::new("core.1234"), None, None)?;
//! let types = TypeOracle::from_symbols(core.symbols());
//! let target = MqsTarget {
//!     image_name: core.executable().display().to_string(),
//!     memory: core.core(),
//!     symbols: core.symbols(),
//!     types: &types,
//!     global_rank: 0,
//!     type_sizes: TargetTypeSizes::from_oracle(&types, mpidd_read::TargetMemory::abi(core.core())),
//! };
//! let lib = MqsLibrary::load(Path::new("/opt/mpich/lib/libtvmpich.so"))?;
//! let queues = lib.read_queues(&target, &MqsLimits::default())?;
//! for comm in &queues.communicators {
//!     println!("{} has {} posted receives", comm.name, comm.pending_receives.operations().len());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(unsafe_code)]

pub mod compare;
mod decoder;
mod layout_resolver;
mod list_walk;
pub mod model;
mod mpich_ch3;
mod mpich_ch4;
mod mpich_common;
#[allow(unsafe_code)]
pub mod mqs_abi;
#[cfg(feature = "mqs")]
#[allow(unsafe_code)]
mod mqs_callbacks;
#[cfg(feature = "mqs")]
#[allow(unsafe_code)]
mod mqs_host;
mod mqs_target;
mod ompi_ob1;
mod target_read;
mod world_rank;

pub use decoder::{
    decoder_layouts, detect, identify, read_native_queues, DecodeError, DecoderKind, Identified,
    NativeTarget, QueueDecoder,
};
pub use layout_resolver::LayoutResolver;
pub use mpich_ch3::MpichCh3;
pub use mpich_ch4::MpichCh4;
pub use mpidd_read::{LayoutError, LayoutNeed, LayoutTable, Layouts, Member};
#[cfg(feature = "mqs")]
pub use mqs_callbacks::{HOST_BAD_ARGUMENT, HOST_NOT_FOUND, HOST_READ_FAILED};
#[cfg(feature = "mqs")]
pub use mqs_host::{MqsError, MqsLibrary, MqsLimits};
pub use mqs_target::{ByteSource, MqsTarget, TargetTypeSizes};
pub use ompi_ob1::{OmpiOb1, OB1_LAYOUT, OB1_SYMBOLS};
pub use world_rank::{mpich_world_rank, world_rank, RankSource, WorldRank, WorldRankError};
