//! The processes of a test job, seen from /proc and gdb: a process's state
//! and tracer, the processes below a launcher, ending them all, and gcore
//! cores. Plain std and nix, so that the tests crate's jobs
//! (tests/tests/common/) share it with these.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// The one-letter state of /proc/PID/stat, or `None` when it is gone.
pub fn proc_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

fn proc_ppid(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// TracerPid of /proc/PID/status, or `None` when it is gone.
pub fn tracer_pid(pid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))?
        .trim()
        .parse()
        .ok()
}

/// Every process below `root` (children, their children, ...), parents
/// before their children.
pub fn descendants(root: i32) -> Vec<i32> {
    let mut children: Vec<(i32, i32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            if let Some(ppid) = proc_ppid(pid) {
                children.push((ppid, pid));
            }
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        for &(ppid, pid) in &children {
            if ppid == parent && !found.contains(&pid) {
                found.push(pid);
            }
        }
        i += 1;
    }
    found.remove(0);
    found
}

/// SIGKILLs every process below `launcher`, the processes `also` (ranks
/// that a proxy may have reparented), and `launcher`'s process group (the
/// launcher was started as the leader of its own group).
pub fn kill_job(launcher: i32, also: &[i32]) {
    let mut pids = descendants(launcher);
    pids.extend_from_slice(also);
    for pid in pids {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let _ = kill(Pid::from_raw(-launcher), Signal::SIGKILL);
}

/// Dumps a live process with gdb's `gcore` into `dir` and returns the core.
pub fn gcore(dir: &Path, pid: i32) -> PathBuf {
    gcore_each(dir, &[pid]).remove(0)
}

/// [`gcore`] of every process of `pids` at once, one gcore each: most of a
/// gcore's time is gdb starting and waiting on the process, so a job's four
/// ranks are dumped in about the time of two rather than four (measured on
/// 2 cores: 2.2 s against 4.9 s for the reference MPICH's ring).
pub fn gcore_each(dir: &Path, pids: &[i32]) -> Vec<PathBuf> {
    let children: Vec<_> = pids
        .iter()
        .map(|pid| {
            Command::new("gcore")
                .arg("-o")
                .arg(dir.join("core"))
                .arg(pid.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("gcore (from gdb; scripts/test.sh installs it)")
        })
        .collect();
    // Every child is waited for before any assertion, so that a failed one
    // leaves no gcore attached to a rank.
    let outputs: Vec<_> = children
        .into_iter()
        .map(|child| child.wait_with_output().expect("wait for gcore"))
        .collect();
    pids.iter()
        .zip(outputs)
        .map(|(pid, out)| {
            assert!(
                out.status.success(),
                "gcore of {pid} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let core = dir.join(format!("core.{pid}"));
            // gcore reports success even when the disk filled under it: a
            // core cut short would otherwise fail the test later as a
            // reader's bug.
            let mut magic = [0u8; 4];
            let whole = std::fs::File::open(&core)
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
                .is_ok()
                && magic == *b"\x7fELF";
            assert!(
                whole,
                "gcore of {pid} left no ELF core at {} (is the disk full?): {}",
                core.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            core
        })
        .collect()
}
