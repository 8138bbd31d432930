//! `libmpiq_mqs.so`: the native message-queue decoders of `mpiq-core`,
//! exported as a message-queue (mqs) library that a parallel debugger loads
//! in place of a vendor's (`libtvmpich.so`).
//!
//! The decoders run unchanged on the debugger's callbacks: memory through
//! `mqs_fetch_data` and `mqs_target_to_host`, widths through
//! `mqs_get_type_sizes`, symbols through `mqs_find_symbol`, types through
//! `mqs_find_type`, `mqs_field_offset` and `mqs_sizeof`, completed for
//! MPICH's CH4 device by what MPICH declares where the callbacks cannot
//! answer (`mpich_declarations`). Open MPI's layouts, and those of an
//! MPICH that hides its globals, come from the layout profile of the build
//! the process runs, which its loaded objects' build-ids pick
//! (`loaded_profile`): Debian's stripped Open MPI and MPICH have no types
//! for a debugger to give, and the profile also places the globals
//! Debian's MPICH hides. The decoder's notes, which the interface
//! has no place for, go to the debugger's `mqs_dprints`. So a debugger gets
//! what the native decoders add over the vendor library: world ranks,
//! `MPI_ANY_SOURCE` as −1 and `MPI_ANY_TAG` as `tag_wild`, lengths in bytes,
//! no reads at offset 0, bounded walks, and an iterator that answers
//! "end of list" (never a crash) past its end.
//!
//! Every entry point catches panics and returns an error code; nothing
//! unwinds into the debugger. Blocks handed to the debugger come from its
//! `mqs_malloc`. The whole queue state of a process is read at
//! `mqs_update_communicator_list` and iterated from that snapshot.
//!
//! The MPI-2 extension: `mqs_setup_job`, `mqs_destroy_job_info` and
//! `mqs_set_process_identity` are implemented (the identity is kept;
//! MPICH's world ranks are already the identities of a job that did not
//! spawn). MPICH keeps no record of spawned processes that a debugger could
//! read from a process, so `mqs_setup_new_process_iterator` answers
//! `mqs_no_information` and `next_new_process` `mqs_end_of_list`.
//!
//! See `docs/mqs-library.md` for how to make a debugger load it.
//!
//! ```
//! // The version a debugger checks before anything else.
//! assert_eq!(mpiq_mqs::mqs_version_compatibility(), 3);
//! assert_eq!(mpiq_mqs::mqs_dll_taddr_width() as usize, std::mem::size_of::<std::ffi::c_ulong>());
//! ```

#![allow(unsafe_code)]

mod callback_target;
mod communicators;
mod declared_layouts;
mod host_abi;
mod image;
mod job;
mod loaded_profile;
mod mpich_declarations;
mod operations;
mod process;
mod state;

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::mem::size_of;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

use mpiq_core::mqs_abi::{MqsTaddr, MQS_COMPATIBILITY_MPI2};

use host_abi::HostBasic;
use state::{basic, BASIC, LAST_DETAIL};

// The entry points, by what they serve: an image, a process, the
// communicator iterator, the operation iterators, and a job (MPI-2). Each
// catches its panics (`guarded`).
pub use communicators::{
    mqs_get_comm_group, mqs_get_communicator, mqs_next_communicator,
    mqs_setup_communicator_iterator,
};
pub use image::{mqs_destroy_image_info, mqs_image_has_queues, mqs_setup_image};
pub use job::{
    mqs_destroy_job_info, mqs_set_process_identity, mqs_setup_job, mqs_setup_new_process_iterator,
    next_new_process,
};
pub use operations::{mqs_next_operation, mqs_setup_operation_iterator};
pub use process::{
    mqs_destroy_process_info, mqs_process_has_queues, mqs_setup_process,
    mqs_update_communicator_list,
};

/// A panic was caught inside the library.
pub const ERR_PANIC: c_int = 100;
/// The debugger passed an image or process this library has not set up.
pub const ERR_NOT_SET_UP: c_int = 101;
/// A NULL pointer where a result goes.
pub const ERR_NULL: c_int = 102;
/// An operation class other than the interface's three.
pub const ERR_BAD_OP_CLASS: c_int = 103;
/// No current communicator: the iterator is past its end or not set up.
pub const ERR_NO_COMMUNICATOR: c_int = 104;
/// Reading the queues failed; `mqs_dll_error_string` gives the detail.
pub const ERR_DECODE: c_int = 105;
/// This process's MPI has no decoder here; `mqs_dll_error_string` says why.
pub const ERR_UNSUPPORTED: c_int = 106;
/// `mqs_update_communicator_list` has not been called for the process.
pub const ERR_NOT_UPDATED: c_int = 107;
/// The debugger's `mqs_malloc` returned NULL, or the basic callbacks were
/// never given.
pub const ERR_NO_MEMORY: c_int = 108;
/// The debugger's callbacks do not describe the target's widths and byte
/// order.
pub const ERR_NO_ABI: c_int = 109;

static VERSION: &CStr =
    c"mpiq_mqs 0.1.0: native MPICH (CH3, and CH4 of MPICH 4.0) and Open MPI (ob1) message queues from the mpidd workspace";

/// Runs an entry point's body; a panic becomes [`ERR_PANIC`].
pub(crate) fn guarded(body: impl FnOnce() -> c_int) -> c_int {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(ERR_PANIC)
}

/// Keeps `detail` for `mqs_dll_error_string` and returns `code`.
pub(crate) fn fail(code: c_int, detail: impl Into<String>) -> c_int {
    let text = detail.into().replace('\0', " ");
    if let Ok(mut last) = LAST_DETAIL.lock() {
        *last = CString::new(text).ok();
    }
    code
}

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

/// Text for one of this library's error codes. For [`ERR_DECODE`] and
/// [`ERR_UNSUPPORTED`] it is the detail of the latest such failure (the
/// interface passes only the code).
#[no_mangle]
pub extern "C" fn mqs_dll_error_string(code: c_int) -> *const c_char {
    let fixed: &'static CStr = match code {
        ERR_PANIC => c"mpiq_mqs: internal error (caught; nothing unwound into the debugger)",
        ERR_NOT_SET_UP => {
            c"mpiq_mqs: the debugger passed an image or process this library has not set up"
        }
        ERR_NULL => c"mpiq_mqs: a NULL pointer was passed where a result goes",
        ERR_BAD_OP_CLASS => c"mpiq_mqs: unknown operation class",
        ERR_NO_COMMUNICATOR => c"mpiq_mqs: no current communicator",
        ERR_NOT_UPDATED => c"mpiq_mqs: mqs_update_communicator_list has not been called",
        ERR_NO_MEMORY => c"mpiq_mqs: no memory from the debugger (or no basic callbacks)",
        ERR_NO_ABI => {
            c"mpiq_mqs: the debugger's callbacks do not give the target's widths and byte order"
        }
        ERR_DECODE | ERR_UNSUPPORTED => {
            if let Ok(last) = LAST_DETAIL.lock() {
                if let Some(text) = last.as_ref() {
                    // The string lives in the static until the next failure
                    // replaces it, as the interface's users expect of
                    // error strings.
                    return text.as_ptr();
                }
            }
            c"mpiq_mqs: reading the queues failed"
        }
        _ => c"mpiq_mqs: unknown error code",
    };
    fixed.as_ptr()
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

/// Hands a line to the debugger's `mqs_dprints`, if it gave one.
pub(crate) fn debug_print(text: &str) {
    let Some(print) = basic().and_then(|b| b.dprints) else {
        return;
    };
    if let Ok(line) = CString::new(text.replace('\0', " ")) {
        // SAFETY: the debugger's callback, given a NUL-terminated string it
        // only reads during the call.
        unsafe { print(line.as_ptr()) };
    }
}
