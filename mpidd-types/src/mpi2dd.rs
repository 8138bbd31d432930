//! The MPI-2 debugger-interface records (`MPI2DD_*`).
//!
//! Every process of an MPI-2 job exports an `MPI2DD_INFO` at the symbol
//! `MPI2DD_info`. Directory processes point from it to a table of
//! `MPI2DD_PROCDESC`; metadirectories point to tables of
//! `MPI2DD_DIRECTORYENTRY` that lead to other directories and
//! metadirectories. Spawned ranks point to an `MPI2DD_SPAWNDESC`.

use crate::addr::TargetAddr;
use crate::error::TypesError;
use crate::field_value::define_record;
use crate::flags::{DebuggerFlags, MpiFlags};
use crate::magic::Mpi2ddMagic;
use crate::state::Mpi2ddDebugState;

/// The interface version this crate reads.
pub const MPI2DD_VERSION: u8 = 1;
/// The interface variant this crate reads.
pub const MPI2DD_VARIANT: u8 = 1;

define_record! {
    /// `struct MPI2DD_INFO`, the per-process entry point of the interface.
    ///
    /// Decoding keeps whatever bytes are there; call
    /// [`Mpi2ddInfo::validate`] before trusting the rest.
    pub struct Mpi2ddInfo = "MPI2DD_INFO", FromAbi {
        /// Must be `M P I 2 0x7f`.
        magic: Mpi2ddMagic,
        /// Interface version (1).
        version: u8,
        /// Layout or protocol variant (1).
        variant: u8,
        /// Why the breakpoint was last called.
        debug_state: Mpi2ddDebugState,
        /// Bits the debugger may set.
        debugger_flags: DebuggerFlags,
        /// Bits the MPI side sets.
        mpi_flags: MpiFlags,
        /// Path of the message-queue library for 32-bit debuggers, or null.
        dll_name_32: TargetAddr,
        /// Path of the message-queue library for 64-bit debuggers, or null.
        dll_name_64: TargetAddr,
        /// Host of the metadirectory process (string address).
        meta_host_name: TargetAddr,
        /// Executable of the metadirectory process (string address).
        meta_executable_name: TargetAddr,
        /// Message shown when the job aborts (string address), or null.
        abort_string: TargetAddr,
        /// Array of `MPI2DD_PROCDESC` (directories only), or null.
        proctable: TargetAddr,
        /// Array of `MPI2DD_DIRECTORYENTRY` for other directories, or null.
        directory_table: TargetAddr,
        /// Array of `MPI2DD_DIRECTORYENTRY` for other metadirectories, or null.
        metadirectory_table: TargetAddr,
        /// Entries in `proctable`.
        proctable_size: i32,
        /// Entries in `directory_table`.
        directory_size: i32,
        /// Entries in `metadirectory_table`.
        metadirectory_size: i32,
        /// Pid of the metadirectory process.
        meta_pid: i32,
        /// Reserved words, kept as found.
        padding: [i32; 8],
    }
}

impl Mpi2ddInfo {
    /// Checks magic, version and variant, in that order, and says which one
    /// is wrong.
    ///
    /// ```
    /// use mpidd_types::{Mpi2ddInfo, TypesError};
    ///
    /// let mut info = Mpi2ddInfo::default();
    /// assert!(info.validate().is_ok());
    /// info.variant = 2;
    /// assert!(matches!(info.validate(), Err(TypesError::UnsupportedVariant { found: 2, .. })));
    /// ```
    pub fn validate(&self) -> Result<(), TypesError> {
        self.magic.check()?;
        if self.version != MPI2DD_VERSION {
            return Err(TypesError::UnsupportedVersion {
                found: self.version,
                supported: MPI2DD_VERSION,
            });
        }
        if self.variant != MPI2DD_VARIANT {
            return Err(TypesError::UnsupportedVariant {
                found: self.variant,
                supported: MPI2DD_VARIANT,
            });
        }
        Ok(())
    }
}

/// A valid, empty info block: right magic, version and variant, state 0,
/// no flags, every pointer null.
impl Default for Mpi2ddInfo {
    fn default() -> Self {
        Mpi2ddInfo {
            magic: Mpi2ddMagic::EXPECTED,
            version: MPI2DD_VERSION,
            variant: MPI2DD_VARIANT,
            debug_state: Mpi2ddDebugState::Unknown(0),
            debugger_flags: DebuggerFlags::empty(),
            mpi_flags: MpiFlags::empty(),
            dll_name_32: TargetAddr::NULL,
            dll_name_64: TargetAddr::NULL,
            meta_host_name: TargetAddr::NULL,
            meta_executable_name: TargetAddr::NULL,
            abort_string: TargetAddr::NULL,
            proctable: TargetAddr::NULL,
            directory_table: TargetAddr::NULL,
            metadirectory_table: TargetAddr::NULL,
            proctable_size: 0,
            directory_size: 0,
            metadirectory_size: 0,
            meta_pid: 0,
            padding: [0; 8],
        }
    }
}

define_record! {
    /// `struct MPI2DD_PROCDESC`, one rank in a directory's proctable.
    pub struct Mpi2ddProcdesc = "MPI2DD_PROCDESC", FromAbi {
        /// Host the rank runs on (string address).
        host_name: TargetAddr,
        /// Executable of the rank (string address).
        executable_name: TargetAddr,
        /// The `MPI2DD_SPAWNDESC` of the spawn that made this rank, or null
        /// for a rank of the initial `MPI_COMM_WORLD`.
        spawn_desc: TargetAddr,
        /// String naming the rank's `MPI_COMM_WORLD` (string address).
        comm_world_id: TargetAddr,
        /// Pid of the rank on `host_name`.
        pid: i32,
        /// Rank in its `MPI_COMM_WORLD`.
        rank: i32,
    }
}

define_record! {
    /// `struct MPI2DD_SPAWNDESC`, the spawn that created a rank.
    pub struct Mpi2ddSpawndesc = "MPI2DD_SPAWNDESC", FromAbi {
        /// String naming the parent's `MPI_COMM_WORLD` (string address).
        parent_comm_world_id: TargetAddr,
        /// Rank of the parent in that world.
        parent_rank: i32,
        /// Index of this spawn among those rooted at the parent, from 0.
        sequence: i32,
    }
}

define_record! {
    /// `struct MPI2DD_DIRECTORYENTRY`, a pointer from a metadirectory to
    /// another directory or metadirectory process.
    ///
    /// This is the record whose size depends on packing: on LP64 the packed
    /// form is 20 bytes and the natural form 24 (tail padding).
    pub struct Mpi2ddDirectoryEntry = "MPI2DD_DIRECTORYENTRY", FromAbi {
        /// Host of the process (string address).
        host_name: TargetAddr,
        /// Executable of the process (string address).
        executable_name: TargetAddr,
        /// Pid of the process on `host_name`.
        pid: i32,
    }
}
