//! The module's one exception, `mpidd.MpiddError`, carrying the crates'
//! reason as text; and the guard that keeps a panic from reaching the
//! debugger as anything but that exception.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::PyException;
use pyo3::PyResult;

pyo3::create_exception!(
    _native,
    MpiddError,
    PyException,
    "Raised when a rank's queues or a handle cannot be read; its text is the \
     crates' reason, naming what is missing."
);

/// An error and its sources, joined by `: `, as the command-line tool
/// prints them.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        // Errors that show their source in their own text are not
        // repeated.
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

/// Runs `f`, turning a panic into `MpiddError` with its message, so that
/// a bug in a decoder is one error line in the debugger (PyO3's own guard
/// would raise a `BaseException` that a debugger's `except Exception`
/// does not catch).
pub fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_string());
            Err(MpiddError::new_err(format!(
                "internal error in mpidd (please report it): {message}"
            )))
        }
    }
}
