//! The crates' models as plain Python values (dicts, lists, numbers,
//! strings), through their serde form: the same keys and values as the
//! command-line tool's `--json`.

use pyo3::prelude::*;
use serde::Serialize;

use crate::errors::MpiddError;

/// `value`'s serde form as Python values.
pub fn to_python<'py, T: Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| MpiddError::new_err(format!("cannot convert the result: {e}")))?;
    py.import("json")?.call_method1("loads", (text,))
}
