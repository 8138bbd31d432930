//! What every entry point shares at the C boundary: the error codes,
//! catching panics (nothing unwinds into the debugger), the detail of the
//! last failure for `mqs_dll_error_string`, and the debugger's log.

use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::state::{basic, LAST_DETAIL};

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
