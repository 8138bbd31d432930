//! A launcher's process table through its PMIx server: how a tool finds
//! the ranks of an Open MPI 5 job, whose launcher (PRRTE's `prterun`)
//! has no MPIR symbols.
//!
//! The tool loads the launcher's own libpmix (the file its process maps,
//! opened through `/proc/PID/root` when the launcher runs in a chroot or
//! container) so that tool and server speak the same version, checks its
//! `PMIx_Get_version`, connects with `PMIx_tool_init` to the server of
//! the launcher's pid (and no other), asks `PMIX_QUERY_NAMESPACES` and
//! each namespace's `PMIX_QUERY_PROC_TABLE`, and finalizes. The answer is
//! [`PmixTables`]: each namespace's ranks as the MPIR [`ProcTable`]
//! holds them, with PMIx's state and exit code beside.
//!
//! [`release_pmix_ranks`] goes one step further when the user asks: it
//! sends `PMIX_DEBUGGER_RELEASE` to each job, which lets go ranks that a
//! launcher started with `--stop-in-init` holds in `PMIx_Init` (PMIx's
//! counterpart of MPIR's debug gate).
//!
//! Every query is bounded by [`PmixOptions::timeout`]: a server that never
//! answers gives [`PmixError::Timeout`] naming the step. A stopped
//! launcher is refused before any connection ([`PmixError::Stopped`]).
//! OpenPMIx 5.0's server (5.0.7, 5.0.11) crashes when it handles the
//! connection of a tool that has gone, so the session that timed out is
//! never torn down: its thread, or its helper process, waits on in the
//! background until the server answers or the launcher ends.
//!
//! Run in this process, PMIx starts threads of its own and may not be
//! initialized twice, so one process makes at most one session (a second
//! gets [`PmixError::AlreadyUsed`]), and a session stuck in PMIx leaves
//! its thread behind. With [`PmixOptions::helper`], each query runs in a
//! helper process instead (mpidd's hidden `pmix-helper` subcommand, which
//! calls [`serve_helper`]), started inside the launcher's root when it has
//! another one: a launcher's libpmix built for a newer C library than the
//! host's loads there and not here (Debian 13's, on a Debian 12 host).
//!
//! This folder stands on nothing else of the crate but the MPIR table's
//! types; `ffi.rs` holds the C declarations (the host library's own
//! structs, `repr(C)`), `locate.rs` finds the library, `session.rs` and
//! `query.rs` talk to the server, `release.rs` lets held ranks go,
//! `in_process.rs` and `helper.rs` run them under the time bound,
//! `tables.rs` is the answer.
//!
//! [`ProcTable`]: crate::mpir::ProcTable

mod error;
// Without `live` on a 64-bit Linux host nothing is queried, so nothing is
// assembled: only the types remain.
#[cfg_attr(
    not(all(feature = "live", target_os = "linux", target_pointer_width = "64")),
    allow(dead_code)
)]
mod reported;
#[cfg_attr(
    not(all(feature = "live", target_os = "linux", target_pointer_width = "64")),
    allow(dead_code)
)]
mod tables;

#[cfg(all(feature = "live", target_os = "linux", target_pointer_width = "64"))]
#[allow(unsafe_code)]
mod ffi;
#[cfg(all(feature = "live", target_os = "linux", target_pointer_width = "64"))]
#[allow(unsafe_code)]
mod helper;
#[cfg(all(feature = "live", target_os = "linux", target_pointer_width = "64"))]
mod in_process;
#[cfg(all(feature = "live", target_os = "linux", target_pointer_width = "64"))]
mod locate;
#[cfg(all(feature = "live", target_os = "linux", target_pointer_width = "64"))]
#[allow(unsafe_code)]
mod query;
#[cfg(all(feature = "live", target_os = "linux", target_pointer_width = "64"))]
#[allow(unsafe_code)]
mod release;
#[cfg(all(feature = "live", target_os = "linux", target_pointer_width = "64"))]
#[allow(unsafe_code)]
mod session;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

pub use error::PmixError;
#[cfg(all(feature = "live", target_os = "linux", target_pointer_width = "64"))]
pub use helper::serve_helper;
pub use tables::{PmixNamespace, PmixProcState, PmixTables};

/// How long a query may take by default: a server on the same host
/// answers in milliseconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The most processes read from one namespace's table by default.
pub const DEFAULT_MAX_PROCS: usize = 1 << 22;

/// How to ask a launcher's PMIx server.
#[derive(Clone, Debug)]
pub struct PmixOptions {
    /// Give up after this long (zero: wait as long as the server takes).
    pub timeout: Duration,
    /// Refuse a namespace of more processes than this.
    pub max_procs: usize,
    /// Run the query in this helper process rather than in this one.
    pub helper: Option<PmixHelper>,
}

impl Default for PmixOptions {
    fn default() -> Self {
        PmixOptions {
            timeout: DEFAULT_TIMEOUT,
            max_procs: DEFAULT_MAX_PROCS,
            helper: None,
        }
    }
}

/// A program that runs one query: started as `PROGRAM ARGS... --pid N
/// --timeout-ms T --max-procs M [--release]`, it calls [`serve_helper`]
/// with those.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmixHelper {
    /// The program (mpidd's own executable).
    pub program: PathBuf,
    /// Its first arguments (mpidd's hidden subcommand).
    pub args: Vec<OsString>,
}

/// The jobs of launcher `pid` as its PMIx server reports them. Linux on
/// 64-bit hosts, with the `live` feature.
///
/// A process that maps no libpmix fails at once with
/// [`PmixError::NotPmix`], before anything is loaded.
#[cfg(all(feature = "live", target_os = "linux", target_pointer_width = "64"))]
pub fn read_pmix_tables(pid: i32, options: &PmixOptions) -> Result<PmixTables, PmixError> {
    session(pid, options, false)
}

/// [`read_pmix_tables`], then, in the same session, `PMIX_DEBUGGER_RELEASE`
/// sent to the ranks of every job namespace whose every rank has started
/// and connected to the server (state `connected`; ranks still starting
/// would miss the event, so their job is left out):
/// ranks that wait in `PMIx_Init` (a job started with
/// `PMIX_DEBUG_STOP_IN_INIT`, PRRTE's `--stop-in-init`) go on; ranks that
/// do not wait are not disturbed. (One session, not a read and then a
/// release: OpenPMIx 5.0.11's server, given a second tool at once after
/// the first, lets the job's ranks go but then never ends itself.) This writes to the job, as setting
/// MPIR's `MPIR_debug_gate` does: call it only when the user asked. The
/// namespaces released are in [`PmixTables::released`].
#[cfg(all(feature = "live", target_os = "linux", target_pointer_width = "64"))]
pub fn release_pmix_ranks(pid: i32, options: &PmixOptions) -> Result<PmixTables, PmixError> {
    session(pid, options, true)
}

#[cfg(all(feature = "live", target_os = "linux", target_pointer_width = "64"))]
fn session(pid: i32, options: &PmixOptions, release: bool) -> Result<PmixTables, PmixError> {
    // Refused here, without a helper, when there is no library.
    locate::find_libpmix(pid)?;
    locate::check_running(pid)?;
    let (timeout, max_procs) = (options.timeout, options.max_procs);
    let reported = match &options.helper {
        Some(helper) => helper::query_in_helper(pid, timeout, max_procs, release, helper)?,
        None => in_process::query_in_process(pid, timeout, max_procs, release, |_| {})?,
    };
    let here = helper::hostname();
    PmixTables::assemble(pid, reported, here.as_deref(), |p| helper::is_below(p, pid))
}
