//! The reference Open MPI build (scripts/build-ref-ompi.sh) and 4-rank jobs
//! of tests/openmpi/queues.c, run by its own mpirun, that have stopped
//! themselves after writing down what each rank posted.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::mpich_job::{wait_stopped, wait_timeout};

/// The reference Open MPI install (`$MPIDD_REF_OMPI`, default
/// `~/.cache/mpidd/openmpi-4.1.4`).
pub fn ref_ompi() -> PathBuf {
    let prefix = std::env::var_os("MPIDD_REF_OMPI")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                .join(".cache/mpidd/openmpi-4.1.4")
        });
    assert!(
        prefix.join(".mpidd-complete").exists() && msgq_dll(&prefix).exists(),
        "the reference Open MPI is not built at {}: run `bash scripts/build-ref-ompi.sh` \
         (scripts/test.sh does)",
        prefix.display()
    );
    prefix
}

/// Open MPI's own message-queue library in an install.
pub fn msgq_dll(prefix: &Path) -> PathBuf {
    prefix.join("lib/openmpi/libompi_dbg_msgq.so")
}

/// A running `mpirun -n 4 queues DIR` whose ranks have stopped themselves.
/// Dropping it continues the ranks and ends the job, so a failed assertion
/// leaves nothing stopped behind.
pub struct OmpiJob {
    pub mpirun: Child,
    /// (rank, pid), by rank.
    pub ranks: Vec<(i64, i32)>,
    pub dir: PathBuf,
}

/// Which Open MPI a job runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OmpiBuild {
    /// The reference build, with debug info (scripts/build-ref-ompi.sh).
    Reference,
    /// Debian's own packages as installed: stripped, and the program built
    /// with -O2 and no -g, so no debug info is anywhere.
    Stock,
}

/// Debian's Open MPI compiler wrapper and launcher.
fn stock_ompi() -> (PathBuf, PathBuf) {
    let (mpicc, mpirun) = (
        PathBuf::from("/usr/bin/mpicc.openmpi"),
        PathBuf::from("/usr/bin/mpirun.openmpi"),
    );
    assert!(
        mpicc.exists() && mpirun.exists(),
        "Debian's Open MPI is not installed: apt-get install openmpi-bin libopenmpi-dev \
         (scripts/test.sh does)"
    );
    (mpicc, mpirun)
}

impl OmpiJob {
    /// tests/openmpi/PROGRAM.c built with the reference mpicc and run by
    /// its mpirun as 4 ranks on the shared-memory transport, in a fresh
    /// directory `name` that is also the program's argument.
    pub fn start(name: &str, program: &str) -> OmpiJob {
        Self::start_on(OmpiBuild::Reference, name, program)
    }

    /// As [`OmpiJob::start`], on `build`.
    pub fn start_on(build: OmpiBuild, name: &str, program: &str) -> OmpiJob {
        let (mpicc, mpirun, cflags) = match build {
            OmpiBuild::Reference => {
                let prefix = ref_ompi();
                (
                    prefix.join("bin/mpicc"),
                    prefix.join("bin/mpirun"),
                    "-g -O0",
                )
            }
            OmpiBuild::Stock => {
                let (mpicc, mpirun) = stock_ompi();
                (mpicc, mpirun, "-O2 -g0")
            }
        };
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join(program);
        let src =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/openmpi/{program}.c"));
        let out = Command::new(&mpicc)
            .args(cflags.split(' '))
            .arg("-o")
            .arg(&exe)
            .arg(src)
            .output()
            .unwrap_or_else(|e| panic!("run {}: {e}", mpicc.display()));
        assert!(
            out.status.success(),
            "mpicc failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut mpirun = Command::new(&mpirun)
            // Root in containers; more ranks than cores on small machines;
            // shared memory between the ranks, as on one node.
            .args(["--allow-run-as-root", "--oversubscribe"])
            .args(["--mca", "btl", "self,vader", "-n", "4"])
            .arg(&exe)
            .arg(&dir)
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mpirun");
        let stdout = mpirun.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut job = OmpiJob {
            mpirun,
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

    /// What rank `rank` wrote down it posted.
    pub fn posted(&self, rank: i64) -> String {
        std::fs::read_to_string(self.dir.join(format!("posted.{rank}"))).unwrap()
    }

    /// Continues the ranks and returns mpirun's exit status.
    pub fn finish(mut self) -> i32 {
        for &(_, pid) in &self.ranks {
            let _ = Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status();
        }
        let status = wait_timeout(&mut self.mpirun, Duration::from_secs(120));
        self.ranks.clear();
        status
    }
}

impl Drop for OmpiJob {
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
        let _ = self.mpirun.kill();
        let _ = self.mpirun.wait();
    }
}
