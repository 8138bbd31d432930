//! The reference MPICH build, the mpidd binary, and a 4-rank job of
//! tests/mpich/queues.c that has stopped itself.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub fn ref_mpich() -> PathBuf {
    let prefix = std::env::var_os("MPIDD_REF_MPICH")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/mpidd/mpich-4.0.2")
        });
    assert!(
        prefix.join("lib/libtvmpich.so").exists(),
        "the reference MPICH is not built at {}: run `bash scripts/build-ref-mpich.sh` \
         (scripts/test.sh does)",
        prefix.display()
    );
    prefix
}

pub fn mpidd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mpidd"))
}

/// A running `mpiexec -n 4 queues` whose ranks have stopped themselves.
/// Dropping it continues the ranks and ends the job, so a failed assertion
/// leaves nothing stopped behind.
pub struct Job {
    pub mpiexec: Child,
    /// (rank, pid), by rank.
    pub ranks: Vec<(i64, i32)>,
    pub dir: PathBuf,
}

impl Job {
    pub fn start(name: &str, args: &[&str]) -> Job {
        Self::start_with_env(name, args, &[])
    }

    /// As [`Job::start`], with extra environment for the launcher and its
    /// ranks.
    pub fn start_with_env(name: &str, args: &[&str], env: &[(&str, &Path)]) -> Job {
        let prefix = ref_mpich();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("queues");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mpich/queues.c");
        let out = Command::new(prefix.join("bin/mpicc"))
            .args(["-g", "-O0", "-o"])
            .arg(&exe)
            .arg(src)
            .output()
            .expect("run the reference mpicc");
        assert!(
            out.status.success(),
            "mpicc failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut mpiexec = Command::new(prefix.join("bin/mpiexec.hydra"))
            .args(["-n", "4"])
            .arg(&exe)
            .args(args)
            .current_dir(&dir)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start mpiexec.hydra");
        let stdout = mpiexec.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut job = Job {
            mpiexec,
            ranks: Vec::new(),
            dir,
        };
        while job.ranks.len() < 4 {
            let line = rx
                .recv_timeout(Duration::from_secs(120))
                .expect("the 4 ranks print READY within 2 minutes");
            let mut words = line.split_whitespace();
            if words.next() == Some("READY") {
                let rank = words.next().unwrap().parse().unwrap();
                let pid = words.next().unwrap().parse().unwrap();
                job.ranks.push((rank, pid));
            }
        }
        job.ranks.sort();
        for &(_, pid) in &job.ranks {
            wait_stopped(pid);
        }
        job
    }

    pub fn pid(&self, rank: i64) -> i32 {
        self.ranks[rank as usize].1
    }

    /// Continues the ranks and returns mpiexec's exit status.
    pub fn finish(mut self) -> i32 {
        for &(_, pid) in &self.ranks {
            let _ = Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status();
        }
        let status = wait_timeout(&mut self.mpiexec, Duration::from_secs(120));
        self.ranks.clear();
        status
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if self.ranks.is_empty() {
            return;
        }
        for &(_, pid) in &self.ranks {
            let _ = Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status();
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        let _ = self.mpiexec.kill();
        let _ = self.mpiexec.wait();
    }
}

pub fn wait_timeout(child: &mut Child, limit: Duration) -> i32 {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        assert!(
            start.elapsed() < limit,
            "mpiexec did not end within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn wait_stopped(pid: i32) {
    for _ in 0..600 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]);
        if state == Some("T") {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("rank process {pid} did not stop itself");
}
