//! The tracer's main loop over one rank: breakpoints planted, the rank let
//! go, and at each stop (a breakpoint, a signal) the crates asked what the
//! rank holds; then the breakpoint stepped over and the rank let go again,
//! until the stops asked for were seen. At the end every breakpoint byte is
//! restored and every thread detached, on success and on failure alike.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::breakpoints::Breakpoints;
use crate::call_handles::{call_view, CallRegisters};
use crate::memory::{OpenMemoryError, PtraceMemory};
use crate::objects::{function_address, NoSuchFunction, ObjectsError};
use crate::reading::RankReader;
use crate::registers::{general, set_pc, thread_registers};
use crate::stop_view::{StopReason, StopView, ThreadView};
use crate::tracer::{Report, TraceError, Tracer};

/// How the loop runs.
#[derive(Clone, Debug)]
pub struct LoopOptions {
    /// The functions to plant breakpoints at.
    pub breakpoints: Vec<String>,
    /// How many stops to show before letting the rank go.
    pub stops: u32,
    /// One JSON object a line instead of text.
    pub json: bool,
    /// At each stop, create this file and wait (the rank held stopped)
    /// until someone removes it: a test reads the rank meanwhile.
    pub pause_file: Option<PathBuf>,
    /// The bound on each wait: for a stop, for threads to stop, for a
    /// pause file to go.
    pub limit: Duration,
    /// Leave the process stopped (SIGSTOP) when detaching, for another
    /// debugger to attach; whoever asked continues it (SIGCONT).
    pub leave_stopped: bool,
    /// Where stops go instead of standard output; `{pid}` in it stands for
    /// the traced process's id.
    pub out: Option<String>,
}

/// Why the loop failed.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    /// Tracing failed.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The memory could not be opened.
    #[error(transparent)]
    Memory(#[from] OpenMemoryError),
    /// The loaded objects could not be listed.
    #[error(transparent)]
    Objects(#[from] ObjectsError),
    /// A breakpoint's function is not loaded.
    #[error(transparent)]
    NoSuchFunction(#[from] NoSuchFunction),
    /// Printing failed.
    #[error("cannot print the stop: {0}")]
    Output(#[from] std::io::Error),
    /// The file stops go to could not be opened.
    #[error("cannot open {path} for the stops: {source}")]
    OutputFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The pause file was not removed in time.
    #[error("the pause file {path} was not removed within {limit:?}")]
    Pause {
        /// The file.
        path: PathBuf,
        /// The bound.
        limit: Duration,
    },
}

/// Set by SIGINT and SIGTERM to the tracer: the loop then lets the rank go
/// cleanly instead of dying with breakpoints planted in it.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn note_interrupt(_: nix::libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Makes SIGINT and SIGTERM set [`INTERRUPTED`] instead of killing the
/// tracer.
fn catch_interrupts() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(
        SigHandler::Handler(note_interrupt),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is
        // async-signal-safe, and replaces no handler anything else relies
        // on (the tracer installs none other).
        let _ = unsafe { sigaction(signal, &action) };
    }
}

/// The rank traced, with its breakpoints: dropping it restores every byte
/// and lets every thread go, whatever happened.
struct Traced {
    tracer: Tracer,
    breakpoints: Breakpoints,
}

impl Traced {
    /// Stops every thread, restores the breakpoints' bytes and detaches.
    fn finish(&mut self, leave_stopped: bool, limit: Duration) -> Result<(), TraceError> {
        let mut reports = Vec::new();
        let stopped = self.tracer.stop_all(limit, &mut reports);
        for report in reports {
            self.settle(report);
        }
        stopped?;
        let removed = self.breakpoints.remove_all(&self.tracer);
        let detached = self.tracer.detach(leave_stopped);
        removed.and(detached)
    }

    /// A report that will not be shown: a breakpoint's trap is undone (the
    /// pc back on the instruction, which runs once the byte is restored);
    /// a signal is kept for delivery.
    fn settle(&mut self, report: Report) {
        match report {
            Report::Trap { tid } => {
                if let Ok(regs) = general(tid) {
                    let at = regs.rip.wrapping_sub(1);
                    if self.breakpoints.is_planted_at(at) {
                        let _ = set_pc(tid, at);
                        return;
                    }
                }
                self.tracer.hold(Report::Signal {
                    tid,
                    signal: nix::sys::signal::Signal::SIGTRAP,
                });
            }
            signal => self.tracer.hold(signal),
        }
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        let mut reports = Vec::new();
        let _ = self.tracer.stop_all(Duration::from_secs(5), &mut reports);
        for report in reports {
            self.settle(report);
        }
        let _ = self.breakpoints.remove_all(&self.tracer);
        // The tracer's own Drop detaches.
    }
}

/// Attaches to process `pid` and shows `options.stops` stops of it.
pub fn run_attached(pid: i32, options: &LoopOptions) -> Result<(), LoopError> {
    catch_interrupts();
    let tracer = Tracer::attach(pid, options.limit)?;
    run_loop(tracer, false, options)
}

/// Starts `program` with `args` under the tracer, runs it to its entry
/// point (where its libraries are loaded), then shows `options.stops` stops of it.
/// Then it waits for the program to end, as a debugger does (under
/// `mpirun`, the rank's launcher takes the tracer's end for the rank's),
/// and returns its exit status; SIGINT or SIGTERM to the tracer is passed
/// on to the program.
pub fn run_launched(
    program: &OsStr,
    args: &[OsString],
    options: &LoopOptions,
) -> Result<i32, LoopError> {
    catch_interrupts();
    let tracer = crate::launch::launch(program, args, options.limit)?;
    let pid = tracer.pid();
    run_loop(tracer, true, options)?;
    Ok(crate::launch::wait_program(pid, &|| {
        INTERRUPTED.swap(false, Ordering::SeqCst)
    })?)
}

/// The loop over a process the tracer holds stopped; `at_exec` when it
/// was just started and has loaded no library yet.
fn run_loop(tracer: Tracer, at_exec: bool, options: &LoopOptions) -> Result<(), LoopError> {
    let pid = tracer.pid();
    let mut traced = Traced {
        tracer,
        breakpoints: Breakpoints::default(),
    };
    let memory = PtraceMemory::open(pid)?;
    let mut reader = RankReader::new(pid)?;
    if at_exec {
        crate::launch::run_to_entry(&mut traced.tracer, &mut traced.breakpoints, options.limit)?;
        reader.refresh()?;
    }
    let targets: Vec<(String, u64)> = options
        .breakpoints
        .iter()
        .map(|name| {
            Ok((
                name.clone(),
                function_address(reader.objects(), pid, name)?.0,
            ))
        })
        .collect::<Result<_, NoSuchFunction>>()?;
    for (_, addr) in &targets {
        traced.breakpoints.plant(&traced.tracer, *addr)?;
    }
    eprintln!(
        "mpidd-embed: tracing {} threads of process {pid}; breakpoints: {}",
        traced.tracer.tids().len(),
        targets
            .iter()
            .map(|(name, addr)| format!("{name} at {addr:#x}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut shown = 0;
    let mut out = open_output(options.out.as_deref(), pid)?;
    while shown < options.stops {
        traced.tracer.resume_all()?;
        let reports = traced
            .tracer
            .wait_report(options.limit, &|| INTERRUPTED.load(Ordering::SeqCst))?;
        // Every thread is stopped now. Breakpoint traps have their pc set
        // back first, so the stacks shown start at the function's entry.
        let mut steps = Vec::new();
        for report in reports {
            let reason = match report {
                Report::Trap { tid } => {
                    let at = general(tid)?.rip.wrapping_sub(1);
                    match targets.iter().find(|(_, a)| *a == at) {
                        Some((name, _)) => {
                            set_pc(tid, at)?;
                            steps.push((tid, at));
                            StopReason::Breakpoint {
                                function: name.clone(),
                                address: at,
                            }
                        }
                        None => {
                            traced.settle(report);
                            StopReason::Signal {
                                signal: "SIGTRAP".into(),
                            }
                        }
                    }
                }
                Report::Signal { signal, .. } => {
                    traced.tracer.hold(report);
                    StopReason::Signal {
                        signal: signal.as_str().to_string(),
                    }
                }
            };
            if shown == options.stops {
                continue;
            }
            shown += 1;
            let tid = match report {
                Report::Trap { tid } | Report::Signal { tid, .. } => tid,
            };
            reader.refresh()?;
            let view = show_stop(&traced.tracer, &reader, &memory, shown, tid, reason)?;
            pause(options)?;
            view.print(options.json, &mut *out)?;
            wait_unpaused(options)?;
        }
        if shown < options.stops {
            for (tid, at) in steps {
                traced
                    .breakpoints
                    .step_over(&mut traced.tracer, tid, at, options.limit)?;
            }
        }
    }
    traced.finish(options.leave_stopped, options.limit)?;
    Ok(())
}

/// Reads what one stop shows: the queues, the handles of the call a
/// breakpoint stopped at, then each thread's stack (the stopped thread's
/// first), from registers the tracer reads now.
fn show_stop(
    tracer: &Tracer,
    reader: &RankReader,
    memory: &PtraceMemory,
    stop: u32,
    tid: i32,
    reason: StopReason,
) -> Result<StopView, LoopError> {
    let (queues, provenance, queues_error) = match reader.queues(memory) {
        Ok(r) => (Some(r.queues), Some(r.provenance.to_string()), None),
        Err(e) => (None, None, Some(error_chain(&e))),
    };
    let call = match &reason {
        StopReason::Breakpoint { function, .. } => {
            let r = general(tid)?;
            call_view(
                reader,
                memory,
                function,
                CallRegisters {
                    rdx: r.rdx,
                    r9: r.r9,
                },
            )
        }
        StopReason::Signal { .. } => None,
    };
    let mut tids = tracer.tids();
    tids.sort_by_key(|&t| t != tid);
    let mut threads = Vec::new();
    for t in tids {
        let regs = thread_registers(t, &general(t)?);
        threads.push(ThreadView::from(&reader.stack(memory, &regs)));
    }
    Ok(StopView {
        stop,
        pid: tracer.pid(),
        tid,
        reason,
        queues,
        provenance,
        queues_error,
        call,
        threads,
    })
}

/// Where the stops of process `pid` are printed. Each tracer under a
/// launcher has a file of its own, because the launcher forwards the
/// ranks' standard output in pieces and may mix two ranks' long lines.
fn open_output(pattern: Option<&str>, pid: i32) -> Result<Box<dyn Write>, LoopError> {
    let Some(pattern) = pattern else {
        return Ok(Box::new(std::io::stdout().lock()));
    };
    let path = PathBuf::from(pattern.replace("{pid}", &pid.to_string()));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|source| LoopError::OutputFile { path, source })?;
    Ok(Box::new(file))
}

/// Creates the pause file, if one was asked for, before the stop is
/// printed: whoever reads the stop finds the rank held.
fn pause(options: &LoopOptions) -> Result<(), LoopError> {
    if let Some(path) = &options.pause_file {
        std::fs::write(path, b"paused\n")?;
    }
    Ok(())
}

/// Waits, up to the loop's bound, for the pause file to be removed.
fn wait_unpaused(options: &LoopOptions) -> Result<(), LoopError> {
    let Some(path) = &options.pause_file else {
        return Ok(());
    };
    let deadline = Instant::now() + options.limit;
    while path.exists() {
        if Instant::now() > deadline || INTERRUPTED.load(Ordering::SeqCst) {
            let _ = std::fs::remove_file(path);
            return Err(LoopError::Pause {
                path: path.clone(),
                limit: options.limit,
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// An error and its causes on one line.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        line.push_str(": ");
        line.push_str(&c.to_string());
        cause = c.source();
    }
    line
}
