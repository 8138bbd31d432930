//! The query run in this process: the launcher's library loaded and the
//! session driven on a thread of its own, given up on after a time bound.
//!
//! A thread waiting in PMIx (a server that accepted the connection and
//! does not answer) cannot be cancelled: it is left to finish when the
//! server answers, which is one reason this process's one session is
//! then spent, and why mpidd runs the query in a helper process
//! (`helper.rs`).

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::pmix::error::PmixError;
use crate::pmix::ffi::PmixLibrary;
use crate::pmix::helper::{hostname, is_below};
use crate::pmix::locate::find_libpmix;
use crate::pmix::query;
use crate::pmix::release::release_namespace;
use crate::pmix::reported::{Reported, ReportedNamespace};
use crate::pmix::session::{check_version, claim_process, ToolSession};
use crate::pmix::tables::is_tool;

/// Runs the session for launcher `pid`; `on_step` hears each step as it
/// starts. With `release`, the ranks of every job namespace are then sent
/// `PMIX_DEBUGGER_RELEASE` (`release.rs`). Fails with
/// [`PmixError::Timeout`] after `timeout` (none when it is zero).
pub(crate) fn query_in_process(
    pid: i32,
    timeout: Duration,
    max_procs: usize,
    release: bool,
    on_step: impl Fn(&str) + Send + 'static,
) -> Result<Reported, PmixError> {
    let located = find_libpmix(pid)?;
    claim_process(pid)?;
    let step = Arc::new(Mutex::new("loading libpmix"));
    let (tx, rx) = mpsc::channel();
    let seen = Arc::clone(&step);
    let work = move || {
        let set = |s: &'static str| {
            if let Ok(mut g) = seen.lock() {
                *g = s;
            }
            on_step(s);
        };
        let _ = tx.send(session(
            pid,
            &located.open_at,
            &located.recorded,
            max_procs,
            release,
            set,
        ));
    };
    let spawned = std::thread::Builder::new()
        .name(format!("mpidd-pmix-{pid}"))
        .spawn(work);
    if let Err(e) = spawned {
        return Err(PmixError::Helper {
            pid,
            program: "a thread".into(),
            reason: e.to_string(),
        });
    }
    let answer = if timeout.is_zero() {
        rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
    } else {
        rx.recv_timeout(timeout)
    };
    match answer {
        Ok(answer) => answer,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(PmixError::Timeout {
            pid,
            step: step.lock().map(|s| s.to_string()).unwrap_or_default(),
            timeout_ms: timeout.as_millis() as u64,
        }),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(PmixError::Helper {
            pid,
            program: "a thread".into(),
            reason: "the PMIx thread ended without an answer".into(),
        }),
    }
}

/// `PMIX_PROC_STATE_CONNECTED`: the process has connected to the server.
const CONNECTED: u8 = 6;

/// Load, check, connect, ask, release when asked, finalize.
fn session(
    pid: i32,
    open_at: &std::path::Path,
    recorded: &str,
    max_procs: usize,
    release: bool,
    step: impl Fn(&'static str),
) -> Result<Reported, PmixError> {
    step("loading libpmix");
    let lib = PmixLibrary::load(pid, open_at)?;
    let version = check_version(&lib, pid)?;
    step("PMIx_tool_init");
    let session = ToolSession::connect(&lib, pid)?;
    step("PMIX_QUERY_NAMESPACES");
    let names = query::namespaces(&session)?;
    let mut namespaces = Vec::with_capacity(names.len());
    for ns in &names {
        step("PMIX_QUERY_PROC_TABLE");
        namespaces.push(query::proc_table(&session, ns, max_procs)?);
    }
    let mut released = Vec::new();
    if release {
        let here = hostname();
        let below = |p: i32| is_below(p, pid);
        // A job is released once every rank has connected to the server
        // (a rank held in PMIx_Init waits there connected); one whose
        // ranks still start would miss the event, which PMIx does not
        // keep for a rank that has not yet asked for it, and is left for
        // a later session.
        let started = |ns: &ReportedNamespace| {
            !ns.procs.is_empty() && ns.procs.iter().all(|p| p.pid > 0 && p.state == CONNECTED)
        };
        for ns in &namespaces {
            if started(ns) && !is_tool(ns, &session.own_nspace, here.as_deref(), &below) {
                step("PMIX_DEBUGGER_RELEASE");
                release_namespace(&session, &ns.nspace)?;
                released.push(ns.nspace.clone());
            }
        }
    }
    step("PMIx_tool_finalize");
    let own_nspace = session.own_nspace.clone();
    drop(session);
    Ok(Reported {
        version,
        library: recorded.to_string(),
        own_nspace,
        namespaces,
        released,
    })
}
