//! `mpidd launch` and `mpidd attach`: the MPIR protocol driven over ptrace.
//!
//! Output is one line per event: text, or with `--json` one JSON object per
//! line (`"event": "spawned" | "aborting" | "exited" | ...`); a spawned
//! event carries the whole MPIR state with its `proctable`. A launcher
//! without MPIR gives a `pmix_table` event instead: its PMIx tables
//! (`released` names the jobs `--gate` let go) and `held_in_init`, whether
//! the ranks still wait in `PMIx_Init` for a release.

use std::io::Write;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;

use mpidd_read::mpir::launch::{
    release_local_ranks, snapshot, LaunchError as DriverError, LaunchEvent, MpirLauncher,
};
use mpidd_read::mpir::{MpirError, MpirState};
use mpidd_read::mpir_protocol::{GateAdvice, MpirEvent};
use mpidd_read::pmix::{read_pmix_tables, release_pmix_ranks, PmixError, PmixOptions, PmixTables};
use mpidd_read::Limits;
use serde::Serialize;

use crate::pmix_hold::{with_hold, Hold};

/// Why launching or attaching failed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// Driving the launcher, or the MPIR protocol.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// Writing the output.
    #[error("writing the output: {0}")]
    Output(#[from] std::io::Error),
    /// Writing JSON.
    #[error("writing JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The launcher has no MPIR table, and its PMIx server gave none.
    #[error("{mpir}; and {pmix}")]
    NoTable {
        /// Why it is no MPIR starter.
        mpir: Box<MpirError>,
        /// Why its PMIx server gave no table.
        pmix: String,
    },
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

fn gate_report(advice: GateAdvice, state: &MpirState, opts: &Options) -> GateReport {
    let mut report = GateReport {
        advice,
        released: Vec::new(),
        failed: Vec::new(),
    };
    if opts.gate {
        let release = release_local_ranks(state);
        report.released = release.released;
        report.failed = release
            .failed
            .into_iter()
            .map(|(pid, why)| (pid, why.to_string()))
            .collect();
    }
    report
}

/// Runs `argv` (a launcher and its arguments) under the MPIR protocol.
/// Returns the exit code mpidd should end with: the launcher's, unless
/// mpidd was interrupted.
pub fn launch(argv: &[String], opts: &Options, pmix: &PmixOptions) -> Result<i32, LaunchError> {
    let mut out = std::io::stdout().lock();
    let (argv, hold) = with_hold(argv);
    let mut launcher = match MpirLauncher::start(&argv) {
        // Let go untraced: its ranks may still be known through PMIx.
        Err(DriverError::NotAStarter { pid, cause }) => {
            return pmix_launch(&mut out, opts, pmix, pid, cause, hold);
        }
        other => other?,
    };
    let pid = launcher.pid();
    loop {
        match launcher.next_event(&opts.limits)? {
            LaunchEvent::Mpir(event) => {
                let gate = match &event {
                    MpirEvent::Spawned(state) => {
                        Some(gate_report(launcher.session().gate(), state, opts))
                    }
                    _ => None,
                };
                emit_event(&mut out, opts, pid, &event, gate.as_ref())?;
                if matches!(event, MpirEvent::Spawned(_)) && !opts.watch {
                    report(launcher.detach());
                    let status = launcher.wait_exit()?;
                    return exited(&mut out, opts, pid, status);
                }
            }
            LaunchEvent::Exited(status) => return exited(&mut out, opts, pid, status),
            LaunchEvent::Interrupted(sig) => {
                report(launcher.detach());
                finish(&mut out, opts, Final::Detached { launcher_pid: pid })?;
                eprintln!("mpidd: {sig}: detached from {pid}, which runs on");
                return Ok(128 + sig as i32);
            }
        }
    }
}

/// How long a launcher without MPIR is given to start its ranks before
/// mpidd stops asking its PMIx server for them.
const PMIX_SPAWN_WAIT: Duration = Duration::from_secs(60);

/// How long a launcher may take to map libpmix (a wrapper's exec of the
/// PMIx launcher) before it is taken for one that is no PMIx launcher.
const PMIX_GRACE: Duration = Duration::from_secs(3);

/// How often the PMIx server is asked while the ranks start: each query
/// is a tool connection, which PRRTE keeps a namespace for.
const PMIX_POLL: Duration = Duration::from_millis(500);

/// How long after the last PMIx session the one that releases the ranks
/// comes (see `pmix_launch`).
const PMIX_RELEASE_AFTER: Duration = Duration::from_secs(2);

/// Whether every rank of every job has connected to the server.
fn all_connected(tables: &PmixTables) -> bool {
    tables
        .namespaces
        .iter()
        .all(|ns| ns.states.iter().all(|s| s.name() == Some("connected")))
}

/// Whether a PMIx answer holds a started job: a namespace whose every
/// rank has a pid.
fn job_started(tables: &PmixTables) -> bool {
    tables
        .namespaces
        .iter()
        .any(|ns| !ns.proctable.is_empty() && ns.proctable.iter().all(|p| p.pid > 0))
}

/// A launcher without MPIR (Open MPI 5's `prterun`, pid `pid`): the
/// driver has let it run on untraced, so its ranks are asked of its PMIx
/// server until they have all started (bounded by [`PMIX_SPAWN_WAIT`]),
/// shown, and the launcher's end is waited for as an MPIR launcher's.
/// Ranks held in `PMIx_Init` (`hold`) are released with `--gate`, as MPIR
/// gates are, else left waiting for a tool to release them.
fn pmix_launch(
    out: &mut impl Write,
    opts: &Options,
    pmix: &PmixOptions,
    pid: i32,
    no_mpir: MpirError,
    hold: Hold,
) -> Result<i32, LaunchError> {
    let started = Instant::now();
    let mut last: Option<PmixError>;
    // With --gate, once every rank has been seen connected, the next look
    // is also the release, in that one PMIx session, and it comes
    // PMIX_RELEASE_AFTER after the last: a rank that has only just
    // connected may not yet wait for the event, which it would then miss,
    // and OpenPMIx 5.0.11's server, sent the event half a second after
    // another tool's session, lets the ranks go but never ends itself
    // (after a second or more it does).
    // Ranks that are not held have nothing to be released from.
    let gate = opts.gate && hold.holds();
    let mut ready = false;
    loop {
        let look = if gate && ready {
            release_pmix_ranks
        } else {
            read_pmix_tables
        };
        match look(pid, pmix) {
            Ok(tables) if gate && !ready => {
                ready = job_started(&tables) && all_connected(&tables);
                last = None;
            }
            Ok(tables) if job_started(&tables) && (!gate || !tables.released.is_empty()) => {
                if opts.json {
                    serde_json::to_writer(
                        &mut *out,
                        &serde_json::json!({
                            "launcher_pid": pid,
                            "event": "pmix_table",
                            "pmix": tables,
                            "held_in_init": hold.holds() && !gate,
                        }),
                    )?;
                    writeln!(out)?;
                } else {
                    crate::procs_pmix::print_pmix(out, &tables, false)
                        .map_err(|e| std::io::Error::other(e.to_string()))?;
                    describe_pmix_hold(out, pid, hold, &tables)?;
                }
                out.flush()?;
                break;
            }
            Ok(_) => last = None,
            // A wrapper (pip's mpirun) takes a moment to exec the PMIx
            // launcher; one that maps no libpmix after that never will
            // (Debian's mpiexec.hydra).
            Err(e @ PmixError::NotPmix { .. }) if started.elapsed() >= PMIX_GRACE => {
                return Err(LaunchError::NoTable {
                    mpir: Box::new(no_mpir),
                    pmix: e.to_string(),
                });
            }
            Err(e) => last = Some(e),
        }
        let gone = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'))
        });
        if gone || started.elapsed() >= PMIX_SPAWN_WAIT {
            let why = match last {
                Some(e) => e.to_string(),
                None => "its PMIx server listed no job whose every rank had started".to_string(),
            };
            return Err(LaunchError::NoTable {
                mpir: Box::new(no_mpir),
                pmix: format!(
                    "{why} {}",
                    if gone {
                        "before it ended"
                    } else {
                        "within 60 s"
                    }
                ),
            });
        }
        std::thread::sleep(if ready { PMIX_RELEASE_AFTER } else { PMIX_POLL });
    }
    // Still this process's child: its status, as a shell shows it.
    let status = loop {
        match waitpid(Pid::from_raw(pid), None) {
            Ok(WaitStatus::Exited(_, code)) => break code,
            Ok(WaitStatus::Signaled(_, signal, _)) => break 128 + signal as i32,
            Ok(_) | Err(Errno::EINTR) => continue,
            Err(e) => return Err(std::io::Error::from(e).into()),
        }
    };
    exited(out, opts, pid, status)
}

/// What became of a PMIx job's ranks after its table was shown.
fn describe_pmix_hold(
    out: &mut impl Write,
    pid: i32,
    hold: Hold,
    tables: &PmixTables,
) -> Result<(), LaunchError> {
    if !tables.released.is_empty() {
        writeln!(
            out,
            "released with PMIX_DEBUGGER_RELEASE: {}",
            tables.released.join(", ")
        )?;
    } else {
        match hold {
            Hold::Added => writeln!(
                out,
                "the ranks are held in PMIx_Init (mpidd gave the launcher --stop-in-init); \
                 --gate, or `mpidd attach --gate --pid {pid}`, releases them"
            )?,
            Hold::Given => writeln!(
                out,
                "the ranks are held in PMIx_Init (--stop-in-init); \
                 `mpidd attach --gate --pid {pid}` releases them"
            )?,
            Hold::None => writeln!(
                out,
                "the ranks run on: no MPIR gate to hold them, and this launcher is not \
                 PRRTE's, whose --stop-in-init would"
            )?,
        }
    }
    Ok(())
}

fn report(problems: Vec<DriverError>) {
    for p in problems {
        eprintln!("mpidd: while detaching: {}", crate::error_chain(&p));
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
/// the ranks, and detaches. A launcher without MPIR (Open MPI 5's
/// `prterun`) is asked through its PMIx server instead (`pmix`), which
/// needs no stop; `--gate` then sends its jobs `PMIX_DEBUGGER_RELEASE`,
/// which lets go ranks held in `PMIx_Init`.
pub fn attach(pid: i32, opts: &Options, pmix: &PmixOptions) -> Result<(), LaunchError> {
    let mut out = std::io::stdout().lock();
    let snapshot = match snapshot(pid, &opts.limits) {
        Err(DriverError::Mpir(mpir @ MpirError::NoMpirSymbols { .. })) => {
            let read = if opts.gate {
                release_pmix_ranks
            } else {
                read_pmix_tables
            };
            let tables = read(pid, pmix).map_err(|pmix| LaunchError::NoTable {
                mpir: Box::new(mpir),
                pmix: pmix.to_string(),
            })?;
            if opts.json {
                serde_json::to_writer(&mut out, &tables)?;
                writeln!(out)?;
            } else {
                crate::procs_pmix::print_pmix(&mut out, &tables, false)
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
                if opts.gate {
                    writeln!(
                        out,
                        "released with PMIX_DEBUGGER_RELEASE: {}",
                        if tables.released.is_empty() {
                            "no job".to_string()
                        } else {
                            tables.released.join(", ")
                        }
                    )?;
                }
            }
            out.flush()?;
            return Ok(());
        }
        other => other?,
    };
    let gate = gate_report(snapshot.gate, &snapshot.state, opts);
    let event = MpirEvent::Spawned(Box::new(snapshot.state));
    emit_event(&mut out, opts, pid, &event, Some(&gate))?;
    Ok(())
}
