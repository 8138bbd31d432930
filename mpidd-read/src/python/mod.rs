//! Python frames: what a rank that runs CPython 3.9 to 3.13 is doing in
//! its Python code, read from the interpreter's memory through the same
//! [`TargetMemory`](crate::TargetMemory) and
//! [`SymbolSource`](crate::SymbolSource) as everything else, so live
//! processes, cores and remote targets all have them.
//!
//! py-spy and pystack read the same structures, but through their own
//! process access and with host-sized `repr(C)` bindings; here the offsets
//! are a table per version ([`PythonVersion::SUPPORTED`]) applied with the
//! target's byte order, and checked on the target before they are
//! believed.

mod line_table;
mod mixed_stack;
mod python_error;
mod python_layout;
mod python_objects;
mod python_threads;

use serde::{Deserialize, Serialize};

pub use mixed_stack::{is_eval_frame, mix_python_frames};
pub use python_error::PythonError;
pub use python_layout::{python_offsets, PythonVersion};
pub use python_threads::{
    read_python, ExceptionState, PythonException, PythonFrame, PythonProcess, PythonThread,
};

/// Bounds on what one read of a process's Python side takes, so that a
/// corrupt or hostile interpreter cannot keep the reader busy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonLimits {
    /// Most interpreters and thread states followed, together. Default
    /// 4096.
    pub max_threads: usize,
    /// Most frames of one thread, and entries of one traceback. Default
    /// 4096 (CPython's default recursion limit is 1000).
    pub max_frames: usize,
    /// Most characters of one name or file name kept. Default 4096.
    pub max_string_chars: usize,
    /// Most bytes of one line table read. Default 1 MiB.
    pub max_line_table_bytes: u64,
    /// Of how many of the innermost frames the local variables are
    /// searched for an exception. Default 8.
    pub max_exception_frames: usize,
    /// Most local variables of one frame searched. Default 64.
    pub max_locals: usize,
}

impl Default for PythonLimits {
    fn default() -> Self {
        PythonLimits {
            max_threads: 4096,
            max_frames: 4096,
            max_string_chars: 4096,
            max_line_table_bytes: 1 << 20,
            max_exception_frames: 8,
            max_locals: 64,
        }
    }
}
