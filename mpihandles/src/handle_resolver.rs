//! The one interface every implementation's resolver serves.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{HandleKind, HandleView, StatusView};

/// Interprets one MPI implementation's handles in one process.
pub trait HandleResolver {
    /// The implementation, e.g. `MPICH 4.0.2 (ch3:nemesis)`.
    fn implementation(&self) -> &str;

    /// The view of the handle of `kind` whose C value is `value` (an int
    /// handle, or a pointer for pointer handles).
    fn resolve(&self, kind: HandleKind, value: i64) -> Result<HandleView, HandleError>;

    /// The view of the handle whose Fortran INTEGER is `value`.
    fn resolve_fortran(&self, kind: HandleKind, value: i32) -> Result<HandleView, HandleError>;

    /// The `MPI_Status` at `addr`; with a datatype handle, its element
    /// count too.
    fn status(&self, addr: TargetAddr, datatype: Option<i64>) -> Result<StatusView, HandleError>;
}
