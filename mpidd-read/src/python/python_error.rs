//! Why a process's Python frames could not be read.

use mpidd_types::TargetAddr;

use super::python_layout::PythonVersion;
use crate::ReadError;

/// Why the Python frames of a process could not be read. A process that
/// runs no CPython is [`NotPython`](PythonError::NotPython), which callers
/// take as "no Python frames", not as a failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PythonError {
    /// No loaded object defines `_PyRuntime`: the process runs no CPython.
    #[error("no loaded object defines _PyRuntime: not a CPython process")]
    NotPython,
    /// The interpreter's version could not be told: neither `Py_Version`
    /// nor the name of the object that defines `_PyRuntime` says it.
    #[error(
        "the CPython in {object} does not say its version (no Py_Version, no version in its name)"
    )]
    VersionUnknown {
        /// The object that defines `_PyRuntime`.
        object: String,
    },
    /// The reader has no table for this version.
    #[error("CPython {version} in {object} has no frame table here (tables: 3.9 to 3.13)")]
    UnsupportedVersion {
        /// The version the interpreter says it is.
        version: PythonVersion,
        /// The object that defines `_PyRuntime`.
        object: String,
    },
    /// The tables are for 64-bit targets.
    #[error("the frame tables are for 64-bit CPython; this target's addresses are {bits}-bit")]
    UnsupportedAbi {
        /// The target's address width in bits.
        bits: u32,
    },
    /// The table does not fit the target: what it predicts is not there.
    #[error("the CPython {version} table does not fit this interpreter: {what} at {addr}")]
    LayoutMismatch {
        /// The table's version.
        version: PythonVersion,
        /// What was checked.
        what: String,
        /// Where.
        addr: TargetAddr,
    },
    /// A chain the reader follows is longer than its limit (or a cycle).
    #[error(
        "{what} starting at {addr} has more than {limit} entries (a cycle, or corrupt memory)"
    )]
    TooLong {
        /// The chain.
        what: &'static str,
        /// Its first entry.
        addr: TargetAddr,
        /// The limit that was reached.
        limit: usize,
    },
    /// An object is larger than the reader's limit for it.
    #[error("{what} at {addr} claims {size} bytes, over the limit of {limit}")]
    TooLarge {
        /// The object.
        what: &'static str,
        /// Where.
        addr: TargetAddr,
        /// Its size as the target gives it.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Target memory could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
}
