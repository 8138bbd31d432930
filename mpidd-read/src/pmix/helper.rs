//! The query run in a helper process: a program (mpidd itself, through a
//! hidden subcommand that calls [`serve_helper`]) that runs one session
//! and prints what it was told as one JSON line.
//!
//! When the time is up the caller gets [`PmixError::Timeout`], but the
//! helper is not killed: OpenPMIx 5.0's server (seen with 5.0.7 and
//! 5.0.11) crashes, taking the job with it, when it gets round to the
//! connection of a tool that has gone. The helper waits for the server
//! as long as it takes, then finalizes and ends; it ends too when the
//! launcher does, which closes the connection. PMIx's threads and signal
//! handlers live and die with it, and each query has a process of its
//! own, so PMIx is set up once per process.
//!
//! When the launcher runs in another root (a chroot, a container's mount
//! namespace), the helper is started inside it (chroot to
//! `/proc/PID/root`, which needs the privilege to chroot):
//! its libpmix then loads on the launcher's own C library and beside its
//! own dependencies, where a newer build than this host's would not load
//! here, and finds the server's rendezvous files where the server wrote
//! them.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::pmix::error::PmixError;
use crate::pmix::in_process::query_in_process;
use crate::pmix::locate::root_differs;
use crate::pmix::reported::Reported;
use crate::pmix::PmixHelper;

/// What starts each line the helper prints for its parent; other output
/// (PMIx's own) is ignored.
const TAG: &str = "MPIDD-PMIX";

/// The end of the helper's stderr kept for a message.
const STDERR_TAIL: usize = 2048;

/// Runs the session for launcher `pid` in this process, printing each
/// step and then the answer on stdout as the parent (in
/// [`super::read_pmix_tables`]) reads them, and ends the process
/// (without running exit handlers, which a PMIx thread still stuck could
/// block).
///
/// A `timeout` of zero waits for the server as long as it takes (what
/// the parent asks for). With `release`, the ranks held in `PMIx_Init`
/// are let go after the tables are read ([`super::release_pmix_ranks`]).
pub fn serve_helper(pid: i32, timeout: Duration, max_procs: usize, release: bool) -> ! {
    let step = |s: &str| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{TAG} step {s}");
        let _ = out.flush();
    };
    let answer = query_in_process(pid, timeout, max_procs, release, step);
    let line = serde_json::to_string(&answer).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{TAG} answer {line}");
    let _ = out.flush();
    // SAFETY: _exit ends the process at once; nothing is left to run.
    unsafe { nix::libc::_exit(0) }
}

/// Runs the session for launcher `pid` in `helper`, inside the
/// launcher's root when it has another, and stops waiting for it after
/// `timeout` (it is left to finish; see the module's docs).
pub(crate) fn query_in_helper(
    pid: i32,
    timeout: Duration,
    max_procs: usize,
    release: bool,
    helper: &PmixHelper,
) -> Result<Reported, PmixError> {
    let failed = |reason: String| PmixError::Helper {
        pid,
        program: helper.program.clone(),
        reason,
    };
    let mut cmd;
    // Kept open until the child has exec'd.
    let _exe;
    if root_differs(pid) {
        let file = std::fs::File::open(&helper.program)
            .map_err(|e| failed(format!("cannot open it: {e}")))?;
        // The program is exec'd through its descriptor: after the chroot,
        // its path leads nowhere. The descriptor is closed on exec, after
        // the kernel has opened the file.
        use std::os::fd::AsRawFd;
        cmd = Command::new(format!("/proc/self/fd/{}", file.as_raw_fd()));
        _exe = Some(file);
        let root = std::ffi::CString::new(format!("/proc/{pid}/root"))
            .map_err(|e| failed(e.to_string()))?;
        // The launcher's root has its own libraries.
        cmd.env_remove("LD_LIBRARY_PATH").env_remove("LD_PRELOAD");
        // SAFETY: between fork and exec only chroot(2) and chdir(2) run,
        // both async-signal-safe, on strings made before the fork.
        unsafe {
            cmd.pre_exec(move || {
                if nix::libc::chroot(root.as_ptr()) != 0 || nix::libc::chdir(c"/".as_ptr()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    } else {
        cmd = Command::new(&helper.program);
        _exe = None;
    }
    cmd.args(&helper.args)
        .arg("--pid")
        .arg(pid.to_string())
        // The helper itself waits as long as the server takes (see the
        // module's docs).
        .arg("--timeout-ms")
        .arg("0")
        .arg("--max-procs")
        .arg(max_procs.to_string())
        .args(release.then_some("--release"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A group of its own: the terminal's ^C to mpidd must not end it
        // in the middle of a handshake either.
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| failed(format!("cannot start it: {e}")))?;
    let (tx, rx) = mpsc::channel();
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let stderr = child.stderr.take().map(|mut err| {
        std::thread::spawn(move || {
            let mut tail = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > STDERR_TAIL {
                    tail.drain(..tail.len() - STDERR_TAIL);
                }
            }
            String::from_utf8_lossy(&tail).trim().to_string()
        })
    });
    let mut step = String::from("starting the helper");
    let answer = loop {
        let left = timeout.saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) => {
                let Some(rest) = line.strip_prefix(TAG) else {
                    continue;
                };
                if let Some(s) = rest.strip_prefix(" step ") {
                    step = s.to_string();
                } else if let Some(json) = rest.strip_prefix(" answer ") {
                    break Some(json.to_string());
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // Not killed: it finishes when the server answers (and
                // ends when the launcher does); meanwhile a thread of ours
                // reaps it when it ends.
                std::thread::spawn(move || child.wait());
                return Err(PmixError::Timeout {
                    pid,
                    step,
                    timeout_ms: timeout.as_millis() as u64,
                });
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break None,
        }
    };
    // The helper ends right after its answer (the session is over by
    // then, so killing it would be harmless); one that does not is killed.
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(5)),
            _ if answer.is_none() => {
                // No answer and still running past the bound: as above.
                std::thread::spawn(move || child.wait());
                return Err(PmixError::Timeout {
                    pid,
                    step,
                    timeout_ms: timeout.as_millis() as u64,
                });
            }
            _ => {
                let _ = child.kill();
                break child.wait().ok();
            }
        }
    };
    let Some(json) = answer else {
        let err = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
        return Err(failed(format!(
            "it ended ({}) without an answer{}",
            status.map_or("?".to_string(), |s| s.to_string()),
            if err.is_empty() {
                String::new()
            } else {
                format!("; its stderr: {err}")
            }
        )));
    };
    serde_json::from_str::<Result<Reported, PmixError>>(&json)
        .map_err(|e| failed(format!("its answer is not JSON of the expected shape: {e}")))?
}

/// Whether `pid` is `ancestor` or below it, by the parent links of
/// `/proc` (at most 64 steps up).
pub(crate) fn is_below(pid: i32, ancestor: i32) -> bool {
    let mut p = pid;
    for _ in 0..64 {
        if p == ancestor {
            return true;
        }
        if p <= 1 {
            return false;
        }
        let Some(parent) = std::fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(") ")?
                    .1
                    .split_whitespace()
                    .nth(1)?
                    .parse()
                    .ok()
            })
        else {
            return false;
        };
        p = parent;
    }
    false
}

/// This host's name.
pub(crate) fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
}
