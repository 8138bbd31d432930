//! A minimal ptrace driver for one launcher process: start it traced,
//! follow its threads, plant and step over breakpoints, and let it go
//! again with every byte restored and no thread left stopped.
//!
//! Threads: the launcher is seized with `PTRACE_O_TRACECLONE`, so every
//! thread it creates is traced from its first instruction. A breakpoint
//! trap in a thread nobody traces would kill the whole process.
//!
//! Signals: this process blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD and
//! waits for them with `sigwait`, so a Ctrl-C is seen between two tracee
//! events, never in the middle of a breakpoint step, and no signal handler
//! is needed. The launcher is started before the mask is set, so it runs
//! with the caller's mask.
//!
//! x86_64 only: the breakpoint instruction and the program counter are the
//! only machine-specific parts.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CString;

use mpidd_read::{LiveProcess, TargetMemory, TargetMemoryMut};
use mpidd_types::{ByteOrder, TargetAddr};
use nix::errno::Errno;
use nix::sys::ptrace::{self, Event, Options};
use nix::sys::signal::{self, SigSet, SigmaskHow, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{execvp, fork, ForkResult, Pid};

/// `int3`.
const TRAP: u8 = 0xcc;
/// `AT_ENTRY` in the auxiliary vector.
const AT_ENTRY: u64 = 9;

/// Why driving the launcher failed.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// A system call failed.
    #[error("{what}: {errno}")]
    Sys {
        /// What was being done.
        what: String,
        /// The error.
        errno: Errno,
    },
    /// Reading or writing the launcher's memory failed.
    #[error(transparent)]
    Memory(#[from] mpidd_read::ReadError),
    /// Opening the launcher's memory failed.
    #[error(transparent)]
    Live(#[from] mpidd_read::LiveError),
    /// The launcher did something this driver does not expect.
    #[error("{0}")]
    Unexpected(String),
}

fn sys<T>(what: impl FnOnce() -> String, r: nix::Result<T>) -> Result<T, DriverError> {
    r.map_err(|errno| DriverError::Sys {
        what: what(),
        errno,
    })
}

/// What the launcher did while it ran.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// A thread stopped at one of the breakpoints.
    Breakpoint {
        /// The thread.
        tid: Pid,
        /// The breakpoint's address.
        addr: u64,
    },
    /// The launcher ended; the value is its exit code as a shell shows it
    /// (128 + signal when killed).
    Exited(i32),
    /// This process was asked to stop (SIGINT, SIGTERM, SIGHUP).
    Interrupted(Signal),
}

/// A launcher under ptrace control.
pub struct Tracee {
    leader: Pid,
    mem: LiveProcess,
    /// Traced threads, with the signal each must get on resume if it is
    /// stopped at a signal-delivery-stop (`None` if running or no signal).
    threads: BTreeMap<Pid, ThreadState>,
    /// Breakpoint address → the byte the trap replaced.
    breakpoints: BTreeMap<u64, u8>,
    exited: Option<i32>,
    blocked: SigSet,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ThreadState {
    Running,
    /// Stopped; resume with this signal.
    Stopped(Option<Signal>),
}

impl Tracee {
    /// Starts `argv` traced and runs it to its entry point, so the shared
    /// libraries it links are loaded and their symbols can be resolved.
    pub fn launch(argv: &[String]) -> Result<Self, DriverError> {
        let args: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| DriverError::Unexpected("an argument contains a NUL byte".into()))?;
        let Some(program) = args.first() else {
            return Err(DriverError::Unexpected("no launcher command given".into()));
        };
        // SAFETY: the child only calls async-signal-safe functions (raise,
        // execvp, _exit) before it execs or exits; the strings were built
        // before the fork.
        #[allow(unsafe_code)]
        let fork = unsafe { fork() };
        let leader = match sys(|| "fork".into(), fork)? {
            ForkResult::Child => {
                // Stop so the parent can seize this process before exec.
                let _ = signal::raise(Signal::SIGSTOP);
                let _ = execvp(program, &args);
                // SAFETY: _exit is async-signal-safe and ends the child
                // without running the parent's atexit handlers.
                #[allow(unsafe_code)]
                unsafe {
                    nix::libc::_exit(127)
                }
            }
            ForkResult::Parent { child } => child,
        };
        let stopped = sys(
            || format!("waiting for {leader} to stop"),
            waitpid(leader, Some(WaitPidFlag::WUNTRACED)),
        )?;
        if !matches!(stopped, WaitStatus::Stopped(_, Signal::SIGSTOP)) {
            return Err(DriverError::Unexpected(format!(
                "the launcher did not start: {stopped:?}"
            )));
        }
        sys(
            || format!("PTRACE_SEIZE {leader}"),
            ptrace::seize(
                leader,
                Options::PTRACE_O_TRACECLONE | Options::PTRACE_O_TRACEEXEC,
            ),
        )?;
        let mut blocked = SigSet::empty();
        for s in [
            Signal::SIGINT,
            Signal::SIGTERM,
            Signal::SIGHUP,
            Signal::SIGCHLD,
        ] {
            blocked.add(s);
        }
        sys(
            || "blocking signals".into(),
            signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&blocked), None),
        )?;
        let mut t = Tracee {
            leader,
            mem: LiveProcess::open(leader.as_raw())?,
            threads: BTreeMap::from([(leader, ThreadState::Running)]),
            breakpoints: BTreeMap::new(),
            exited: None,
            blocked,
        };
        sys(
            || format!("SIGCONT {leader}"),
            signal::kill(leader, Signal::SIGCONT),
        )?;
        t.run_to_exec()?;
        t.mem = LiveProcess::open(leader.as_raw())?;
        let entry = t.entry_point()?;
        t.insert_breakpoint(entry)?;
        t.resume_all()?;
        match t.wait_stop()? {
            Stop::Breakpoint { addr, tid } if addr == entry => {
                t.remove_breakpoint(entry)?;
                t.rewind(tid, entry)?;
                Ok(t)
            }
            Stop::Exited(code) => Err(DriverError::Unexpected(format!(
                "{} exited with status {code} before reaching its entry point \
                 (is it installed and executable?)",
                argv[0]
            ))),
            other => {
                t.detach_all();
                Err(DriverError::Unexpected(format!(
                    "unexpected stop before the entry point: {other:?}"
                )))
            }
        }
    }

    /// The launcher's pid.
    pub fn pid(&self) -> Pid {
        self.leader
    }

    /// The launcher's memory.
    pub fn memory(&mut self) -> &mut LiveProcess {
        &mut self.mem
    }

    fn run_to_exec(&mut self) -> Result<(), DriverError> {
        loop {
            let status = sys(
                || format!("waiting for {} to exec", self.leader),
                waitpid(self.leader, Some(WaitPidFlag::__WALL)),
            )?;
            match status {
                WaitStatus::PtraceEvent(_, _, e) if e == Event::PTRACE_EVENT_EXEC as i32 => {
                    self.threads.insert(self.leader, ThreadState::Stopped(None));
                    return Ok(());
                }
                WaitStatus::Exited(_, code) => {
                    return Err(DriverError::Unexpected(format!(
                        "the launcher could not be started (exit status {code}): \
                         is the command on PATH?"
                    )))
                }
                WaitStatus::Signaled(_, sig, _) => {
                    return Err(DriverError::Unexpected(format!(
                        "the launcher was killed by {sig} before it started"
                    )))
                }
                // The SIGCONT that ended the start-up stop, and the
                // group-stop notifications around it.
                WaitStatus::Stopped(pid, sig) if sig != Signal::SIGSTOP => {
                    sys(|| "PTRACE_CONT".into(), ptrace::cont(pid, Some(sig)))?
                }
                WaitStatus::Stopped(pid, _) | WaitStatus::PtraceEvent(pid, _, _) => {
                    sys(|| "PTRACE_CONT".into(), ptrace::cont(pid, None))?
                }
                _ => {}
            }
        }
    }

    fn entry_point(&self) -> Result<u64, DriverError> {
        let auxv = std::fs::read(format!("/proc/{}/auxv", self.leader)).map_err(|e| {
            DriverError::Unexpected(format!("reading /proc/{}/auxv: {e}", self.leader))
        })?;
        // Words of the launcher's own width and byte order.
        let abi = self.mem.abi();
        let w = abi.address_bytes();
        let word = |b: &[u8]| {
            b.iter().enumerate().fold(0u64, |acc, (i, &byte)| {
                let shift = match abi.byte_order {
                    ByteOrder::Little => 8 * i,
                    ByteOrder::Big => 8 * (w - 1 - i),
                };
                acc | u64::from(byte) << shift
            })
        };
        auxv.chunks_exact(2 * w)
            .map(|kv| (word(&kv[..w]), word(&kv[w..])))
            .find(|&(k, _)| k == AT_ENTRY)
            .map(|(_, v)| v)
            .ok_or_else(|| DriverError::Unexpected("the launcher has no AT_ENTRY".into()))
    }

    /// Plants a breakpoint at `addr`.
    pub fn insert_breakpoint(&mut self, addr: u64) -> Result<(), DriverError> {
        if self.breakpoints.contains_key(&addr) {
            return Ok(());
        }
        let mut orig = [0u8];
        self.mem
            .read_exact(TargetAddr(addr), &mut orig, "breakpoint site")?;
        self.mem.write_all(TargetAddr(addr), &[TRAP])?;
        self.breakpoints.insert(addr, orig[0]);
        Ok(())
    }

    fn remove_breakpoint(&mut self, addr: u64) -> Result<(), DriverError> {
        if let Some(orig) = self.breakpoints.remove(&addr) {
            self.mem.write_all(TargetAddr(addr), &[orig])?;
        }
        Ok(())
    }

    /// Sets a stopped thread's program counter back to `addr`.
    fn rewind(&self, tid: Pid, addr: u64) -> Result<(), DriverError> {
        let mut regs = sys(|| format!("PTRACE_GETREGS {tid}"), ptrace::getregs(tid))?;
        regs.rip = addr;
        sys(
            || format!("PTRACE_SETREGS {tid}"),
            ptrace::setregs(tid, regs),
        )
    }

    /// Resumes every stopped thread.
    pub fn resume_all(&mut self) -> Result<(), DriverError> {
        let stopped: Vec<(Pid, Option<Signal>)> = self
            .threads
            .iter()
            .filter_map(|(&tid, s)| match s {
                ThreadState::Stopped(sig) => Some((tid, *sig)),
                ThreadState::Running => None,
            })
            .collect();
        for (tid, sig) in stopped {
            self.cont(tid, sig)?;
        }
        Ok(())
    }

    fn cont(&mut self, tid: Pid, sig: Option<Signal>) -> Result<(), DriverError> {
        match ptrace::cont(tid, sig) {
            Ok(()) => {
                self.threads.insert(tid, ThreadState::Running);
                Ok(())
            }
            // The thread died meanwhile; its exit is reported by waitpid.
            Err(Errno::ESRCH) => {
                self.threads.remove(&tid);
                Ok(())
            }
            Err(errno) => Err(DriverError::Sys {
                what: format!("PTRACE_CONT {tid}"),
                errno,
            }),
        }
    }

    /// Moves a thread stopped at the breakpoint at `addr` past it: the
    /// original instruction runs once, the trap goes back, the thread runs
    /// on.
    pub fn step_over(&mut self, tid: Pid, addr: u64) -> Result<(), DriverError> {
        let orig = self.breakpoints.get(&addr).copied();
        if let Some(orig) = orig {
            self.mem.write_all(TargetAddr(addr), &[orig])?;
        }
        self.rewind(tid, addr)?;
        sys(
            || format!("PTRACE_SINGLESTEP {tid}"),
            ptrace::step(tid, None),
        )?;
        loop {
            match sys(
                || format!("waiting for {tid} to step"),
                waitpid(tid, Some(WaitPidFlag::__WALL)),
            )? {
                WaitStatus::Stopped(_, Signal::SIGTRAP) => break,
                WaitStatus::Exited(..) | WaitStatus::Signaled(..) => {
                    self.threads.remove(&tid);
                    return Ok(());
                }
                // A signal arrived first: deliver it while stepping.
                WaitStatus::Stopped(_, sig) => {
                    sys(|| "PTRACE_SINGLESTEP".into(), ptrace::step(tid, Some(sig)))?
                }
                _ => sys(|| "PTRACE_SINGLESTEP".into(), ptrace::step(tid, None))?,
            }
        }
        if orig.is_some() {
            self.mem.write_all(TargetAddr(addr), &[TRAP])?;
        }
        self.cont(tid, None)
    }

    /// Runs until a thread stops at a breakpoint, the launcher ends, or
    /// this process is asked to stop. Other stops are handled here: new
    /// threads are followed, signals are passed on.
    pub fn wait_stop(&mut self) -> Result<Stop, DriverError> {
        loop {
            if let Some(stop) = self.poll()? {
                return Ok(stop);
            }
            match self.blocked.wait() {
                Ok(Signal::SIGCHLD) | Err(_) => {}
                Ok(sig) => return Ok(Stop::Interrupted(sig)),
            }
        }
    }

    /// Handles every pending tracee event; the first breakpoint or exit
    /// ends the round.
    fn poll(&mut self) -> Result<Option<Stop>, DriverError> {
        loop {
            let status = match waitpid(None, Some(WaitPidFlag::__WALL | WaitPidFlag::WNOHANG)) {
                Ok(s) => s,
                Err(Errno::ECHILD) => {
                    return Ok(Some(Stop::Exited(self.exited.unwrap_or(0))));
                }
                Err(Errno::EINTR) => continue,
                Err(errno) => {
                    return Err(DriverError::Sys {
                        what: "waitpid".into(),
                        errno,
                    })
                }
            };
            match status {
                WaitStatus::StillAlive => return Ok(None),
                WaitStatus::Exited(tid, code) => {
                    self.threads.remove(&tid);
                    if tid == self.leader {
                        self.exited = Some(code);
                        return Ok(Some(Stop::Exited(code)));
                    }
                }
                WaitStatus::Signaled(tid, sig, _) => {
                    self.threads.remove(&tid);
                    if tid == self.leader {
                        let code = 128 + sig as i32;
                        self.exited = Some(code);
                        return Ok(Some(Stop::Exited(code)));
                    }
                }
                WaitStatus::Stopped(tid, Signal::SIGTRAP) => {
                    self.threads.insert(tid, ThreadState::Stopped(None));
                    match self.trap_site(tid)? {
                        Some(addr) => return Ok(Some(Stop::Breakpoint { tid, addr })),
                        None => self.cont(tid, Some(Signal::SIGTRAP))?,
                    }
                }
                WaitStatus::Stopped(tid, sig) => {
                    self.threads.insert(tid, ThreadState::Stopped(Some(sig)));
                    self.cont(tid, Some(sig))?;
                }
                WaitStatus::PtraceEvent(tid, _, e) => {
                    if e == Event::PTRACE_EVENT_CLONE as i32 {
                        if let Ok(new) = ptrace::getevent(tid) {
                            // It reports its own first stop; until then it
                            // counts as running.
                            self.threads
                                .entry(Pid::from_raw(new as i32))
                                .or_insert(ThreadState::Running);
                        }
                    }
                    self.threads.insert(tid, ThreadState::Stopped(None));
                    self.cont(tid, None)?;
                }
                _ => {}
            }
        }
    }

    /// The breakpoint a thread stopped by SIGTRAP has just hit, if any.
    fn trap_site(&self, tid: Pid) -> Result<Option<u64>, DriverError> {
        let regs = match ptrace::getregs(tid) {
            Ok(r) => r,
            Err(Errno::ESRCH) => return Ok(None),
            Err(errno) => {
                return Err(DriverError::Sys {
                    what: format!("PTRACE_GETREGS {tid}"),
                    errno,
                })
            }
        };
        let site = regs.rip.wrapping_sub(1);
        Ok(self.breakpoints.contains_key(&site).then_some(site))
    }

    /// Stops every thread, removes every breakpoint, runs `before_detach`
    /// on the quiet process (to undo protocol writes), and detaches, so the
    /// launcher runs on exactly as without a debugger. Never fails: each
    /// step is tried whatever happened before, and failures are reported.
    pub fn detach_all_with(&mut self, before_detach: impl FnOnce(&mut LiveProcess)) -> Vec<String> {
        let mut problems = Vec::new();
        // 1. Stop every running thread so no one is past a removed trap.
        let running: Vec<Pid> = self
            .threads
            .iter()
            .filter(|(_, s)| **s == ThreadState::Running)
            .map(|(&t, _)| t)
            .collect();
        for tid in &running {
            if let Err(e) = ptrace::interrupt(*tid) {
                if e != Errno::ESRCH {
                    problems.push(format!("PTRACE_INTERRUPT {tid}: {e}"));
                }
                self.threads.remove(tid);
            }
        }
        let mut pending: BTreeSet<Pid> = running
            .into_iter()
            .filter(|t| self.threads.contains_key(t))
            .collect();
        while let Some(&tid) = pending.iter().next() {
            match waitpid(tid, Some(WaitPidFlag::__WALL)) {
                Ok(WaitStatus::Stopped(_, Signal::SIGTRAP)) => {
                    // A trap not yet seen: if it is ours, undo its effect.
                    if let Ok(Some(site)) = self.trap_site(tid) {
                        if let Err(e) = self.rewind(tid, site) {
                            problems.push(e.to_string());
                        }
                        self.threads.insert(tid, ThreadState::Stopped(None));
                    } else {
                        self.threads
                            .insert(tid, ThreadState::Stopped(Some(Signal::SIGTRAP)));
                    }
                    pending.remove(&tid);
                }
                Ok(WaitStatus::Stopped(_, sig)) => {
                    self.threads.insert(tid, ThreadState::Stopped(Some(sig)));
                    pending.remove(&tid);
                }
                Ok(WaitStatus::PtraceEvent(_, _, e)) => {
                    if e == Event::PTRACE_EVENT_CLONE as i32 {
                        if let Ok(new) = ptrace::getevent(tid) {
                            let new = Pid::from_raw(new as i32);
                            self.threads.insert(new, ThreadState::Running);
                            pending.insert(new);
                        }
                    }
                    self.threads.insert(tid, ThreadState::Stopped(None));
                    pending.remove(&tid);
                }
                Ok(WaitStatus::Exited(..) | WaitStatus::Signaled(..)) | Err(_) => {
                    self.threads.remove(&tid);
                    pending.remove(&tid);
                }
                Ok(_) => {}
            }
        }
        // 2. Threads stopped at one of our traps re-run the real
        //    instruction after the bytes are restored.
        let stopped: Vec<Pid> = self.threads.keys().copied().collect();
        for tid in stopped {
            if let Ok(Some(site)) = self.trap_site(tid) {
                if let Err(e) = self.rewind(tid, site) {
                    problems.push(e.to_string());
                }
            }
        }
        let sites: Vec<u64> = self.breakpoints.keys().copied().collect();
        for addr in sites {
            if let Err(e) = self.remove_breakpoint(addr) {
                problems.push(format!("restoring the byte at {addr:#x}: {e}"));
            }
        }
        before_detach(&mut self.mem);
        // 3. Let go, passing on any signal a thread was about to get.
        for (tid, state) in std::mem::take(&mut self.threads) {
            let sig = match state {
                ThreadState::Stopped(sig) => sig,
                ThreadState::Running => None,
            };
            match ptrace::detach(tid, sig) {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => problems.push(format!("PTRACE_DETACH {tid}: {e}")),
            }
        }
        problems
    }

    /// [`detach_all_with`](Self::detach_all_with) with nothing to undo.
    pub fn detach_all(&mut self) -> Vec<String> {
        self.detach_all_with(|_| {})
    }

    /// Waits, untraced, for the launcher to end; returns its exit code.
    pub fn wait_exit(&mut self) -> Result<i32, DriverError> {
        if let Some(code) = self.exited {
            return Ok(code);
        }
        loop {
            match waitpid(self.leader, None) {
                Ok(WaitStatus::Exited(_, code)) => {
                    self.exited = Some(code);
                    return Ok(code);
                }
                Ok(WaitStatus::Signaled(_, sig, _)) => {
                    self.exited = Some(128 + sig as i32);
                    return Ok(128 + sig as i32);
                }
                Ok(_) | Err(Errno::EINTR) => {}
                Err(errno) => {
                    return Err(DriverError::Sys {
                        what: format!("waiting for {}", self.leader),
                        errno,
                    })
                }
            }
        }
    }
}

impl Drop for Tracee {
    /// An error or a panic between two calls must not leave the launcher
    /// stopped or with a trap in its code.
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            for p in self.detach_all() {
                eprintln!("mpidd: while detaching: {p}");
            }
        }
        let _ = signal::sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&self.blocked), None);
    }
}
