//! Which `MPI_COMM_WORLD` rank an MPICH process is, read from the process
//! itself: MPICH keeps it in the global `MPIR_Process` (an
//! `MPIR_Process_t`) as the member `rank`.

use mpidd_read::{SymbolSource, TargetMemory, TypeOracle};
use mpidd_types::TargetAddr;

/// Why the rank could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorldRankError {
    /// The process has no `MPIR_Process`: not MPICH, or stripped of local
    /// symbols.
    #[error("no symbol MPIR_Process in {searched}: not an MPICH process, or its library lost its local symbols")]
    NoSymbol {
        /// The objects searched.
        searched: String,
    },
    /// The type of `MPIR_Process` is not in the debug info.
    #[error(transparent)]
    Type(#[from] mpidd_read::TypeError),
    /// The member could not be read.
    #[error(transparent)]
    Read(#[from] mpidd_read::ReadError),
}

/// Reads `MPIR_Process.rank`, with the member's offset from the debug
/// info of the library that defines it.
pub fn mpich_world_rank<M, S>(
    memory: &M,
    symbols: &S,
    types: &TypeOracle,
) -> Result<i32, WorldRankError>
where
    M: TargetMemory + ?Sized,
    S: SymbolSource + ?Sized,
{
    let sym = symbols
        .lookup("MPIR_Process")
        .ok_or_else(|| WorldRankError::NoSymbol {
            searched: symbols.searched_objects().join(", "),
        })?;
    let field = types.offset_of("MPIR_Process_t", "rank")?;
    let addr = TargetAddr(sym.addr.0.wrapping_add(field.offset));
    Ok(memory.read_i32(addr, "MPIR_Process.rank")?)
}
