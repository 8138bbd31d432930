//! Debug-state values written by the MPI side before it calls the
//! breakpoint function. Unknown values are kept, not rejected: a newer MPI
//! may use a state this crate has not heard of.

use serde::{Deserialize, Serialize};

/// `MPI2DD_INFO.debug_state`: why `MPI2DD_breakpoint` was called.
///
/// ```
/// use mpidd_types::Mpi2ddDebugState;
///
/// assert_eq!(Mpi2ddDebugState::from(2), Mpi2ddDebugState::Spawn);
/// assert_eq!(Mpi2ddDebugState::from(42), Mpi2ddDebugState::Unknown(42));
/// assert_eq!(u8::from(Mpi2ddDebugState::Unknown(42)), 42);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mpi2ddDebugState {
    /// 1: the job is starting.
    Start,
    /// 2: processes were spawned.
    Spawn,
    /// 3: a connect completed.
    Connect,
    /// 4: an accept completed.
    Accept,
    /// 5: a join completed.
    Join,
    /// 6: a directory table changed.
    DirectoryChanged,
    /// 7: a metadirectory table changed.
    MetadirectoryChanged,
    /// 8: the job is aborting; the abort string may say why.
    Abort,
    /// Any other value, kept as found (0 included).
    Unknown(u8),
}

impl From<u8> for Mpi2ddDebugState {
    fn from(v: u8) -> Self {
        match v {
            1 => Self::Start,
            2 => Self::Spawn,
            3 => Self::Connect,
            4 => Self::Accept,
            5 => Self::Join,
            6 => Self::DirectoryChanged,
            7 => Self::MetadirectoryChanged,
            8 => Self::Abort,
            other => Self::Unknown(other),
        }
    }
}

impl From<Mpi2ddDebugState> for u8 {
    fn from(s: Mpi2ddDebugState) -> u8 {
        match s {
            Mpi2ddDebugState::Start => 1,
            Mpi2ddDebugState::Spawn => 2,
            Mpi2ddDebugState::Connect => 3,
            Mpi2ddDebugState::Accept => 4,
            Mpi2ddDebugState::Join => 5,
            Mpi2ddDebugState::DirectoryChanged => 6,
            Mpi2ddDebugState::MetadirectoryChanged => 7,
            Mpi2ddDebugState::Abort => 8,
            Mpi2ddDebugState::Unknown(v) => v,
        }
    }
}

/// `MPIR_debug_state`: what the starter wants the debugger to look at.
///
/// ```
/// use mpidd_types::MpirDebugState;
///
/// assert_eq!(MpirDebugState::from(1), MpirDebugState::Spawned);
/// assert_eq!(MpirDebugState::from(-7), MpirDebugState::Unknown(-7));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MpirDebugState {
    /// 0: nothing to report (the initial value).
    Null,
    /// 1 (`MPIR_DEBUG_SPAWNED`): the processes exist and the proctable is
    /// filled in.
    Spawned,
    /// 2 (`MPIR_DEBUG_ABORTING`): the job is aborting.
    Aborting,
    /// Any other value, kept as found.
    Unknown(i32),
}

impl From<i32> for MpirDebugState {
    fn from(v: i32) -> Self {
        match v {
            0 => Self::Null,
            1 => Self::Spawned,
            2 => Self::Aborting,
            other => Self::Unknown(other),
        }
    }
}

impl From<MpirDebugState> for i32 {
    fn from(s: MpirDebugState) -> i32 {
        match s {
            MpirDebugState::Null => 0,
            MpirDebugState::Spawned => 1,
            MpirDebugState::Aborting => 2,
            MpirDebugState::Unknown(v) => v,
        }
    }
}
