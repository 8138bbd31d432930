//! The C layout of the message-queue interface, as the interface header
//! (`mpi_interface.h`, installed by MPICH's build) declares it for this host.
//!
//! These are host structures: a message-queue library is a shared object
//! loaded into the debugger, so its `long` and pointers are the host's.
//! Target data never passes through them uncoverted; it crosses as bytes
//! through `mqs_fetch_data` and `mqs_target_to_host`.
//!
//! The callback tables include the MPI-2 job fields at their ends. A
//! library built without `FOR_MPI2` reads only the leading fields, so the
//! longer tables serve both.

use std::ffi::{c_char, c_int, c_long, c_ulong, c_void};

/// `mqs_taddr_t`: wide enough for a target address on this host.
pub type MqsTaddr = c_ulong;
/// `mqs_tword_t`: wide enough for a target word on this host.
pub type MqsTword = c_long;

/// `mqs_ok`.
pub const MQS_OK: c_int = 0;
/// `mqs_no_information`.
pub const MQS_NO_INFORMATION: c_int = 1;
/// `mqs_end_of_list`.
pub const MQS_END_OF_LIST: c_int = 2;
/// `mqs_first_user_code`: codes from here up belong to the library.
pub const MQS_FIRST_USER_CODE: c_int = 100;
/// `MQS_INTERFACE_COMPATIBILITY` of an MPI-1 library.
pub const MQS_COMPATIBILITY_MPI1: c_int = 2;
/// `MQS_INTERFACE_COMPATIBILITY` of a library with the MPI-2 extensions.
pub const MQS_COMPATIBILITY_MPI2: c_int = 3;
/// `mqs_lang_c`.
pub const MQS_LANG_C: c_int = b'c' as c_int;
/// `MQS_INVALID_PROCESS`.
pub const MQS_INVALID_PROCESS: c_int = -1;

/// Opaque `mqs_image`: the host passes a pointer to its own image state.
#[repr(C)]
pub struct MqsImage {
    _private: [u8; 0],
}
/// Opaque `mqs_process`.
#[repr(C)]
pub struct MqsProcess {
    _private: [u8; 0],
}
/// Opaque `mqs_job` (MPI-2 extension).
#[repr(C)]
pub struct MqsJob {
    _private: [u8; 0],
}
/// Opaque `mqs_type`.
#[repr(C)]
pub struct MqsType {
    _private: [u8; 0],
}

/// `mqs_target_type_sizes` in Open MPI's seven-field form. The Etnus and
/// MPICH header has only the first five fields: a library built against it
/// must be given only those (see [`MqsTargetTypeSizes::C_SIZE_SHORT`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MqsTargetTypeSizes {
    /// `sizeof (short)`.
    pub short_size: c_int,
    /// `sizeof (int)`.
    pub int_size: c_int,
    /// `sizeof (long)`.
    pub long_size: c_int,
    /// `sizeof (long long)`.
    pub long_long_size: c_int,
    /// `sizeof (void *)`.
    pub pointer_size: c_int,
    /// `sizeof (bool)` (Open MPI's header only).
    pub bool_size: c_int,
    /// `sizeof (size_t)` (Open MPI's header only).
    pub size_t_size: c_int,
}

impl MqsTargetTypeSizes {
    /// The size of the five-field form of the Etnus and MPICH header.
    pub const C_SIZE_SHORT: usize = 5 * std::mem::size_of::<c_int>();
    /// The size of Open MPI's seven-field form.
    pub const C_SIZE_LONG: usize = 7 * std::mem::size_of::<c_int>();
}

/// `mqs_communicator`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MqsCommunicator {
    /// `unique_id`.
    pub unique_id: MqsTaddr,
    /// `local_rank`.
    pub local_rank: MqsTword,
    /// `size`.
    pub size: MqsTword,
    /// `name`.
    pub name: [c_char; 64],
}

/// `mqs_pending_operation`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MqsPendingOperation {
    /// `status`.
    pub status: c_int,
    /// `desired_local_rank`.
    pub desired_local_rank: MqsTword,
    /// `desired_global_rank`.
    pub desired_global_rank: MqsTword,
    /// `tag_wild`.
    pub tag_wild: c_int,
    /// `desired_tag`.
    pub desired_tag: MqsTword,
    /// `desired_length`.
    pub desired_length: MqsTword,
    /// `system_buffer`.
    pub system_buffer: c_int,
    /// `buffer`.
    pub buffer: MqsTaddr,
    /// `actual_local_rank`.
    pub actual_local_rank: MqsTword,
    /// `actual_global_rank`.
    pub actual_global_rank: MqsTword,
    /// `actual_tag`.
    pub actual_tag: MqsTword,
    /// `actual_length`.
    pub actual_length: MqsTword,
    /// `extra_text`.
    pub extra_text: [[c_char; 64]; 5],
}

/// `mqs_process_location` (MPI-2 extension). Its `image_name` is
/// `FILENAME_MAX` long, which is 4096 in glibc.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MqsProcessLocation {
    /// `pid`.
    pub pid: c_long,
    /// `image_name`.
    pub image_name: [c_char; 4096],
    /// `host_name`.
    pub host_name: [c_char; 64],
}

/// `mqs_malloc_ft`.
pub type MallocFt = unsafe extern "C" fn(usize) -> *mut c_void;
/// `mqs_free_ft`.
pub type FreeFt = unsafe extern "C" fn(*mut c_void);
/// `mqs_dprints_ft`.
pub type DprintsFt = unsafe extern "C" fn(*const c_char);
/// `mqs_errorstring_ft`.
pub type ErrorstringFt = unsafe extern "C" fn(c_int) -> *const c_char;
/// `mqs_put_image_info_ft`.
pub type PutImageInfoFt = unsafe extern "C" fn(*mut MqsImage, *mut c_void);
/// `mqs_get_image_info_ft`.
pub type GetImageInfoFt = unsafe extern "C" fn(*mut MqsImage) -> *mut c_void;
/// `mqs_put_process_info_ft`.
pub type PutProcessInfoFt = unsafe extern "C" fn(*mut MqsProcess, *mut c_void);
/// `mqs_get_process_info_ft`.
pub type GetProcessInfoFt = unsafe extern "C" fn(*mut MqsProcess) -> *mut c_void;
/// `mqs_put_job_info_ft`.
pub type PutJobInfoFt = unsafe extern "C" fn(*mut MqsJob, *mut c_void);
/// `mqs_get_job_info_ft`.
pub type GetJobInfoFt = unsafe extern "C" fn(*mut MqsJob) -> *mut c_void;
/// `mqs_get_type_sizes_ft`.
pub type GetTypeSizesFt = unsafe extern "C" fn(*mut MqsProcess, *mut MqsTargetTypeSizes);
/// `mqs_find_function_ft`.
pub type FindFunctionFt =
    unsafe extern "C" fn(*mut MqsImage, *mut c_char, c_int, *mut MqsTaddr) -> c_int;
/// `mqs_find_symbol_ft`.
pub type FindSymbolFt = unsafe extern "C" fn(*mut MqsImage, *mut c_char, *mut MqsTaddr) -> c_int;
/// `mqs_find_type_ft`.
pub type FindTypeFt = unsafe extern "C" fn(*mut MqsImage, *mut c_char, c_int) -> *mut MqsType;
/// `mqs_field_offset_ft`.
pub type FieldOffsetFt = unsafe extern "C" fn(*mut MqsType, *mut c_char) -> c_int;
/// `mqs_sizeof_ft`.
pub type SizeofFt = unsafe extern "C" fn(*mut MqsType) -> c_int;
/// `mqs_get_global_rank_ft`.
pub type GetGlobalRankFt = unsafe extern "C" fn(*mut MqsProcess) -> c_int;
/// `mqs_get_image_ft`.
pub type GetImageFt = unsafe extern "C" fn(*mut MqsProcess) -> *mut MqsImage;
/// `mqs_fetch_data_ft`.
pub type FetchDataFt = unsafe extern "C" fn(*mut MqsProcess, MqsTaddr, c_int, *mut c_void) -> c_int;
/// `mqs_target_to_host_ft`.
pub type TargetToHostFt = unsafe extern "C" fn(*mut MqsProcess, *const c_void, *mut c_void, c_int);
/// `mqs_get_process_job_ft`.
pub type GetProcessJobFt = unsafe extern "C" fn(*mut MqsProcess) -> *mut MqsJob;
/// `mqs_get_process_identity_ft` (the header declares it on a job).
pub type GetProcessIdentityFt = unsafe extern "C" fn(*mut MqsJob) -> c_int;
/// `mqs_get_process_ft`.
pub type GetProcessFt = unsafe extern "C" fn(*mut MqsJob, c_int) -> *mut MqsProcess;

/// `mqs_basic_callbacks`, with the MPI-2 job fields.
#[repr(C)]
pub struct MqsBasicCallbacks {
    /// `mqs_malloc_fp`.
    pub malloc: MallocFt,
    /// `mqs_free_fp`.
    pub free: FreeFt,
    /// `mqs_dprints_fp`.
    pub dprints: DprintsFt,
    /// `mqs_errorstring_fp`.
    pub errorstring: ErrorstringFt,
    /// `mqs_put_image_info_fp`.
    pub put_image_info: PutImageInfoFt,
    /// `mqs_get_image_info_fp`.
    pub get_image_info: GetImageInfoFt,
    /// `mqs_put_process_info_fp`.
    pub put_process_info: PutProcessInfoFt,
    /// `mqs_get_process_info_fp`.
    pub get_process_info: GetProcessInfoFt,
    /// `mqs_put_job_info_fp` (MPI-2).
    pub put_job_info: PutJobInfoFt,
    /// `mqs_get_job_info_fp` (MPI-2).
    pub get_job_info: GetJobInfoFt,
}

/// `mqs_image_callbacks`.
#[repr(C)]
pub struct MqsImageCallbacks {
    /// `mqs_get_type_sizes_fp`.
    pub get_type_sizes: GetTypeSizesFt,
    /// `mqs_find_function_fp`.
    pub find_function: FindFunctionFt,
    /// `mqs_find_symbol_fp`.
    pub find_symbol: FindSymbolFt,
    /// `mqs_find_type_fp`.
    pub find_type: FindTypeFt,
    /// `mqs_field_offset_fp`.
    pub field_offset: FieldOffsetFt,
    /// `mqs_sizeof_fp`.
    pub sizeof: SizeofFt,
}

/// `mqs_process_callbacks`, with the MPI-2 job fields.
#[repr(C)]
pub struct MqsProcessCallbacks {
    /// `mqs_get_global_rank_fp`.
    pub get_global_rank: GetGlobalRankFt,
    /// `mqs_get_image_fp`.
    pub get_image: GetImageFt,
    /// `mqs_fetch_data_fp`.
    pub fetch_data: FetchDataFt,
    /// `mqs_target_to_host_fp`.
    pub target_to_host: TargetToHostFt,
    /// `mqs_get_process_job_fp` (MPI-2).
    pub get_process_job: GetProcessJobFt,
    /// `mqs_get_process_identity_fp` (MPI-2).
    pub get_process_identity: GetProcessIdentityFt,
}

/// `mqs_job_callbacks` (MPI-2).
#[repr(C)]
pub struct MqsJobCallbacks {
    /// `mqs_get_process_fp`.
    pub get_process: GetProcessFt,
}

/// A fixed-size C character array as text: up to the first NUL, or all of
/// it when there is none, with invalid UTF-8 replaced.
pub fn c_chars_to_string(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .map(|&c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
