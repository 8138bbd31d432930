//! The entry points a debugger calls first: the library's version and
//! interface version, the width of its target addresses, and the basic
//! callbacks it keeps for its whole life.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::mem::size_of;
use std::sync::atomic::Ordering;

use mpiq_core::mqs_abi::{MqsTaddr, MQS_COMPATIBILITY_MPI2};

use crate::host_abi::HostBasic;
use crate::state::BASIC;

static VERSION: &CStr =
    c"mpiq_mqs 0.1.0: native MPICH (CH3, and CH4 of MPICH 4.0) and Open MPI (ob1) message queues from the mpidd workspace";

/// The version string a debugger shows.
#[no_mangle]
pub extern "C" fn mqs_version_string() -> *const c_char {
    VERSION.as_ptr()
}

/// The interface version: 3, with the MPI-2 extensions.
#[no_mangle]
pub extern "C" fn mqs_version_compatibility() -> c_int {
    MQS_COMPATIBILITY_MPI2
}

/// `sizeof (mqs_taddr_t)` as this library was built.
#[no_mangle]
pub extern "C" fn mqs_dll_taddr_width() -> c_int {
    size_of::<MqsTaddr>() as c_int
}

/// Keeps the debugger's basic callbacks (the table must outlive the
/// library, as the interface says).
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_setup_basic_callbacks(callbacks: *const c_void) {
    BASIC.store(callbacks as *mut HostBasic, Ordering::Release);
}
