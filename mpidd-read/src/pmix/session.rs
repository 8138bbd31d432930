//! One PMIx tool session with a launcher's server: the library loaded,
//! its version checked, `PMIx_tool_init` connected to the server of the
//! launcher's pid, and `PMIx_tool_finalize` when it ends.
//!
//! PMIx starts a progress thread and keeps global state in the library,
//! and whether a tool may initialize again after finalizing is not
//! something every release promises; so a process sets up at most one
//! session ([`claim_process`]). mpidd itself runs each query in a helper
//! process (`helper.rs`), which also confines PMIx's threads and signal
//! handling to a process that ends with the query.

use std::ffi::{c_char, c_void};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::pmix::error::PmixError;
use crate::pmix::ffi::{keys, types, PmixInfo, PmixLibrary, PmixProc, NSPACE_BYTES, PMIX_SUCCESS};

/// The launcher of this process's one session; 0 before it.
static SESSION_PID: AtomicI32 = AtomicI32::new(0);

/// Takes this process's one PMIx session for launcher `pid`.
pub(crate) fn claim_process(pid: i32) -> Result<(), PmixError> {
    match SESSION_PID.compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => Ok(()),
        Err(first_pid) => Err(PmixError::AlreadyUsed { pid, first_pid }),
    }
}

/// A connected tool, finalized when dropped.
pub(crate) struct ToolSession<'l> {
    pub(crate) lib: &'l PmixLibrary,
    pub(crate) pid: i32,
    /// The namespace PMIx gave this tool.
    pub(crate) own_nspace: String,
}

/// Checks that `PMIx_Get_version` names a release whose structs
/// `ffi.rs` declares: OpenPMIx 5.
pub(crate) fn check_version(lib: &PmixLibrary, pid: i32) -> Result<String, PmixError> {
    let version = lib.version();
    let major = version
        .strip_prefix("OpenPMIx ")
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(5) => Ok(version),
        _ => Err(PmixError::Version { pid, version }),
    }
}

impl<'l> ToolSession<'l> {
    /// Connects to the PMIx server of process `pid`, and to it alone (not
    /// to a system server), trying once. The server's rendezvous file is
    /// searched for below the launcher's own `TMPDIR` when it has one
    /// (PRRTE puts its session directory there), else below this
    /// process's.
    pub(crate) fn connect(lib: &'l PmixLibrary, pid: i32) -> Result<Self, PmixError> {
        let no = false;
        let retries: u32 = 1;
        let tmpdir = launcher_tmpdir(pid);
        let mut infos = InfoArray::new(lib, if tmpdir.is_some() { 6 } else { 4 });
        if infos.ptr.is_null() {
            return Err(PmixError::Refused {
                pid,
                status: "PMIx_Info_create gave no array (out of memory)".into(),
            });
        }
        let pid_ptr = (&pid as *const i32).cast();
        let no_ptr = (&no as *const bool).cast();
        infos.load(0, keys::SERVER_PIDINFO, pid_ptr, types::PID);
        infos.load(1, keys::TOOL_DO_NOT_CONNECT, no_ptr, types::BOOL);
        infos.load(2, keys::CONNECT_TO_SYSTEM, no_ptr, types::BOOL);
        let retries_ptr = (&retries as *const u32).cast();
        infos.load(3, keys::CONNECT_MAX_RETRIES, retries_ptr, types::UINT32);
        if let Some(dir) = &tmpdir {
            // PMIX_STRING's data is the char* itself; PMIx copies it.
            infos.load(4, keys::SYSTEM_TMPDIR, dir.as_ptr().cast(), types::STRING);
            infos.load(5, keys::SERVER_TMPDIR, dir.as_ptr().cast(), types::STRING);
        }
        let mut me = PmixProc {
            nspace: [0; NSPACE_BYTES],
            rank: 0,
        };
        // SAFETY: `me` is a pmix_proc_t to fill and `infos` an array of
        // `infos.len` pmix_info_t made by PMIx_Info_create and loaded by
        // PMIx_Info_load; both outlive the call.
        let status = unsafe { (lib.tool_init)(&mut me, infos.ptr, infos.len) };
        if status != PMIX_SUCCESS {
            return Err(PmixError::Refused {
                pid,
                status: lib.status_text(status),
            });
        }
        Ok(ToolSession {
            lib,
            pid,
            own_nspace: crate::pmix::ffi::nspace_text(&me.nspace),
        })
    }
}

/// The launcher's `TMPDIR`, when it has one that is a directory here
/// (this process runs in the launcher's root when that is another).
fn launcher_tmpdir(pid: i32) -> Option<std::ffi::CString> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let value = environ
        .split(|&b| b == 0)
        .find_map(|kv| kv.strip_prefix(b"TMPDIR="))?;
    if !std::path::Path::new(std::ffi::OsStr::from_bytes(value)).is_dir() {
        return None;
    }
    std::ffi::CString::new(value).ok()
}

impl Drop for ToolSession<'_> {
    fn drop(&mut self) {
        // SAFETY: the session was initialized; finalizing takes nothing.
        // Its status is of no use at the end of a query.
        let _ = unsafe { (self.lib.tool_finalize)() };
    }
}

/// An array of `pmix_info_t` that PMIx made, freed by PMIx when dropped.
pub(crate) struct InfoArray<'l> {
    lib: &'l PmixLibrary,
    pub(crate) ptr: *mut PmixInfo,
    pub(crate) len: usize,
}

impl<'l> InfoArray<'l> {
    /// `PMIx_Info_create(len)`: zeroed entries.
    pub(crate) fn new(lib: &'l PmixLibrary, len: usize) -> Self {
        // SAFETY: allocates `len` constructed entries (NULL on failure,
        // which `load` and `drop` check).
        let ptr = unsafe { (lib.info_create)(len) };
        InfoArray { lib, ptr, len }
    }

    /// `PMIx_Info_load(&self[i], key, data, type)`: PMIx copies the key
    /// and the value.
    pub(crate) fn load(&mut self, i: usize, key: &[u8], data: *const c_void, type_: u16) {
        if self.ptr.is_null() || i >= self.len || key.last() != Some(&0) {
            return;
        }
        // SAFETY: `i < len` of an array PMIx made; `key` is NUL-terminated
        // (checked); `data` points to a value of `type_` that the caller
        // keeps alive for the call, and PMIx copies it.
        unsafe {
            (self.lib.info_load)(self.ptr.add(i), key.as_ptr().cast::<c_char>(), data, type_);
        }
    }
}

impl Drop for InfoArray<'_> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: made by PMIx_Info_create with this length, freed once.
            unsafe { (self.lib.info_free)(self.ptr, self.len) };
        }
    }
}
