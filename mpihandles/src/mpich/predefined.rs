//! The names of MPICH's predefined handles whose objects carry no name.
//!
//! Communicators and datatypes keep their names in their objects, and the
//! decoders read those. Error handlers, operations, groups, info objects
//! and the null handles have no name field, so their names come from the
//! values `mpi.h` gives them. These values are MPICH's application binary
//! interface (programs compiled against one MPICH 4.x `mpi.h` run with
//! any), not the layout of a private struct.

use crate::model::HandleKind;

/// (kind, C value, name) of every predefined handle without a name field,
/// from MPICH 4.0.2's `mpi.h`.
const NAMED: &[(HandleKind, u32, &str)] = &[
    (HandleKind::Comm, 0x0400_0000, "MPI_COMM_NULL"),
    (HandleKind::Comm, 0x4400_0000, "MPI_COMM_WORLD"),
    (HandleKind::Comm, 0x4400_0001, "MPI_COMM_SELF"),
    (HandleKind::Group, 0x0800_0000, "MPI_GROUP_NULL"),
    (HandleKind::Group, 0x4800_0000, "MPI_GROUP_EMPTY"),
    (HandleKind::Datatype, 0x0c00_0000, "MPI_DATATYPE_NULL"),
    (HandleKind::Errhandler, 0x1400_0000, "MPI_ERRHANDLER_NULL"),
    (HandleKind::Errhandler, 0x5400_0000, "MPI_ERRORS_ARE_FATAL"),
    (HandleKind::Errhandler, 0x5400_0001, "MPI_ERRORS_RETURN"),
    (
        HandleKind::Errhandler,
        0x5400_0002,
        "MPIR_ERRORS_THROW_EXCEPTIONS",
    ),
    (HandleKind::Errhandler, 0x5400_0003, "MPI_ERRORS_ABORT"),
    (HandleKind::Op, 0x1800_0000, "MPI_OP_NULL"),
    (HandleKind::Op, 0x5800_0001, "MPI_MAX"),
    (HandleKind::Op, 0x5800_0002, "MPI_MIN"),
    (HandleKind::Op, 0x5800_0003, "MPI_SUM"),
    (HandleKind::Op, 0x5800_0004, "MPI_PROD"),
    (HandleKind::Op, 0x5800_0005, "MPI_LAND"),
    (HandleKind::Op, 0x5800_0006, "MPI_BAND"),
    (HandleKind::Op, 0x5800_0007, "MPI_LOR"),
    (HandleKind::Op, 0x5800_0008, "MPI_BOR"),
    (HandleKind::Op, 0x5800_0009, "MPI_LXOR"),
    (HandleKind::Op, 0x5800_000a, "MPI_BXOR"),
    (HandleKind::Op, 0x5800_000b, "MPI_MINLOC"),
    (HandleKind::Op, 0x5800_000c, "MPI_MAXLOC"),
    (HandleKind::Op, 0x5800_000d, "MPI_REPLACE"),
    (HandleKind::Op, 0x5800_000e, "MPI_NO_OP"),
    (HandleKind::Info, 0x1c00_0000, "MPI_INFO_NULL"),
    (HandleKind::Info, 0x5c00_0001, "MPI_INFO_ENV"),
    (HandleKind::Request, 0x2c00_0000, "MPI_REQUEST_NULL"),
    // MPICH's own pre-completed requests, which blocking calls and
    // MPI_Isend to MPI_PROC_NULL hand out; 0x6c000000 is also
    // MPI_MESSAGE_NO_PROC.
    (HandleKind::Request, 0x6c00_0000, "MPIR_REQUEST_COMPLETE"),
    (
        HandleKind::Request,
        0x6c00_0001,
        "MPIR_REQUEST_COMPLETE_SEND",
    ),
    (
        HandleKind::Request,
        0x6c00_0002,
        "MPIR_REQUEST_COMPLETE_RECV",
    ),
    (
        HandleKind::Request,
        0x6c00_0006,
        "MPIR_REQUEST_COMPLETE_COLL",
    ),
    (
        HandleKind::Request,
        0x6c00_0008,
        "MPIR_REQUEST_COMPLETE_RMA",
    ),
    (HandleKind::Request, 0x6c00_0010, "MPIR_REQUEST_NULL_RECV"),
    (HandleKind::Win, 0x2000_0000, "MPI_WIN_NULL"),
];

/// The predefined name of `value` as a handle of `kind`, if it has one
/// without a name field.
pub(crate) fn predefined_name(kind: HandleKind, value: u32) -> Option<&'static str> {
    NAMED
        .iter()
        .find(|(k, v, _)| *k == kind && *v == value)
        .map(|(_, _, n)| *n)
}

/// `MPI_MODE_*` bits of `MPI_File_open` (ROMIO's `mpio.h`) and their names.
pub(crate) const FILE_MODES: &[(i32, &str)] = &[
    (1, "MPI_MODE_CREATE"),
    (2, "MPI_MODE_RDONLY"),
    (4, "MPI_MODE_WRONLY"),
    (8, "MPI_MODE_RDWR"),
    (16, "MPI_MODE_DELETE_ON_CLOSE"),
    (32, "MPI_MODE_UNIQUE_OPEN"),
    (64, "MPI_MODE_EXCL"),
    (128, "MPI_MODE_APPEND"),
    (256, "MPI_MODE_SEQUENTIAL"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_per_kind() {
        assert_eq!(
            predefined_name(HandleKind::Op, 0x5800_0003),
            Some("MPI_SUM")
        );
        assert_eq!(predefined_name(HandleKind::Comm, 0x5800_0003), None);
        let mut seen = std::collections::HashSet::new();
        for (k, v, _) in NAMED {
            assert!(seen.insert((*k, *v)), "{k:?} {v:#x} twice");
        }
    }
}
