//! What Open MPI keeps per handle kind: the pointer array its Fortran
//! INTEGERs index (an f2c table, exported by `libmpi.so.40`), the class
//! every object of the kind derives from, and the objects it predefines
//! under exported symbols.

use crate::model::HandleKind;

/// The objects Open MPI predefines under exported symbols, as
/// (kind, symbol, MPI name, whether it is the kind's null handle). The
/// predefined datatypes and operations carry their MPI names themselves.
pub(crate) const PREDEFINED: &[(HandleKind, &str, &str, bool)] = &[
    (
        HandleKind::Comm,
        "ompi_mpi_comm_world",
        "MPI_COMM_WORLD",
        false,
    ),
    (
        HandleKind::Comm,
        "ompi_mpi_comm_self",
        "MPI_COMM_SELF",
        false,
    ),
    (
        HandleKind::Comm,
        "ompi_mpi_comm_null",
        "MPI_COMM_NULL",
        true,
    ),
    (
        HandleKind::Group,
        "ompi_mpi_group_empty",
        "MPI_GROUP_EMPTY",
        false,
    ),
    (
        HandleKind::Group,
        "ompi_mpi_group_null",
        "MPI_GROUP_NULL",
        true,
    ),
    (
        HandleKind::Datatype,
        "ompi_mpi_datatype_null",
        "MPI_DATATYPE_NULL",
        true,
    ),
    (
        HandleKind::Errhandler,
        "ompi_mpi_errhandler_null",
        "MPI_ERRHANDLER_NULL",
        true,
    ),
    (
        HandleKind::Errhandler,
        "ompi_mpi_errors_are_fatal",
        "MPI_ERRORS_ARE_FATAL",
        false,
    ),
    (
        HandleKind::Errhandler,
        "ompi_mpi_errors_return",
        "MPI_ERRORS_RETURN",
        false,
    ),
    (
        HandleKind::Errhandler,
        "ompi_mpi_errors_throw_exceptions",
        "MPI::ERRORS_THROW_EXCEPTIONS",
        false,
    ),
    (HandleKind::Op, "ompi_mpi_op_null", "MPI_OP_NULL", true),
    (
        HandleKind::Info,
        "ompi_mpi_info_null",
        "MPI_INFO_NULL",
        true,
    ),
    (HandleKind::Info, "ompi_mpi_info_env", "MPI_INFO_ENV", false),
    (
        HandleKind::Request,
        "ompi_request_null",
        "MPI_REQUEST_NULL",
        true,
    ),
    // The completed request Open MPI hands out for an operation that
    // finished at once (ob1's inline sends): no MPI name.
    (
        HandleKind::Request,
        "ompi_request_empty",
        "ompi_request_empty",
        false,
    ),
    (HandleKind::Win, "ompi_mpi_win_null", "MPI_WIN_NULL", true),
    (
        HandleKind::File,
        "ompi_mpi_file_null",
        "MPI_FILE_NULL",
        true,
    ),
];

/// The pointer array each kind's Fortran INTEGERs index (the operations'
/// symbol points to theirs), and the class
/// every object of the kind derives from. Predefined datatypes are
/// initialized statically with the class of their base,
/// `opal_datatype_t`.
pub(crate) fn kind_info(kind: HandleKind) -> Option<(&'static str, &'static str)> {
    Some(match kind {
        HandleKind::Comm => ("ompi_comm_f_to_c_table", "ompi_communicator_t"),
        HandleKind::Group => ("ompi_group_f_to_c_table", "ompi_group_t"),
        HandleKind::Datatype => ("ompi_datatype_f_to_c_table", "opal_datatype_t"),
        HandleKind::Errhandler => ("ompi_errhandler_f_to_c_table", "ompi_errhandler_t"),
        HandleKind::Op => ("ompi_op_f_to_c_table", "ompi_op_t"),
        HandleKind::Info => ("ompi_info_f_to_c_table", "ompi_info_t"),
        HandleKind::Request => ("ompi_request_f_to_c_table", "ompi_request_t"),
        HandleKind::Win => ("ompi_mpi_windows", "ompi_win_t"),
        HandleKind::File => ("ompi_file_f_to_c_table", "ompi_file_t"),
        HandleKind::Status => return None,
    })
}
