//! What the library keeps per image, process and job, in blocks from the
//! debugger's `mqs_malloc` (they cross the interface: the debugger holds
//! the pointers and hands them back to the destroy calls).

use std::ffi::{c_void, CString};
use std::mem::{align_of, size_of};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use mpidd_read::{LayoutProfile, Limits};
use mpidd_types::TargetAbi;
use mpiq_core::model::{ProcessQueues, QueueKind};
use mpiq_core::mqs_abi::{MqsImage, MqsProcess};
use mpiq_core::QueueDecoder;

use crate::callback_target::TypeCache;
use crate::declared_layouts::ScalarSizes;
use crate::host_abi::{HostBasic, HostImage, HostJob, HostProcess};

/// The debugger's basic callbacks, from `mqs_setup_basic_callbacks`.
pub(crate) static BASIC: AtomicPtr<HostBasic> = AtomicPtr::new(ptr::null_mut());

/// The detail of the last failure that has one, for
/// `mqs_dll_error_string`, which is given only a code.
pub(crate) static LAST_DETAIL: Mutex<Option<CString>> = Mutex::new(None);

pub(crate) fn basic() -> Option<&'static HostBasic> {
    // SAFETY: the debugger promises the table stays valid for as long as
    // the library is loaded; NULL before setup.
    unsafe { BASIC.load(Ordering::Acquire).as_ref() }
}

/// Per image.
pub(crate) struct ImageInfo {
    pub(crate) callbacks: *const HostImage,
    /// The text `mqs_image_has_queues` hands out; kept here so the pointer
    /// stays valid while the image is set up.
    pub(crate) message: CString,
    /// The debugger's answers about the image's types.
    pub(crate) types: TypeCache,
}

/// Per process.
pub(crate) struct ProcessInfo {
    pub(crate) callbacks: *const HostProcess,
    pub(crate) abi: TargetAbi,
    /// The target's `int` and pointer sizes, for the layouts.
    pub(crate) sizes: ScalarSizes,
    pub(crate) decoder: Result<Box<dyn QueueDecoder>, String>,
    /// The layout profile the decoder reads with, when the debugger's
    /// types do not describe the MPI library (Open MPI without debug info).
    pub(crate) profile: Option<LayoutProfile>,
    /// The globals that profile places for a library that hides them, at
    /// their run-time addresses.
    pub(crate) profile_symbols: std::collections::HashMap<String, mpidd_read::Symbol>,
    /// The layouts of the libraries under MPI (UCX's), from their builds'
    /// profiles, when the MPI library's own come from the debugger.
    pub(crate) companions: mpidd_read::LayoutTable,
    /// The last reading, from `mqs_update_communicator_list`.
    pub(crate) snapshot: Option<ProcessQueues>,
    pub(crate) communicator: usize,
    pub(crate) operation: Option<(QueueKind, usize)>,
    /// The debugger's own number for the process (MPI-2), when given.
    pub(crate) identity: Option<i32>,
    pub(crate) limits: Limits,
}

/// Per job (MPI-2).
pub(crate) struct JobInfo {
    #[allow(dead_code)] // kept as the debugger gave it; no MPICH data needs it
    pub(crate) callbacks: *const HostJob,
}

/// Moves `value` into a block from the debugger's `mqs_malloc`.
pub(crate) fn host_box<T>(value: T) -> Option<*mut T> {
    const { assert!(align_of::<T>() <= 16, "malloc aligns to 16 bytes") };
    let malloc = basic()?.malloc?;
    // SAFETY: the debugger's allocator, asked for a block of T's size.
    let p = unsafe { malloc(size_of::<T>().max(1)) } as *mut T;
    if p.is_null() {
        return None;
    }
    // SAFETY: a fresh block, large and aligned enough for T.
    unsafe { p.write(value) };
    Some(p)
}

/// Drops a value made by [`host_box`] and returns its block.
///
/// # Safety
/// `p` came from [`host_box`] and is not used again.
pub(crate) unsafe fn host_drop<T>(p: *mut T) {
    if p.is_null() {
        return;
    }
    // SAFETY: the caller's promise: a live value in a host block.
    unsafe { ptr::drop_in_place(p) };
    if let Some(free) = basic().and_then(|b| b.free) {
        // SAFETY: the block came from the same debugger's mqs_malloc.
        unsafe { free(p as *mut c_void) };
    }
}

pub(crate) fn image_info<'a>(image: *mut MqsImage) -> Option<&'a mut ImageInfo> {
    let get = basic()?.get_image_info?;
    // SAFETY: the debugger returns what mqs_setup_image stored, or NULL for
    // an image not set up.
    unsafe { (get(image) as *mut ImageInfo).as_mut() }
}

pub(crate) fn process_info<'a>(process: *mut MqsProcess) -> Option<&'a mut ProcessInfo> {
    let get = basic()?.get_process_info?;
    // SAFETY: as for image_info.
    unsafe { (get(process) as *mut ProcessInfo).as_mut() }
}

/// The image a process is an instance of, and what the library keeps for
/// it, through the debugger's `mqs_get_image`.
pub(crate) fn image_of<'a>(
    process: *mut MqsProcess,
    callbacks: &HostProcess,
) -> Option<(*mut MqsImage, &'a mut ImageInfo)> {
    let get_image = callbacks.get_image?;
    // SAFETY: the debugger's callback for this process.
    let image = unsafe { get_image(process) };
    Some((image, image_info(image)?))
}
