//! Reads what MPI launchers and libraries expose to debuggers from a
//! target's memory.
//!
//! The layers, bottom up:
//!
//! - [`TargetMemory`]: a byte source that carries the target's ABI. Backends
//!   implement one method; reads of C strings, pointers and ints come with
//!   it, and [`ReadRecords`] adds records and arrays of them, always in the
//!   target's byte order and width. Decoders that run on any backend take
//!   it as `&dyn TargetMemory`. [`TargetMemoryMut`] is the separate,
//!   explicit way to write.
//! - Backends: [`CoreFile`] (ELF cores of any ABI, with pages the core
//!   omits read from the mapped files), [`LiveProcess`] (a running Linux
//!   process, read without stopping it; [`AttachGuard`] stops it for a
//!   consistent read and always lets it go) and [`SyntheticMemory`] (in-memory
//!   segments), which the [`SyntheticJob`] builder fills and can write out
//!   as a real core file and executable. [`GdbRemoteTarget`] reads a
//!   process through gdbserver's remote protocol, with its symbols.
//! - [`SymbolSource`]: where a named global lives and which object defines
//!   it. [`ElfSymbols`] reads `.symtab` and `.dynsym` of every loaded
//!   object with its load bias; [`CoreTarget`] and [`LiveTarget`] pair it
//!   with the memory. [`SymbolTable`] is the fixed table synthetic jobs use.
//! - Separate debug files: [`DebugSearch`] finds a stripped object's debug
//!   file by build-id or `.gnu_debuglink`, as gdb does, and accepts it only
//!   if it is of the same build; [`ElfSymbols`] then reads its `.symtab`
//!   too, so local symbols of stripped libraries are found.
//! - [`TypeOracle`]: C types from the DWARF of the loaded objects (or their
//!   debug files): a struct, union or typedef by name, its size, and its
//!   members' offsets, sizes and bit-fields, found through `.debug_names`,
//!   `.gdb_index` or a lazy scan of the units' top-level DIEs, for the
//!   message-queue and handle decoders above.
//! - [`Target`]: the memory, symbols and types of one process or core
//!   file, held together ([`CoreTarget`], [`LiveTarget`],
//!   [`GdbRemoteTarget`], or [`TargetParts`] from separate pieces), so
//!   that the decoders take the target once.
//! - [`Layouts`]: the one trait every decoder asks for sizes, offsets and
//!   enumerators; answered by the [`TypeOracle`], by a [`LayoutTable`], or
//!   by a [`LayoutProfile`] (a debug build's answers kept for the stripped
//!   copies of the same build, chosen by build-id in [`choose_layouts`]).
//! - Thread stacks: [`ThreadRegisters`] from a core's NT_PRSTATUS notes
//!   ([`CoreFile::threads`]) or a stopped process
//!   ([`AttachGuard::thread_registers`]); [`StackUnwinder`] walks them with
//!   framehop over each object's `.eh_frame` and names the frames from ELF
//!   symbols and DWARF, caching per object for a whole job
//!   ([`core_stacks`], [`live_stacks`]).
//! - [`mpir`]: the MPIR process table and its variables.
//! - [`mpi2dd`]: one process's `MPI2DD_info` and its tables; [`walk`]
//!   follows directories and metadirectories across processes through a
//!   [`Connector`].
//!
//! Everything read from the target is bounded by [`Limits`], and failures
//! are typed [`ReadError`]s that name the address and what was being read.
//!
//! # Example
//!
//! The MPIR process table of a launcher's core file (`gcore` of `mpiexec`,
//! `mpirun` or `srun`). [`CoreTarget`] is the core with the symbols and
//! types of everything it had loaded, a [`Target`]; the other calls of
//! the crates above take it as it is. This is `examples/mpir_table.rs`,
//! which `scripts/check-examples.sh` runs on a core of the reference
//! MPICH's launcher:
//!
//! ```no_run
#![doc = include_str!("../examples/mpir_table.rs")]
//! ```

#![deny(unsafe_code)]

#[cfg(all(feature = "live", target_os = "linux"))]
mod attach_guard;
mod core_file;
mod core_target;
mod debug_files;
mod dwarf_file;
mod dwarf_index;
mod dwarf_layout;
mod dwarf_units;
mod elf_symbols;
mod error;
mod file_identity;
mod gdb_index;
mod gdb_remote;
pub mod gdb_remote_packet;
mod int_decode;
mod layout_cache;
mod layout_error;
mod layout_profile;
mod layouts;
mod limits;
pub mod link_map;
#[cfg(all(feature = "live", target_os = "linux"))]
mod live_process;
mod loaded_layouts;
mod memory;
pub mod mpi2dd;
pub mod mpir;
pub mod mpir_protocol;
mod proc_table;
mod read_budget;
mod searched_objects;
mod stack_unwind;
mod symbolize;
mod symbols;
#[cfg(feature = "synthetic")]
mod synthetic_elf;
#[cfg(feature = "synthetic")]
mod synthetic_job;
#[cfg(feature = "synthetic")]
mod synthetic_memory;
#[cfg(feature = "synthetic")]
pub mod synthetic_process;
mod target;
mod thread_registers;
mod type_error;
mod type_layout;
mod type_oracle;
pub mod walk;
mod whole_type;

#[cfg(all(feature = "live", target_os = "linux"))]
pub use attach_guard::{AttachError, AttachGuard};
pub use core_file::{CoreError, CoreFile, FileSearch, MappedFile};
pub use core_target::{CoreTarget, CoreTargetError, CoreTargetOptions, ObjectProblem};
pub use debug_files::{
    build_id, build_id_from_bytes, build_id_in_headers, DebugFile, DebugLookup, DebugSearch,
    MatchedBy, RejectReason, Rejection, DEFAULT_DEBUG_ROOT,
};
pub use dwarf_index::{IndexStats, NameIndexKind};
pub use elf_symbols::{
    elf_placement, forget_shared_symbol_tables, ElfPlacement, ElfSymbols, ObjectInfo, SymbolError,
};
pub use error::ReadError;
pub use gdb_remote::{GdbRemote, GdbRemoteError, GdbRemoteOptions, GdbRemoteTarget};
pub use int_decode::{decode_int, decode_uint};
pub use layout_cache::{CacheEntry, CacheError, CacheLookup, LayoutCache, MAX_ENTRY_BYTES};
pub use layout_error::LayoutError;
pub use layout_profile::{
    choose_layouts, choose_loaded_layouts, hex as build_id_hex, object_arch, shipped_profiles,
    so_stem, LayoutOrigin, LayoutProfile, NoLayouts, ProfileError, ProfileIdentity, ProfileObject,
    ProfileSymbol, PROFILE_FORMAT,
};
pub use layouts::{LayoutNeed, LayoutTable, Layouts, Member};
pub use limits::Limits;
#[cfg(all(feature = "live", target_os = "linux"))]
pub use live_process::{LiveError, LiveProcess, LiveTarget};
pub use loaded_layouts::LoadedLayouts;
pub use memory::{ReadRecords, TargetMemory, TargetMemoryMut};
pub use read_budget::ReadBudget;
pub use searched_objects::{is_mpi_library, searched_summary, summarize_objects, LIST_IN_FULL};
pub use stack_unwind::{core_stacks, Frame, StackLimits, StackUnwinder, ThreadStack};
#[cfg(all(feature = "live", target_os = "linux"))]
pub use stack_unwind::{live_stacks, StackError};
pub use symbols::{Symbol, SymbolSource, SymbolTable};
#[cfg(feature = "synthetic")]
pub use synthetic_elf::{SyntheticCoreOptions, WriteError};
#[cfg(feature = "synthetic")]
pub use synthetic_job::{SyntheticJob, SyntheticJobBuilder};
#[cfg(feature = "synthetic")]
pub use synthetic_memory::SyntheticMemory;
pub use target::{Target, TargetParts};
pub use thread_registers::{StackArch, ThreadRegisters};
pub use type_error::{SearchedObject, TypeError};
pub use type_layout::{BaseTypeSizes, BitField, Enumerator, MemberLayout, TypeKind, TypeLayout};
pub use type_oracle::TypeOracle;
pub use walk::Connector;
pub use whole_type::{ask_whole_type, WholeTypeAsked, WholeTypeLimits};

/// Descriptions of what the synthetic job builder lays out.
#[cfg(feature = "synthetic")]
pub mod synthetic {
    pub use crate::synthetic_job::{Mpi2ddSpec, PeerSpec, RankSpec};
}
