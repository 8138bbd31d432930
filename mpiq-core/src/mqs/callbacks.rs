//! The debugger side of the callbacks a message-queue library calls: memory,
//! symbols, types, byte order, heap, and per-image/process/job storage.
//!
//! The opaque `mqs_image`, `mqs_process` and `mqs_job` pointers the library
//! holds are pointers to the states below, which the driver keeps alive
//! while the library runs. Every callback catches panics (nothing unwinds
//! into C) and checks its pointer arguments for NULL, because the library is
//! foreign code.

// `c_long` and `c_ulong` are 32 bits on 32-bit hosts: the conversions that
// are no-ops here are not everywhere.
#![allow(clippy::useless_conversion)]
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::rc::Rc;

use mpidd_read::Layouts;
use mpidd_types::{ByteOrder, TargetAddr};

use crate::mqs::abi::*;
use crate::mqs::target::MqsTarget;

/// A host failure code for `mqs_fetch_data`: the target could not be read.
/// Below `mqs_first_user_code`, so it never collides with a library's own.
pub const HOST_READ_FAILED: c_int = 90;
/// A host failure code: a NULL pointer or a size out of range.
pub const HOST_BAD_ARGUMENT: c_int = 91;
/// A host failure code: no such symbol or function in the target.
pub const HOST_NOT_FOUND: c_int = 92;

/// The most diagnostics one read keeps; a library in a loop of failing
/// lookups must not grow them without bound.
const MAX_DIAGNOSTICS: usize = 256;
/// The longest single `mqs_fetch_data` served; larger asks are refused.
pub(crate) const MAX_FETCH: c_int = 64 << 20;
/// The longest C string taken from a library (names, messages).
pub(crate) const MAX_C_STRING: usize = 4096;

/// Messages gathered while a library runs: what it asked for that the
/// target lacks, what it printed, where reads failed.
#[derive(Default)]
pub(crate) struct Diagnostics {
    seen: HashSet<String>,
    pub(crate) lines: Vec<String>,
    pub(crate) last_read_error: Option<String>,
}

impl Diagnostics {
    pub(crate) fn push(&mut self, line: String) {
        if self.lines.len() < MAX_DIAGNOSTICS && self.seen.insert(line.clone()) {
            self.lines.push(line);
        }
    }
}

pub(crate) type SharedDiagnostics = Rc<RefCell<Diagnostics>>;

/// What an `mqs_type` pointer points to: a type the target's layouts
/// know, by name, and those layouts.
pub(crate) struct TypeEntry<'t> {
    name: String,
    size: u64,
    types: &'t dyn Layouts,
    diagnostics: SharedDiagnostics,
}

/// What an `mqs_image` pointer points to.
pub(crate) struct ImageState<'t> {
    pub(crate) target: &'t MqsTarget<'t>,
    pub(crate) info: Cell<*mut c_void>,
    pub(crate) diagnostics: SharedDiagnostics,
    types: RefCell<HashMap<String, Option<Box<TypeEntry<'t>>>>>,
}

impl<'t> ImageState<'t> {
    pub(crate) fn new(target: &'t MqsTarget<'t>, diagnostics: SharedDiagnostics) -> Self {
        ImageState {
            target,
            info: Cell::new(ptr::null_mut()),
            diagnostics,
            types: RefCell::new(HashMap::new()),
        }
    }
}

/// What an `mqs_process` pointer points to.
pub(crate) struct ProcessState<'t> {
    pub(crate) target: &'t MqsTarget<'t>,
    pub(crate) image: *const ImageState<'t>,
    pub(crate) job: *const JobState,
    pub(crate) info: Cell<*mut c_void>,
    pub(crate) diagnostics: SharedDiagnostics,
    /// Whether the library was built against Open MPI's header, whose
    /// `mqs_target_type_sizes` has two more fields than the others'.
    pub(crate) seven_type_sizes: bool,
}

/// What an `mqs_job` pointer points to (MPI-2 extension): a job of one
/// process, the one being read.
pub(crate) struct JobState {
    pub(crate) info: Cell<*mut c_void>,
    pub(crate) process: Cell<*mut MqsProcess>,
    pub(crate) identity: c_int,
}

/// Runs a callback body, turning a panic into `fallback`.
fn guarded<R>(fallback: R, body: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// # Safety
/// `p` is NULL or a pointer the driver made from a live `ImageState`.
unsafe fn image<'a>(p: *mut MqsImage) -> Option<&'a ImageState<'a>> {
    // SAFETY: the driver hands the library only pointers to ImageStates
    // that outlive every call it makes; NULL is checked by as_ref.
    unsafe { (p as *const ImageState<'a>).as_ref() }
}

/// # Safety
/// `p` is NULL or a pointer the driver made from a live `ProcessState`.
unsafe fn process<'a>(p: *mut MqsProcess) -> Option<&'a ProcessState<'a>> {
    // SAFETY: as for `image`.
    unsafe { (p as *const ProcessState<'a>).as_ref() }
}

/// # Safety
/// `p` is NULL or a pointer the driver made from a live `JobState`.
unsafe fn job<'a>(p: *mut MqsJob) -> Option<&'a JobState> {
    // SAFETY: as for `image`.
    unsafe { (p as *const JobState).as_ref() }
}

/// A NUL-terminated string from the library, read no further than
/// [`MAX_C_STRING`] bytes.
///
/// # Safety
/// `p` is NULL or points to readable memory up to its terminator or the
/// bound.
pub(crate) unsafe fn bounded_c_string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut bytes = Vec::new();
    for i in 0..MAX_C_STRING {
        // SAFETY: the caller promises readable bytes up to the terminator;
        // the loop stops there or at the bound.
        let b = unsafe { *p.add(i) } as u8;
        if b == 0 {
            break;
        }
        bytes.push(b);
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

unsafe extern "C" fn cb_malloc(size: usize) -> *mut c_void {
    // SAFETY: malloc has no preconditions; size 0 is made 1 so a
    // successful call never returns NULL.
    guarded(ptr::null_mut(), || unsafe { libc::malloc(size.max(1)) })
}

unsafe extern "C" fn cb_free(p: *mut c_void) {
    // SAFETY: the library frees only what cb_malloc gave it (free(NULL) is
    // allowed).
    guarded((), || unsafe { libc::free(p) })
}

thread_local! {
    /// Where `mqs_dprints` output goes: the diagnostics of the read running
    /// on this thread (the callback carries no image or process).
    pub(crate) static CURRENT_DIAGNOSTICS: RefCell<Option<SharedDiagnostics>> =
        const { RefCell::new(None) };
}

unsafe extern "C" fn cb_dprints(text: *const c_char) {
    // SAFETY: the library passes a C string; it is read bounded.
    guarded((), || {
        // SAFETY: a C string from the library or the host's own table, read no further than its bound.
        if let Some(line) = unsafe { bounded_c_string(text) } {
            CURRENT_DIAGNOSTICS.with(|current| {
                if let Some(diagnostics) = current.borrow().as_ref() {
                    diagnostics
                        .borrow_mut()
                        .push(format!("library says: {}", line.trim_end()));
                }
            });
        }
    })
}

unsafe extern "C" fn cb_errorstring(code: c_int) -> *const c_char {
    let text: &'static CStr = match code {
        MQS_OK => c"mqs_ok",
        MQS_NO_INFORMATION => c"no information",
        MQS_END_OF_LIST => c"end of list",
        HOST_READ_FAILED => c"the debugger could not read the target's memory there",
        HOST_BAD_ARGUMENT => c"a NULL pointer or a size out of range was passed to the debugger",
        HOST_NOT_FOUND => c"no such symbol in the target",
        _ => c"unknown error code",
    };
    text.as_ptr()
}

unsafe extern "C" fn cb_put_image_info(p: *mut MqsImage, info: *mut c_void) {
    // SAFETY: p comes from the driver (see `image`).
    guarded((), || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        if let Some(state) = unsafe { image(p) } {
            state.info.set(info);
        }
    })
}

unsafe extern "C" fn cb_get_image_info(p: *mut MqsImage) -> *mut c_void {
    // SAFETY: p comes from the driver (see `image`).
    guarded(ptr::null_mut(), || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        unsafe { image(p) }.map_or(ptr::null_mut(), |s| s.info.get())
    })
}

unsafe extern "C" fn cb_put_process_info(p: *mut MqsProcess, info: *mut c_void) {
    // SAFETY: p comes from the driver (see `process`).
    guarded((), || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        if let Some(state) = unsafe { process(p) } {
            state.info.set(info);
        }
    })
}

unsafe extern "C" fn cb_get_process_info(p: *mut MqsProcess) -> *mut c_void {
    // SAFETY: p comes from the driver (see `process`).
    guarded(ptr::null_mut(), || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        unsafe { process(p) }.map_or(ptr::null_mut(), |s| s.info.get())
    })
}

unsafe extern "C" fn cb_put_job_info(p: *mut MqsJob, info: *mut c_void) {
    // SAFETY: p comes from the driver (see `job`).
    guarded((), || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        if let Some(state) = unsafe { job(p) } {
            state.info.set(info);
        }
    })
}

unsafe extern "C" fn cb_get_job_info(p: *mut MqsJob) -> *mut c_void {
    // SAFETY: p comes from the driver (see `job`).
    guarded(ptr::null_mut(), || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        unsafe { job(p) }.map_or(ptr::null_mut(), |s| s.info.get())
    })
}

unsafe extern "C" fn cb_get_type_sizes(p: *mut MqsProcess, out: *mut MqsTargetTypeSizes) {
    // SAFETY: p comes from the driver; out is the library's struct, checked
    // for NULL.
    guarded((), || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        let Some(state) = (unsafe { process(p) }) else {
            return;
        };
        if !out.is_null() {
            let sizes = state.target.type_sizes.to_c();
            let n = if state.seven_type_sizes {
                MqsTargetTypeSizes::C_SIZE_LONG
            } else {
                MqsTargetTypeSizes::C_SIZE_SHORT
            };
            // Only as many bytes as the library's own struct has: the
            // five-field form would be overrun by the seven-field one.
            // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
            unsafe {
                ptr::copy_nonoverlapping(
                    &sizes as *const MqsTargetTypeSizes as *const u8,
                    out as *mut u8,
                    n,
                )
            };
        }
    })
}

fn lookup_symbol(
    state: &ImageState<'_>,
    name: *mut c_char,
    what: &str,
    out: *mut MqsTaddr,
) -> c_int {
    // SAFETY: the library passes a C string; it is read bounded.
    let Some(name) = (unsafe { bounded_c_string(name) }) else {
        return HOST_BAD_ARGUMENT;
    };
    match state.target.symbols.lookup(&name) {
        Some(sym) => {
            if !out.is_null() {
                // SAFETY: out is the library's variable, checked for NULL
                // (the vendor libraries pass NULL just to test presence).
                unsafe { out.write(sym.addr.0 as MqsTaddr) };
            }
            MQS_OK
        }
        None => {
            state.diagnostics.borrow_mut().push(format!(
                "the library looked for the {what} `{name}`, which the target does not define"
            ));
            HOST_NOT_FOUND
        }
    }
}

unsafe extern "C" fn cb_find_function(
    p: *mut MqsImage,
    name: *mut c_char,
    _lang: c_int,
    out: *mut MqsTaddr,
) -> c_int {
    // SAFETY: p comes from the driver (see `image`).
    guarded(HOST_BAD_ARGUMENT, || match unsafe { image(p) } {
        Some(state) => lookup_symbol(state, name, "function", out),
        None => HOST_BAD_ARGUMENT,
    })
}

unsafe extern "C" fn cb_find_symbol(
    p: *mut MqsImage,
    name: *mut c_char,
    out: *mut MqsTaddr,
) -> c_int {
    // SAFETY: p comes from the driver (see `image`).
    guarded(HOST_BAD_ARGUMENT, || match unsafe { image(p) } {
        Some(state) => lookup_symbol(state, name, "symbol", out),
        None => HOST_BAD_ARGUMENT,
    })
}

unsafe extern "C" fn cb_find_type(
    p: *mut MqsImage,
    name: *mut c_char,
    _lang: c_int,
) -> *mut MqsType {
    // SAFETY: p comes from the driver; the name is read bounded.
    guarded(ptr::null_mut(), || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        let Some(state) = (unsafe { image(p) }) else {
            return ptr::null_mut();
        };
        // SAFETY: a C string from the library or the host's own table, read no further than its bound.
        let Some(name) = (unsafe { bounded_c_string(name) }) else {
            return ptr::null_mut();
        };
        let mut types = state.types.borrow_mut();
        let entry =
            types
                .entry(name.clone())
                .or_insert_with(|| match state.target.types.size_of(&name) {
                    Ok(size) => Some(Box::new(TypeEntry {
                        name: name.clone(),
                        size,
                        types: state.target.types,
                        diagnostics: state.diagnostics.clone(),
                    })),
                    Err(e) => {
                        state
                            .diagnostics
                            .borrow_mut()
                            .push(format!("the library asked for the type `{name}`: {e}"));
                        None
                    }
                });
        // The box stays in the map, unmoved, until the image state is
        // dropped after the library's last call.
        entry.as_ref().map_or(ptr::null_mut(), |b| {
            &**b as *const TypeEntry<'_> as *mut MqsType
        })
    })
}

/// # Safety
/// `p` is NULL or a pointer `cb_find_type` returned for a live image.
unsafe fn type_entry<'a>(p: *mut MqsType) -> Option<&'a TypeEntry<'a>> {
    // SAFETY: the library hands back pointers cb_find_type made; they live
    // as long as the image state.
    unsafe { (p as *const TypeEntry<'a>).as_ref() }
}

unsafe extern "C" fn cb_field_offset(t: *mut MqsType, field: *mut c_char) -> c_int {
    // SAFETY: t comes from cb_find_type; the field name is read bounded.
    guarded(-1, || {
        // SAFETY: a type handle cb_find_type returned (see `type_entry`).
        let Some(entry) = (unsafe { type_entry(t) }) else {
            return -1;
        };
        // SAFETY: a C string from the library or the host's own table, read no further than its bound.
        let Some(field) = (unsafe { bounded_c_string(field) }) else {
            return -1;
        };
        match entry.types.member_offset(&entry.name, &field) {
            Ok(offset) => c_int::try_from(offset).unwrap_or(-1),
            Err(e) => {
                entry.diagnostics.borrow_mut().push(format!(
                    "the library asked for the offset of {e}; the debugger answered -1"
                ));
                -1
            }
        }
    })
}

unsafe extern "C" fn cb_sizeof(t: *mut MqsType) -> c_int {
    // SAFETY: t comes from cb_find_type.
    guarded(-1, || {
        // SAFETY: a type handle cb_find_type returned (see `type_entry`).
        unsafe { type_entry(t) }
            .and_then(|e| c_int::try_from(e.size).ok())
            .unwrap_or(-1)
    })
}

unsafe extern "C" fn cb_get_global_rank(p: *mut MqsProcess) -> c_int {
    // SAFETY: p comes from the driver (see `process`).
    guarded(-1, || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        unsafe { process(p) }.map_or(-1, |s| s.target.global_rank)
    })
}

unsafe extern "C" fn cb_get_image(p: *mut MqsProcess) -> *mut MqsImage {
    // SAFETY: p comes from the driver (see `process`).
    guarded(ptr::null_mut(), || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        unsafe { process(p) }.map_or(ptr::null_mut(), |s| s.image as *mut MqsImage)
    })
}

unsafe extern "C" fn cb_fetch_data(
    p: *mut MqsProcess,
    addr: MqsTaddr,
    size: c_int,
    buf: *mut c_void,
) -> c_int {
    // SAFETY: p comes from the driver; buf is the library's buffer of at
    // least `size` bytes, as the interface requires, checked for NULL and a
    // sane size.
    guarded(HOST_BAD_ARGUMENT, || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        let Some(state) = (unsafe { process(p) }) else {
            return HOST_BAD_ARGUMENT;
        };
        if size == 0 {
            return MQS_OK;
        }
        if buf.is_null() || !(1..=MAX_FETCH).contains(&size) {
            state.diagnostics.borrow_mut().push(format!(
                "the library asked to read {size} bytes at {addr:#x} into {buf:p}; refused"
            ));
            return HOST_BAD_ARGUMENT;
        }
        // SAFETY: the library's buffer of `size` bytes, as the interface requires, checked for NULL and size.
        let out = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, size as usize) };
        match state
            .target
            .memory
            // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
            .read_exact(TargetAddr(u64::from(addr)), out, "mqs_fetch_data")
        {
            Ok(()) => MQS_OK,
            Err(e) => {
                state.diagnostics.borrow_mut().last_read_error = Some(e.to_string());
                HOST_READ_FAILED
            }
        }
    })
}

unsafe extern "C" fn cb_target_to_host(
    p: *mut MqsProcess,
    src: *const c_void,
    dst: *mut c_void,
    size: c_int,
) {
    // SAFETY: p comes from the driver; src and dst are the library's
    // buffers of `size` bytes, checked for NULL and a scalar's size.
    guarded((), || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        let Some(state) = (unsafe { process(p) }) else {
            return;
        };
        if src.is_null() || dst.is_null() || !(1..=16).contains(&size) {
            state.diagnostics.borrow_mut().push(format!(
                "the library asked to convert {size} bytes between {src:p} and {dst:p}; refused"
            ));
            return;
        }
        let n = size as usize;
        let mut bytes = [0u8; 16];
        // SAFETY: the library's buffers of `n` bytes, checked for NULL and a scalar's size.
        unsafe { ptr::copy_nonoverlapping(src as *const u8, bytes.as_mut_ptr(), n) };
        let host = if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        };
        if state.target.memory.abi().byte_order != host {
            bytes[..n].reverse();
        }
        // SAFETY: the library's buffers of `n` bytes, checked for NULL and a scalar's size.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), dst as *mut u8, n) };
    })
}

unsafe extern "C" fn cb_get_process_job(p: *mut MqsProcess) -> *mut MqsJob {
    // SAFETY: p comes from the driver (see `process`).
    guarded(ptr::null_mut(), || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        unsafe { process(p) }.map_or(ptr::null_mut(), |s| s.job as *mut MqsJob)
    })
}

unsafe extern "C" fn cb_get_process_identity(j: *mut MqsJob) -> c_int {
    // SAFETY: j comes from the driver (see `job`).
    guarded(MQS_INVALID_PROCESS, || {
        // SAFETY: an opaque pointer this host handed the library (see `image`).
        unsafe { job(j) }.map_or(MQS_INVALID_PROCESS, |s| s.identity)
    })
}

unsafe extern "C" fn cb_get_process(j: *mut MqsJob, index: c_int) -> *mut MqsProcess {
    // SAFETY: j comes from the driver (see `job`).
    guarded(ptr::null_mut(), || match unsafe { job(j) } {
        Some(s) if index == s.identity => s.process.get(),
        _ => ptr::null_mut(),
    })
}

/// The basic callbacks, for `mqs_setup_basic_callbacks`. Static because
/// the library keeps the pointer for as long as it is loaded.
pub(crate) static BASIC_CALLBACKS: MqsBasicCallbacks = MqsBasicCallbacks {
    malloc: cb_malloc,
    free: cb_free,
    dprints: cb_dprints,
    errorstring: cb_errorstring,
    put_image_info: cb_put_image_info,
    get_image_info: cb_get_image_info,
    put_process_info: cb_put_process_info,
    get_process_info: cb_get_process_info,
    put_job_info: cb_put_job_info,
    get_job_info: cb_get_job_info,
};

/// The image callbacks, for `mqs_setup_image`.
pub(crate) static IMAGE_CALLBACKS: MqsImageCallbacks = MqsImageCallbacks {
    get_type_sizes: cb_get_type_sizes,
    find_function: cb_find_function,
    find_symbol: cb_find_symbol,
    find_type: cb_find_type,
    field_offset: cb_field_offset,
    sizeof: cb_sizeof,
};

/// The process callbacks, for `mqs_setup_process`.
pub(crate) static PROCESS_CALLBACKS: MqsProcessCallbacks = MqsProcessCallbacks {
    get_global_rank: cb_get_global_rank,
    get_image: cb_get_image,
    fetch_data: cb_fetch_data,
    target_to_host: cb_target_to_host,
    get_process_job: cb_get_process_job,
    get_process_identity: cb_get_process_identity,
};

/// The job callbacks, for `mqs_setup_job`.
pub(crate) static JOB_CALLBACKS: MqsJobCallbacks = MqsJobCallbacks {
    get_process: cb_get_process,
};
