//! The entry points of a process: setting it up (the target's ABI from
//! the debugger's callbacks, the layouts, the decoder for its MPI),
//! whether it can be read, reading its queues into the snapshot the
//! iterators walk, and freeing what the library keeps for it.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;

use mpidd_read::{LayeredLayouts, LayoutOrigin, LayoutTable, Limits, TargetParts};
use mpiq_core::mqs_abi::{MqsProcess, MQS_OK};
use mpiq_core::{build_decoder, identify, DecoderKind};

use crate::boundary::{
    debug_print, fail, guarded, mqs_dll_error_string, ERR_DECODE, ERR_NOT_SET_UP, ERR_NO_ABI,
    ERR_NO_MEMORY, ERR_NULL, ERR_UNSUPPORTED,
};
use crate::callback_target::{probe_abi, CallbackImage, CallbackMemory};
use crate::declared_layouts::DeclaredLayouts;
use crate::host_abi::HostProcess;
use crate::image::without_debugger_support;
use crate::loaded_profile;
use crate::state::{basic, host_box, host_drop, image_of, process_info, ProcessInfo};

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
            Ok(found) if matches!(found.kind, DecoderKind::OmpiOb1 | DecoderKind::OmpiUcx) => {
                loaded_profile::loaded_profile(
                    &memory,
                    &source,
                    found.kind,
                    &["libmpi"],
                    &found.version,
                    &limits,
                )
                .map(Some)
            }
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
        // A debug build's own types come from the debugger; the libraries
        // under it (UCX) still need the profiles of their builds.
        let companions = match (&loaded, identify(&memory, &source, &limits)) {
            (Ok(None), Ok(_)) => loaded_profile::companion_layouts(
                &memory,
                &source,
                &["libmpich", "libmpi"],
                &limits,
            )
            .unwrap_or_else(|why| {
                debug_print(&format!(
                    "mpiq_mqs: the layouts of the libraries under MPI (UCX) are not read: {why}"
                ));
                LayoutTable::default()
            }),
            _ => LayoutTable::default(),
        };
        let (decoder, profile, profile_symbols, origin) = match loaded {
            Ok(loaded) => {
                let (profile, profile_symbols, origin) = match loaded {
                    Some(l) => (Some(l.profile), l.symbols, Some(l.origin)),
                    None => (None, Default::default(), None),
                };
                let symbols = loaded_profile::WithProfileSymbols {
                    debugger: &source,
                    profile: &profile_symbols,
                };
                let target = TargetParts {
                    memory: &memory,
                    symbols: &symbols,
                    layouts: &layouts(&profile, &declared, &companions),
                };
                // A profile is chosen by the build's key alone, or by the
                // release family the library states; the objects every
                // MPI process knows must read as what they are through it
                // before it is used.
                let refused = profile
                    .as_ref()
                    .zip(origin.as_ref())
                    .and_then(|(p, origin)| {
                        mpihandles::check_layouts(&memory, &symbols, &p.layouts, &limits)
                            .err()
                            .map(|why| {
                                format!(
                                    "{} was not used, because it does not read this process: {why}",
                                    origin.source_text()
                                )
                            })
                    });
                let decoder = match refused {
                    Some(why) => Err(why),
                    None => build_decoder(&target, &limits).map_err(|e| e.to_string()),
                };
                (decoder, profile, profile_symbols, origin)
            }
            Err(why) => (Err(why), None, Default::default(), None),
        };
        match (&profile, &origin) {
            // Chosen by the library's release family, not its build: the
            // family and the version it states are named.
            (Some(_), Some(origin @ LayoutOrigin::Family(_))) => debug_print(&format!(
                "mpiq_mqs: the layouts come from {}",
                origin.source_text()
            )),
            (Some(p), _) => debug_print(&format!(
                "mpiq_mqs: the layouts come from the profile of {} {} ({})",
                p.identity.implementation, p.identity.version, p.identity.build
            )),
            _ => {}
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
            companions,
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

/// What a process's decoder reads its layouts from: the profile chosen
/// for it, else the debugger's types completed by MPICH's declarations;
/// under either, the profiles of the libraries under MPI (`companions`).
fn layouts<'a>(
    profile: &'a Option<mpidd_read::LayoutProfile>,
    declared: &'a dyn mpidd_read::Layouts,
    companions: &'a LayoutTable,
) -> LayeredLayouts<'a> {
    let first: &dyn mpidd_read::Layouts = match profile {
        Some(p) => &p.layouts,
        None => declared,
    };
    LayeredLayouts::new(first, vec![companions])
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
            layouts: &layouts(&info.profile, &declared, &info.companions),
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
