//! Debian's MPICH launcher, `mpiexec.hydra`, exports no MPIR symbols at all
//! (neither in `.dynsym` nor, stripped, in `.symtab`). `mpidd procs` on it
//! must say so, naming the objects it searched, promptly and without
//! disturbing the job.
//!
//! `bash scripts/test.sh` installs Debian's `mpich` package. It is called by
//! its full path: with Open MPI also installed, the plain `mpirun` may be
//! either implementation's.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const HYDRA: &str = "/usr/bin/mpiexec.hydra";

/// Kills the launcher and what it started when the test ends, however it
/// ends.
struct Job(Child);

impl Drop for Job {
    fn drop(&mut self) {
        // hydra forwards SIGTERM to its proxy and the ranks.
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(self.0.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn status_field(pid: u32, key: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

/// The pids of `pid`'s children.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

#[test]
fn mpiexec_hydra_is_reported_as_having_no_mpir_symbols() {
    assert!(
        Path::new(HYDRA).exists(),
        "{HYDRA} is missing: apt-get install mpich (bash scripts/test.sh does)"
    );
    let job = Job(Command::new(HYDRA)
        .args(["-n", "2", "sleep", "60"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mpiexec.hydra"));
    let hydra = job.0.id();
    // Wait for the job to be up: hydra's proxy has started both ranks.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ranks: usize = children(hydra).iter().map(|&p| children(p).len()).sum();
        if ranks == 2 {
            break;
        }
        assert!(Instant::now() < deadline, "the hydra job did not start");
        std::thread::sleep(Duration::from_millis(50));
    }

    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mpidd"))
        .args(["procs", "--pid", &hydra.to_string(), "--json"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "mpidd found a table in {HYDRA}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no MPIR symbols"), "{err}");
    assert!(err.contains(HYDRA), "the searched objects are named: {err}");
    assert!(err.contains("libc.so"), "libraries are searched too: {err}");
    assert!(err.contains("stripped"), "{err}");
    assert!(err.contains("mpiexec.hydra"), "{err}");
    // Not a timing assertion on speed: a generous bound that tells a hang
    // from an answer.
    assert!(started.elapsed() < Duration::from_secs(20), "mpidd hung");

    // The job was only read: still running, not stopped, not traced.
    assert!(
        !matches!(
            status_field(hydra, "State:").chars().next(),
            Some('t' | 'T')
        ),
        "hydra was left stopped"
    );
    assert_eq!(status_field(hydra, "TracerPid:"), "0");
    assert!(
        Path::new(&format!("/proc/{hydra}")).exists(),
        "hydra still runs"
    );
}
