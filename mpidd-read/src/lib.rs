//! **This crate is empty for now.**
//!
//! It will turn a target (a core file, a live Linux process, a remote
//! gdbserver or a synthetic in-memory job) into bytes, symbols and types, and
//! read the MPIR and MPI-2 debugger-interface tables on top of
//! `mpidd-types`. Nothing is implemented yet: the only item is
//! [`STATUS`], so that code depending on the crate can tell.
//!
//! ```
//! assert_eq!(mpidd_read::STATUS, "empty: no reader is implemented yet");
//! ```

#![forbid(unsafe_code)]

/// What this crate implements today.
pub const STATUS: &str = "empty: no reader is implemented yet";
