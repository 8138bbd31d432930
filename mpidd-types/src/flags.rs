//! The two flag words of `MPI2DD_INFO`. Bits this crate does not know are
//! kept (`from_bits_retain`), so reading and writing back never loses them.

use serde::{Deserialize, Serialize};

bitflags::bitflags! {
    /// `MPI2DD_INFO.debugger_flags`: bits the MPI side initialises and the
    /// debugger may set.
    ///
    /// ```
    /// use mpidd_types::DebuggerFlags;
    ///
    /// let f = DebuggerFlags::from_bits_retain(0x83);
    /// assert!(f.contains(DebuggerFlags::GATE | DebuggerFlags::BEING_DEBUGGED));
    /// assert_eq!(f.bits(), 0x83); // bit 0x80 is unknown and kept
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(transparent)]
    pub struct DebuggerFlags: u32 {
        /// `MPI2DD_FLAG_GATE`: the debugger has acquired the process, which
        /// may now leave `MPI_Init`.
        const GATE = 0x01;
        /// `MPI2DD_FLAG_BEING_DEBUGGED`: a debugger is attached to the
        /// starter.
        const BEING_DEBUGGED = 0x02;
        /// `MPI2DD_FLAG_REQUEST_DIRECTORY_EVENTS`: the debugger wants a
        /// breakpoint event when a (meta)directory changes.
        const REQUEST_DIRECTORY_EVENTS = 0x04;
    }
}

bitflags::bitflags! {
    /// `MPI2DD_INFO.mpi_flags`: bits only the MPI side sets.
    ///
    /// ```
    /// use mpidd_types::MpiFlags;
    ///
    /// let f = MpiFlags::from_bits_retain(0x03);
    /// assert!(f.contains(MpiFlags::I_AM_METADIR) && f.contains(MpiFlags::I_AM_DIR));
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(transparent)]
    pub struct MpiFlags: u32 {
        /// `MPI2DD_MPIFLAG_I_AM_METADIR`: this process is a metadirectory.
        const I_AM_METADIR = 0x01;
        /// `MPI2DD_MPIFLAG_I_AM_DIR`: this process is a directory.
        const I_AM_DIR = 0x02;
        /// `MPI2DD_MPIFLAG_I_AM_STARTER`: this process is a starter.
        const I_AM_STARTER = 0x04;
        /// `MPI2DD_MPIFLAG_FORCE_TO_MAIN`: the process is acquired before its
        /// `main` runs.
        const FORCE_TO_MAIN = 0x08;
        /// `MPI2DD_MPIFLAG_IGNORE_QUEUE`: no message-queue debugging.
        const IGNORE_QUEUE = 0x10;
        /// `MPI2DD_MPIFLAG_ACQUIRED_PRE_MAIN`: ranks are attached before
        /// `main`.
        const ACQUIRED_PRE_MAIN = 0x20;
        /// `MPI2DD_MPIFLAG_PARTIAL_ATTACH_OK`: continuing the initial process
        /// starts the job.
        const PARTIAL_ATTACH_OK = 0x40;
    }
}
