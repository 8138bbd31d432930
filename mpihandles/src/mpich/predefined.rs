//! The names of MPICH's predefined handles whose objects carry no name.
//!
//! Communicators and datatypes keep their names in their objects, and the
//! decoders read those. Error handlers, operations, groups, info objects
//! and the null handles have no name field, so their names come from the
//! values `mpi.h` gives them. These values are MPICH's application binary
//! interface (programs compiled against one MPICH 4.x `mpi.h` run with
//! any), not the layout of a private struct.

use crate::model::HandleKind;
use crate::mpich::handle_bits::{MpichHandle, Storage};

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

/// MPICH's predefined pair datatypes (`MPI_FLOAT_INT`...) are the first
/// objects of the direct array, made by `MPI_Init`; `mpi.h` fixes their
/// handles.
pub(crate) fn predefined_pair(kind: HandleKind, raw: u32) -> Option<&'static str> {
    if kind != HandleKind::Datatype {
        return None;
    }
    match raw {
        0x8c00_0000 => Some("MPI_FLOAT_INT"),
        0x8c00_0001 => Some("MPI_DOUBLE_INT"),
        0x8c00_0002 => Some("MPI_LONG_INT"),
        0x8c00_0003 => Some("MPI_SHORT_INT"),
        0x8c00_0004 => Some("MPI_LONG_DOUBLE_INT"),
        _ => None,
    }
}

/// Whether `raw` is a predefined handle of `kind` by its bits alone: a
/// builtin object, or one of the predefined pair datatypes.
pub(crate) fn predefined_by_bits(kind: HandleKind, raw: u32) -> bool {
    MpichHandle::decode(raw).storage == Storage::Builtin || predefined_pair(kind, raw).is_some()
}

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
