//! **This crate is empty for now.**
//!
//! It will decode the message queues of MPI implementations (pending sends,
//! posted receives, unexpected messages) from target memory, host vendor
//! message-queue libraries, and export its own. Nothing is implemented yet:
//! the only item is [`STATUS`].
//!
//! ```
//! assert_eq!(mpiq_core::STATUS, "empty: no decoder is implemented yet");
//! ```

#![forbid(unsafe_code)]

/// What this crate implements today.
pub const STATUS: &str = "empty: no decoder is implemented yet";
