//! Descriptions of what the synthetic job builder lays out.
//!
//! This folder owns the test builders (the `synthetic` feature): the
//! in-memory target (`synthetic_memory`), the job builder (`synthetic_job`),
//! the core and ELF writer (`synthetic_elf`), objects with code, unwind
//! tables and DWARF (`synthetic_object`), and the cores of processes that
//! map them ([`synthetic_process`]), a CPython process (`synthetic_python`),
//! and memory read as a debugger's own
//! backend may read it (`outside_memory`). As in `minidump-synth`, they lay out
//! bytes by hand and do not reuse the readers' layouts, so tests catch
//! layout bugs. Nothing outside this folder depends on it, except unit
//! tests.

pub(crate) mod outside_memory;
pub(crate) mod synthetic_elf;
pub(crate) mod synthetic_job;
pub(crate) mod synthetic_memory;
pub(crate) mod synthetic_object;
pub mod synthetic_process;
pub(crate) mod synthetic_python;

pub use self::outside_memory::{OutsideMemory, OutsideReads};
pub use self::synthetic_job::{Mpi2ddSpec, PeerSpec, RankSpec};
