//! Stopping every thread of a live process for a consistent read, and
//! always letting it go again.
//!
//! [`AttachGuard::attach`] uses `PTRACE_SEIZE` and `PTRACE_INTERRUPT`
//! rather than `PTRACE_ATTACH`: no `SIGSTOP` is queued that the target
//! could later see, and if the debugger dies the kernel detaches and the
//! target keeps running. Dropping the guard detaches every thread, also
//! while a panic unwinds.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::ptrace;
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

#[allow(unused_imports)] // used on the hosts whose registers are read
use crate::backend::thread_registers::{StackArch, ThreadRegisters};

/// How many times the thread list is re-read while new threads keep
/// appearing; a process that creates threads faster than this is refused
/// rather than chased forever.
const MAX_LIST_ROUNDS: usize = 64;

/// Most threads stopped in one process.
const MAX_THREADS: usize = 1 << 16;

/// How long one thread may take to reach its ptrace-stop after
/// `PTRACE_INTERRUPT`. A thread stuck in uninterruptible sleep (a hung NFS
/// read) would otherwise hang the debugger.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a process could not be stopped or released.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AttachError {
    /// `/proc/PID/task` could not be listed: the process does not exist,
    /// or this user may not see it.
    #[error("cannot list the threads of process {pid} ({path}): {cause}")]
    ListThreads {
        /// The process.
        pid: i32,
        /// The directory listed.
        path: PathBuf,
        /// The OS error: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
    /// A ptrace request on one thread failed.
    #[error("{request} of thread {tid} of process {pid} failed: {errno}{}", hint(*errno))]
    Ptrace {
        /// The process.
        pid: i32,
        /// The thread.
        tid: i32,
        /// The request (`PTRACE_SEIZE`, `PTRACE_INTERRUPT`, `waitpid`,
        /// `PTRACE_DETACH`).
        request: &'static str,
        /// What the kernel said.
        errno: Errno,
    },
    /// A thread did not reach its stop in time.
    #[error(
        "thread {tid} of process {pid} did not stop within {timeout:?} of PTRACE_INTERRUPT \
         (is it in uninterruptible sleep? see /proc/{pid}/task/{tid}/stat)"
    )]
    StopTimeout {
        /// The process.
        pid: i32,
        /// The thread.
        tid: i32,
        /// How long it was given.
        timeout: Duration,
    },
    /// New threads kept appearing, or there were too many.
    #[error("process {pid} kept creating threads ({count} stopped after {rounds} listings, at most {max} allowed)")]
    ThreadsKeepAppearing {
        /// The process.
        pid: i32,
        /// Threads stopped when it gave up.
        count: usize,
        /// Listings of `/proc/PID/task` made.
        rounds: usize,
        /// The most threads one guard stops (65,536).
        max: usize,
    },
}

/// What to tell the user when the kernel refuses to let us trace.
fn hint(errno: Errno) -> &'static str {
    if errno == Errno::EPERM {
        " (tracing needs the same user and /proc/sys/kernel/yama/ptrace_scope at 0, or \
         CAP_SYS_PTRACE; another tracer, such as a debugger or strace, may already be attached)"
    } else {
        ""
    }
}

/// Every thread of a live process, stopped in ptrace-stop while this guard
/// lives, and detached (running again) when it is dropped.
///
/// The guard is neither `Send` nor `Sync`: Linux accepts ptrace requests
/// for a tracee only from the thread that attached it, so the guard must be
/// dropped, and the process read while stopped, on the thread that created
/// it.
///
/// A signal that arrived while a thread was being stopped is delivered
/// again on detach, so stopping the target never loses a signal.
///
/// ```no_run
/// use mpidd_read::{mpir, AttachGuard, Limits, LiveTarget};
///
/// let pid = 12345;
/// let stopped = AttachGuard::attach(pid)?;
/// let target = LiveTarget::open(pid)?;
/// let state = mpir::read_state(&target, &Limits::default())?;
/// stopped.detach()?;
/// println!("{} ranks", state.proctable.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct AttachGuard {
    pid: i32,
    /// Attached threads, and the signal to hand back to each on detach.
    threads: BTreeMap<i32, Option<Signal>>,
    /// ptrace requests must come from the attaching thread.
    _not_send: PhantomData<*const ()>,
}

impl AttachGuard {
    /// Seizes and stops every thread of process `pid`. Threads created
    /// meanwhile are found by listing `/proc/PID/task` again until a listing
    /// made with every known thread stopped shows no new one. On failure
    /// every thread already stopped is let go before the error returns.
    pub fn attach(pid: i32) -> Result<AttachGuard, AttachError> {
        let mut guard = AttachGuard {
            pid,
            threads: BTreeMap::new(),
            _not_send: PhantomData,
        };
        // Threads that could not be seized because they are exiting (or are
        // zombies still listed): not new again in the next listing.
        let mut gone = std::collections::BTreeSet::new();
        // On an early return the guard's Drop detaches what was attached.
        for round in 1..=MAX_LIST_ROUNDS {
            let new: Vec<i32> = list_threads(pid)?
                .into_iter()
                .filter(|t| !guard.threads.contains_key(t) && !gone.contains(t))
                .collect();
            if new.is_empty() {
                return Ok(guard);
            }
            if guard.threads.len() + new.len() > MAX_THREADS {
                return Err(guard.too_many(round));
            }
            let mut seized = Vec::with_capacity(new.len());
            for tid in new {
                match ptrace::seize(Pid::from_raw(tid), ptrace::Options::empty()) {
                    Ok(()) => {}
                    // Exited between the listing and now.
                    Err(Errno::ESRCH) => {
                        gone.insert(tid);
                        continue;
                    }
                    Err(errno) => return Err(guard.error("PTRACE_SEIZE", tid, errno)),
                }
                guard.threads.insert(tid, None);
                match ptrace::interrupt(Pid::from_raw(tid)) {
                    Ok(()) => seized.push(tid),
                    Err(Errno::ESRCH) => {
                        guard.threads.remove(&tid);
                        gone.insert(tid);
                    }
                    Err(errno) => return Err(guard.error("PTRACE_INTERRUPT", tid, errno)),
                }
            }
            for tid in seized {
                guard.wait_stopped(tid)?;
            }
        }
        Err(guard.too_many(MAX_LIST_ROUNDS))
    }

    /// The process.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The stopped threads, in increasing order.
    pub fn threads(&self) -> Vec<i32> {
        self.threads.keys().copied().collect()
    }

    /// Detaches every thread, letting the process run on. Threads that
    /// exited meanwhile are skipped; the first other failure is returned
    /// after every thread has been tried.
    pub fn detach(mut self) -> Result<(), AttachError> {
        self.detach_all()
    }

    fn detach_all(&mut self) -> Result<(), AttachError> {
        let mut first = None;
        for (tid, signal) in std::mem::take(&mut self.threads) {
            match ptrace::detach(Pid::from_raw(tid), signal) {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(errno) => {
                    first.get_or_insert(AttachError::Ptrace {
                        pid: self.pid,
                        tid,
                        request: "PTRACE_DETACH",
                        errno,
                    });
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Waits, bounded, for `tid` to report its stop. A thread that exits
    /// instead is forgotten.
    fn wait_stopped(&mut self, tid: i32) -> Result<(), AttachError> {
        let deadline = Instant::now() + STOP_TIMEOUT;
        let mut pause = Duration::from_micros(50);
        loop {
            let status = match waitpid(
                Pid::from_raw(tid),
                Some(WaitPidFlag::__WALL | WaitPidFlag::WNOHANG),
            ) {
                Ok(s) => s,
                Err(Errno::EINTR) => continue,
                Err(Errno::ECHILD) => {
                    self.threads.remove(&tid);
                    return Ok(());
                }
                Err(errno) => return Err(self.error("waitpid", tid, errno)),
            };
            match status {
                // PTRACE_INTERRUPT's stop, or a group-stop.
                WaitStatus::PtraceEvent(..) => return Ok(()),
                // A signal arrived first: the thread is stopped delivering
                // it, and gets it back on detach.
                WaitStatus::Stopped(_, signal) => {
                    self.threads.insert(tid, Some(signal));
                    return Ok(());
                }
                WaitStatus::Exited(..) | WaitStatus::Signaled(..) => {
                    self.threads.remove(&tid);
                    return Ok(());
                }
                _ => {}
            }
            if Instant::now() >= deadline {
                return Err(AttachError::StopTimeout {
                    pid: self.pid,
                    tid,
                    timeout: STOP_TIMEOUT,
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }

    /// The registers of every stopped thread, read with `PTRACE_GETREGS`
    /// (`PTRACE_GETREGSET` NT_PRSTATUS on aarch64), in increasing tid order.
    /// Nothing is written to the target. A thread that exited since it was
    /// stopped is left out; any other failure names the thread.
    ///
    /// The registers are those of a 64-bit process: for a 32-bit process
    /// on an x86_64 host the kernel gives the 64-bit view, which no
    /// unwinder here reads (see [`crate::live_stacks`], which refuses it).
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64"),
        any(target_env = "gnu", target_env = "musl")
    ))]
    pub fn thread_registers(&self) -> Result<Vec<ThreadRegisters>, AttachError> {
        let mut out = Vec::with_capacity(self.threads.len());
        for &tid in self.threads.keys() {
            match ptrace::getregs(Pid::from_raw(tid)) {
                Ok(regs) => out.push(host_registers(tid, &regs)),
                Err(Errno::ESRCH) => {}
                Err(errno) => return Err(self.error(GETREGS, tid, errno)),
            }
        }
        Ok(out)
    }

    fn error(&self, request: &'static str, tid: i32, errno: Errno) -> AttachError {
        AttachError::Ptrace {
            pid: self.pid,
            tid,
            request,
            errno,
        }
    }

    fn too_many(&self, rounds: usize) -> AttachError {
        AttachError::ThreadsKeepAppearing {
            pid: self.pid,
            count: self.threads.len(),
            rounds,
            max: MAX_THREADS,
        }
    }
}

/// The request [`AttachGuard::thread_registers`] makes, for errors.
#[cfg(target_arch = "x86_64")]
const GETREGS: &str = "PTRACE_GETREGS";
#[cfg(target_arch = "aarch64")]
const GETREGS: &str = "PTRACE_GETREGSET";

/// The kernel's `user_regs_struct` of this host, in the kernel's order.
#[cfg(all(
    target_os = "linux",
    target_arch = "x86_64",
    any(target_env = "gnu", target_env = "musl")
))]
fn host_registers(tid: i32, r: &nix::libc::user_regs_struct) -> ThreadRegisters {
    let general = vec![
        r.r15, r.r14, r.r13, r.r12, r.rbp, r.rbx, r.r11, r.r10, r.r9, r.r8, r.rax, r.rcx, r.rdx,
        r.rsi, r.rdi, r.orig_rax, r.rip, r.cs, r.eflags, r.rsp, r.ss, r.fs_base, r.gs_base, r.ds,
        r.es, r.fs, r.gs,
    ];
    ThreadRegisters {
        tid,
        arch: StackArch::X86_64,
        pc: r.rip,
        sp: r.rsp,
        fp: r.rbp,
        lr: None,
        general,
    }
}

/// The kernel's `user_pt_regs` of this host, in the kernel's order.
#[cfg(all(
    target_os = "linux",
    target_arch = "aarch64",
    any(target_env = "gnu", target_env = "musl")
))]
fn host_registers(tid: i32, r: &nix::libc::user_regs_struct) -> ThreadRegisters {
    let mut general = r.regs.to_vec();
    general.extend([r.sp, r.pc, r.pstate]);
    ThreadRegisters {
        tid,
        arch: StackArch::Aarch64,
        pc: r.pc,
        sp: r.sp,
        fp: r.regs[29],
        lr: Some(r.regs[30]),
        general,
    }
}

impl Drop for AttachGuard {
    fn drop(&mut self) {
        // Nothing to report to during a drop; each thread is still tried.
        let _ = self.detach_all();
    }
}

/// The thread ids in `/proc/PID/task`, bounded by [`MAX_THREADS`] plus
/// one so that an excess shows.
fn list_threads(pid: i32) -> Result<Vec<i32>, AttachError> {
    let path = PathBuf::from(format!("/proc/{pid}/task"));
    let list_error = |cause| AttachError::ListThreads {
        pid,
        path: path.clone(),
        cause,
    };
    let mut tids = Vec::new();
    for entry in std::fs::read_dir(&path).map_err(list_error)? {
        let entry = entry.map_err(list_error)?;
        if let Some(tid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) {
            tids.push(tid);
            if tids.len() > MAX_THREADS {
                break;
            }
        }
    }
    Ok(tids)
}
