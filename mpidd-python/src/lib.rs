//! `mpidd._native`: the mpidd crates as a Python module, for debuggers
//! that embed Python (gdb). A `Rank` reads an MPI process
//! through the caller's own memory reader and list of loaded objects, as
//! `examples/embed` hands the crates its own: message queues with what
//! they rest on, and the view of any MPI handle. The pure-Python package
//! `mpidd` beside it (`python/mpidd`) holds the gdb commands and
//! pretty-printers.
//!
//! Nothing unwinds into the interpreter: every entry point runs under
//! `errors::guarded`, and every failure is `mpidd.MpiddError` with the
//! crates' reason.

mod callback_memory;
mod errors;
mod objects;
mod page_cache;
mod rank;
mod summary;
mod to_python;

use pyo3::prelude::*;

/// The load bias of the object file at `path` whose section `section`
/// (`.text`) the process has at `address`: how a debugger that lists
/// sections but not biases (gdb's `info files`) gives `Rank` its objects.
#[pyfunction]
fn section_bias(path: &str, section: &str, address: u64) -> PyResult<u64> {
    errors::guarded(|| {
        objects::section_bias(std::path::Path::new(path), section, address)
            .map_err(|e| errors::MpiddError::new_err(errors::error_chain(&e)))
    })
}

/// The module `mpidd._native`.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<rank::Rank>()?;
    m.add_function(wrap_pyfunction!(section_bias, m)?)?;
    m.add("MpiddError", m.py().get_type::<errors::MpiddError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
