//! The MPI-2 extension: a job's state, the debugger's number for a
//! process, and the (empty) iterator of spawned processes.

use std::ffi::{c_int, c_void};

use mpiq_core::mqs_abi::{
    MqsJob, MqsProcess, MqsProcessLocation, MQS_END_OF_LIST, MQS_NO_INFORMATION, MQS_OK,
};

use crate::boundary::{guarded, ERR_NOT_SET_UP, ERR_NO_MEMORY};
use crate::host_abi::HostJob;
use crate::state::{basic, host_box, host_drop, process_info, JobInfo};

/// Sets up per-job state (MPI-2).
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_setup_job(job: *mut MqsJob, callbacks: *const c_void) -> c_int {
    guarded(|| {
        let Some(put) = basic().and_then(|b| b.put_job_info) else {
            return ERR_NO_MEMORY;
        };
        let Some(info) = host_box(JobInfo {
            callbacks: callbacks as *const HostJob,
        }) else {
            return ERR_NO_MEMORY;
        };
        // SAFETY: the debugger's own callback, storing our block.
        unsafe { put(job, info as *mut c_void) };
        MQS_OK
    })
}

/// Frees per-job state (MPI-2).
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_destroy_job_info(info: *mut c_void) -> c_int {
    guarded(|| {
        // SAFETY: the block mqs_setup_job made, handed back once.
        unsafe { host_drop(info as *mut JobInfo) };
        MQS_OK
    })
}

/// Records the debugger's number for the process (MPI-2).
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_set_process_identity(
    process: *mut MqsProcess,
    identity: c_int,
) -> c_int {
    guarded(|| match process_info(process) {
        Some(info) => {
            info.identity = Some(identity);
            MQS_OK
        }
        None => ERR_NOT_SET_UP,
    })
}

/// MPICH keeps no record of spawned processes a debugger could read from a
/// process: no information.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_setup_new_process_iterator(process: *mut MqsProcess) -> c_int {
    guarded(|| match process_info(process) {
        Some(_) => MQS_NO_INFORMATION,
        None => ERR_NOT_SET_UP,
    })
}

/// See [`mqs_setup_new_process_iterator`]: there is never a next one.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn next_new_process(
    process: *mut MqsProcess,
    _location: *mut MqsProcessLocation,
) -> c_int {
    guarded(|| match process_info(process) {
        Some(_) => MQS_END_OF_LIST,
        None => ERR_NOT_SET_UP,
    })
}
