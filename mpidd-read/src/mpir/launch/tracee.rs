//! A launcher under ptrace: started traced, its threads followed, its
//! breakpoints planted and stepped over, and let go with every byte
//! restored and no thread left stopped.
//!
//! Threads: the launcher is seized with `PTRACE_O_TRACECLONE`, so every
//! thread it creates is traced from its first instruction. A breakpoint
//! trap in a thread nobody traces would kill the whole process. The
//! processes it forks (the ranks, their daemons) are not traced.
//!
//! Waiting: only the launcher's own threads are waited for, one by one,
//! so the children of the rest of the program are never reaped here.
//!
//! Signals: the driver's thread blocks `SIGCHLD` and the signals that ask
//! it to stop ([`LaunchOptions::interrupt_on`]) and takes them with
//! `sigtimedwait`, so such a signal is seen between two tracee events,
//! never in the middle of a breakpoint step, and no signal handler is
//! needed. The launcher is started before the mask is set, so it runs
//! with the caller's mask; the caller's mask is restored when the
//! [`Tracee`] is dropped.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CString;
use std::marker::PhantomData;
use std::time::Duration;

use mpidd_types::{ByteOrder, TargetAddr};
use nix::errno::Errno;
use nix::sys::ptrace::{self, Event, Options};
use nix::sys::signal::{self, SigSet, SigmaskHow, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{execvp, fork, ForkResult, Pid};

use crate::backend::live_process::LiveProcess;
use crate::backend::memory::{TargetMemory, TargetMemoryMut};
use crate::mpir::launch::error::{LaunchError, StartFailure};
use crate::mpir::launch::machine::{
    self, program_counter, set_program_counter, trap_site, REGISTERS, TRAP,
};

/// `AT_ENTRY` in the auxiliary vector.
const AT_ENTRY: u64 = 9;

/// How a launcher is traced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchOptions {
    /// Signals to this program that end [`Tracee::wait_stop`] with
    /// [`Stop::Interrupted`], so that the caller can let the launcher go
    /// cleanly. They are blocked in the calling thread while the
    /// [`Tracee`] lives; a program with other threads should block them
    /// there too, or one of those may take the signal instead. Default:
    /// `SIGINT`, `SIGTERM`, `SIGHUP`.
    pub interrupt_on: Vec<Signal>,
    /// How long the driver sleeps, at most, between two looks at the
    /// launcher's threads when no `SIGCHLD` wakes it (another thread of
    /// this program may take that signal). Default: 50 ms.
    pub poll_interval: Duration,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            interrupt_on: vec![Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP],
            poll_interval: Duration::from_millis(50),
        }
    }
}

/// What the launcher did while it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A thread stopped at one of the breakpoints. It stays stopped there
    /// until [`Tracee::step_over`] or a detach.
    Breakpoint {
        /// The thread.
        tid: i32,
        /// The breakpoint's address.
        addr: u64,
    },
    /// The launcher ended; the value is its exit status as a shell shows
    /// it (128 + signal when killed).
    Exited(i32),
    /// This program was sent one of [`LaunchOptions::interrupt_on`].
    Interrupted(Signal),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ThreadState {
    Running,
    /// Stopped; resume with this signal.
    Stopped(Option<Signal>),
}

/// A launcher under ptrace control.
///
/// Dropping it lets the launcher go as [`detach_all`](Self::detach_all)
/// does (the problems met are then lost: call it yourself to see them) and
/// restores the calling thread's signal mask.
///
/// Neither `Send` nor `Sync`: Linux takes ptrace requests for a tracee
/// only from the thread that traces it, and the signal mask is that
/// thread's.
#[derive(Debug)]
pub struct Tracee {
    leader: Pid,
    program: String,
    mem: LiveProcess,
    /// Traced threads and their state.
    threads: BTreeMap<Pid, ThreadState>,
    /// Breakpoint address → the bytes the trap replaced.
    breakpoints: BTreeMap<u64, Vec<u8>>,
    exited: Option<i32>,
    /// What `sigtimedwait` waits for: the interrupts and `SIGCHLD`.
    waited: SigSet,
    interrupts: Vec<Signal>,
    /// The caller's mask, restored on drop.
    old_mask: SigSet,
    poll_interval: Duration,
    _not_send: PhantomData<*const ()>,
}

impl Tracee {
    /// [`launch_with`](Self::launch_with) the default [`LaunchOptions`].
    pub fn launch(argv: &[String]) -> Result<Self, LaunchError> {
        Self::launch_with(argv, &LaunchOptions::default())
    }

    /// Starts `argv` (the program, found on `PATH` when it has no `/`, and
    /// its arguments) traced and runs it to its entry point, so the shared
    /// libraries it links are loaded and their symbols can be resolved.
    /// The launcher is a child of this process.
    ///
    /// Refused on hosts the driver does not know
    /// ([`LaunchError::UnsupportedHost`]) before anything is started.
    pub fn launch_with(argv: &[String], options: &LaunchOptions) -> Result<Self, LaunchError> {
        machine::check_host()?;
        let args: Vec<CString> = argv
            .iter()
            .enumerate()
            .map(|(index, a)| {
                CString::new(a.as_bytes()).map_err(|_| LaunchError::NulInArgument { index })
            })
            .collect::<Result<_, _>>()?;
        let Some(program) = args.first() else {
            return Err(LaunchError::NoCommand);
        };
        let name = argv[0].clone();
        // SAFETY: the child only calls async-signal-safe functions (raise,
        // execvp, _exit) before it execs or exits; the strings were built
        // before the fork.
        #[allow(unsafe_code)]
        let forked = unsafe { fork() };
        let leader = match forked {
            Err(errno) => {
                return Err(LaunchError::Fork {
                    program: name,
                    errno,
                })
            }
            Ok(ForkResult::Child) => {
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
            Ok(ForkResult::Parent { child }) => child,
        };
        let pid = leader.as_raw();
        let wait_err = |errno| LaunchError::Wait {
            pid,
            tid: pid,
            errno,
        };
        let stopped = waitpid(leader, Some(WaitPidFlag::WUNTRACED)).map_err(wait_err)?;
        if !matches!(stopped, WaitStatus::Stopped(_, Signal::SIGSTOP)) {
            return Err(LaunchError::NotStarted {
                program: name,
                how: StartFailure::NoStop(format!("{stopped:?}")),
            });
        }
        if let Err(errno) = ptrace::seize(
            leader,
            Options::PTRACE_O_TRACECLONE | Options::PTRACE_O_TRACEEXEC,
        ) {
            abandon(leader);
            return Err(LaunchError::Ptrace {
                pid,
                tid: pid,
                request: "PTRACE_SEIZE",
                errno,
            });
        }
        let mem = match LiveProcess::open(pid) {
            Ok(mem) => mem,
            Err(e) => {
                abandon(leader);
                return Err(e.into());
            }
        };
        let mut waited = SigSet::empty();
        for &s in &options.interrupt_on {
            waited.add(s);
        }
        waited.add(Signal::SIGCHLD);
        let mut old_mask = SigSet::empty();
        if let Err(errno) =
            signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&waited), Some(&mut old_mask))
        {
            abandon(leader);
            return Err(LaunchError::SignalMask { errno });
        }
        let mut t = Tracee {
            leader,
            program: name,
            mem,
            threads: BTreeMap::from([(leader, ThreadState::Running)]),
            breakpoints: BTreeMap::new(),
            exited: None,
            waited,
            interrupts: options.interrupt_on.clone(),
            old_mask,
            poll_interval: options.poll_interval.max(Duration::from_millis(1)),
            _not_send: PhantomData,
        };
        signal::kill(leader, Signal::SIGCONT).map_err(|errno| LaunchError::Ptrace {
            pid,
            tid: pid,
            request: "kill(SIGCONT)",
            errno,
        })?;
        t.run_to_exec()?;
        // The process image changed: open its memory again.
        t.mem = LiveProcess::open(pid)?;
        let entry = t.entry_point()?;
        t.insert_breakpoint(entry)?;
        t.resume_all()?;
        match t.wait_stop()? {
            Stop::Breakpoint { addr, tid } if addr == entry => {
                t.remove_breakpoint(entry)?;
                t.rewind(Pid::from_raw(tid), entry)?;
                Ok(t)
            }
            Stop::Exited(status) => Err(LaunchError::ExitedBeforeEntry {
                program: t.program.clone(),
                status,
            }),
            other => {
                t.detach_all();
                Err(LaunchError::UnexpectedStop {
                    program: t.program.clone(),
                    stop: format!("{other:?}"),
                })
            }
        }
    }

    /// The launcher's pid.
    pub fn pid(&self) -> i32 {
        self.leader.as_raw()
    }

    /// The threads traced now.
    pub fn threads(&self) -> Vec<i32> {
        self.threads.keys().map(|t| t.as_raw()).collect()
    }

    /// The breakpoints planted, by address.
    pub fn breakpoints(&self) -> Vec<u64> {
        self.breakpoints.keys().copied().collect()
    }

    /// The launcher's memory, to read it and to write the protocol's
    /// variables. Its code, where breakpoints are planted, reads back with
    /// the traps in it.
    pub fn memory(&mut self) -> &mut LiveProcess {
        &mut self.mem
    }

    fn ptrace_err(&self, request: &'static str, tid: Pid) -> impl FnOnce(Errno) -> LaunchError {
        let pid = self.leader.as_raw();
        move |errno| LaunchError::Ptrace {
            pid,
            tid: tid.as_raw(),
            request,
            errno,
        }
    }

    fn wait_err(&self, tid: Pid) -> impl FnOnce(Errno) -> LaunchError {
        let pid = self.leader.as_raw();
        move |errno| LaunchError::Wait {
            pid,
            tid: tid.as_raw(),
            errno,
        }
    }

    fn run_to_exec(&mut self) -> Result<(), LaunchError> {
        loop {
            let status = waitpid(self.leader, Some(WaitPidFlag::__WALL))
                .map_err(self.wait_err(self.leader))?;
            match status {
                WaitStatus::PtraceEvent(_, _, e) if e == Event::PTRACE_EVENT_EXEC as i32 => {
                    self.threads.insert(self.leader, ThreadState::Stopped(None));
                    return Ok(());
                }
                WaitStatus::Exited(_, code) => {
                    self.threads.clear();
                    self.exited = Some(code);
                    return Err(LaunchError::NotStarted {
                        program: self.program.clone(),
                        how: StartFailure::Exited(code),
                    });
                }
                WaitStatus::Signaled(_, sig, _) => {
                    self.threads.clear();
                    self.exited = Some(128 + sig as i32);
                    return Err(LaunchError::NotStarted {
                        program: self.program.clone(),
                        how: StartFailure::Killed(sig),
                    });
                }
                // The SIGCONT that ended the start-up stop, and the
                // group-stop notifications around it.
                WaitStatus::Stopped(pid, sig) if sig != Signal::SIGSTOP => {
                    ptrace::cont(pid, Some(sig)).map_err(self.ptrace_err("PTRACE_CONT", pid))?
                }
                WaitStatus::Stopped(pid, _) | WaitStatus::PtraceEvent(pid, _, _) => {
                    ptrace::cont(pid, None).map_err(self.ptrace_err("PTRACE_CONT", pid))?
                }
                _ => {}
            }
        }
    }

    fn entry_point(&self) -> Result<u64, LaunchError> {
        let pid = self.leader.as_raw();
        let path = format!("/proc/{pid}/auxv");
        let auxv = std::fs::read(&path).map_err(|cause| LaunchError::Auxv {
            pid,
            path: path.clone(),
            cause,
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
            .ok_or(LaunchError::NoEntryPoint { pid })
    }

    fn breakpoint_err(&self, addr: u64) -> impl FnOnce(crate::ReadError) -> LaunchError {
        let pid = self.leader.as_raw();
        move |cause| LaunchError::Breakpoint { pid, addr, cause }
    }

    /// Plants a breakpoint at `addr` (the launcher's threads must be
    /// stopped, or not run the bytes at `addr` meanwhile). Planting one
    /// twice is planting it once.
    pub fn insert_breakpoint(&mut self, addr: u64) -> Result<(), LaunchError> {
        if self.breakpoints.contains_key(&addr) {
            return Ok(());
        }
        let mut orig = vec![0u8; TRAP.len()];
        self.mem
            .read_exact(TargetAddr(addr), &mut orig, "breakpoint site")
            .map_err(self.breakpoint_err(addr))?;
        self.mem
            .write_all(TargetAddr(addr), TRAP)
            .map_err(self.breakpoint_err(addr))?;
        self.breakpoints.insert(addr, orig);
        Ok(())
    }

    /// Takes the breakpoint at `addr` out, restoring the bytes it
    /// replaced. A thread stopped at it must be [rewound](Self::step_over)
    /// before it runs on; [`detach_all`](Self::detach_all) does that.
    pub fn remove_breakpoint(&mut self, addr: u64) -> Result<(), LaunchError> {
        if let Some(orig) = self.breakpoints.remove(&addr) {
            self.mem
                .write_all(TargetAddr(addr), &orig)
                .map_err(self.breakpoint_err(addr))?;
        }
        Ok(())
    }

    /// Sets a stopped thread's program counter back to `addr`.
    fn rewind(&self, tid: Pid, addr: u64) -> Result<(), LaunchError> {
        set_program_counter(tid, addr).map_err(self.ptrace_err("PTRACE_SETREGS", tid))
    }

    /// Resumes every stopped thread, each with the signal it stopped for.
    pub fn resume_all(&mut self) -> Result<(), LaunchError> {
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

    fn cont(&mut self, tid: Pid, sig: Option<Signal>) -> Result<(), LaunchError> {
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
            Err(errno) => Err(self.ptrace_err("PTRACE_CONT", tid)(errno)),
        }
    }

    /// Moves thread `tid`, stopped at the breakpoint at `addr`, past it:
    /// the original instruction runs once, the trap goes back, the thread
    /// runs on.
    pub fn step_over(&mut self, tid: i32, addr: u64) -> Result<(), LaunchError> {
        let tid = Pid::from_raw(tid);
        let orig = self.breakpoints.get(&addr).cloned();
        if let Some(orig) = &orig {
            self.mem
                .write_all(TargetAddr(addr), orig)
                .map_err(self.breakpoint_err(addr))?;
        }
        self.rewind(tid, addr)?;
        ptrace::step(tid, None).map_err(self.ptrace_err("PTRACE_SINGLESTEP", tid))?;
        loop {
            match waitpid(tid, Some(WaitPidFlag::__WALL)).map_err(self.wait_err(tid))? {
                WaitStatus::Stopped(_, Signal::SIGTRAP) => break,
                WaitStatus::Exited(..) | WaitStatus::Signaled(..) => {
                    self.threads.remove(&tid);
                    return Ok(());
                }
                // A signal arrived first: deliver it while stepping.
                WaitStatus::Stopped(_, sig) => ptrace::step(tid, Some(sig))
                    .map_err(self.ptrace_err("PTRACE_SINGLESTEP", tid))?,
                _ => ptrace::step(tid, None).map_err(self.ptrace_err("PTRACE_SINGLESTEP", tid))?,
            }
        }
        if orig.is_some() {
            self.mem
                .write_all(TargetAddr(addr), TRAP)
                .map_err(self.breakpoint_err(addr))?;
        }
        self.cont(tid, None)
    }

    /// Runs until a thread stops at a breakpoint, the launcher ends, or
    /// this program is asked to stop. Other stops are handled here: new
    /// threads are followed, signals are passed on.
    pub fn wait_stop(&mut self) -> Result<Stop, LaunchError> {
        loop {
            if let Some(stop) = self.poll()? {
                return Ok(stop);
            }
            if let Some(sig) = self.wait_signal() {
                if sig != Signal::SIGCHLD && self.interrupts.contains(&sig) {
                    return Ok(Stop::Interrupted(sig));
                }
            }
        }
    }

    /// Waits for one of the blocked signals, or the poll interval.
    fn wait_signal(&self) -> Option<Signal> {
        let timeout = nix::libc::timespec {
            tv_sec: self.poll_interval.as_secs() as nix::libc::time_t,
            tv_nsec: self.poll_interval.subsec_nanos() as nix::libc::c_long,
        };
        // SAFETY: the set and the timeout are valid for the call, and a
        // null info pointer is allowed.
        #[allow(unsafe_code)]
        let n = unsafe {
            nix::libc::sigtimedwait(self.waited.as_ref(), std::ptr::null_mut(), &timeout)
        };
        if n > 0 {
            Signal::try_from(n).ok()
        } else {
            None
        }
    }

    /// Handles every pending event of the launcher's threads; the first
    /// breakpoint or the launcher's end ends the round.
    fn poll(&mut self) -> Result<Option<Stop>, LaunchError> {
        if self.threads.is_empty() {
            return Ok(Some(Stop::Exited(self.exited.unwrap_or(0))));
        }
        loop {
            let mut seen = false;
            let tids: Vec<Pid> = self.threads.keys().copied().collect();
            for tid in tids {
                let status = match waitpid(tid, Some(WaitPidFlag::__WALL | WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => continue,
                    Ok(s) => s,
                    // Gone and reaped: nothing more will come of it.
                    Err(Errno::ECHILD) => {
                        self.threads.remove(&tid);
                        if tid == self.leader {
                            return Ok(Some(Stop::Exited(self.exited.unwrap_or(0))));
                        }
                        continue;
                    }
                    Err(errno) => return Err(self.wait_err(tid)(errno)),
                };
                seen = true;
                if let Some(stop) = self.handle(status)? {
                    return Ok(Some(stop));
                }
            }
            if !seen {
                return Ok(None);
            }
        }
    }

    /// One event of one thread.
    fn handle(&mut self, status: WaitStatus) -> Result<Option<Stop>, LaunchError> {
        match status {
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
                    Some(addr) => {
                        return Ok(Some(Stop::Breakpoint {
                            tid: tid.as_raw(),
                            addr,
                        }))
                    }
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
        Ok(None)
    }

    /// The breakpoint a thread stopped by SIGTRAP has just hit, if any.
    fn trap_site(&self, tid: Pid) -> Result<Option<u64>, LaunchError> {
        let pc = match program_counter(tid) {
            Ok(pc) => pc,
            Err(Errno::ESRCH) => return Ok(None),
            Err(errno) => return Err(self.ptrace_err(REGISTERS, tid)(errno)),
        };
        let site = trap_site(pc);
        Ok(self.breakpoints.contains_key(&site).then_some(site))
    }

    /// Stops every thread, takes every breakpoint out, runs
    /// `before_detach` on the quiet process (to undo the protocol's
    /// writes), and detaches, so that the launcher runs on exactly as
    /// without a debugger. Never fails: each step is tried whatever
    /// happened before, and the problems met are returned.
    pub fn detach_all_with(
        &mut self,
        before_detach: impl FnOnce(&mut LiveProcess),
    ) -> Vec<LaunchError> {
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
                    problems.push(self.ptrace_err("PTRACE_INTERRUPT", *tid)(e));
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
                            problems.push(e);
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
                    problems.push(e);
                }
            }
        }
        let sites: Vec<u64> = self.breakpoints.keys().copied().collect();
        for addr in sites {
            if let Err(e) = self.remove_breakpoint(addr) {
                problems.push(e);
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
                Err(e) => problems.push(self.ptrace_err("PTRACE_DETACH", tid)(e)),
            }
        }
        problems
    }

    /// [`detach_all_with`](Self::detach_all_with) with nothing to undo.
    pub fn detach_all(&mut self) -> Vec<LaunchError> {
        self.detach_all_with(|_| {})
    }

    /// Waits, untraced (after a detach), for the launcher to end; returns
    /// its exit status as a shell shows it (128 + signal when killed).
    pub fn wait_exit(&mut self) -> Result<i32, LaunchError> {
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
                Err(errno) => return Err(self.wait_err(self.leader)(errno)),
            }
        }
    }
}

/// Ends a child that was stopped before it ran its program, and reaps it:
/// what the caller asked to run never started.
fn abandon(child: Pid) {
    let _ = signal::kill(child, Signal::SIGKILL);
    let _ = waitpid(child, Some(WaitPidFlag::__WALL));
}

impl Drop for Tracee {
    /// An error or a panic between two calls must not leave the launcher
    /// stopped or with a trap in its code.
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            let _ = self.detach_all();
        }
        // Signals that came meanwhile stay pending for the caller.
        let _ = signal::pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&self.old_mask), None);
    }
}
