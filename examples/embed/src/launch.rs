//! `mpidd-embed run -- PROGRAM ARGS...`: the tracer starts the program
//! itself, seized from its first instruction, and runs it to its entry
//! point (AT_ENTRY), where the dynamic linker has loaded the libraries it
//! was linked with, so their functions can take breakpoints. A stripped
//! program has an entry point too, where it may have no `main`.
//!
//! The child waits on a pipe until the tracer has seized it, then execs:
//! so nothing of the program runs untraced, and the tracer holds it with
//! `PTRACE_SEIZE` (interruptible, as an attached rank is) rather than
//! `PTRACE_TRACEME`.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::ptrace;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, ForkResult, Pid};

use crate::breakpoints::Breakpoints;
use crate::registers::{general, set_pc};
use crate::stop_loop::LoopError;
use crate::tracer::{Report, TraceError, Tracer};

/// Starts `program` with `args` and holds it stopped just after its exec.
pub fn launch(program: &OsStr, args: &[OsString], limit: Duration) -> Result<Tracer, LoopError> {
    let to_c = |s: &OsStr| {
        CString::new(s.as_bytes()).map_err(|_| TraceError::Unsupported {
            pid: 0,
            reason: format!("the argument {s:?} holds a NUL byte"),
        })
    };
    // Everything the child needs is made before the fork: after it, the
    // child may not allocate.
    let path = to_c(program)?;
    let mut argv = vec![path.clone()];
    for a in args {
        argv.push(to_c(a)?);
    }
    let (read_end, write_end) = nix::unistd::pipe().map_err(|errno| TraceError::Ptrace {
        request: "pipe",
        tid: 0,
        errno,
    })?;
    // SAFETY: the tracer has started no thread yet (only the main thread
    // runs), and the child calls only async-signal-safe functions (close,
    // read, execvp, _exit) on data made before the fork.
    let child = match unsafe { fork() } {
        Err(errno) => {
            return Err(TraceError::Ptrace {
                request: "fork",
                tid: 0,
                errno,
            }
            .into())
        }
        Ok(ForkResult::Child) => {
            drop(write_end);
            let mut byte = [0u8];
            // Until the tracer has seized this process; EOF if it died.
            let _ = nix::unistd::read(&read_end, &mut byte);
            drop(read_end);
            let _ = nix::unistd::execvp(&path, &argv);
            // SAFETY: _exit is async-signal-safe and ends the child at once,
            // running nothing of the parent's.
            unsafe { nix::libc::_exit(127) }
        }
        Ok(ForkResult::Parent { child }) => child,
    };
    drop(read_end);
    let options = ptrace::Options::PTRACE_O_TRACECLONE
        | ptrace::Options::PTRACE_O_TRACEEXEC
        | ptrace::Options::PTRACE_O_EXITKILL;
    let seized = ptrace::seize(child, options).map_err(|errno| TraceError::Ptrace {
        request: "SEIZE",
        tid: child.as_raw(),
        errno,
    });
    // The child execs now (or, if the seize failed, runs untraced).
    let _ = nix::unistd::write(&write_end, b"x");
    drop(write_end);
    seized?;
    wait_exec(child, limit)?;
    Ok(Tracer::adopt(child.as_raw()))
}

/// Waits, up to `limit`, for the child's exec stop.
fn wait_exec(child: Pid, limit: Duration) -> Result<(), TraceError> {
    let deadline = Instant::now() + limit;
    let pid = child.as_raw();
    loop {
        match waitpid(child, Some(WaitPidFlag::__WALL | WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::PtraceEvent(_, _, event))
                if event == ptrace::Event::PTRACE_EVENT_EXEC as i32 =>
            {
                return Ok(())
            }
            Ok(WaitStatus::Exited(..) | WaitStatus::Signaled(..)) => {
                return Err(TraceError::Unsupported {
                    pid,
                    reason: "the program could not be executed".into(),
                })
            }
            // A stop before the exec (none is expected): let it go on.
            Ok(WaitStatus::Stopped(..) | WaitStatus::PtraceEvent(..)) => {
                ptrace::cont(child, None).map_err(|errno| TraceError::Ptrace {
                    request: "CONT",
                    tid: pid,
                    errno,
                })?;
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(TraceError::Wait(e)),
        }
        if Instant::now() > deadline {
            return Err(TraceError::Timeout {
                what: format!("waiting for process {pid} to exec"),
                limit,
            });
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `AT_ENTRY`: the auxiliary vector's entry for the program's entry point.
const AT_ENTRY: u64 = 9;

/// The entry point of process `pid`, from its auxiliary vector (pairs of
/// native words: x86_64's, as the tracer only traces those).
fn entry_point(pid: i32) -> Result<u64, TraceError> {
    let auxv = std::fs::read(format!("/proc/{pid}/auxv")).map_err(|e| TraceError::Unsupported {
        pid,
        reason: format!("cannot read /proc/{pid}/auxv: {e}"),
    })?;
    auxv.chunks_exact(16)
        .map(|pair| {
            let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
            (word(&pair[..8]), word(&pair[8..]))
        })
        .find(|&(key, _)| key == AT_ENTRY)
        .map(|(_, entry)| entry)
        .ok_or(TraceError::Unsupported {
            pid,
            reason: "its auxiliary vector has no AT_ENTRY".into(),
        })
}

/// Runs a process held at its exec to its entry point, through a
/// breakpoint removed again there; signals met on the way are kept for
/// delivery. Every thread is stopped when it returns.
pub fn run_to_entry(
    tracer: &mut Tracer,
    breakpoints: &mut Breakpoints,
    limit: Duration,
) -> Result<(), LoopError> {
    let entry = entry_point(tracer.pid())?;
    breakpoints.plant(tracer, entry)?;
    let deadline = Instant::now() + limit;
    let mut at_entry = false;
    while !at_entry {
        if Instant::now() > deadline {
            return Err(TraceError::Timeout {
                what: format!("running process {} to its entry point", tracer.pid()),
                limit,
            }
            .into());
        }
        tracer.resume_all()?;
        for report in tracer.wait_report(limit, &|| false)? {
            match report {
                Report::Trap { tid } if general(tid)?.rip.wrapping_sub(1) == entry => {
                    set_pc(tid, entry)?;
                    at_entry = true;
                }
                other => tracer.hold(other),
            }
        }
    }
    breakpoints.remove(tracer, entry)?;
    Ok(())
}

/// Waits for the program, no longer traced, to end, and returns its exit
/// status (128 + the signal that killed it). Each time `interrupted` says
/// so, the program is sent SIGTERM.
pub fn wait_program(pid: i32, interrupted: &dyn Fn() -> bool) -> Result<i32, TraceError> {
    loop {
        if interrupted() {
            let _ = nix::sys::signal::kill(Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM);
        }
        match waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => return Ok(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => return Ok(128 + signal as i32),
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(TraceError::Wait(e)),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
