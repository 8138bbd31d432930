//! Open MPI's message queues, read natively: what every Open MPI build
//! says of itself (its version), and the decoder of its ob1 PML
//! ([`OmpiOb1`]). Another PML (UCX's) would get a folder beside `ob1`.
//!
//! It stands on the decoder trait and error (`decoder`), the bounded reads
//! and walks (`target_read`, `list_walk`), the model and `mpidd-read`. It
//! must not import `detect`, which chooses among the decoders and imports
//! this folder, nor MPICH's decoders, nor the vendor library host (`mqs`).

mod ob1;

use mpidd_read::{Limits, SymbolSource, TargetMemory};

pub use ob1::{OmpiOb1, OB1_LAYOUT, OB1_SYMBOLS};

/// Open MPI's version (`4.1.4`), from libopen-pal's exported
/// `opal_version_string`, which every build keeps.
pub(crate) fn ompi_version(
    memory: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    limits: &Limits,
) -> Option<String> {
    let sym = symbols.lookup("opal_version_string")?;
    let text = TargetMemory::read_c_string(memory, sym.addr, limits.max_string_len.min(64)).ok()?;
    Some(String::from_utf8_lossy(&text).into_owned())
}
