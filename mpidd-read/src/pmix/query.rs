//! The two questions mpidd asks a launcher's PMIx server: which
//! namespaces (jobs) it runs, and each one's process table, as
//! `PMIx_Query_info` answers them, copied out of PMIx's memory at once.

use std::ffi::{c_char, CString};

use crate::pmix::error::PmixError;
use crate::pmix::ffi::{c_text, keys, types, PmixInfo, PmixProcInfo, PmixQuery};
use crate::pmix::reported::{ReportedNamespace, ReportedProc};
use crate::pmix::session::{InfoArray, ToolSession};

/// `PMIX_QUERY_PARTIAL_SUCCESS`: some keys were answered.
const PARTIAL_SUCCESS: i32 = -104;

/// Most namespaces taken from one server.
const MAX_NAMESPACES: usize = 4096;

/// The results of one `PMIx_Query_info`, freed by PMIx when dropped.
struct Results<'l> {
    session: &'l ToolSession<'l>,
    ptr: *mut PmixInfo,
    len: usize,
}

impl Results<'_> {
    /// The value of `key` among the results.
    fn find(&self, key: &[u8]) -> Option<&PmixInfo> {
        let key = key.strip_suffix(b"\0").unwrap_or(key);
        (0..self.len).find_map(|i| {
            // SAFETY: `i < len`, and PMIx returned `len` entries at `ptr`.
            let info = unsafe { &*self.ptr.add(i) };
            let name: Vec<u8> = info
                .key
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            (name == key).then_some(info)
        })
    }
}

impl Drop for Results<'_> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: PMIx_Query_info allocated `len` entries at `ptr`;
            // freed once.
            unsafe { (self.session.lib.info_free)(self.ptr, self.len) };
        }
    }
}

/// Asks for `key`, qualified by a namespace when given.
fn query<'s>(
    session: &'s ToolSession<'s>,
    key: &[u8],
    nspace: Option<&str>,
    what: &str,
) -> Result<Results<'s>, PmixError> {
    let lib = session.lib;
    let mut qualifiers = InfoArray::new(lib, usize::from(nspace.is_some()));
    if nspace.is_some() && qualifiers.ptr.is_null() {
        return Err(PmixError::Query {
            pid: session.pid,
            query: what.to_string(),
            status: "PMIx_Info_create gave no array (out of memory)".into(),
        });
    }
    let ns = nspace.map(|n| CString::new(n).unwrap_or_default());
    if let Some(ns) = &ns {
        // PMIX_STRING's data is the char* itself (PMIx copies the
        // string), where the other types pass the address of the value.
        qualifiers.load(0, keys::NSPACE, ns.as_ptr().cast(), types::STRING);
    }
    let mut key_list: [*mut c_char; 2] = [key.as_ptr() as *mut c_char, std::ptr::null_mut()];
    let mut q = PmixQuery {
        keys: key_list.as_mut_ptr(),
        qualifiers: if nspace.is_some() {
            qualifiers.ptr
        } else {
            std::ptr::null_mut()
        },
        nqual: if nspace.is_some() { qualifiers.len } else { 0 },
    };
    let mut results: *mut PmixInfo = std::ptr::null_mut();
    let mut n: usize = 0;
    // SAFETY: one pmix_query_t whose NULL-terminated key list and
    // qualifier array outlive the call (PMIx reads, never frees them);
    // PMIx allocates the results, which `Results` frees.
    let status = unsafe { (lib.query_info)(&mut q, 1, &mut results, &mut n) };
    let results = Results {
        session,
        ptr: results,
        len: n,
    };
    if status != 0 && status != PARTIAL_SUCCESS {
        return Err(PmixError::Query {
            pid: session.pid,
            query: what.to_string(),
            status: lib.status_text(status),
        });
    }
    Ok(results)
}

/// The namespaces the server runs (`PMIX_QUERY_NAMESPACES`).
pub(crate) fn namespaces(session: &ToolSession<'_>) -> Result<Vec<String>, PmixError> {
    let what = "PMIX_QUERY_NAMESPACES";
    let results = query(session, keys::QUERY_NAMESPACES, None, what)?;
    let bad = |what_was: String| PmixError::Answer {
        pid: session.pid,
        query: what.to_string(),
        what: what_was,
    };
    let info = results
        .find(keys::QUERY_NAMESPACES)
        .ok_or_else(|| bad("no value for its key".into()))?;
    if info.value.type_ != types::STRING {
        return Err(bad(format!("a value of type {}", info.value.type_)));
    }
    // SAFETY: a PMIX_STRING value holds a NUL-terminated char* (or NULL)
    // that PMIx owns until the results are freed.
    let text = unsafe { c_text(info.value.data.string) }.unwrap_or_default();
    let list: Vec<String> = text
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if list.len() > MAX_NAMESPACES {
        return Err(bad(format!(
            "{} namespaces (at most {MAX_NAMESPACES} are read)",
            list.len()
        )));
    }
    Ok(list)
}

/// The process table of one namespace (`PMIX_QUERY_PROC_TABLE`), at
/// most `max_procs` entries.
pub(crate) fn proc_table(
    session: &ToolSession<'_>,
    nspace: &str,
    max_procs: usize,
) -> Result<ReportedNamespace, PmixError> {
    let what = format!("PMIX_QUERY_PROC_TABLE of {nspace}");
    let results = query(session, keys::QUERY_PROC_TABLE, Some(nspace), &what)?;
    let bad = |what_was: String| PmixError::Answer {
        pid: session.pid,
        query: what.clone(),
        what: what_was,
    };
    let info = results
        .find(keys::QUERY_PROC_TABLE)
        .ok_or_else(|| bad("no value for its key".into()))?;
    if info.value.type_ != types::DATA_ARRAY {
        return Err(bad(format!("a value of type {}", info.value.type_)));
    }
    // SAFETY: a PMIX_DATA_ARRAY value holds a pmix_data_array_t* (or
    // NULL) that PMIx owns until the results are freed.
    let darray = unsafe { info.value.data.darray };
    if darray.is_null() {
        return Err(bad("a NULL array".into()));
    }
    // SAFETY: checked non-null; PMIx made it.
    let darray = unsafe { &*darray };
    if darray.type_ != types::PROC_INFO {
        return Err(bad(format!("an array of type {}", darray.type_)));
    }
    if darray.size > max_procs {
        return Err(bad(format!(
            "{} processes (at most {max_procs} are read)",
            darray.size
        )));
    }
    if darray.size > 0 && darray.array.is_null() {
        return Err(bad(format!("{} processes at NULL", darray.size)));
    }
    let base = darray.array.cast::<PmixProcInfo>();
    let procs = (0..darray.size)
        .map(|i| {
            // SAFETY: an array of `size` pmix_proc_info_t (type checked),
            // `i < size`.
            let p = unsafe { &*base.add(i) };
            ReportedProc {
                rank: p.proc_.rank,
                // SAFETY: NUL-terminated strings or NULL, owned by PMIx
                // until the results are freed.
                host_name: unsafe { c_text(p.hostname) }.unwrap_or_default(),
                // SAFETY: as above.
                executable_name: unsafe { c_text(p.executable_name) }.unwrap_or_default(),
                pid: p.pid,
                exit_code: p.exit_code,
                state: p.state,
            }
        })
        .collect();
    Ok(ReportedNamespace {
        nspace: nspace.to_string(),
        procs,
    })
}
