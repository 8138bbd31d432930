//! The ranks' side of acquisition: releasing the ranks that wait at their
//! `MPIR_debug_gate`, and reading a launcher that already runs.

use crate::backend::attach_guard::{AttachError, AttachGuard};
use crate::backend::live_process::{LiveError, LiveProcess};
use crate::limits::Limits;
use crate::mpir::launch::error::LaunchError;
use crate::mpir::mpir_protocol::{GateAdvice, MpirSession};
use crate::mpir::{self, MpirError, MpirState};
use crate::targets::live_target::LiveTarget;

/// What [`release_local_ranks`] did.
#[derive(Debug, Default)]
pub struct GateRelease {
    /// The pids of the ranks whose `MPIR_debug_gate` was set to 1.
    pub released: Vec<i32>,
    /// The ranks that were not released, and why.
    pub failed: Vec<(i32, GateFailure)>,
}

/// Why one rank was not released.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GateFailure {
    /// It runs on another host: its pid names another process here.
    #[error("it runs on {host}, not on this host")]
    OtherHost {
        /// The host the table names.
        host: String,
    },
    /// It has no `MPIR_debug_gate` (its MPI does not wait there).
    #[error("it has no MPIR_debug_gate symbol")]
    NoGate,
    /// It could not be stopped or let go.
    #[error(transparent)]
    Attach(#[from] AttachError),
    /// Its memory or symbols could not be opened.
    #[error(transparent)]
    Live(#[from] LiveError),
    /// Its gate could not be written.
    #[error(transparent)]
    Mpir(#[from] MpirError),
}

/// This machine's host name, as the kernel has it.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// Releases the ranks of a process table that run on this host: each is
/// stopped, its `MPIR_debug_gate` set to 1, and let go. Ranks on other
/// hosts are reported and not touched: a pid names a process only on its
/// own host, and writing into the local process that happens to have a
/// remote rank's pid would hit a stranger.
pub fn release_local_ranks(state: &MpirState) -> GateRelease {
    let here = host_name();
    let mut report = GateRelease::default();
    for p in &state.proctable {
        if p.host_name != here && p.host_name != "localhost" {
            let host = p.host_name.to_string();
            report.failed.push((p.pid, GateFailure::OtherHost { host }));
            continue;
        }
        let result = (|| -> Result<bool, GateFailure> {
            let guard = AttachGuard::attach(p.pid)?;
            let symbols = LiveTarget::open(p.pid)?;
            let mut mem = LiveProcess::open(p.pid)?;
            let has = MpirSession::release_rank(&mut mem, &symbols)?;
            guard.detach()?;
            Ok(has)
        })();
        match result {
            Ok(true) => report.released.push(p.pid),
            Ok(false) => report.failed.push((p.pid, GateFailure::NoGate)),
            Err(e) => report.failed.push((p.pid, e)),
        }
    }
    report
}

/// A running launcher's MPIR state, read by [`snapshot`].
#[derive(Clone, Debug)]
pub struct LauncherSnapshot {
    /// Its MPIR variables and process table.
    pub state: MpirState,
    /// Whether its ranks wait at their gates.
    pub gate: GateAdvice,
}

/// Stops a running launcher (every thread), reads its MPIR state, and lets
/// it go before anything else is done: the launcher is stopped only while
/// it is read.
pub fn snapshot(pid: i32, limits: &Limits) -> Result<LauncherSnapshot, LaunchError> {
    let guard = AttachGuard::attach(pid)?;
    let read = LiveTarget::open(pid)
        .map_err(LaunchError::from)
        .and_then(|t| {
            let state = mpir::read_state(&t, limits)?;
            Ok((t, state))
        });
    // The launcher runs on before the result is looked at.
    guard.detach()?;
    let (target, state) = read?;
    let session = MpirSession::new(&target)?;
    Ok(LauncherSnapshot {
        state,
        gate: session.gate(),
    })
}
