//! The process tables of one target, whichever interface it has: the MPIR
//! table of a starter, and the MPI-2 debugger interface's tables of a rank,
//! directory or metadirectory. A target may have both (a metadirectory
//! that is also the MPIR starter); one that has neither is refused with
//! both reasons. A launcher with neither may still answer through PMIx
//! ([`crate::pmix`]), which needs its pid, not its memory.
//!
//! ```
//! use mpidd_read::process_tables::read_tables;
//! use mpidd_read::{Limits, SyntheticJob};
//! use mpidd_types::TargetAbi;
//!
//! let job = SyntheticJob::builder(TargetAbi::X86_64)
//!     .mpir_starter(&[("n1", "/bin/ring", 4001)])
//!     .build();
//! let tables = read_tables(&job, None, &Limits::default())?;
//! assert_eq!(tables.mpir.map(|m| m.proctable.len()), Some(1));
//! assert!(tables.mpi2dd.is_none());
//! # Ok::<(), mpidd_read::process_tables::TablesError>(())
//! ```

use mpidd_types::Packing;
use serde::Serialize;

use crate::backend::memory::TargetMemory;
use crate::limits::Limits;
use crate::mpi2dd::{self, Mpi2ddError, Mpi2ddProcess};
use crate::mpir::{self, MpirError, MpirState};
use crate::symbols::SymbolSource;

/// What a target exposes of its job's processes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProcessTables {
    /// The MPIR state and table, when the target is an MPIR starter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpir: Option<MpirState>,
    /// Its own `MPI2DD_info` and tables, when it implements the MPI-2
    /// debugger interface.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpi2dd: Option<Mpi2ddProcess>,
    /// The jobs of a launcher that has neither (Open MPI 5's `prterun`),
    /// as its PMIx server reports them: not in memory, so
    /// [`read_tables`] leaves it `None`, and a caller with the launcher's
    /// pid fills it from [`crate::pmix::read_pmix_tables`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pmix: Option<crate::pmix::PmixTables>,
}

/// Why the tables could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TablesError {
    /// The MPIR symbols are there but could not be read.
    #[error(transparent)]
    Mpir(#[from] MpirError),
    /// `MPI2DD_info` is there but could not be read.
    #[error(transparent)]
    Mpi2dd(#[from] Mpi2ddError),
    /// The target has neither interface.
    #[error("{mpir}; and {mpi2dd}")]
    Neither {
        /// Why it is no MPIR starter.
        mpir: Box<MpirError>,
        /// Why it has no MPI-2 debugger interface.
        mpi2dd: Box<Mpi2ddError>,
    },
}

/// Reads whichever of the two interfaces the target has (the MPI-2
/// records in `packing`, or detected when `None`); fails only if it has
/// neither, or one that is there cannot be read.
pub fn read_tables<T: TargetMemory + SymbolSource + ?Sized>(
    t: &T,
    packing: Option<Packing>,
    limits: &Limits,
) -> Result<ProcessTables, TablesError> {
    match (
        mpir::read_state(t, limits),
        mpi2dd::read_process(t, t, packing, limits),
    ) {
        (Err(mpir @ MpirError::NoMpirSymbols { .. }), Err(mpi2dd @ Mpi2ddError::NoInfo { .. })) => {
            Err(TablesError::Neither {
                mpir: Box::new(mpir),
                mpi2dd: Box::new(mpi2dd),
            })
        }
        (m, p) => {
            let mpir = match m {
                Ok(m) => Some(m),
                Err(MpirError::NoMpirSymbols { .. }) => None,
                Err(e) => return Err(e.into()),
            };
            let mpi2dd = match p {
                Ok(p) => Some(p),
                Err(Mpi2ddError::NoInfo { .. }) => None,
                Err(e) => return Err(e.into()),
            };
            Ok(ProcessTables {
                mpir,
                mpi2dd,
                pmix: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_with_neither_interface_is_refused_with_both_reasons() {
        let job = crate::SyntheticJob::builder(mpidd_types::TargetAbi::X86_64).build();
        let err = read_tables(&job, None, &Limits::default()).unwrap_err();
        assert!(matches!(err, TablesError::Neither { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("MPIR") && text.contains("MPI2DD_info"),
            "{text}"
        );
    }
}
