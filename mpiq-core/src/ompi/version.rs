//! What every Open MPI build says of itself, whatever its PML: the
//! version, which `detect` names and a refusal reports.

use mpidd_read::{Limits, SymbolSource, TargetMemory};

/// Open MPI's version (`4.1.4`), from libopen-pal's exported
/// `opal_version_string`, which every build keeps, else libmpi's own
/// `ompi_version_string` (the same release): a library file read alone,
/// without the libopen-pal a process loads beside it, states it there.
pub(crate) fn ompi_version(
    memory: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    limits: &Limits,
) -> Option<String> {
    ["opal_version_string", "ompi_version_string"]
        .iter()
        .find_map(|name| {
            let sym = symbols.lookup(name)?;
            let text = TargetMemory::read_c_string(memory, sym.addr, limits.max_string_len.min(64))
                .ok()?;
            Some(String::from_utf8_lossy(&text).into_owned())
        })
        .filter(|v| !v.is_empty())
}
