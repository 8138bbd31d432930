//! The C declarations of the PMIx tool interface that mpidd calls, as
//! OpenPMIx 5's `pmix_common.h` and `pmix.h` declare them, and the
//! library's functions, loaded at run time from the file the launcher
//! itself maps.
//!
//! These structs are the host library's own, in this process's memory:
//! `repr(C)` with the host's sizes is what the library was compiled to.
//! (Target memory is never decoded this way: it goes through `TargetAbi`.)
//! The module is built on 64-bit hosts only, and the sizes are checked at
//! compile time against those OpenPMIx 5's headers give on x86_64.

use std::ffi::{c_char, c_int, c_void};
use std::path::Path;

use crate::pmix::error::PmixError;

/// `PMIX_MAX_NSLEN + 1`.
pub(crate) const NSPACE_BYTES: usize = 256;
/// `PMIX_MAX_KEYLEN + 1`.
pub(crate) const KEY_BYTES: usize = 512;

/// `pmix_status_t`: `PMIX_SUCCESS`.
pub(crate) const PMIX_SUCCESS: c_int = 0;
/// `pmix_status_t`: `PMIX_OPERATION_SUCCEEDED`, done at once.
pub(crate) const PMIX_OPERATION_SUCCEEDED: c_int = -157;
/// The event `PMIX_DEBUGGER_RELEASE`: ranks held in `PMIx_Init` (a job
/// started with `PMIX_DEBUG_STOP_IN_INIT`) go on when it reaches them.
pub(crate) const PMIX_DEBUGGER_RELEASE: c_int = -3;
/// `pmix_data_range_t`: `PMIX_RANGE_CUSTOM`, the processes an info names.
pub(crate) const PMIX_RANGE_CUSTOM: u8 = 6;
/// `PMIX_RANK_WILDCARD`: every rank of a namespace.
pub(crate) const PMIX_RANK_WILDCARD: u32 = u32::MAX - 1;

/// `pmix_data_type_t` values.
pub(crate) mod types {
    /// `PMIX_BOOL`.
    pub(crate) const BOOL: u16 = 1;
    /// `PMIX_STRING`.
    pub(crate) const STRING: u16 = 3;
    /// `PMIX_PID`.
    pub(crate) const PID: u16 = 5;
    /// `PMIX_PROC`.
    pub(crate) const PROC: u16 = 22;
    /// `PMIX_UINT32`.
    pub(crate) const UINT32: u16 = 14;
    /// `PMIX_PROC_INFO`.
    pub(crate) const PROC_INFO: u16 = 38;
    /// `PMIX_DATA_ARRAY`.
    pub(crate) const DATA_ARRAY: u16 = 39;
}

/// Attribute keys.
pub(crate) mod keys {
    /// `PMIX_SERVER_PIDINFO` (pid_t): the server to connect to.
    pub(crate) const SERVER_PIDINFO: &[u8] = b"pmix.srvr.pidinfo\0";
    /// `PMIX_TOOL_DO_NOT_CONNECT` (bool).
    pub(crate) const TOOL_DO_NOT_CONNECT: &[u8] = b"pmix.tool.nocon\0";
    /// `PMIX_CONNECT_TO_SYSTEM` (bool).
    pub(crate) const CONNECT_TO_SYSTEM: &[u8] = b"pmix.cnct.sys\0";
    /// `PMIX_CONNECT_MAX_RETRIES` (uint32_t).
    pub(crate) const CONNECT_MAX_RETRIES: &[u8] = b"pmix.tool.mretries\0";
    /// `PMIX_SERVER_TMPDIR` (char*): where servers put their rendezvous
    /// files.
    pub(crate) const SERVER_TMPDIR: &[u8] = b"pmix.srvr.tmpdir\0";
    /// `PMIX_SYSTEM_TMPDIR` (char*): where a tool searches for them.
    pub(crate) const SYSTEM_TMPDIR: &[u8] = b"pmix.sys.tmpdir\0";
    /// `PMIX_QUERY_NAMESPACES`: a comma-separated string.
    pub(crate) const QUERY_NAMESPACES: &[u8] = b"pmix.qry.ns\0";
    /// `PMIX_QUERY_PROC_TABLE`: a data array of `pmix_proc_info_t`.
    pub(crate) const QUERY_PROC_TABLE: &[u8] = b"pmix.qry.ptable\0";
    /// `PMIX_NSPACE` (char*): the qualifier of a per-namespace query.
    pub(crate) const NSPACE: &[u8] = b"pmix.nspace\0";
    /// `PMIX_EVENT_CUSTOM_RANGE` (pmix_proc_t): whom an event is for.
    pub(crate) const EVENT_CUSTOM_RANGE: &[u8] = b"pmix.evrange\0";
    /// `PMIX_EVENT_NON_DEFAULT` (bool): not for catch-all handlers (Open
    /// MPI's default handler takes an unknown event for an error).
    pub(crate) const EVENT_NON_DEFAULT: &[u8] = b"pmix.evnondef\0";
}

/// `pmix_proc_t`.
#[repr(C)]
pub(crate) struct PmixProc {
    pub(crate) nspace: [c_char; NSPACE_BYTES],
    pub(crate) rank: u32,
}

/// `pmix_proc_info_t`.
#[repr(C)]
pub(crate) struct PmixProcInfo {
    pub(crate) proc_: PmixProc,
    pub(crate) hostname: *mut c_char,
    pub(crate) executable_name: *mut c_char,
    pub(crate) pid: i32,
    pub(crate) exit_code: c_int,
    pub(crate) state: u8,
}

/// `pmix_data_array_t`.
#[repr(C)]
pub(crate) struct PmixDataArray {
    pub(crate) type_: u16,
    pub(crate) size: usize,
    pub(crate) array: *mut c_void,
}

/// The members of `pmix_value_t`'s union that mpidd reads; `_whole`
/// gives it the union's full size (its largest member, `pmix_envar_t`,
/// is two pointers and a char).
#[repr(C)]
pub(crate) union PmixValueData {
    pub(crate) string: *mut c_char,
    pub(crate) darray: *mut PmixDataArray,
    _whole: [u64; 3],
}

/// `pmix_value_t`.
#[repr(C)]
pub(crate) struct PmixValue {
    pub(crate) type_: u16,
    pub(crate) data: PmixValueData,
}

/// `pmix_info_t`.
#[repr(C)]
pub(crate) struct PmixInfo {
    pub(crate) key: [c_char; KEY_BYTES],
    pub(crate) flags: u32,
    pub(crate) value: PmixValue,
}

/// `pmix_query_t`.
#[repr(C)]
pub(crate) struct PmixQuery {
    pub(crate) keys: *mut *mut c_char,
    pub(crate) qualifiers: *mut PmixInfo,
    pub(crate) nqual: usize,
}

// The sizes OpenPMIx 5's headers give on a 64-bit Linux host.
const _: () = assert!(std::mem::size_of::<PmixProc>() == 260);
const _: () = assert!(std::mem::size_of::<PmixProcInfo>() == 296);
const _: () = assert!(std::mem::size_of::<PmixDataArray>() == 24);
const _: () = assert!(std::mem::size_of::<PmixValue>() == 32);
const _: () = assert!(std::mem::size_of::<PmixInfo>() == 552);
const _: () = assert!(std::mem::size_of::<PmixQuery>() == 24);

type ToolInit = unsafe extern "C" fn(*mut PmixProc, *mut PmixInfo, usize) -> c_int;
type ToolFinalize = unsafe extern "C" fn() -> c_int;
type QueryInfo =
    unsafe extern "C" fn(*mut PmixQuery, usize, *mut *mut PmixInfo, *mut usize) -> c_int;
type ErrorString = unsafe extern "C" fn(c_int) -> *const c_char;
type GetVersion = unsafe extern "C" fn() -> *const c_char;
type InfoCreate = unsafe extern "C" fn(usize) -> *mut PmixInfo;
type InfoFree = unsafe extern "C" fn(*mut PmixInfo, usize);
type InfoLoad = unsafe extern "C" fn(*mut PmixInfo, *const c_char, *const c_void, u16) -> c_int;
/// `PMIx_Notify_event`; its callback (`pmix_op_cbfunc_t`) is always
/// passed as NULL, which makes the call blocking.
type NotifyEvent = unsafe extern "C" fn(
    c_int,
    *const PmixProc,
    u8,
    *const PmixInfo,
    usize,
    *const c_void,
    *mut c_void,
) -> c_int;

/// The functions of one loaded libpmix.
pub(crate) struct PmixLibrary {
    pub(crate) tool_init: ToolInit,
    pub(crate) tool_finalize: ToolFinalize,
    pub(crate) query_info: QueryInfo,
    pub(crate) error_string: ErrorString,
    pub(crate) get_version: GetVersion,
    pub(crate) info_create: InfoCreate,
    pub(crate) info_free: InfoFree,
    pub(crate) info_load: InfoLoad,
    pub(crate) notify_event: NotifyEvent,
}

impl PmixLibrary {
    /// Loads the library at `path` (the launcher's own file) and finds
    /// its functions. The library stays loaded for the life of the
    /// process: PMIx leaves threads of its own behind, which must not
    /// find their code unmapped.
    pub(crate) fn load(pid: i32, path: &Path) -> Result<PmixLibrary, PmixError> {
        // SAFETY: loading runs the library's initializers. It is the
        // launcher's own libpmix (found in its memory map and checked to be
        // the same file), whose initializers only set up PMIx's globals.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| PmixError::Load {
            pid,
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let lib: &'static libloading::Library = Box::leak(Box::new(lib));
        /// One function by name, as the type the headers declare.
        fn get<T: Copy>(
            lib: &'static libloading::Library,
            pid: i32,
            path: &Path,
            name: &str,
        ) -> Result<T, PmixError> {
            let mut c = name.as_bytes().to_vec();
            c.push(0);
            // SAFETY: each caller names a function of pmix.h and asks for
            // it as the function type that header declares for it.
            let symbol = unsafe { lib.get::<T>(c.as_slice()) };
            symbol.map(|s| *s).map_err(|_| PmixError::MissingFunction {
                pid,
                path: path.to_path_buf(),
                symbol: name.to_string(),
            })
        }
        Ok(PmixLibrary {
            tool_init: get(lib, pid, path, "PMIx_tool_init")?,
            tool_finalize: get(lib, pid, path, "PMIx_tool_finalize")?,
            query_info: get(lib, pid, path, "PMIx_Query_info")?,
            error_string: get(lib, pid, path, "PMIx_Error_string")?,
            get_version: get(lib, pid, path, "PMIx_Get_version")?,
            info_create: get(lib, pid, path, "PMIx_Info_create")?,
            info_free: get(lib, pid, path, "PMIx_Info_free")?,
            info_load: get(lib, pid, path, "PMIx_Info_load")?,
            notify_event: get(lib, pid, path, "PMIx_Notify_event")?,
        })
    }

    /// `PMIx_Error_string(status)`, or the number when it has no text.
    pub(crate) fn status_text(&self, status: c_int) -> String {
        // SAFETY: PMIx_Error_string takes any status and returns a static
        // string (or NULL).
        let p = unsafe { (self.error_string)(status) };
        // SAFETY: a non-null answer is a NUL-terminated static string.
        unsafe { c_text(p) }.unwrap_or_else(|| format!("PMIx status {status}"))
    }

    /// `PMIx_Get_version()`.
    pub(crate) fn version(&self) -> String {
        // SAFETY: takes nothing, returns a static string.
        let p = unsafe { (self.get_version)() };
        // SAFETY: as above.
        unsafe { c_text(p) }.unwrap_or_default()
    }
}

/// The text of a C string the library owns, up to a bound; `None` for
/// NULL.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays valid for
/// the call.
pub(crate) unsafe fn c_text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller's contract.
    let s = unsafe { std::ffi::CStr::from_ptr(p) };
    let bytes = s.to_bytes();
    let bytes = &bytes[..bytes.len().min(MAX_TEXT)];
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// The longest text kept from a string PMIx hands back (a host name, an
/// executable path, a list of namespaces).
const MAX_TEXT: usize = 1 << 16;

/// A namespace name from its fixed array, up to its NUL.
pub(crate) fn nspace_text(n: &[c_char; NSPACE_BYTES]) -> String {
    let bytes: Vec<u8> = n
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
