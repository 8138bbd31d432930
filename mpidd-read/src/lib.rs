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
//!   explicit way to write. A debugger that reads the process itself
//!   implements [`TargetMemory`] with this crate alone: the types in a
//!   backend's signatures ([`TargetAddr`], [`TargetAbi`], [`ByteOrder`],
//!   [`AddressWidth`], [`Packing`]) are re-exported here from
//!   `mpidd-types`, and the trait's rustdoc says what a read must answer.
//! - Backends: [`CoreFile`] (ELF cores of any ABI, with pages the core
//!   omits read from the mapped files), [`LiveProcess`] (a running Linux
//!   process, read without stopping it; [`AttachGuard`] stops it for a
//!   consistent read and always lets it go) and, with the feature
//!   `synthetic`, `SyntheticMemory` (in-memory segments), which the
//!   `SyntheticJob` builder fills and can write out as a real core file
//!   and executable. [`GdbRemoteTarget`] reads a
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
//!   copies of the same build, chosen by build-id, or by the digest of
//!   the code of a library without one, in [`choose_layouts`]).
//! - Thread stacks: [`ThreadRegisters`] from a core's NT_PRSTATUS notes
//!   ([`CoreFile::threads`]) or a stopped process
//!   ([`AttachGuard::thread_registers`]); [`StackUnwinder`] walks them with
//!   framehop over each object's `.eh_frame` and names the frames from ELF
//!   symbols and DWARF, caching per object for a whole job
//!   ([`core_stacks`], [`live_stacks`]).
//! - [`mpir`]: the MPIR process table and its variables; with `live` on
//!   Linux, `mpir::launch` starts a launcher under ptrace and acquires
//!   its job through the MPIR protocol.
//! - [`mpi2dd`]: one process's `MPI2DD_info` and its tables; [`walk`]
//!   follows directories and metadirectories across processes through a
//!   [`Connector`] ([`walk::CoreFiles`], or with `live` on Linux
//!   `walk::LocalProcesses`).
//! - [`pmix`]: a launcher's process table from its PMIx server (Open MPI
//!   5's `prterun`), through the launcher's own libpmix.
//! - [`process_tables`]: whichever of the two a target has.
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

mod backend;
mod dwarf;
mod error;
mod layouts;
mod limits;
pub mod mpi2dd;
pub mod mpir;
pub mod pmix;
pub mod process_tables;
mod python;
mod stacks;
mod symbols;
#[cfg(feature = "synthetic")]
pub mod synthetic;
mod targets;

// The modules that were public at the crate's root before it was sorted
// into folders, at their old paths.
pub use backend::gdb_remote_packet;
pub use mpi2dd::walk;
pub use mpir::mpir_protocol;
pub use symbols::link_map;
#[cfg(feature = "synthetic")]
pub use synthetic::synthetic_process;

// Defined in mpidd-types; re-exported because a backend's signatures and
// the typed reads name them, so a debugger's backend needs only this crate.
#[doc(no_inline)]
pub use mpidd_types::{
    AddressWidth, ByteOrder, Packing, Record, TargetAbi, TargetAddr, TypesError,
};

#[cfg(all(feature = "live", target_os = "linux"))]
pub use backend::attach_guard::{AttachError, AttachGuard};
pub use backend::core_file::{CoreError, CoreFile, FileSearch, MappedFile};
pub use backend::gdb_remote::{GdbRemote, GdbRemoteError, GdbRemoteOptions};
pub use backend::int_decode::{decode_int, decode_uint};
#[cfg(all(feature = "live", target_os = "linux"))]
pub use backend::live_process::{LiveError, LiveProcess};
pub use backend::memory::{ReadRecords, TargetMemory, TargetMemoryMut};
pub use backend::object_image::{ObjectImage, ObjectImageError};
pub use backend::read_budget::ReadBudget;
pub use backend::thread_registers::{StackArch, ThreadRegisters};
pub use dwarf::absent_names::{AbsentNameStore, DwarfIdentity, MAX_ABSENT_NAMES};
pub use dwarf::dwarf_index::{IndexStats, NameIndexKind};
pub use dwarf::type_error::{SearchedObject, TypeError};
pub use dwarf::type_layout::{
    BaseTypeSizes, BitField, Enumerator, MemberLayout, TypeKind, TypeLayout,
};
pub use dwarf::type_oracle::TypeOracle;
pub use error::ReadError;
pub use layouts::layered_layouts::{
    companion_profiles, companion_profiles_of, family_companion_profiles, LayeredLayouts,
    UCX_IMPLEMENTATION, UCX_LIBRARY_STEM,
};
pub use layouts::layout_cache::{
    CacheEntry, CacheError, CacheLookup, LayoutCache, MAX_ENTRY_BYTES,
};
pub use layouts::layout_error::LayoutError;
pub use layouts::layout_family::{FamilyVariant, LayoutFamily, StatedBuild};
pub use layouts::layout_profile::{
    choose_layouts, choose_loaded_layouts, hex as build_id_hex, object_arch, so_stem, FamilyOrigin,
    LayoutOrigin, LayoutProfile, NoLayouts, ProfileError, ProfileIdentity, ProfileObject,
    ProfileSymbol, PROFILE_FORMAT,
};
pub use layouts::loaded_layouts::LoadedLayouts;
pub use layouts::located_globals::recipe::{
    FunctionReferences, HiddenGlobalRecipes, InitialValue, PointerField, RecordRecipe,
    ReferenceRecipe, StringKind, StringRecipe,
};
pub use layouts::located_globals::{
    locate_hidden_globals, located_in_file, stated_strings, LocatedGlobal, LocatedGlobals,
};
pub use layouts::profile_drift::profile_drift;
pub use layouts::profile_set::{LoadedKeys, ProfileSet};
pub use layouts::profile_symbols::{parse_profile_symbols, SymbolLineError};
pub use layouts::shipped_profiles::shipped_profiles;
pub use layouts::ucx_version::{ucx_assertions, ucx_stated_version};
pub use layouts::whole_type::{ask_whole_type, WholeTypeAsked, WholeTypeLimits};
pub use layouts::{LayoutNeed, LayoutTable, Layouts, Member};
pub use limits::Limits;
pub use mpi2dd::walk::Connector;
pub use python::{
    is_eval_frame, mix_python_frames, python_offsets, read_python, ExceptionState, PythonError,
    PythonException, PythonFrame, PythonLimits, PythonProcess, PythonThread, PythonVersion,
};
pub use stacks::stack_unwind::{core_stacks, Frame, StackLimits, StackUnwinder, ThreadStack};
#[cfg(all(feature = "live", target_os = "linux"))]
pub use stacks::stack_unwind::{live_stacks, StackError};
pub use symbols::constant_data::{ConstantData, ConstantMatch, MAX_CONSTANT_DATA};
pub use symbols::debug_files::{
    build_id, build_id_from_bytes, build_id_in_headers, build_key, build_key_from_bytes, BuildKey,
    DebugFile, DebugLookup, DebugSearch, MatchedBy, RejectReason, Rejection, DEFAULT_DEBUG_ROOT,
};
pub use symbols::elf_symbols::{
    elf_placement, forget_shared_symbol_tables, ElfPlacement, ElfSymbols, ObjectInfo,
};
pub use symbols::loaded_objects::LoadedObjects;
pub use symbols::name_index::keep_symbol_indexes_in;
pub use symbols::object_files::ObjectFiles;
pub use symbols::searched_objects::{
    is_mpi_library, searched_summary, summarize_objects, LIST_IN_FULL,
};
pub use symbols::symbol_error::SymbolError;
pub use symbols::{Symbol, SymbolSource, SymbolTable};
#[cfg(feature = "synthetic")]
pub use synthetic::synthetic_elf::{SyntheticCoreOptions, WriteError};
#[cfg(feature = "synthetic")]
pub use synthetic::synthetic_job::{SyntheticJob, SyntheticJobBuilder};
#[cfg(feature = "synthetic")]
pub use synthetic::synthetic_memory::SyntheticMemory;
#[cfg(feature = "synthetic")]
pub use synthetic::synthetic_python::{
    PythonFrameSpec, SyntheticPython, SYNTHETIC_PYTHON_BASE, SYNTHETIC_PYTHON_TID,
};
pub use targets::core_target::{CoreTarget, CoreTargetError, CoreTargetOptions, ObjectProblem};
pub use targets::gdb_remote_target::GdbRemoteTarget;
#[cfg(all(feature = "live", target_os = "linux"))]
pub use targets::live_target::{LiveTarget, SharedLiveSymbols};
pub use targets::target_source::{
    OpenTargetError, OpenedTarget, ReadTargetError, TargetReader, TargetSource,
};
pub use targets::{Target, TargetParts};
