//! Descriptions of what the synthetic job builder lays out.
//!
//! This folder owns the test builders (the `synthetic` feature): the
//! in-memory target (`synthetic_memory`), the job builder (`synthetic_job`),
//! the core and ELF writer (`synthetic_elf`) and whole synthetic processes
//! with code, unwind tables and DWARF ([`synthetic_process`]). As in
//! `minidump-synth`, they lay out bytes by hand and do not reuse the
//! readers' layouts, so tests catch layout bugs; nothing outside this
//! folder depends on it.

pub(crate) mod synthetic_elf;
pub(crate) mod synthetic_job;
pub(crate) mod synthetic_memory;
pub mod synthetic_process;

pub use self::synthetic_job::{Mpi2ddSpec, PeerSpec, RankSpec};
