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
mod declared_layouts;
mod host_abi;
mod loaded_profile;
mod mpich_declarations;
mod state;

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::mem::size_of;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::Ordering;

use mpidd_read::Limits;
use mpidd_read::TargetParts;
use mpiq_core::model::{Queue, QueueKind};
use mpiq_core::mqs_abi::{
    MqsCommunicator, MqsImage, MqsJob, MqsPendingOperation, MqsProcess, MqsProcessLocation,
    MqsTaddr, MqsTword, MQS_COMPATIBILITY_MPI2, MQS_END_OF_LIST, MQS_NO_INFORMATION, MQS_OK,
};
use mpiq_core::{build_decoder, identify, DecoderKind};

use callback_target::{probe_abi, CallbackImage, CallbackMemory, TypeCache};
use declared_layouts::DeclaredLayouts;
use host_abi::{HostBasic, HostImage, HostJob, HostProcess};
use state::{basic, host_box, host_drop, ImageInfo, JobInfo, ProcessInfo, BASIC, LAST_DETAIL};

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
fn guarded(body: impl FnOnce() -> c_int) -> c_int {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(ERR_PANIC)
}

/// Keeps `detail` for `mqs_dll_error_string` and returns `code`.
fn fail(code: c_int, detail: impl Into<String>) -> c_int {
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

fn image_info<'a>(image: *mut MqsImage) -> Option<&'a mut ImageInfo> {
    let get = basic()?.get_image_info?;
    // SAFETY: the debugger returns what mqs_setup_image stored, or NULL for
    // an image not set up.
    unsafe { (get(image) as *mut ImageInfo).as_mut() }
}

fn process_info<'a>(process: *mut MqsProcess) -> Option<&'a mut ProcessInfo> {
    let get = basic()?.get_process_info?;
    // SAFETY: as for image_info.
    unsafe { (get(process) as *mut ProcessInfo).as_mut() }
}

/// The communicator the iterator is at, in the latest snapshot.
fn current_communicator(info: &ProcessInfo) -> Option<&mpiq_core::model::Communicator> {
    info.snapshot
        .as_ref()
        .and_then(|s| s.communicators.get(info.communicator))
}

/// The image a process is an instance of, and what the library keeps for
/// it, through the debugger's `mqs_get_image`.
fn image_of<'a>(
    process: *mut MqsProcess,
    callbacks: &HostProcess,
) -> Option<(*mut MqsImage, &'a mut ImageInfo)> {
    let get_image = callbacks.get_image?;
    // SAFETY: the debugger's callback for this process.
    let image = unsafe { get_image(process) };
    Some((image, image_info(image)?))
}

/// Sets up per-image state.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_setup_image(image: *mut MqsImage, callbacks: *const c_void) -> c_int {
    guarded(|| {
        let Some(put) = basic().and_then(|b| b.put_image_info) else {
            return ERR_NO_MEMORY;
        };
        let Some(info) = host_box(ImageInfo {
            callbacks: callbacks as *const HostImage,
            message: CString::default(),
            types: TypeCache::default(),
        }) else {
            return ERR_NO_MEMORY;
        };
        // SAFETY: the debugger's own callback, storing our block.
        unsafe { put(image, info as *mut c_void) };
        MQS_OK
    })
}

/// Whether the image has MPICH's message queues; the message (a printf
/// format for the image's name) says exactly what is missing if not.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_image_has_queues(
    image: *mut MqsImage,
    message: *mut *const c_char,
) -> c_int {
    guarded(|| {
        let Some(info) = image_info(image) else {
            return ERR_NOT_SET_UP;
        };
        let source = CallbackImage {
            image,
            callbacks: info.callbacks,
            sizes: None,
            cache: &info.types,
        };
        let (code, text) = image_check(&source);
        info.message = CString::new(text.replace('\0', " ")).unwrap_or_default();
        if code != MQS_OK {
            fail(
                code,
                info.message.to_string_lossy().replace("%s", "the image"),
            );
        }
        if !message.is_null() {
            // SAFETY: the debugger's variable for the message, checked for
            // NULL; the text lives in the image info.
            unsafe { message.write(info.message.as_ptr()) };
        }
        code
    })
}

/// Whether an image has what a decoder needs, and the message saying so
/// (a printf format for the image's name).
fn image_check(source: &CallbackImage<'_>) -> (c_int, String) {
    use mpidd_read::SymbolSource;
    let fix = "Build MPICH with --enable-debuginfo and keep its debug info (-g, not stripped), \
               or give the debugger its debug files";
    if source.lookup("ompi_mpi_communicators").is_some() {
        // Which build it is, and so the layouts, can only be told from a
        // process's memory: checked at mqs_setup_process.
        return if source.lookup("mca_pml").is_some() {
            (
                MQS_OK,
                "mpiq_mqs: %s has Open MPI's message queues (ob1)".to_string(),
            )
        } else {
            (
                ERR_UNSUPPORTED,
                "mpiq_mqs: %s is Open MPI, but the debugger's mqs_find_symbol does not find its \
                 mca_pml, where the queues start"
                    .to_string(),
            )
        };
    }
    if without_debugger_support(source) {
        // Which build it is, and whether a profile describes it, can only
        // be told from a process's memory: checked at mqs_setup_process.
        return (
            MQS_OK,
            "mpiq_mqs: %s is MPICH built without debugger support: it is read through a \
             layout profile of its build, chosen for each process"
                .to_string(),
        );
    }
    if source.lookup("MPII_Version_string").is_none() {
        return (
            ERR_UNSUPPORTED,
            "mpiq_mqs: %s is neither MPICH (it has no MPII_Version_string) nor Open MPI (no \
             ompi_mpi_communicators): this library reads their queues only"
                .to_string(),
        );
    }
    let types = DeclaredLayouts { callbacks: source };
    // CH4 keeps its global state in MPIDI_global, CH3 in MPIDI_Process.
    if source.lookup("MPIDI_global").is_some() {
        // Member sizes need the target's int and pointer sizes, which come
        // with a process: here the symbols and the debugger's knowledge of
        // the types the CH4 decoder starts from are checked, the rest at
        // mqs_setup_process.
        let mut missing: Vec<String> = ["MPIR_All_communicators", "MPIR_Request_mem"]
            .into_iter()
            .filter(|s| source.lookup(s).is_none())
            .map(|s| format!("the symbol {s}"))
            .collect();
        for ty in [
            "MPIR_Comm_list",
            "MPIR_Comm",
            "MPIR_Request",
            "MPIDI_CH4_Global_t",
            "MPIDI_Devcomm_t",
            "MPIDI_Devreq_t",
            "MPIR_Object_alloc_t",
        ] {
            if let Err(e) = mpidd_read::Layouts::size_of(&types, ty) {
                missing.push(format!("the {e}"));
            }
        }
        return if missing.is_empty() {
            (
                MQS_OK,
                "mpiq_mqs: %s has MPICH's CH4 message queues".to_string(),
            )
        } else {
            (
                ERR_UNSUPPORTED,
                format!(
                    "mpiq_mqs: %s lacks what MPICH's CH4 message queues need: {}. {fix}",
                    missing.join("; ").replace('%', "%%")
                ),
            )
        };
    }
    let missing = DecoderKind::MpichCh3.missing_layouts(&types);
    if missing.is_empty() {
        (
            MQS_OK,
            "mpiq_mqs: %s has MPICH's message queues".to_string(),
        )
    } else {
        let missing: Vec<String> = missing.iter().map(|e| format!("the {e}")).collect();
        (
            ERR_UNSUPPORTED,
            format!(
                "mpiq_mqs: %s lacks what MPICH's message queues need: {}. {fix}",
                missing.join("; ").replace('%', "%%")
            ),
        )
    }
}

/// Frees per-image state.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_destroy_image_info(info: *mut c_void) {
    let _ = guarded(|| {
        // SAFETY: the block mqs_setup_image made, handed back once.
        unsafe { host_drop(info as *mut ImageInfo) };
        MQS_OK
    });
}

/// Sets up per-process state: the target's ABI from the callbacks, and the
/// decoder for its MPI.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_setup_process(
    process: *mut MqsProcess,
    callbacks: *const c_void,
) -> c_int {
    guarded(|| {
        let table = callbacks as *const HostProcess;
        // SAFETY: the debugger's process table, checked for NULL.
        let Some(cb) = (unsafe { table.as_ref() }) else {
            return ERR_NULL;
        };
        let Some((image, image_info)) = image_of(process, cb) else {
            return ERR_NOT_SET_UP;
        };
        // SAFETY: the image table was given at mqs_setup_image.
        let Some(image_cb) = (unsafe { image_info.callbacks.as_ref() }) else {
            return ERR_NOT_SET_UP;
        };
        // SAFETY: both tables are the debugger's for this process.
        let Some((abi, sizes)) = (unsafe { probe_abi(image_cb, cb, process) }) else {
            return ERR_NO_ABI;
        };
        let limits = Limits::default();
        let memory = CallbackMemory {
            process,
            callbacks: table,
            abi,
        };
        let source = CallbackImage {
            image,
            callbacks: image_info.callbacks,
            sizes: Some(sizes),
            cache: &image_info.types,
        };
        let declared = DeclaredLayouts { callbacks: &source };
        // The layouts come from the profile of the build when the
        // debugger's types cannot answer: Open MPI's always (the interface
        // has no member widths or enumerators for it), MPICH's when it was
        // built without debugger support (Debian's, stripped, whose profile
        // also places the globals it hides).
        let loaded = match identify(&memory, &source, &limits) {
            Ok(found) if found.kind == DecoderKind::OmpiOb1 => loaded_profile::loaded_profile(
                &memory,
                &source,
                found.kind,
                &["libmpi"],
                &found.version,
                &limits,
            )
            .map(Some),
            Ok(found) if without_debugger_support(&source) => loaded_profile::loaded_profile(
                &memory,
                &source,
                found.kind,
                &["libmpich", "libmpi"],
                &found.version,
                &limits,
            )
            .map(Some),
            _ => Ok(None),
        };
        let (decoder, profile, profile_symbols) = match loaded {
            Ok(loaded) => {
                let (profile, profile_symbols) = match loaded {
                    Some(l) => (Some(l.profile), l.symbols),
                    None => (None, Default::default()),
                };
                let symbols = loaded_profile::WithProfileSymbols {
                    debugger: &source,
                    profile: &profile_symbols,
                };
                let target = TargetParts {
                    memory: &memory,
                    symbols: &symbols,
                    layouts: layouts(&profile, &declared),
                };
                let decoder = build_decoder(&target, &limits).map_err(|e| e.to_string());
                (decoder, profile, profile_symbols)
            }
            Err(why) => (Err(why), None, Default::default()),
        };
        if let Some(p) = &profile {
            debug_print(&format!(
                "mpiq_mqs: the layouts come from the profile of {} {} ({})",
                p.identity.implementation, p.identity.version, p.identity.build
            ));
        }
        let Some(put) = basic().and_then(|b| b.put_process_info) else {
            return ERR_NO_MEMORY;
        };
        let Some(info) = host_box(ProcessInfo {
            callbacks: table,
            abi,
            sizes,
            decoder,
            profile,
            profile_symbols,
            snapshot: None,
            communicator: 0,
            operation: None,
            identity: None,
            limits,
        }) else {
            return ERR_NO_MEMORY;
        };
        // SAFETY: the debugger's own callback, storing our block.
        unsafe { put(process, info as *mut c_void) };
        MQS_OK
    })
}

/// Whether an image is an MPICH built without debugger support (Debian's):
/// no `MPIR_All_communicators`, and, stripped, its other globals hidden
/// and no types for a debugger to give. Only a profile of its build,
/// chosen per process, can read it.
fn without_debugger_support(source: &dyn mpidd_read::SymbolSource) -> bool {
    source.lookup("MPII_Version_string").is_some()
        && source.lookup("MPIR_All_communicators").is_none()
}

/// What a process's decoder reads its layouts from: the profile chosen
/// for it, else the debugger's types completed by MPICH's declarations.
fn layouts<'a>(
    profile: &'a Option<mpidd_read::LayoutProfile>,
    declared: &'a dyn mpidd_read::Layouts,
) -> &'a dyn mpidd_read::Layouts {
    match profile {
        Some(p) => &p.layouts,
        None => declared,
    }
}

/// Whether the process's MPI can be read; the message says why not.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_process_has_queues(
    process: *mut MqsProcess,
    message: *mut *const c_char,
) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        match &info.decoder {
            Ok(_) => {
                if !message.is_null() {
                    // SAFETY: the debugger's variable, checked for NULL.
                    unsafe { message.write(ptr::null()) };
                }
                MQS_OK
            }
            Err(why) => {
                let code = fail(ERR_UNSUPPORTED, format!("mpiq_mqs: {why}"));
                if !message.is_null() {
                    // SAFETY: as above; the text lives in LAST_DETAIL until
                    // the next failure.
                    unsafe { message.write(mqs_dll_error_string(code)) };
                }
                code
            }
        }
    })
}

/// Frees per-process state.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_destroy_process_info(info: *mut c_void) {
    let _ = guarded(|| {
        // SAFETY: the block mqs_setup_process made, handed back once.
        unsafe { host_drop(info as *mut ProcessInfo) };
        MQS_OK
    });
}

/// Reads the process's communicators and all their queues into a snapshot
/// the iterators then walk.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_update_communicator_list(process: *mut MqsProcess) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        let decoder = match &info.decoder {
            Ok(d) => d,
            Err(why) => return fail(ERR_UNSUPPORTED, format!("mpiq_mqs: {why}")),
        };
        // SAFETY: the process table given at setup.
        let Some(cb) = (unsafe { info.callbacks.as_ref() }) else {
            return ERR_NOT_SET_UP;
        };
        let Some((image, image_info)) = image_of(process, cb) else {
            return ERR_NOT_SET_UP;
        };
        let memory = CallbackMemory {
            process,
            callbacks: info.callbacks,
            abi: info.abi,
        };
        let source = CallbackImage {
            image,
            callbacks: image_info.callbacks,
            sizes: Some(info.sizes),
            cache: &image_info.types,
        };
        let declared = DeclaredLayouts { callbacks: &source };
        let symbols = loaded_profile::WithProfileSymbols {
            debugger: &source,
            profile: &info.profile_symbols,
        };
        let target = TargetParts {
            memory: &memory,
            symbols: &symbols,
            layouts: layouts(&info.profile, &declared),
        };
        match decoder.read_queues(&target, &info.limits) {
            Ok(queues) => {
                // What the interface has no place for (receives whose
                // communicator is unknown, what could not be read) goes to
                // the debugger's log.
                for note in &queues.diagnostics {
                    debug_print(&format!("mpiq_mqs: {note}"));
                }
                info.snapshot = Some(queues);
                info.communicator = 0;
                info.operation = None;
                MQS_OK
            }
            Err(e) => {
                info.snapshot = None;
                fail(ERR_DECODE, format!("mpiq_mqs: {e}"))
            }
        }
    })
}

/// Hands a line to the debugger's `mqs_dprints`, if it gave one.
fn debug_print(text: &str) {
    let Some(print) = basic().and_then(|b| b.dprints) else {
        return;
    };
    if let Ok(line) = CString::new(text.replace('\0', " ")) {
        // SAFETY: the debugger's callback, given a NUL-terminated string it
        // only reads during the call.
        unsafe { print(line.as_ptr()) };
    }
}

/// Starts at the first communicator.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_setup_communicator_iterator(process: *mut MqsProcess) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        let Some(snapshot) = &info.snapshot else {
            return ERR_NOT_UPDATED;
        };
        info.communicator = 0;
        info.operation = None;
        if snapshot.communicators.is_empty() {
            MQS_END_OF_LIST
        } else {
            MQS_OK
        }
    })
}

fn copy_text(dst: &mut [c_char], text: &str) {
    let bytes = text.as_bytes();
    let n = bytes.len().min(dst.len().saturating_sub(1));
    for (d, &b) in dst.iter_mut().zip(&bytes[..n]) {
        *d = b as c_char;
    }
    for d in &mut dst[n..] {
        *d = 0;
    }
}

/// The current communicator.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_get_communicator(
    process: *mut MqsProcess,
    out: *mut MqsCommunicator,
) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        if out.is_null() {
            return ERR_NULL;
        }
        let Some(comm) = current_communicator(info) else {
            return ERR_NO_COMMUNICATOR;
        };
        let mut name = [0 as c_char; 64];
        copy_text(&mut name, &comm.name);
        let value = MqsCommunicator {
            unique_id: comm.unique_id as MqsTaddr,
            local_rank: comm.local_rank as MqsTword,
            size: comm.size as MqsTword,
            name,
        };
        // SAFETY: the debugger's struct, checked for NULL.
        unsafe { out.write(value) };
        MQS_OK
    })
}

/// The world rank of each member of the current communicator, into an
/// array of its size.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_get_comm_group(process: *mut MqsProcess, group: *mut c_int) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        if group.is_null() {
            return ERR_NULL;
        }
        let Some(comm) = current_communicator(info) else {
            return ERR_NO_COMMUNICATOR;
        };
        let Some(ranks) = &comm.group else {
            return MQS_NO_INFORMATION;
        };
        // The debugger sized its array by the communicator's size.
        let n = usize::try_from(comm.size).unwrap_or(0).min(ranks.len());
        for (i, &r) in ranks.iter().take(n).enumerate() {
            // SAFETY: index below the communicator's size, which the
            // interface says the array holds.
            unsafe { group.add(i).write(r as c_int) };
        }
        MQS_OK
    })
}

/// Moves to the next communicator; past the last it keeps answering
/// `mqs_end_of_list`.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_next_communicator(process: *mut MqsProcess) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        let Some(snapshot) = &info.snapshot else {
            return ERR_NOT_UPDATED;
        };
        let len = snapshot.communicators.len();
        info.communicator = (info.communicator + 1).min(len);
        info.operation = None;
        if info.communicator < len {
            MQS_OK
        } else {
            MQS_END_OF_LIST
        }
    })
}

/// Starts one of the current communicator's three queues.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_setup_operation_iterator(
    process: *mut MqsProcess,
    op_class: c_int,
) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        let Some(kind) = QueueKind::ALL
            .into_iter()
            .find(|k| k.op_class() == op_class)
        else {
            return ERR_BAD_OP_CLASS;
        };
        let Some(comm) = current_communicator(info) else {
            return ERR_NO_COMMUNICATOR;
        };
        let code = match comm.queue(kind) {
            Queue::NoInformation => MQS_NO_INFORMATION,
            Queue::Failed { error, .. } => fail(ERR_DECODE, format!("mpiq_mqs: {error}")),
            Queue::Read { operations, .. } if operations.is_empty() => MQS_END_OF_LIST,
            Queue::Read { .. } => MQS_OK,
        };
        info.operation = (code == MQS_OK || code == MQS_END_OF_LIST).then_some((kind, 0));
        code
    })
}

/// The next operation of the current queue.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_next_operation(
    process: *mut MqsProcess,
    out: *mut MqsPendingOperation,
) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        if out.is_null() {
            return ERR_NULL;
        }
        let Some((kind, index)) = info.operation else {
            return MQS_END_OF_LIST;
        };
        let Some(comm) = current_communicator(info) else {
            return ERR_NO_COMMUNICATOR;
        };
        let Some(op) = comm.queue(kind).operations().get(index) else {
            return MQS_END_OF_LIST;
        };
        let mut extra = [[0 as c_char; 64]; 5];
        for (line, text) in extra.iter_mut().zip(&op.extra_text) {
            copy_text(line, text);
        }
        let value = MqsPendingOperation {
            status: match op.status {
                mpiq_core::model::OperationStatus::Pending => 0,
                mpiq_core::model::OperationStatus::Matched => 1,
                mpiq_core::model::OperationStatus::Complete => 2,
                mpiq_core::model::OperationStatus::Unknown(n) => n as c_int,
            },
            desired_local_rank: op.desired_local_rank as MqsTword,
            desired_global_rank: op.desired_global_rank as MqsTword,
            tag_wild: c_int::from(op.tag_wild),
            desired_tag: op.desired_tag as MqsTword,
            desired_length: op.desired_length as MqsTword,
            system_buffer: c_int::from(op.system_buffer),
            buffer: op.buffer as MqsTaddr,
            actual_local_rank: op.actual_local_rank as MqsTword,
            actual_global_rank: op.actual_global_rank as MqsTword,
            actual_tag: op.actual_tag as MqsTword,
            actual_length: op.actual_length as MqsTword,
            extra_text: extra,
        };
        // SAFETY: the debugger's struct, checked for NULL.
        unsafe { out.write(value) };
        info.operation = Some((kind, index + 1));
        MQS_OK
    })
}

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
