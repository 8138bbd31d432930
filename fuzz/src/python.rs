//! What the `python_frames` target and its seeds share: CPython's symbols
//! and small limits, so that a mutated chain reaches them quickly.

use mpidd_read::PythonLimits;

/// The symbols the Python frame reader looks up.
pub const PYTHON_SYMBOLS: &[&str] = &["_PyRuntime", "Py_Version", "PyCode_Type", "PyUnicode_Type"];

/// Limits small enough that loops and long chains end fast.
pub fn limits() -> PythonLimits {
    PythonLimits {
        max_threads: 16,
        max_frames: 64,
        max_string_chars: 256,
        max_line_table_bytes: 4096,
        max_exception_frames: 4,
        max_locals: 16,
    }
}
