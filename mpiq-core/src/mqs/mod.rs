//! The debugger's side of the message-queue (mqs) interface: hosting a
//! vendor's message-queue library (MPICH's `libtvmpich.so`, Open MPI's
//! `libompi_dbg_msgq.so`) over one process.
//!
//! This folder owns the interface's C layout ([`abi`], public as
//! `mpiq_core::mqs_abi`), what the library is shown of a process
//! ([`target`]: memory, symbols, types and base-type sizes), the callbacks
//! it calls ([`callbacks`]), the loading and driving of the library
//! with its results turned into the [`model`](crate::model) ([`host`]),
//! and the type questions Open MPI's own library asks
//! ([`ompi_msgq_questions`]), which a layout profile can record.
//! Loading and calling foreign code needs the `mqs` feature; the C
//! declarations and [`MqsTarget`](crate::MqsTarget) do not.
//!
//! It stands on the model and on `mpidd-read`'s memory, symbols and type
//! oracle. It knows no native decoder, and no decoder imports it: the two
//! ways of reading queues meet only in [`compare`](crate::compare) and in
//! their callers.

#[allow(unsafe_code)]
pub mod abi;
#[cfg(feature = "mqs")]
#[allow(unsafe_code)]
pub(crate) mod callbacks;
#[cfg(feature = "mqs")]
#[allow(unsafe_code)]
pub(crate) mod host;
pub(crate) mod ompi_msgq_questions;
pub(crate) mod target;
