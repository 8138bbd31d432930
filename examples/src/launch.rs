//! `mpidd launch` and `mpidd attach`: the MPIR protocol driven over ptrace.
//!
//! Output is one line per event: text, or with `--json` one JSON object per
//! line (`"event": "spawned" | "aborting" | "exited" | ...`); a spawned
//! event carries the whole MPIR state with its `proctable`.

use std::io::Write;

use mpidd_read::mpir::{self, MpirError, MpirState};
use mpidd_read::mpir_protocol::{GateAdvice, MpirEvent, MpirSession};
use mpidd_read::{AttachGuard, Limits, LiveProcess, LiveTarget};
use serde::Serialize;

use crate::ptrace_driver::{DriverError, Stop, Tracee};

/// Why launching or attaching failed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// Driving the launcher.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// The MPIR protocol.
    #[error(transparent)]
    Mpir(#[from] MpirError),
    /// Reading the launcher.
    #[error(transparent)]
    Live(#[from] mpidd_read::LiveError),
    /// Attaching to a running process.
    #[error(transparent)]
    Attach(#[from] mpidd_read::AttachError),
    /// Writing the output.
    #[error("writing the output: {0}")]
    Output(#[from] std::io::Error),
    /// Writing JSON.
    #[error("writing JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// How to run the protocol.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Print JSON lines.
    pub json: bool,
    /// Attach to each rank and set its `MPIR_debug_gate` to 1.
    pub gate: bool,
    /// Stay attached until the launcher ends, reporting every event.
    pub watch: bool,
    /// Bounds on what is read.
    pub limits: Limits,
}

/// What happened to the ranks' gates.
#[derive(Debug, Serialize)]
struct GateReport {
    advice: GateAdvice,
    /// Ranks whose `MPIR_debug_gate` was set to 1 (with `--gate`).
    released: Vec<i32>,
    /// Ranks that could not be released, and why.
    failed: Vec<(i32, String)>,
}

#[derive(Serialize)]
struct Line<'a> {
    launcher_pid: i32,
    #[serde(flatten)]
    event: &'a MpirEvent,
    #[serde(skip_serializing_if = "Option::is_none")]
    gate: Option<&'a GateReport>,
}

#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Final {
    /// The launcher ended with this status.
    Exited { launcher_pid: i32, status: i32 },
    /// mpidd detached and left the launcher running.
    Detached { launcher_pid: i32 },
}

fn emit_event(
    out: &mut impl Write,
    opts: &Options,
    pid: i32,
    event: &MpirEvent,
    gate: Option<&GateReport>,
) -> Result<(), LaunchError> {
    if opts.json {
        serde_json::to_writer(
            &mut *out,
            &Line {
                launcher_pid: pid,
                event,
                gate,
            },
        )?;
        writeln!(out)?;
    } else {
        match event {
            MpirEvent::Spawned(state) => print_table(out, state)?,
            MpirEvent::Aborting { message } => writeln!(
                out,
                "aborting: {}",
                message.as_deref().unwrap_or("(no message)")
            )?,
            MpirEvent::Null => writeln!(out, "breakpoint with MPIR_debug_state 0 (ignored)")?,
            MpirEvent::Unknown { state } => writeln!(
                out,
                "breakpoint with unknown MPIR_debug_state {state} (ignored)"
            )?,
        }
        if let Some(g) = gate {
            describe_gate(out, g)?;
        }
    }
    out.flush()?;
    Ok(())
}

fn print_table(out: &mut impl Write, state: &MpirState) -> Result<(), LaunchError> {
    writeln!(
        out,
        "spawned: {} processes (MPIR in {})",
        state.proctable.len(),
        state.defined_in
    )?;
    for (rank, p) in state.proctable.iter().enumerate() {
        writeln!(
            out,
            "  rank {rank:<6} {:<20} pid {:<8} {}",
            p.host_name, p.pid, p.executable_name
        )?;
    }
    Ok(())
}

fn describe_gate(out: &mut impl Write, g: &GateReport) -> Result<(), LaunchError> {
    match (g.advice, g.released.is_empty() && g.failed.is_empty()) {
        (GateAdvice::RanksWaitAtGate, true) => writeln!(
            out,
            "  the ranks may be held at MPIR_debug_gate (the launcher has no \
             MPIR_partial_attach_ok); --gate releases them"
        )?,
        (GateAdvice::LauncherReleases, true) => {
            writeln!(out, "  the launcher releases the ranks itself")?
        }
        _ => writeln!(out, "  gate set to 1 in {} ranks", g.released.len())?,
    }
    for (pid, why) in &g.failed {
        writeln!(out, "  could not release rank pid {pid}: {why}")?;
    }
    Ok(())
}

/// Attaches to each rank of this host, sets its gate, detaches. Ranks on
/// other hosts are reported, not touched.
fn release_ranks(state: &MpirState, advice: GateAdvice) -> GateReport {
    let mut report = GateReport {
        advice,
        released: Vec::new(),
        failed: Vec::new(),
    };
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    for p in &state.proctable {
        // A pid names a process only on its own host: writing the gate of
        // the local process that happens to have a remote rank's pid would
        // hit a stranger.
        if p.host_name != here && p.host_name != "localhost" {
            report.failed.push((
                p.pid,
                format!("it runs on {}, not on this host", p.host_name),
            ));
            continue;
        }
        let result = (|| -> Result<bool, String> {
            let guard = AttachGuard::attach(p.pid).map_err(|e| e.to_string())?;
            let symbols = LiveTarget::open(p.pid).map_err(|e| e.to_string())?;
            let mut mem = LiveProcess::open(p.pid).map_err(|e| e.to_string())?;
            let has = MpirSession::release_rank(&mut mem, &symbols).map_err(|e| e.to_string())?;
            guard.detach().map_err(|e| e.to_string())?;
            Ok(has)
        })();
        match result {
            Ok(true) => report.released.push(p.pid),
            Ok(false) => report
                .failed
                .push((p.pid, "it has no MPIR_debug_gate symbol".into())),
            Err(e) => report.failed.push((p.pid, e)),
        }
    }
    report
}

fn gate_report(session: &MpirSession, state: &MpirState, opts: &Options) -> GateReport {
    if opts.gate {
        release_ranks(state, session.gate())
    } else {
        GateReport {
            advice: session.gate(),
            released: Vec::new(),
            failed: Vec::new(),
        }
    }
}

/// Runs `argv` (a launcher and its arguments) under the MPIR protocol.
/// Returns the exit code mpidd should end with: the launcher's, unless
/// mpidd was interrupted.
pub fn launch(argv: &[String], opts: &Options) -> Result<i32, LaunchError> {
    let mut out = std::io::stdout().lock();
    let mut tracee = Tracee::launch(argv)?;
    let pid = tracee.pid().as_raw();
    let target = LiveTarget::open(pid)?;
    let symbols = &target;
    let mut session = match MpirSession::new(symbols) {
        Ok(s) => s,
        Err(e) => {
            // Not an MPIR starter: let it run on as if mpidd were not there.
            for p in tracee.detach_all() {
                eprintln!("mpidd: while detaching: {p}");
            }
            return Err(e.into());
        }
    };
    let bp = session.breakpoint().addr.0;
    tracee.insert_breakpoint(bp)?;
    session.announce(tracee.memory(), symbols)?;
    tracee.resume_all()?;
    loop {
        match tracee.wait_stop()? {
            Stop::Breakpoint { tid, addr } if addr == bp => {
                let event = session.on_breakpoint(&target, symbols, &opts.limits)?;
                let gate = match &event {
                    MpirEvent::Spawned(state) => Some(gate_report(&session, state, opts)),
                    _ => None,
                };
                emit_event(&mut out, opts, pid, &event, gate.as_ref())?;
                let spawned = matches!(event, MpirEvent::Spawned(_));
                if spawned && !opts.watch {
                    let problems = detach(&mut tracee, &mut session, symbols);
                    report(problems);
                    let status = tracee.wait_exit()?;
                    return exited(&mut out, opts, pid, status);
                }
                tracee.step_over(tid, addr)?;
            }
            Stop::Breakpoint { tid, addr } => tracee.step_over(tid, addr)?,
            Stop::Exited(status) => return exited(&mut out, opts, pid, status),
            Stop::Interrupted(sig) => {
                let problems = detach(&mut tracee, &mut session, symbols);
                report(problems);
                finish(&mut out, opts, Final::Detached { launcher_pid: pid })?;
                eprintln!("mpidd: {sig}: detached from {pid}, which runs on");
                return Ok(128 + sig as i32);
            }
        }
    }
}

fn detach(tracee: &mut Tracee, session: &mut MpirSession, symbols: &LiveTarget) -> Vec<String> {
    let mut undo = Vec::new();
    let mut problems = tracee.detach_all_with(|mem| {
        if let Err(e) = session.finish(mem, symbols) {
            undo.push(format!("resetting MPIR_being_debugged: {e}"));
        }
    });
    problems.extend(undo);
    problems
}

fn report(problems: Vec<String>) {
    for p in problems {
        eprintln!("mpidd: while detaching: {p}");
    }
}

/// Reports the launcher's end; its status becomes mpidd's.
fn exited(out: &mut impl Write, opts: &Options, pid: i32, status: i32) -> Result<i32, LaunchError> {
    finish(
        out,
        opts,
        Final::Exited {
            launcher_pid: pid,
            status,
        },
    )?;
    Ok(status)
}

fn finish(out: &mut impl Write, opts: &Options, f: Final) -> Result<(), LaunchError> {
    if opts.json {
        serde_json::to_writer(&mut *out, &f)?;
        writeln!(out)?;
    } else {
        match f {
            Final::Exited { status, .. } => writeln!(out, "launcher exited with status {status}")?,
            Final::Detached { .. } => writeln!(out, "detached; the launcher runs on")?,
        }
    }
    out.flush()?;
    Ok(())
}

/// Attaches to a running launcher, reads its table, optionally releases
/// the ranks, and detaches.
pub fn attach(pid: i32, opts: &Options) -> Result<(), LaunchError> {
    let mut out = std::io::stdout().lock();
    let guard = AttachGuard::attach(pid)?;
    let target = LiveTarget::open(pid)?;
    let state = mpir::read_state(&target, &opts.limits);
    // The launcher runs on before the ranks are touched.
    guard.detach()?;
    let state = state?;
    let session = MpirSession::new(&target)?;
    let gate = gate_report(&session, &state, opts);
    let event = MpirEvent::Spawned(Box::new(state));
    emit_event(&mut out, opts, pid, &event, Some(&gate))?;
    Ok(())
}
