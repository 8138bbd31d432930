//! `mpidd pmix-helper` (hidden): one PMIx query in a process of its own,
//! which `mpidd procs` and `mpidd job` start through
//! `mpidd_read::pmix::read_pmix_tables` (see the `pmix` module's docs for
//! why a process of its own).

use std::time::Duration;

use mpidd_read::pmix::{PmixHelper, PmixOptions, DEFAULT_MAX_PROCS};

/// The hidden subcommand's name.
pub const SUBCOMMAND: &str = "pmix-helper";

/// The options that run each PMIx query in this executable's hidden
/// subcommand, bounded by `timeout`.
pub fn options(timeout: Duration) -> PmixOptions {
    PmixOptions {
        timeout,
        max_procs: DEFAULT_MAX_PROCS,
        helper: std::env::current_exe().ok().map(|program| PmixHelper {
            program,
            args: vec![SUBCOMMAND.into()],
        }),
    }
}

/// Runs the query for `pid` (and the release of its held ranks, with
/// `release`) and ends the process.
pub fn serve(pid: i32, timeout_ms: u64, max_procs: usize, release: bool) -> ! {
    mpidd_read::pmix::serve_helper(pid, Duration::from_millis(timeout_ms), max_procs, release)
}
