//! Loads a vendor message-queue library and drives it over one process:
//! setup, the image and process checks, the communicator iterator and the
//! three operation iterators.
//!
//! The library is foreign C code. The host gives it nothing it can keep
//! beyond the static callback tables, bounds every iteration, copies its
//! results out of fixed-size buffers, and never calls an iterator after it
//! reported the end of its list (both well-known vendor libraries follow a
//! NULL pointer when asked for the next communicator after the last).

// `c_long` and `c_ulong` are 32 bits on 32-bit hosts: the conversions that
// are no-ops here are not everywhere.
#![allow(clippy::useless_conversion)]
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::ptr;
use std::rc::Rc;
use std::sync::{Mutex, OnceLock};

use crate::model::{
    sign_extend_int, Communicator, OperationStatus, PendingOperation, ProcessQueues, Queue,
    QueueKind,
};
use crate::mqs::abi::*;
use crate::mqs::callbacks::{
    bounded_c_string, Diagnostics, ImageState, JobState, ProcessState, SharedDiagnostics,
    BASIC_CALLBACKS, CURRENT_DIAGNOSTICS, HOST_BAD_ARGUMENT, HOST_NOT_FOUND, HOST_READ_FAILED,
    IMAGE_CALLBACKS, JOB_CALLBACKS, PROCESS_CALLBACKS,
};
use crate::mqs::target::MqsTarget;
use mpidd_read::Limits;

/// Why a message-queue library could not be used or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MqsError {
    /// The shared object would not load.
    #[error("cannot load the message-queue library {path}: {reason}")]
    Load {
        /// The library.
        path: PathBuf,
        /// What the dynamic loader said.
        reason: String,
    },
    /// A required entry point is missing, so this is not an mqs library.
    #[error("{path} is not a message-queue library: it has no `{name}`")]
    MissingEntryPoint {
        /// The library.
        path: PathBuf,
        /// The missing function.
        name: &'static str,
    },
    /// The library implements another version of the interface.
    #[error("{path} implements message-queue interface version {found}; this host speaks 2 and 3")]
    Incompatible {
        /// The library.
        path: PathBuf,
        /// Its `mqs_version_compatibility()`.
        found: i32,
    },
    /// The library was built with other target-address words than this
    /// host's.
    #[error("{path} was built with {dll}-byte target addresses; this host uses {host}")]
    AddressWidth {
        /// The library.
        path: PathBuf,
        /// Its `mqs_dll_taddr_width()`.
        dll: i32,
        /// `sizeof (mqs_taddr_t)` here.
        host: usize,
    },
    /// The library says the image cannot show message queues.
    #[error("the message-queue library says {image} has no queues: {message}")]
    NoQueuesInImage {
        /// The image.
        image: String,
        /// The library's explanation, with what the host saw missing.
        message: String,
    },
    /// The library says the process cannot show message queues.
    #[error("the message-queue library says this process has no queues: {message}")]
    NoQueuesInProcess {
        /// The library's explanation, with what the host saw missing.
        message: String,
    },
    /// A call into the library returned an error.
    #[error("{call} failed: {message}")]
    Call {
        /// The library function.
        call: &'static str,
        /// Its return code.
        code: i32,
        /// The library's text for the code, with the host's detail.
        message: String,
    },
}

type VersionStringFn = unsafe extern "C" fn() -> *const c_char;
type IntFn = unsafe extern "C" fn() -> c_int;
type ErrorStringFn = unsafe extern "C" fn(c_int) -> *const c_char;
type SetupBasicFn = unsafe extern "C" fn(*const MqsBasicCallbacks);
type SetupImageFn = unsafe extern "C" fn(*mut MqsImage, *const MqsImageCallbacks) -> c_int;
type HasQueuesImageFn = unsafe extern "C" fn(*mut MqsImage, *mut *const c_char) -> c_int;
type DestroyFn = unsafe extern "C" fn(*mut c_void);
type SetupProcessFn = unsafe extern "C" fn(*mut MqsProcess, *const MqsProcessCallbacks) -> c_int;
type HasQueuesProcessFn = unsafe extern "C" fn(*mut MqsProcess, *mut *const c_char) -> c_int;
type ProcessFn = unsafe extern "C" fn(*mut MqsProcess) -> c_int;
type GetCommunicatorFn = unsafe extern "C" fn(*mut MqsProcess, *mut MqsCommunicator) -> c_int;
type GetCommGroupFn = unsafe extern "C" fn(*mut MqsProcess, *mut c_int) -> c_int;
type SetupOperationFn = unsafe extern "C" fn(*mut MqsProcess, c_int) -> c_int;
type NextOperationFn = unsafe extern "C" fn(*mut MqsProcess, *mut MqsPendingOperation) -> c_int;
type SetupJobFn = unsafe extern "C" fn(*mut MqsJob, *const MqsJobCallbacks) -> c_int;
type DestroyJobFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type SetIdentityFn = unsafe extern "C" fn(*mut MqsProcess, c_int) -> c_int;

struct EntryPoints {
    dll_error_string: ErrorStringFn,
    setup_image: SetupImageFn,
    image_has_queues: HasQueuesImageFn,
    destroy_image_info: DestroyFn,
    setup_process: SetupProcessFn,
    process_has_queues: HasQueuesProcessFn,
    destroy_process_info: DestroyFn,
    update_communicator_list: ProcessFn,
    setup_communicator_iterator: ProcessFn,
    get_communicator: GetCommunicatorFn,
    next_communicator: ProcessFn,
    setup_operation_iterator: SetupOperationFn,
    next_operation: NextOperationFn,
    get_comm_group: Option<GetCommGroupFn>,
    setup_job: Option<SetupJobFn>,
    destroy_job_info: Option<DestroyJobFn>,
    set_process_identity: Option<SetIdentityFn>,
}

/// A loaded message-queue library. Loaded libraries are never unloaded (the
/// interface says so: a library may keep static state), so a handle lives
/// for the rest of the program.
pub struct MqsLibrary {
    path: PathBuf,
    version: String,
    compatibility: i32,
    entry: EntryPoints,
    // Libraries keep static state (the callback table, iterators), so one
    // read at a time goes through each.
    busy: Mutex<()>,
}

impl std::fmt::Debug for MqsLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MqsLibrary")
            .field("path", &self.path)
            .field("version", &self.version)
            .field("compatibility", &self.compatibility)
            .finish_non_exhaustive()
    }
}

static LOADED: OnceLock<Mutex<HashMap<PathBuf, &'static MqsLibrary>>> = OnceLock::new();

/// Copies a symbol's address out as a function pointer.
///
/// # Safety
/// `T` must be the C signature the interface declares for `name`.
unsafe fn entry_point<T: Copy>(
    lib: &libloading::Library,
    path: &Path,
    name: &'static str,
) -> Result<T, MqsError> {
    // SAFETY: the caller matches T to the interface's declaration; the
    // library is never unloaded, so the pointer stays valid.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|sym| *sym)
        .map_err(|_| MqsError::MissingEntryPoint {
            path: path.to_path_buf(),
            name,
        })
}

/// # Safety
/// As for [`entry_point`].
unsafe fn optional_entry_point<T: Copy>(lib: &libloading::Library, name: &str) -> Option<T> {
    // SAFETY: as for entry_point.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .ok()
        .map(|sym| *sym)
}

impl MqsLibrary {
    /// Loads the library at `path` (once per path per program), checks that
    /// it implements interface version 2 or 3 with this host's address
    /// width, and gives it the basic callbacks.
    pub fn load(path: &Path) -> Result<&'static MqsLibrary, MqsError> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let registry = LOADED.get_or_init(|| Mutex::new(HashMap::new()));
        let mut loaded = registry.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(lib) = loaded.get(&key) {
            return Ok(lib);
        }
        // SAFETY: loading runs the library's initializers; the caller chose
        // this file as a message-queue library, which is the trust a
        // debugger extends to any plugin it loads.
        let lib = unsafe { libloading::Library::new(&key) }.map_err(|e| MqsError::Load {
            path: key.clone(),
            reason: e.to_string(),
        })?;
        // The interface forbids unloading, and the function pointers below
        // must stay valid for 'static.
        let lib: &'static libloading::Library = Box::leak(Box::new(lib));
        // SAFETY (for each entry_point below): the types are the
        // interface's declarations of these names.
        let version_string: VersionStringFn =
            // SAFETY: each type is the interface's declaration of that name.
            unsafe { entry_point(lib, &key, "mqs_version_string")? };
        let version_compatibility: IntFn =
            // SAFETY: each type is the interface's declaration of that name.
            unsafe { entry_point(lib, &key, "mqs_version_compatibility")? };
        // SAFETY: each type is the interface's declaration of that name.
        let taddr_width: IntFn = unsafe { entry_point(lib, &key, "mqs_dll_taddr_width")? };
        let setup_basic: SetupBasicFn =
            // SAFETY: each type is the interface's declaration of that name.
            unsafe { entry_point(lib, &key, "mqs_setup_basic_callbacks")? };
        // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
        let entry = unsafe {
            EntryPoints {
                dll_error_string: entry_point(lib, &key, "mqs_dll_error_string")?,
                setup_image: entry_point(lib, &key, "mqs_setup_image")?,
                image_has_queues: entry_point(lib, &key, "mqs_image_has_queues")?,
                destroy_image_info: entry_point(lib, &key, "mqs_destroy_image_info")?,
                setup_process: entry_point(lib, &key, "mqs_setup_process")?,
                process_has_queues: entry_point(lib, &key, "mqs_process_has_queues")?,
                destroy_process_info: entry_point(lib, &key, "mqs_destroy_process_info")?,
                update_communicator_list: entry_point(lib, &key, "mqs_update_communicator_list")?,
                setup_communicator_iterator: entry_point(
                    lib,
                    &key,
                    "mqs_setup_communicator_iterator",
                )?,
                get_communicator: entry_point(lib, &key, "mqs_get_communicator")?,
                next_communicator: entry_point(lib, &key, "mqs_next_communicator")?,
                setup_operation_iterator: entry_point(lib, &key, "mqs_setup_operation_iterator")?,
                next_operation: entry_point(lib, &key, "mqs_next_operation")?,
                get_comm_group: optional_entry_point(lib, "mqs_get_comm_group"),
                setup_job: optional_entry_point(lib, "mqs_setup_job"),
                destroy_job_info: optional_entry_point(lib, "mqs_destroy_job_info"),
                set_process_identity: optional_entry_point(lib, "mqs_set_process_identity"),
            }
        };
        // SAFETY: these take no arguments and return plain values (the
        // string is read bounded).
        let compatibility = unsafe { version_compatibility() };
        if compatibility != MQS_COMPATIBILITY_MPI1 && compatibility != MQS_COMPATIBILITY_MPI2 {
            return Err(MqsError::Incompatible {
                path: key,
                found: compatibility,
            });
        }
        // SAFETY: interface calls without arguments; the string is read bounded.
        let width = unsafe { taddr_width() };
        if usize::try_from(width).ok() != Some(std::mem::size_of::<MqsTaddr>()) {
            return Err(MqsError::AddressWidth {
                path: key,
                dll: width,
                host: std::mem::size_of::<MqsTaddr>(),
            });
        }
        // SAFETY: a C string from the library or the host's own table, read no further than its bound.
        let version = unsafe { bounded_c_string(version_string()) }.unwrap_or_default();
        // SAFETY: the table is static, as the library may keep the pointer.
        unsafe { setup_basic(&BASIC_CALLBACKS) };
        let library: &'static MqsLibrary = Box::leak(Box::new(MqsLibrary {
            path: key.clone(),
            version,
            compatibility,
            entry,
            busy: Mutex::new(()),
        }));
        loaded.insert(key, library);
        Ok(library)
    }

    /// Where it was loaded from (canonical).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its `mqs_version_string()`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Whether it was built against Open MPI's form of the interface
    /// header, whose `mqs_target_type_sizes` also has `bool_size` and
    /// `size_t_size`. Open MPI's library says so in its version string.
    pub fn seven_type_sizes(&self) -> bool {
        self.version.contains("Open MPI")
    }

    /// Its `mqs_version_compatibility()`: 2, or 3 with MPI-2 extensions.
    pub fn compatibility(&self) -> i32 {
        self.compatibility
    }

    fn error_text(&self, code: c_int, diagnostics: &Diagnostics) -> String {
        let base = match code {
            HOST_READ_FAILED | HOST_BAD_ARGUMENT | HOST_NOT_FOUND | MQS_NO_INFORMATION => {
                // SAFETY: the host's own table, static strings.
                unsafe { bounded_c_string((BASIC_CALLBACKS.errorstring)(code)) }.unwrap_or_default()
            }
            _ => {
                // SAFETY: an interface call; the string is read bounded.
                unsafe { bounded_c_string((self.entry.dll_error_string)(code)) }
                    .unwrap_or_else(|| format!("error {code}"))
            }
        };
        match &diagnostics.last_read_error {
            Some(read) => format!("{base} (last failed read: {read})"),
            None => base,
        }
    }

    /// Reads every communicator and queue of one process through the
    /// library.
    pub fn read_queues(
        &self,
        target: &MqsTarget<'_>,
        limits: &Limits,
    ) -> Result<ProcessQueues, MqsError> {
        let _one_at_a_time = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        let diagnostics: SharedDiagnostics = Rc::new(RefCell::new(Diagnostics::default()));
        CURRENT_DIAGNOSTICS.with(|c| *c.borrow_mut() = Some(diagnostics.clone()));
        let result = self.read_queues_inner(target, limits, &diagnostics);
        CURRENT_DIAGNOSTICS.with(|c| *c.borrow_mut() = None);
        result
    }

    fn read_queues_inner(
        &self,
        target: &MqsTarget<'_>,
        limits: &Limits,
        diagnostics: &SharedDiagnostics,
    ) -> Result<ProcessQueues, MqsError> {
        let image = ImageState::new(target, diagnostics.clone());
        let image_ptr = &image as *const ImageState<'_> as *mut MqsImage;
        let e = &self.entry;
        let fail = |call: &'static str, code: c_int| MqsError::Call {
            call,
            code,
            message: self.error_text(code, &diagnostics.borrow()),
        };

        // SAFETY: image_ptr points to `image`, alive for this function; the
        // callback table is static.
        let rc = unsafe { (e.setup_image)(image_ptr, &IMAGE_CALLBACKS) };
        let image_guard = InfoGuard {
            info: &image.info,
            destroy: e.destroy_image_info,
        };
        if rc != MQS_OK {
            return Err(fail("mqs_setup_image", rc));
        }
        let mut message: *const c_char = ptr::null();
        // SAFETY: as above; `message` is ours to receive a pointer.
        let rc = unsafe { (e.image_has_queues)(image_ptr, &mut message) };
        let image_message =
            // SAFETY: a C string from the library or the host's own table, read no further than its bound.
            unsafe { bounded_c_string(message) }.map(|m| printf_image(&m, &target.image_name));
        // The message is meant for a pop-up "whatever the result", but
        // MPICH's library sets its failure text on success too: shown on
        // success it would tell the user the opposite of the truth.
        if rc != MQS_OK {
            return Err(MqsError::NoQueuesInImage {
                image: target.image_name.clone(),
                message: with_missing(
                    image_message.unwrap_or_else(|| self.error_text(rc, &diagnostics.borrow())),
                    diagnostics,
                ),
            });
        }

        let job = JobState {
            info: Cell::new(ptr::null_mut()),
            process: Cell::new(ptr::null_mut()),
            identity: target.global_rank,
        };
        let process = ProcessState {
            target,
            image: &image,
            job: &job,
            info: Cell::new(ptr::null_mut()),
            diagnostics: diagnostics.clone(),
            seven_type_sizes: self.seven_type_sizes(),
        };
        let process_ptr = &process as *const ProcessState<'_> as *mut MqsProcess;
        job.process.set(process_ptr);
        let job_ptr = &job as *const JobState as *mut MqsJob;

        let mut job_guard = None;
        if let (Some(setup_job), Some(destroy_job)) = (e.setup_job, e.destroy_job_info) {
            // SAFETY: job_ptr points to `job`, alive for this function.
            let rc = unsafe { setup_job(job_ptr, &JOB_CALLBACKS) };
            if rc == MQS_OK {
                job_guard = Some(JobGuard {
                    info: &job.info,
                    destroy: destroy_job,
                });
            }
        }
        // SAFETY: process_ptr points to `process`, alive for this function.
        let rc = unsafe { (e.setup_process)(process_ptr, &PROCESS_CALLBACKS) };
        let process_guard = InfoGuard {
            info: &process.info,
            destroy: e.destroy_process_info,
        };
        if rc != MQS_OK {
            return Err(fail("mqs_setup_process", rc));
        }
        if let Some(set_identity) = e.set_process_identity {
            // SAFETY: as above.
            unsafe { set_identity(process_ptr, target.global_rank) };
        }
        let mut message: *const c_char = ptr::null();
        // SAFETY: as above.
        let rc = unsafe { (e.process_has_queues)(process_ptr, &mut message) };
        let process_message =
            // SAFETY: a C string from the library or the host's own table, read no further than its bound.
            unsafe { bounded_c_string(message) }.map(|m| printf_image(&m, &target.image_name));
        if rc != MQS_OK {
            return Err(MqsError::NoQueuesInProcess {
                message: with_missing(
                    process_message.unwrap_or_else(|| self.error_text(rc, &diagnostics.borrow())),
                    diagnostics,
                ),
            });
        }

        // SAFETY: as above.
        let rc = unsafe { (e.update_communicator_list)(process_ptr) };
        if rc != MQS_OK {
            return Err(fail("mqs_update_communicator_list", rc));
        }
        let int_size = target.type_sizes.int;
        let mut communicators = Vec::new();
        let mut truncated = false;
        // SAFETY: as above.
        let mut rc = unsafe { (e.setup_communicator_iterator)(process_ptr) };
        while rc == MQS_OK {
            if communicators.len() >= limits.max_communicators {
                truncated = true;
                break;
            }
            // SAFETY: a zeroed plain-data struct is a valid value; the
            // library fills it.
            let mut raw: MqsCommunicator = unsafe { MaybeUninit::zeroed().assume_init() };
            // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
            let got = unsafe { (e.get_communicator)(process_ptr, &mut raw) };
            if got != MQS_OK {
                return Err(fail("mqs_get_communicator", got));
            }
            let mut comm = Communicator {
                name: c_chars_to_string(&raw.name),
                // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
                size: i64::from(raw.size),
                // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
                local_rank: sign_extend_int(i64::from(raw.local_rank), int_size),
                // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
                unique_id: u64::from(raw.unique_id),
                // The interface has no context ids.
                context_id: None,
                recv_context_id: None,
                group: None,
                pending_sends: Queue::NoInformation,
                pending_receives: Queue::NoInformation,
                unexpected_messages: Queue::NoInformation,
            };
            if let Some(get_group) = e.get_comm_group {
                comm.group = self
                    .read_group(get_group, process_ptr, comm.size, limits, int_size)
                    .map(Into::into);
            }
            for kind in QueueKind::ALL {
                let queue = self.read_queue(process_ptr, kind, limits, int_size, diagnostics);
                match kind {
                    QueueKind::PendingSends => comm.pending_sends = queue,
                    QueueKind::PendingReceives => comm.pending_receives = queue,
                    QueueKind::UnexpectedMessages => comm.unexpected_messages = queue,
                }
            }
            communicators.push(comm);
            // SAFETY: as above; never called again once it said end of list.
            rc = unsafe { (e.next_communicator)(process_ptr) };
        }
        if rc != MQS_OK && rc != MQS_END_OF_LIST {
            return Err(fail("mqs_next_communicator", rc));
        }
        drop(process_guard);
        drop(job_guard.take());
        drop(image_guard);
        let diagnostics = std::mem::take(&mut diagnostics.borrow_mut().lines);
        Ok(ProcessQueues {
            source: format!("{} ({})", self.path.display(), self.version),
            global_rank: target.global_rank as i64,
            communicators,
            truncated,
            diagnostics,
        })
    }

    fn read_group(
        &self,
        get_group: GetCommGroupFn,
        process_ptr: *mut MqsProcess,
        size: i64,
        limits: &Limits,
        int_size: u32,
    ) -> Option<Vec<i64>> {
        let n = usize::try_from(size)
            .ok()
            .filter(|&n| n > 0 && n <= limits.max_group_size)?;
        let mut ranks: Vec<c_int> = vec![-1; n];
        // SAFETY: the interface fills one int per member of the current
        // communicator, whose size the library just gave.
        let rc = unsafe { get_group(process_ptr, ranks.as_mut_ptr()) };
        (rc == MQS_OK).then(|| {
            ranks
                .into_iter()
                .map(|r| sign_extend_int(r as i64, int_size))
                .collect()
        })
    }

    fn read_queue(
        &self,
        process_ptr: *mut MqsProcess,
        kind: QueueKind,
        limits: &Limits,
        int_size: u32,
        diagnostics: &SharedDiagnostics,
    ) -> Queue {
        let e = &self.entry;
        // SAFETY: process_ptr is alive for the caller's whole read.
        let rc = unsafe { (e.setup_operation_iterator)(process_ptr, kind.op_class()) };
        match rc {
            MQS_OK => {}
            MQS_END_OF_LIST => {
                return Queue::Read {
                    operations: Vec::new(),
                    truncated: false,
                }
            }
            MQS_NO_INFORMATION => return Queue::NoInformation,
            code => {
                return Queue::Failed {
                    operations: Vec::new(),
                    error: format!(
                        "mqs_setup_operation_iterator: {}",
                        self.error_text(code, &diagnostics.borrow())
                    ),
                }
            }
        }
        let mut operations = Vec::new();
        loop {
            if operations.len() >= limits.max_operations {
                return Queue::Read {
                    operations,
                    truncated: true,
                };
            }
            // SAFETY: zeroed plain data, so fields the library leaves alone
            // read as 0 rather than stale bytes.
            let mut raw: MqsPendingOperation = unsafe { MaybeUninit::zeroed().assume_init() };
            // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
            let rc = unsafe { (e.next_operation)(process_ptr, &mut raw) };
            match rc {
                MQS_OK => operations.push(convert_operation(&raw, int_size)),
                MQS_END_OF_LIST => {
                    return Queue::Read {
                        operations,
                        truncated: false,
                    }
                }
                code => {
                    return Queue::Failed {
                        operations,
                        error: format!(
                            "mqs_next_operation: {}",
                            self.error_text(code, &diagnostics.borrow())
                        ),
                    }
                }
            }
        }
    }
}

/// Calls the library's destructor for the info it stored, once.
struct InfoGuard<'a> {
    info: &'a Cell<*mut c_void>,
    destroy: DestroyFn,
}

impl Drop for InfoGuard<'_> {
    fn drop(&mut self) {
        let info = self.info.replace(ptr::null_mut());
        if !info.is_null() {
            // SAFETY: the library stored this pointer through put_*_info
            // and asked for it to be handed back to its destructor.
            unsafe { (self.destroy)(info) };
        }
    }
}

struct JobGuard<'a> {
    info: &'a Cell<*mut c_void>,
    destroy: DestroyJobFn,
}

impl Drop for JobGuard<'_> {
    fn drop(&mut self) {
        let info = self.info.replace(ptr::null_mut());
        if !info.is_null() {
            // SAFETY: as for InfoGuard.
            unsafe { (self.destroy)(info) };
        }
    }
}

/// The library's message formats the image name in, printf style.
fn printf_image(message: &str, image: &str) -> String {
    message.replacen("%s", image, 1).replace("%%", "%")
}

/// A library's complaint, followed by what the host saw it look for in
/// vain, which is usually the real reason.
fn with_missing(message: String, diagnostics: &SharedDiagnostics) -> String {
    let seen = diagnostics.borrow();
    let missing: Vec<&str> = seen
        .lines
        .iter()
        .filter(|l| {
            l.starts_with("the library looked for") || l.starts_with("the library asked for")
        })
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        message
    } else {
        format!("{}; {}", message.trim(), missing.join("; "))
    }
}

fn convert_operation(raw: &MqsPendingOperation, int_size: u32) -> PendingOperation {
    // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
    let signed = |v: MqsTword| sign_extend_int(i64::from(v), int_size);
    let extra_text = raw
        .extra_text
        .iter()
        .map(|line| c_chars_to_string(line))
        .take_while(|line| !line.is_empty())
        .collect();
    PendingOperation {
        status: OperationStatus::from_raw(i64::from(raw.status)),
        desired_local_rank: signed(raw.desired_local_rank),
        desired_global_rank: signed(raw.desired_global_rank),
        tag_wild: raw.tag_wild != 0,
        desired_tag: signed(raw.desired_tag),
        // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
        desired_length: i64::from(raw.desired_length),
        system_buffer: raw.system_buffer != 0,
        // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
        buffer: u64::from(raw.buffer),
        actual_local_rank: signed(raw.actual_local_rank),
        actual_global_rank: signed(raw.actual_global_rank),
        actual_tag: signed(raw.actual_tag),
        // SAFETY: the pointers are the host's own states, alive for this whole read (see `read_queues_inner`).
        actual_length: i64::from(raw.actual_length),
        extra_text,
        desired_count: None,
        // The interface does not say how a message travels.
        protocol: None,
        synchronous: None,
    }
}
