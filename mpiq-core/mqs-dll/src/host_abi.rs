//! The callback tables as a library receives them from a debugger.
//!
//! Unlike the host-side tables in `mpiq_core::mqs_abi`, every entry here is
//! an `Option`: a foreign debugger may leave an entry NULL, and a NULL read
//! into a non-nullable function pointer would be undefined behaviour. The
//! layouts are the header's (`mpi_interface.h` with `FOR_MPI2`); the MPI-2
//! entries at the ends are read only on the MPI-2 paths.

use std::ffi::{c_char, c_int, c_void};

use mpiq_core::mqs_abi::{MqsImage, MqsJob, MqsProcess, MqsTaddr, MqsTargetTypeSizes, MqsType};

/// `mqs_basic_callbacks`.
#[repr(C)]
pub struct HostBasic {
    pub malloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    pub free: Option<unsafe extern "C" fn(*mut c_void)>,
    pub dprints: Option<unsafe extern "C" fn(*const c_char)>,
    pub errorstring: Option<unsafe extern "C" fn(c_int) -> *const c_char>,
    pub put_image_info: Option<unsafe extern "C" fn(*mut MqsImage, *mut c_void)>,
    pub get_image_info: Option<unsafe extern "C" fn(*mut MqsImage) -> *mut c_void>,
    pub put_process_info: Option<unsafe extern "C" fn(*mut MqsProcess, *mut c_void)>,
    pub get_process_info: Option<unsafe extern "C" fn(*mut MqsProcess) -> *mut c_void>,
    pub put_job_info: Option<unsafe extern "C" fn(*mut MqsJob, *mut c_void)>,
    pub get_job_info: Option<unsafe extern "C" fn(*mut MqsJob) -> *mut c_void>,
}

/// `mqs_image_callbacks`.
#[repr(C)]
pub struct HostImage {
    pub get_type_sizes: Option<unsafe extern "C" fn(*mut MqsProcess, *mut MqsTargetTypeSizes)>,
    pub find_function:
        Option<unsafe extern "C" fn(*mut MqsImage, *mut c_char, c_int, *mut MqsTaddr) -> c_int>,
    pub find_symbol:
        Option<unsafe extern "C" fn(*mut MqsImage, *mut c_char, *mut MqsTaddr) -> c_int>,
    pub find_type: Option<unsafe extern "C" fn(*mut MqsImage, *mut c_char, c_int) -> *mut MqsType>,
    pub field_offset: Option<unsafe extern "C" fn(*mut MqsType, *mut c_char) -> c_int>,
    pub sizeof: Option<unsafe extern "C" fn(*mut MqsType) -> c_int>,
}

/// `mqs_process_callbacks`.
#[repr(C)]
pub struct HostProcess {
    pub get_global_rank: Option<unsafe extern "C" fn(*mut MqsProcess) -> c_int>,
    pub get_image: Option<unsafe extern "C" fn(*mut MqsProcess) -> *mut MqsImage>,
    pub fetch_data:
        Option<unsafe extern "C" fn(*mut MqsProcess, MqsTaddr, c_int, *mut c_void) -> c_int>,
    pub target_to_host:
        Option<unsafe extern "C" fn(*mut MqsProcess, *const c_void, *mut c_void, c_int)>,
    pub get_process_job: Option<unsafe extern "C" fn(*mut MqsProcess) -> *mut MqsJob>,
    pub get_process_identity: Option<unsafe extern "C" fn(*mut MqsJob) -> c_int>,
}

/// `mqs_job_callbacks`.
#[repr(C)]
pub struct HostJob {
    pub get_process: Option<unsafe extern "C" fn(*mut MqsJob, c_int) -> *mut MqsProcess>,
}
