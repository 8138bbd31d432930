//! Letting ranks go that wait in `PMIx_Init`: a job started with
//! `PMIX_DEBUG_STOP_IN_INIT` (PRRTE's `--stop-in-init`) holds each rank
//! there until the `PMIX_DEBUGGER_RELEASE` event reaches it, which is
//! PMIx's counterpart of MPIR's `MPIR_debug_gate`.
//!
//! The event goes to the namespace's every rank (a custom range of the
//! wildcard rank) and to non-default handlers only: the rank's PMIx
//! client registers one for it while it waits, and Open MPI's catch-all
//! handler would take an event it does not expect for an error and abort
//! the job. A rank that is not held has no such handler, so the event is
//! harmless to it.

use std::ffi::c_char;

use crate::pmix::error::PmixError;
use crate::pmix::ffi::{
    keys, types, PmixProc, NSPACE_BYTES, PMIX_DEBUGGER_RELEASE, PMIX_OPERATION_SUCCEEDED,
    PMIX_RANGE_CUSTOM, PMIX_RANK_WILDCARD, PMIX_SUCCESS,
};
use crate::pmix::session::{InfoArray, ToolSession};

/// Sends `PMIX_DEBUGGER_RELEASE` to every rank of `nspace`. Blocks until
/// the library has queued it to the server; the tool's finalize, which
/// follows on the same connection, goes after it.
pub(crate) fn release_namespace(session: &ToolSession<'_>, nspace: &str) -> Result<(), PmixError> {
    let lib = session.lib;
    let query = format!("PMIX_DEBUGGER_RELEASE to {nspace}");
    if nspace.len() >= NSPACE_BYTES || nspace.as_bytes().contains(&0) {
        return Err(PmixError::Answer {
            pid: session.pid,
            query,
            what: format!("a namespace name of {} bytes", nspace.len()),
        });
    }
    let mut ranks = PmixProc {
        nspace: [0; NSPACE_BYTES],
        rank: PMIX_RANK_WILDCARD,
    };
    for (to, &from) in ranks.nspace.iter_mut().zip(nspace.as_bytes()) {
        *to = from as c_char;
    }
    let non_default = true;
    let mut infos = InfoArray::new(lib, 2);
    if infos.ptr.is_null() {
        return Err(PmixError::Query {
            pid: session.pid,
            query,
            status: "PMIx_Info_create gave no array (out of memory)".into(),
        });
    }
    infos.load(
        0,
        keys::EVENT_CUSTOM_RANGE,
        (&ranks as *const PmixProc).cast(),
        types::PROC,
    );
    infos.load(
        1,
        keys::EVENT_NON_DEFAULT,
        (&non_default as *const bool).cast(),
        types::BOOL,
    );
    // SAFETY: `infos` is an array of `infos.len` pmix_info_t that PMIx
    // made and loaded (it copied `ranks` and the flag); a NULL source is
    // this tool itself; a NULL callback makes the call blocking, so
    // nothing is used after it returns.
    let status = unsafe {
        (lib.notify_event)(
            PMIX_DEBUGGER_RELEASE,
            std::ptr::null(),
            PMIX_RANGE_CUSTOM,
            infos.ptr,
            infos.len,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    };
    if status == PMIX_SUCCESS || status == PMIX_OPERATION_SUCCEEDED {
        Ok(())
    } else {
        Err(PmixError::Query {
            pid: session.pid,
            query,
            status: lib.status_text(status),
        })
    }
}
