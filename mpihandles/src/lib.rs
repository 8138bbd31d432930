//! **This crate is empty for now.**
//!
//! It will interpret MPI handles (communicators, groups, requests, datatypes,
//! error handlers, ops, info objects, windows, files) found in a target, as
//! a debugger should show them. Nothing is implemented yet: the only item is
//! [`STATUS`].
//!
//! ```
//! assert_eq!(mpihandles::STATUS, "empty: no handle decoder is implemented yet");
//! ```

#![forbid(unsafe_code)]

/// What this crate implements today.
pub const STATUS: &str = "empty: no handle decoder is implemented yet";
