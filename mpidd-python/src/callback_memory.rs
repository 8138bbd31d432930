//! A rank's memory as the crates take it ([`TargetMemory`]), read through
//! the caller's Python function `read_memory(address, size)` and kept page
//! by page in a [`PageCache`] for the stop.
//!
//! It holds the Python token for the call it serves, so the crates cannot
//! take it to another thread (it is neither `Send` nor `Sync`): every call
//! into the debugger happens on the thread that called into the module,
//! with the interpreter held, as gdb requires.

use std::cell::{Cell, RefCell};

use mpidd_read::{ReadError, TargetMemory};
use mpidd_types::{TargetAbi, TargetAddr};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};

use crate::page_cache::{Fetched, PageCache};

/// The caller's memory reader for the length of one call into the module.
pub struct CallbackMemory<'a, 'py> {
    read: &'a Bound<'py, PyAny>,
    cache: RefCell<&'a mut PageCache>,
    abi: TargetAbi,
    /// The reader's first failure (an exception, or an answer that is not
    /// bytes), kept to be told to the caller when the reading fails.
    failure: Cell<Option<String>>,
}

impl<'a, 'py> CallbackMemory<'a, 'py> {
    /// The reader `read`, whose pages are kept in `cache`, of a target of
    /// `abi`.
    pub fn new(read: &'a Bound<'py, PyAny>, cache: &'a mut PageCache, abi: TargetAbi) -> Self {
        CallbackMemory {
            read,
            cache: RefCell::new(cache),
            abi,
            failure: Cell::new(None),
        }
    }

    /// The caller's reader's first failure during this call.
    pub fn failure(&self) -> Option<String> {
        self.failure.take()
    }

    /// One call of the caller's reader. It returns the bytes read from
    /// `address` (fewer, or `None`, when the rest cannot be read); an
    /// exception is a failure of the debugger, not of the memory.
    fn fetch(&self, address: u64, size: usize) -> Fetched {
        self.fetch_once(address, size).inspect_err(|text| {
            let first = self.failure.take().unwrap_or_else(|| text.clone());
            self.failure.set(Some(first));
        })
    }

    fn fetch_once(&self, address: u64, size: usize) -> Fetched {
        let answer = self
            .read
            .call1((address, size))
            .map_err(|e| python_error_text(self.read.py(), &e))?;
        if answer.is_none() {
            return Ok(Vec::new());
        }
        let mut bytes = if let Ok(b) = answer.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else if let Ok(b) = answer.cast::<PyByteArray>() {
            b.to_vec()
        } else {
            // gdb's read_memory gives a memoryview: anything with the
            // buffer protocol is taken (not bytes(n), which would make n
            // zeros of a number).
            let py = self.read.py();
            let view = py
                .import("builtins")
                .and_then(|b| b.getattr("memoryview"))
                .and_then(|memoryview| memoryview.call1((&answer,)))
                .and_then(|view| view.call_method0("tobytes"))
                .map_err(|e| {
                    format!(
                        "the memory reader returned neither bytes nor a buffer: {}",
                        python_error_text(py, &e)
                    )
                })?;
            view.cast::<PyBytes>()
                .map_err(|e| e.to_string())?
                .as_bytes()
                .to_vec()
        };
        // A reader that gives more than asked is believed for what was
        // asked only.
        bytes.truncate(size);
        Ok(bytes)
    }
}

impl TargetMemory for CallbackMemory<'_, '_> {
    fn abi(&self) -> TargetAbi {
        self.abi
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut cache = self.cache.borrow_mut();
        cache
            .read(addr.0, buf, &mut |a, n| self.fetch(a, n))
            .map_err(|cause| ReadError::Backend {
                what: "memory through the debugger",
                addr,
                cause: std::io::Error::other(cause),
            })
    }
}

/// An exception as one line: its type and message.
pub fn python_error_text(py: Python<'_>, e: &PyErr) -> String {
    let name = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "exception".to_string());
    format!("{name}: {}", e.value(py))
}
