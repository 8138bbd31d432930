//! The tracer's ptrace: every thread of one process seized, stopped all
//! together and let go all together (all-stop, as gdb runs), with every
//! wait bounded by a deadline.
//!
//! Threads are seized with `PTRACE_SEIZE` and `PTRACE_O_TRACECLONE`, so the
//! threads a rank starts later (Open MPI's and UCX's progress threads) are
//! traced from their first instruction. [`Tracer`]'s `Drop` lets every
//! thread go, so an error or a panic never leaves the process stopped.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::ptrace;
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

/// Why the tracer failed.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A ptrace request failed.
    #[error("ptrace {request} on thread {tid} failed: {errno}")]
    Ptrace {
        /// The request.
        request: &'static str,
        /// The thread.
        tid: i32,
        /// The system's reason.
        errno: Errno,
    },
    /// Waiting for the threads failed.
    #[error("waitpid failed: {0}")]
    Wait(Errno),
    /// Nothing happened before the deadline.
    #[error("{what}: nothing within {limit:?}")]
    Timeout {
        /// What was waited for.
        what: String,
        /// The bound.
        limit: Duration,
    },
    /// The process is gone.
    #[error("process {pid} exited")]
    Exited {
        /// The process.
        pid: i32,
    },
    /// The process cannot be traced by this example.
    #[error("process {pid}: {reason}")]
    Unsupported {
        /// The process.
        pid: i32,
        /// Why.
        reason: String,
    },
    /// The tracer was told to stop (SIGINT, SIGTERM).
    #[error("interrupted")]
    Interrupted,
}

fn ptrace_err(request: &'static str, tid: i32) -> impl FnOnce(Errno) -> TraceError {
    move |errno| TraceError::Ptrace {
        request,
        tid,
        errno,
    }
}

/// What one thread reported that is worth a stop of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// It stopped with SIGTRAP (a breakpoint's int3 or a finished step).
    Trap {
        /// The thread.
        tid: i32,
    },
    /// A signal is about to be delivered to it (held until it goes on).
    Signal {
        /// The thread.
        tid: i32,
        /// The signal.
        signal: Signal,
    },
}

/// One traced thread.
#[derive(Debug, Default)]
struct Thread {
    stopped: bool,
    /// A signal to hand it when it goes on.
    pending: Option<Signal>,
}

/// Every thread of one process, traced.
pub struct Tracer {
    pid: i32,
    threads: BTreeMap<i32, Thread>,
    /// Whether the threads are let go at `Drop` (false once detached).
    attached: bool,
}

/// How long to sleep between two polls of `waitpid`.
const POLL: Duration = Duration::from_millis(2);

impl Tracer {
    /// Seizes every thread of process `pid` and stops them all, within
    /// `limit`.
    pub fn attach(pid: i32, limit: Duration) -> Result<Tracer, TraceError> {
        check_x86_64(pid)?;
        let mut tracer = Tracer {
            pid,
            threads: BTreeMap::new(),
            attached: true,
        };
        // Threads started while the list is read are seized by their
        // parent's PTRACE_O_TRACECLONE once the parent is seized, or found
        // by the next listing: list until nothing new turns up (bounded).
        for _ in 0..100 {
            let mut added = false;
            for tid in task_ids(pid)? {
                if tracer.threads.contains_key(&tid) {
                    continue;
                }
                match ptrace::seize(Pid::from_raw(tid), ptrace::Options::PTRACE_O_TRACECLONE) {
                    Ok(()) => {}
                    // It exited meanwhile.
                    Err(Errno::ESRCH) if tid != pid => continue,
                    Err(e) => return Err(ptrace_err("SEIZE", tid)(e)),
                }
                tracer.threads.insert(tid, Thread::default());
                added = true;
                match ptrace::interrupt(Pid::from_raw(tid)) {
                    Ok(()) | Err(Errno::ESRCH) => {}
                    Err(e) => return Err(ptrace_err("INTERRUPT", tid)(e)),
                }
            }
            if !added {
                break;
            }
        }
        let mut held = Vec::new();
        tracer.wait_all_stopped(limit, &mut held)?;
        // Nothing was let go yet, so a signal met while stopping is handed
        // back when the threads go on.
        for report in held {
            tracer.hold(report);
        }
        Ok(tracer)
    }

    /// A process the caller started and seized (`PTRACE_SEIZE` with
    /// `PTRACE_O_TRACECLONE`), one thread, now stopped.
    pub fn adopt(pid: i32) -> Tracer {
        let mut threads = BTreeMap::new();
        threads.insert(
            pid,
            Thread {
                stopped: true,
                pending: None,
            },
        );
        Tracer {
            pid,
            threads,
            attached: true,
        }
    }

    /// The process.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The traced threads, in increasing tid order.
    pub fn tids(&self) -> Vec<i32> {
        self.threads.keys().copied().collect()
    }

    /// A stopped thread to make requests through (memory writes).
    pub fn any_stopped(&self) -> Option<i32> {
        if self.threads.get(&self.pid).is_some_and(|t| t.stopped) {
            return Some(self.pid);
        }
        self.threads
            .iter()
            .find(|(_, t)| t.stopped)
            .map(|(tid, _)| *tid)
    }

    /// Keeps a reported signal for its thread, to deliver when it goes
    /// on; a trap needs nothing kept.
    pub fn hold(&mut self, report: Report) {
        if let Report::Signal { tid, signal } = report {
            if let Some(t) = self.threads.get_mut(&tid) {
                t.pending = Some(signal);
            }
        }
    }

    /// Lets every stopped thread go, each with the signal it holds.
    pub fn resume_all(&mut self) -> Result<(), TraceError> {
        for (&tid, t) in self.threads.iter_mut() {
            if !t.stopped {
                continue;
            }
            match ptrace::cont(Pid::from_raw(tid), t.pending.take()) {
                Ok(()) | Err(Errno::ESRCH) => t.stopped = false,
                Err(e) => return Err(ptrace_err("CONT", tid)(e)),
            }
        }
        Ok(())
    }

    /// Waits, up to `limit`, for a thread to report a trap or a signal,
    /// then stops every other thread. Returns that report first, then any
    /// other thread's met while stopping them.
    pub fn wait_report(
        &mut self,
        limit: Duration,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Vec<Report>, TraceError> {
        let deadline = Instant::now() + limit;
        let first = loop {
            if interrupted() {
                return Err(TraceError::Interrupted);
            }
            if let Some(report) = self.poll_event(true)? {
                break report;
            }
            if Instant::now() > deadline {
                return Err(TraceError::Timeout {
                    what: format!("waiting for process {} to stop", self.pid),
                    limit,
                });
            }
        };
        let mut reports = vec![first];
        self.stop_all(limit, &mut reports)?;
        Ok(reports)
    }

    /// Stops every running thread, up to `limit`; reports met on the way
    /// are appended to `reports`.
    pub fn stop_all(
        &mut self,
        limit: Duration,
        reports: &mut Vec<Report>,
    ) -> Result<(), TraceError> {
        for (&tid, t) in &self.threads {
            if !t.stopped {
                match ptrace::interrupt(Pid::from_raw(tid)) {
                    Ok(()) | Err(Errno::ESRCH) => {}
                    Err(e) => return Err(ptrace_err("INTERRUPT", tid)(e)),
                }
            }
        }
        self.wait_all_stopped(limit, reports)
    }

    fn wait_all_stopped(
        &mut self,
        limit: Duration,
        reports: &mut Vec<Report>,
    ) -> Result<(), TraceError> {
        let deadline = Instant::now() + limit;
        while self.threads.values().any(|t| !t.stopped) {
            if let Some(report) = self.poll_event(false)? {
                reports.push(report);
            }
            if Instant::now() > deadline {
                let running: Vec<i32> = self
                    .threads
                    .iter()
                    .filter(|(_, t)| !t.stopped)
                    .map(|(tid, _)| *tid)
                    .collect();
                return Err(TraceError::Timeout {
                    what: format!("stopping threads {running:?} of process {}", self.pid),
                    limit,
                });
            }
        }
        Ok(())
    }

    /// Single-steps thread `tid` (the others stay stopped), up to `limit`.
    /// A signal that comes instead of the step is kept for the thread and
    /// the step is made again.
    pub fn step(&mut self, tid: i32, limit: Duration) -> Result<(), TraceError> {
        let deadline = Instant::now() + limit;
        for _ in 0..16 {
            ptrace::step(Pid::from_raw(tid), None).map_err(ptrace_err("SINGLESTEP", tid))?;
            self.set_stopped(tid, false);
            loop {
                match waitpid(
                    Pid::from_raw(tid),
                    Some(WaitPidFlag::__WALL | WaitPidFlag::WNOHANG),
                ) {
                    Ok(WaitStatus::StillAlive) => {}
                    Ok(WaitStatus::Stopped(_, Signal::SIGTRAP)) => {
                        self.set_stopped(tid, true);
                        return Ok(());
                    }
                    Ok(WaitStatus::Stopped(_, signal)) => {
                        self.set_stopped(tid, true);
                        self.hold(Report::Signal { tid, signal });
                        break;
                    }
                    Ok(WaitStatus::PtraceEvent(..)) => {
                        self.set_stopped(tid, true);
                        break;
                    }
                    Ok(WaitStatus::Exited(..) | WaitStatus::Signaled(..)) => {
                        self.threads.remove(&tid);
                        return Err(TraceError::Exited { pid: self.pid });
                    }
                    Ok(_) => {}
                    Err(e) => return Err(TraceError::Wait(e)),
                }
                if Instant::now() > deadline {
                    return Err(TraceError::Timeout {
                        what: format!("single-stepping thread {tid}"),
                        limit,
                    });
                }
                std::thread::sleep(POLL);
            }
        }
        Err(TraceError::Timeout {
            what: format!("single-stepping thread {tid}: signals kept coming"),
            limit,
        })
    }

    /// Detaches every thread, each with the signal it holds; with
    /// `leave_stopped`, the process is sent SIGSTOP as it is let go, so it
    /// stays stopped for another debugger (the caller promised to continue
    /// it). Every thread must be stopped.
    pub fn detach(&mut self, leave_stopped: bool) -> Result<(), TraceError> {
        let mut first_error = None;
        // The main thread last, so the SIGSTOP's group stop finds the
        // others already detached.
        let mut order: Vec<i32> = self.tids().into_iter().filter(|&t| t != self.pid).collect();
        order.push(self.pid);
        for tid in order {
            let Some(t) = self.threads.get_mut(&tid) else {
                continue;
            };
            let mut signal = t.pending.take();
            if leave_stopped && tid == self.pid {
                // A held signal would be lost to SIGSTOP: it is sent again
                // to the process, where it waits until SIGCONT.
                if let Some(held) = signal.take() {
                    let _ = nix::sys::signal::kill(Pid::from_raw(self.pid), held);
                }
                signal = Some(Signal::SIGSTOP);
            }
            match ptrace::detach(Pid::from_raw(tid), signal) {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => {
                    first_error.get_or_insert(ptrace_err("DETACH", tid)(e));
                }
            }
        }
        self.threads.clear();
        self.attached = false;
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// After a ptrace event of `tid`: let it run on when the process is
    /// running, else keep it stopped with the others.
    fn resume_or_hold(&mut self, tid: i32, running: bool) -> Result<(), TraceError> {
        if running {
            match ptrace::cont(Pid::from_raw(tid), None) {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => return Err(ptrace_err("CONT", tid)(e)),
            }
        } else {
            self.set_stopped(tid, true);
        }
        Ok(())
    }

    fn set_stopped(&mut self, tid: i32, stopped: bool) {
        if let Some(t) = self.threads.get_mut(&tid) {
            t.stopped = stopped;
        }
    }

    /// Handles one event of any traced thread, if one is waiting; sleeps a
    /// little otherwise. Returns a trap or a signal; the thread that
    /// reports one stays stopped. Interrupt stops keep their thread
    /// stopped; with `running`, one nobody asked for (a late answer to an
    /// earlier interrupt, a group stop) lets it go again.
    fn poll_event(&mut self, running: bool) -> Result<Option<Report>, TraceError> {
        // Each known thread is asked by its own tid, never `waitpid(-1)`:
        // one tracer process may trace several ranks (`job`), and an
        // event of another rank's thread must stay for that rank's tracer.
        // A thread a clone event announced is known from then on.
        let mut found = None;
        for tid in self.tids() {
            match waitpid(
                Pid::from_raw(tid),
                Some(WaitPidFlag::__WALL | WaitPidFlag::WNOHANG),
            ) {
                Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => {}
                // Gone without a status left to us.
                Err(Errno::ECHILD) => {
                    self.threads.remove(&tid);
                    if tid == self.pid {
                        self.threads.clear();
                        self.attached = false;
                        return Err(TraceError::Exited { pid: self.pid });
                    }
                }
                Err(e) => return Err(TraceError::Wait(e)),
                Ok(s) => {
                    found = Some((tid, s));
                    break;
                }
            }
        }
        let Some((tid, status)) = found else {
            std::thread::sleep(POLL);
            return Ok(None);
        };
        match status {
            WaitStatus::Exited(..) | WaitStatus::Signaled(..) => {
                self.threads.remove(&tid);
                if tid == self.pid {
                    self.threads.clear();
                    self.attached = false;
                    return Err(TraceError::Exited { pid: self.pid });
                }
                Ok(None)
            }
            WaitStatus::Stopped(_, Signal::SIGTRAP) => {
                self.set_stopped(tid, true);
                Ok(Some(Report::Trap { tid }))
            }
            WaitStatus::Stopped(_, signal) => {
                self.set_stopped(tid, true);
                Ok(Some(Report::Signal { tid, signal }))
            }
            WaitStatus::PtraceEvent(_, _, event)
                if event == ptrace::Event::PTRACE_EVENT_CLONE as i32 =>
            {
                // The new thread reports its own first stop.
                if let Ok(new) = ptrace::getevent(Pid::from_raw(tid)) {
                    if let Ok(new) = i32::try_from(new) {
                        self.threads.entry(new).or_default();
                    }
                }
                self.resume_or_hold(tid, running)?;
                Ok(None)
            }
            WaitStatus::PtraceEvent(..) => {
                self.resume_or_hold(tid, running)?;
                Ok(None)
            }
            _ => Ok(None),
        }
    }
}

impl Drop for Tracer {
    /// Lets every thread go: stopped (bounded), then detached, so the
    /// process runs on whatever failed. The breakpoints' bytes are the
    /// owner's to restore before ([`crate::breakpoints::Breakpoints`]).
    fn drop(&mut self) {
        if !self.attached {
            return;
        }
        let mut reports = Vec::new();
        let _ = self.stop_all(Duration::from_secs(5), &mut reports);
        for report in reports {
            self.hold(report);
        }
        let _ = self.detach(false);
    }
}

/// The thread ids of process `pid`.
fn task_ids(pid: i32) -> Result<Vec<i32>, TraceError> {
    let dir =
        std::fs::read_dir(format!("/proc/{pid}/task")).map_err(|e| TraceError::Unsupported {
            pid,
            reason: format!("cannot list /proc/{pid}/task: {e}"),
        })?;
    let mut tids: Vec<i32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

/// Refuses a process whose executable is not a 64-bit x86 ELF file: the
/// registers this example reads are x86_64's.
fn check_x86_64(pid: i32) -> Result<(), TraceError> {
    let unsupported = |reason: String| TraceError::Unsupported { pid, reason };
    let mut header = [0u8; 20];
    let mut exe = std::fs::File::open(format!("/proc/{pid}/exe"))
        .map_err(|e| unsupported(format!("cannot open its executable: {e}")))?;
    std::io::Read::read_exact(&mut exe, &mut header)
        .map_err(|e| unsupported(format!("cannot read its executable's ELF header: {e}")))?;
    let machine = u16::from_le_bytes([header[18], header[19]]);
    if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 || machine != 62 {
        return Err(unsupported(
            "its executable is not a 64-bit little-endian x86_64 ELF file".into(),
        ));
    }
    Ok(())
}
