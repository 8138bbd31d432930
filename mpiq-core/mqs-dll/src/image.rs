//! The entry points of an image (an executable or library the debugger
//! has loaded): setting up and freeing what the library keeps for it, and
//! whether it has message queues this library reads.

use std::ffi::{c_char, c_int, c_void, CString};

use mpiq_core::mqs_abi::{MqsImage, MQS_OK};
use mpiq_core::DecoderKind;

use crate::boundary::{fail, guarded, ERR_NOT_SET_UP, ERR_NO_MEMORY, ERR_UNSUPPORTED};
use crate::callback_target::{CallbackImage, TypeCache};
use crate::declared_layouts::DeclaredLayouts;
use crate::host_abi::HostImage;
use crate::state::{basic, host_box, host_drop, image_info, ImageInfo};

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
            // The selected PML is told by its component being loaded (the
            // others are unloaded once MPI_Init has chosen); each process
            // is checked again when read.
            let pml = if source.lookup("ompi_pml_ucx").is_some()
                && source.lookup("mca_pml_ob1").is_none()
            {
                "the UCX PML"
            } else {
                "ob1"
            };
            (
                MQS_OK,
                format!("mpiq_mqs: %s has Open MPI's message queues ({pml})"),
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

/// Whether an image is an MPICH built without debugger support (Debian's):
/// no `MPIR_All_communicators`, and, stripped, its other globals hidden
/// and no types for a debugger to give. Only a profile of its build,
/// chosen per process, can read it.
pub(crate) fn without_debugger_support(source: &dyn mpidd_read::SymbolSource) -> bool {
    source.lookup("MPII_Version_string").is_some()
        && source.lookup("MPIR_All_communicators").is_none()
}
