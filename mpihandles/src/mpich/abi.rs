//! Handles of programs built against the MPI-5 standard ABI (`mpi_abi.h`;
//! MPICH's `libmpi_abi.so`, pip's MPICH from 5.0): what such a handle is in
//! MPICH's own terms.
//!
//! The standard fixes the predefined handles as small constants; MPICH's
//! ABI layer hands out any other handle as the address of its object,
//! whose `handle` member is MPICH's own int handle. Both become that int
//! handle, which every view reads as it reads a program built against
//! MPICH's `mpi.h`. A Fortran INTEGER (`MPI_Comm_toint` and its siblings;
//! the ABI library has no `MPI_Comm_c2f`) is the constant for a predefined
//! handle and MPICH's int handle for any other.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::HandleKind;
use crate::mpich::abi_table::ABI_PREDEFINED;

/// ABI handle values below this are the standard's predefined constants
/// (MPICH's ABI layer tells them apart by the same bound); others are
/// addresses.
pub const ABI_BUILTIN_LIMIT: u64 = 0x1000;

/// What an MPI-5 ABI handle value is, before any memory is read.
///
/// ```
/// use mpihandles::{AbiHandle, HandleKind};
/// use mpidd_types::TargetAddr;
///
/// let world = AbiHandle::classify(HandleKind::Comm, 0x101).unwrap();
/// assert_eq!(world, AbiHandle::Predefined { name: "MPI_COMM_WORLD", mpich: 0x4400_0000 });
/// let user = AbiHandle::classify(HandleKind::Comm, 0x5555_0000_1000).unwrap();
/// assert_eq!(user, AbiHandle::Object(TargetAddr(0x5555_0000_1000)));
/// assert!(AbiHandle::classify(HandleKind::Comm, 0x209).is_err()); // MPI_INT
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbiHandle {
    /// A predefined handle: its name, and MPICH's int handle for it.
    Predefined {
        /// Its name in `mpi_abi.h`, e.g. `MPI_COMM_WORLD`.
        name: &'static str,
        /// MPICH's int handle of the same name.
        mpich: u32,
    },
    /// The address of MPICH's object of the handle's kind.
    Object(TargetAddr),
}

impl AbiHandle {
    /// The ABI handle of `kind` whose value is `value`: a predefined one
    /// the standard gives this value, else (at or above
    /// [`ABI_BUILTIN_LIMIT`]) an object's address. A value below the
    /// limit that the standard gives no handle of `kind` is an error.
    pub fn classify(kind: HandleKind, value: u64) -> Result<AbiHandle, HandleError> {
        if value >= ABI_BUILTIN_LIMIT {
            return Ok(AbiHandle::Object(TargetAddr(value)));
        }
        ABI_PREDEFINED
            .iter()
            .find(|(k, abi, _, _)| *k == kind && u64::from(*abi) == value)
            .map(|(_, _, mpich, name)| AbiHandle::Predefined {
                name,
                mpich: *mpich,
            })
            .ok_or_else(|| HandleError::BadValue {
                kind,
                value: value as i64,
                reason: format!(
                    "an MPI-5 ABI handle below {ABI_BUILTIN_LIMIT:#x} is predefined, and the \
                     ABI predefines no {kind} of this value"
                ),
            })
    }
}

/// The values an MPICH library's own code gives `MPI_ANY_SOURCE`,
/// `MPI_ANY_TAG` and `MPI_PROC_NULL`, which its requests keep as a
/// receive's source and tag.
///
/// MPICH's `libmpi_abi` (5.0 on, what `mpicc_abi` links) is MPICH compiled
/// again with the MPI-5 standard ABI's header in place of its own, and
/// its internal code then uses that header's values: a receive from any
/// source keeps −1 there, which `libmpi.so.12` uses for `MPI_PROC_NULL`.
///
/// ```
/// use mpihandles::MpichConstants;
///
/// let abi = MpichConstants::of_library("/venv/lib/libmpi_abi.so.1");
/// assert_eq!(abi, MpichConstants::MPI_ABI);
/// assert_eq!(abi.any_source, -1);
/// assert_eq!(MpichConstants::of_library("/usr/lib/libmpich.so.12"), MpichConstants::MPICH);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpichConstants {
    /// `MPI_ANY_SOURCE`.
    pub any_source: i64,
    /// `MPI_ANY_TAG`.
    pub any_tag: i64,
    /// `MPI_PROC_NULL`.
    pub proc_null: i64,
}

impl MpichConstants {
    /// MPICH's `mpi.h`.
    pub const MPICH: MpichConstants = MpichConstants {
        any_source: -2,
        any_tag: -1,
        proc_null: -1,
    };
    /// The MPI-5 standard ABI's `mpi_abi.h` (pip's MPICH 5.0.2 ships it).
    pub const MPI_ABI: MpichConstants = MpichConstants {
        any_source: -1,
        any_tag: -2,
        proc_null: -3,
    };

    /// The constants of the MPICH library at `path` (the loaded object
    /// that holds its globals): the ABI's for `libmpi_abi`, by its file
    /// name, MPICH's for any other.
    pub fn of_library(path: &str) -> MpichConstants {
        if mpidd_read::so_stem(path) == "libmpi_abi" {
            MpichConstants::MPI_ABI
        } else {
            MpichConstants::MPICH
        }
    }
}

/// The name `mpi_abi.h` gives MPICH's predefined handle `mpich` of
/// `kind`, and its ABI value.
pub fn abi_predefined(kind: HandleKind, mpich: u32) -> Option<(&'static str, u16)> {
    ABI_PREDEFINED
        .iter()
        .find(|(k, _, m, _)| *k == kind && *m == mpich)
        .map(|(_, abi, _, name)| (*name, *abi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_predefined_handle_is_below_the_limit_and_once_per_kind() {
        for (i, (kind, abi, _, name)) in ABI_PREDEFINED.iter().enumerate() {
            assert!(u64::from(*abi) < ABI_BUILTIN_LIMIT, "{name}");
            let again = ABI_PREDEFINED[..i]
                .iter()
                .any(|(k, a, _, _)| k == kind && a == abi);
            assert!(!again, "{name} has the value of another {kind}");
        }
    }

    #[test]
    fn a_predefined_handle_is_mpich_s_of_the_same_name() {
        let sum = AbiHandle::classify(HandleKind::Op, 0x21).unwrap();
        assert_eq!(
            sum,
            AbiHandle::Predefined {
                name: "MPI_SUM",
                mpich: 0x5800_0003
            }
        );
        assert_eq!(
            abi_predefined(HandleKind::Datatype, 0x4c00_0405),
            Some(("MPI_INT", 0x209))
        );
        // A value no handle of the kind has, and one of another kind.
        assert!(AbiHandle::classify(HandleKind::Op, 0x3ff).is_err());
        assert!(AbiHandle::classify(HandleKind::Op, 0x101).is_err());
    }
}
