//! Symbol names each target's processes can define, in the order of the
//! `name` byte of the process format (seeds depend on this order: append,
//! never reorder).

use mpidd_read::mpi2dd::{BREAKPOINT_SYMBOL, INFO_SYMBOL};
use mpidd_read::mpir::names as m;

/// Every symbol the MPIR reader looks up.
pub const MPIR: &[&str] = &[
    m::PROCTABLE,
    m::PROCTABLE_SIZE,
    m::DEBUG_STATE,
    m::DEBUG_GATE,
    m::BEING_DEBUGGED,
    m::ABORT_STRING,
    m::DLL_NAME,
    m::BREAKPOINT,
    m::I_AM_STARTER,
    m::PARTIAL_ATTACH_OK,
    m::ACQUIRED_PRE_MAIN,
    m::FORCE_TO_MAIN,
    m::IGNORE_QUEUES,
    m::EXECUTABLE_PATH,
    m::SERVER_ARGUMENTS,
    m::ATTACH_FIFO,
];

/// The MPI-2 interface's symbols.
pub const MPI2DD: &[&str] = &[INFO_SYMBOL, BREAKPOINT_SYMBOL];

/// What the MPICH queue decoder and its detection look up.
pub const MPICH: &[&str] = &[
    "MPIR_All_communicators",
    "MPID_Recvq_posted_head_ptr",
    "MPID_Recvq_unexpected_head_ptr",
    "MPIR_Sendq_head",
    "MPIR_Datatype_direct",
    "MPII_Version_string",
    "MPII_Version_device",
    "ompi_comm_f_to_c_table",
];

/// What the ob1 queue decoder and its detection look up.
pub const OB1: &[&str] = &[
    "ompi_mpi_communicators",
    "mca_pml_base_send_requests",
    "mca_pml_base_selected_component",
    "opal_version_string",
    "MPII_Version_string",
];

/// What the MPICH handle resolver looks up: the handle pools (builtin,
/// direct and allocator of each kind), the process, the topology keyval,
/// ROMIO's Fortran file table and the version strings (30 of the 32
/// symbols a process can have).
pub const HANDLE_SYMBOLS: &[&str] = &[
    "MPIR_Comm_builtin",
    "MPIR_Comm_direct",
    "MPIR_Comm_mem",
    "MPIR_Group_builtin",
    "MPIR_Group_direct",
    "MPIR_Group_mem",
    "MPIR_Datatype_builtin",
    "MPIR_Datatype_direct",
    "MPIR_Datatype_mem",
    "MPIR_Errhandler_builtin",
    "MPIR_Errhandler_direct",
    "MPIR_Errhandler_mem",
    "MPIR_Op_builtin",
    "MPIR_Op_direct",
    "MPIR_Op_mem",
    "MPIR_Info_builtin",
    "MPIR_Info_direct",
    "MPIR_Info_mem",
    "MPIR_Request_builtins",
    "MPIR_Request_direct",
    "MPIR_Request_mem",
    "MPIR_Win_direct",
    "MPIR_Win_mem",
    "MPIR_Process",
    "MPIR_Topology_keyval",
    "ADIOI_Ftable",
    "ADIOI_Ftable_ptr",
    "MPII_Version_string",
    "MPII_Version_device",
];

/// The symbols of the `mpich_ch4_queues` target: the handle objects'
/// (whose request pools it walks) and CH4's queue globals.
pub const CH4_SYMBOLS: &[&str] = &[
    "MPIR_Request_direct",
    "MPIR_Request_mem",
    "MPIR_Datatype_direct",
    "MPIR_All_communicators",
    "MPIDI_global",
    "MPIR_Sendq_head",
    "MPIR_Recvq_head",
    "MPIR_Unexpq_head",
    "MPII_Version_string",
    "MPII_Version_device",
];
