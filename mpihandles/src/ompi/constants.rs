//! The values Open MPI keeps only as preprocessor constants (flag bits,
//! the combiners of `mpi.h`'s anonymous enumeration, `MPI_UNDEFINED`, the
//! predefined attribute keys): in no debug info, so named here, each with
//! where it comes from. They are Open MPI 4.1's.

/// `OMPI_COMM_INTER` (`communicator.h`): an intercommunicator.
pub(crate) const COMM_INTER: u64 = 0x1;
/// `OMPI_COMM_INTRINSIC`: a predefined communicator.
pub(crate) const COMM_INTRINSIC: u64 = 0x4;
/// `OMPI_COMM_ISFREED`: defined beside the others, but Open MPI 4.1 never
/// sets it.
pub(crate) const COMM_ISFREED: u64 = 0x10;
/// `OMPI_COMM_CART`, `OMPI_COMM_GRAPH` and `OMPI_COMM_DIST_GRAPH`: the
/// topology, also `mca_topo_base_module_t.type`.
pub(crate) const COMM_CART: u64 = 0x100;
pub(crate) const COMM_GRAPH: u64 = 0x200;
pub(crate) const COMM_DIST_GRAPH: u64 = 0x400;
/// `OMPI_GROUP_INTRINSIC` (`group_dbg.h`).
pub(crate) const GROUP_INTRINSIC: u64 = 0x2;
/// `OMPI_GROUP_SPORADIC`, `_STRIDED` and `_BITMAP`: sparse storage, with
/// no proc table.
pub(crate) const GROUP_SPARSE: u64 = 0x8 | 0x10 | 0x20;
/// `OPAL_DATATYPE_FLAG_PREDEFINED`, `_COMMITTED` and `_CONTIGUOUS`
/// (`opal_datatype.h`).
pub(crate) const DT_PREDEFINED: u64 = 0x2;
pub(crate) const DT_COMMITTED: u64 = 0x4;
pub(crate) const DT_CONTIGUOUS: u64 = 0x10;
/// `OMPI_OP_FLAGS_*` (`op.h`).
pub(crate) const OP_INTRINSIC: u64 = 0x1;
pub(crate) const OP_FORTRAN: u64 = 0x2;
pub(crate) const OP_CXX: u64 = 0x4;
pub(crate) const OP_JAVA: u64 = 0x8;
pub(crate) const OP_COMMUTE: u64 = 0x40;
/// `REQUEST_COMPLETED` (`request.h`): `req_complete` once the request is
/// complete for MPI.
pub(crate) const REQUEST_COMPLETED: u64 = 1;
/// `MPI_UNDEFINED` (`mpi.h`), also a request's Fortran index until
/// `MPI_Request_c2f` gives it one.
pub(crate) const MPI_UNDEFINED: i64 = -32766;
/// `MPI_ANY_SOURCE`, `MPI_PROC_NULL` and `MPI_ANY_TAG` (`mpi.h`).
pub(crate) const ANY_SOURCE: i64 = -1;
pub(crate) const PROC_NULL: i64 = -2;
pub(crate) const ANY_TAG: i64 = -1;
/// The combiners of `mpi.h`, an anonymous enumeration (so no debug info
/// names it) whose order Open MPI keeps for its ABI, by value.
pub(crate) const COMBINERS: [&str; 19] = [
    "MPI_COMBINER_NAMED",
    "MPI_COMBINER_DUP",
    "MPI_COMBINER_CONTIGUOUS",
    "MPI_COMBINER_VECTOR",
    "MPI_COMBINER_HVECTOR_INTEGER",
    "MPI_COMBINER_HVECTOR",
    "MPI_COMBINER_INDEXED",
    "MPI_COMBINER_HINDEXED_INTEGER",
    "MPI_COMBINER_HINDEXED",
    "MPI_COMBINER_INDEXED_BLOCK",
    "MPI_COMBINER_STRUCT_INTEGER",
    "MPI_COMBINER_STRUCT",
    "MPI_COMBINER_SUBARRAY",
    "MPI_COMBINER_DARRAY",
    "MPI_COMBINER_F90_REAL",
    "MPI_COMBINER_F90_COMPLEX",
    "MPI_COMBINER_F90_INTEGER",
    "MPI_COMBINER_RESIZED",
    "MPI_COMBINER_HINDEXED_BLOCK",
];
/// The predefined attribute keys of `mpi.h`'s anonymous enumeration
/// (`MPI_TAG_UB` = 0 ... `IMPI_HOST_COLOR` = 14): the window's are how
/// Open MPI keeps its base, size, displacement unit and memory model.
pub(crate) const KEY_WIN_BASE: i64 = 7;
pub(crate) const KEY_WIN_SIZE: i64 = 8;
pub(crate) const KEY_WIN_DISP_UNIT: i64 = 9;
pub(crate) const KEY_WIN_MODEL: i64 = 11;
pub(crate) const LAST_PREDEFINED_KEY: i64 = 14;
