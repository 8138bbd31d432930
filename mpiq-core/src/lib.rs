//! MPI message queues as a debugger shows them: per communicator, the
//! pending sends, the posted receives and the unexpected messages.
//!
//! - [`model`]: communicators and pending operations, named as in the
//!   message-queue interface (`mqs_communicator`, `mqs_pending_operation`),
//!   serde-ready.
//! - `MqsLibrary` (feature `mqs`): the debugger side of that interface. It loads a
//!   vendor's message-queue library (for example MPICH's `libtvmpich.so`),
//!   answers its callbacks from an [`MqsTarget`] (memory, symbols and the
//!   DWARF [`TypeOracle`](mpidd_read::TypeOracle) of `mpidd-read`), drives
//!   its iterators with bounds, and converts what it returns into the model.
//! - Native decoders ([`QueueDecoder`], picked by [`detect`], which gives
//!   a [`QueueReader`]): the same model read directly from a
//!   [`Target`]'s memory with offsets from its [`Layouts`] (the DWARF
//!   oracle, a table or a layout profile). [`MpichCh3`] reads
//!   MPICH with the CH3 device and also gives world ranks, wildcards as the
//!   interface defines them, and lengths in bytes.
//! - [`compare`]: the differences between two readings (a native decoder
//!   against a vendor library).
//! - Text: [`model::ProcessQueues`], [`model::PendingOperation`],
//!   [`QueueReadings`] and [`compare::Difference`] implement
//!   [`Display`](std::fmt::Display) with the text `mpidd queues` prints.
//! - [`world_rank`]: a process's `MPI_COMM_WORLD` rank (MPICH's or Open
//!   MPI's), read from the process, which the libraries ask the debugger
//!   for.
//!
//! # Example
//!
//! The queues of one rank from its core file, natively: [`detect`] finds
//! the decoder for the rank's MPI and keeps it with the rank, ready to
//! read. The layouts come from the MPI library's DWARF, else from a
//! profile mpidd ships for the very build loaded (Debian 12's stripped
//! MPICH and Open MPI: [`LoadedLayouts`](mpidd_read::LoadedLayouts)); a
//! [`LayoutResolver`] adds the user's profiles and a cache. This is
//! `examples/rank_queues.rs`, which `scripts/check-examples.sh` runs on
//! cores of a rank of the reference MPICH and of Debian's own MPICH:
//!
//! ```no_run
#![doc = include_str!("../examples/rank_queues.rs")]
//! ```
//!
//! The same through the MPI vendor's own message-queue library
//! (`examples/vendor_queues.rs`, also run by that script):
//!
//! ```no_run
#![doc = include_str!("../examples/vendor_queues.rs")]
//! ```

#![deny(unsafe_code)]

mod build_identity;
pub mod compare;
mod decoder;
mod detect;
mod intel_mpi;
mod job_identity;
mod layout_resolver;
mod library_strings;
mod list_walk;
pub mod model;
mod mpich;
mod mqs;
mod ompi;
mod profile_questions;
mod queue_reading;
mod read_ahead;
mod render_comparison;
mod render_queues;
mod session;
mod target_read;
mod world_rank;

// `mqs_abi` was public at the crate's root before the host for vendor
// libraries moved into `mqs/`; it stays at its old path.
pub use mqs::abi as mqs_abi;

pub use build_identity::{
    BuildIdentity, CheckOutcome, DecoderChoice, DwarfFacts, Fit, IdentifyError, LayoutChoice,
    LayoutSource, ProcessFacts, ProfileFit, ReaderOutcome, StatedFacts,
};
pub use decoder::{DecodeError, FoundLibrary, QueueDecoder};
pub use detect::{
    build_decoder, decoder_layouts, detect, identify, read_native_queues, DecoderKind, Identified,
    QueueReader,
};
pub use layout_resolver::LayoutResolver;
pub use mpich::{MpichCh3, MpichCh4};
pub use session::{Provenance, Session, SessionReading};
// Defined in mpidd-read; re-exported because they appear in this crate's
// own signatures, so a user need not name mpidd-read for them.
pub use job_identity::{job_identity, JobIdentity, Sourced};
#[doc(no_inline)]
pub use mpidd_read::{
    LayoutError, LayoutNeed, LayoutTable, Layouts, Limits, Member, Target, TargetParts,
};
#[cfg(feature = "mqs")]
pub use mqs::callbacks::{HOST_BAD_ARGUMENT, HOST_NOT_FOUND, HOST_READ_FAILED};
#[cfg(feature = "mqs")]
pub use mqs::host::{MqsError, MqsLibrary};
pub use mqs::target::{MqsTarget, TargetTypeSizes};
pub use ompi::{OmpiOb1, OmpiUcx, OB1_LAYOUT, OB1_SYMBOLS, OMPI_UCX_LAYOUT, OMPI_UCX_SYMBOLS};
pub use profile_questions::{ProfileDecoder, ProfileDecoderError};
pub use queue_reading::{
    read_process_queues, QueueReadError, QueueReadOptions, QueueReaderChoice, QueueReadings,
    QueueReport, QueueTarget,
};
#[cfg(feature = "mqs")]
pub use queue_reading::{read_with_library, LibraryReading};
pub use world_rank::{
    environment_world_rank, mpich_world_rank, world_rank, RankSource, WorldRank, WorldRankError,
};
