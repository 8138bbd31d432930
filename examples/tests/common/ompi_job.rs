//! The reference Open MPI build (scripts/build-ref-ompi.sh), Debian's own
//! stripped Open MPI, and 4-rank jobs of tests/openmpi/queues.c, run by
//! their own mpirun, that have stopped themselves after writing down what
//! each rank posted.

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

/// Which Open MPI builds and runs a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OmpiBuild {
    /// The reference build, with debug info (scripts/build-ref-ompi.sh).
    Reference,
    /// Debian's own, stripped, without debug info anywhere (`openmpi-bin`
    /// and `libopenmpi-dev`, which scripts/test.sh installs); the program
    /// is built without -g too.
    Stock,
}

impl OmpiBuild {
    fn mpicc(self) -> PathBuf {
        match self {
            OmpiBuild::Reference => ref_ompi().join("bin/mpicc"),
            OmpiBuild::Stock => stock("/usr/bin/mpicc.openmpi"),
        }
    }

    fn mpirun(self) -> PathBuf {
        match self {
            OmpiBuild::Reference => ref_ompi().join("bin/mpirun"),
            OmpiBuild::Stock => stock("/usr/bin/mpirun.openmpi"),
        }
    }

    /// Its own message-queue library.
    pub fn msgq_dll(self) -> PathBuf {
        match self {
            OmpiBuild::Reference => msgq_dll(&ref_ompi()),
            OmpiBuild::Stock => {
                stock("/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/libompi_dbg_msgq.so")
            }
        }
    }
}

/// A file of Debian's Open MPI, which must be installed.
fn stock(path: &str) -> PathBuf {
    assert!(
        Path::new(path).exists(),
        "{path} is missing: apt-get install openmpi-bin libopenmpi-dev \
         (bash scripts/test.sh does)"
    );
    PathBuf::from(path)
}

/// A running `mpirun -n 4 queues DIR` whose ranks have stopped themselves.
/// Dropping it continues the ranks and ends the job, so a failed assertion
/// leaves nothing stopped behind.
pub struct OmpiJob {
    pub mpirun: Child,
    /// (rank, pid), by rank.
    pub ranks: Vec<(i64, i32)>,
    /// Each rank's `MPI_COMM_WORLD` handle (a pointer), by rank, as the
    /// program printed it.
    pub comm_world: Vec<u64>,
    pub dir: PathBuf,
}

impl OmpiJob {
    /// tests/openmpi/PROGRAM.c built with the reference mpicc and run by
    /// its mpirun as 4 ranks on the shared-memory transport, in a fresh
    /// directory `name` that is also the program's argument.
    pub fn start(name: &str, program: &str) -> OmpiJob {
        OmpiJob::start_on(OmpiBuild::Reference, name, program)
    }

    /// The same with the Open MPI `build`.
    pub fn start_on(build: OmpiBuild, name: &str, program: &str) -> OmpiJob {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join(program);
        let src =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/openmpi/{program}.c"));
        let debug: &[&str] = match build {
            OmpiBuild::Reference => &["-g"],
            OmpiBuild::Stock => &[],
        };
        let out = Command::new(build.mpicc())
            .args(debug)
            .args(["-O0", "-o"])
            .arg(&exe)
            .arg(src)
            .output()
            .expect("run mpicc");
        assert!(
            out.status.success(),
            "mpicc failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut mpirun = Command::new(build.mpirun())
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
            comm_world: Vec::new(),
            dir,
        };
        let mut handles = Vec::new();
        while job.ranks.len() < 4 {
            let line = rx
                .recv_timeout(Duration::from_secs(120))
                .expect("the 4 ranks print READY within 2 minutes");
            let mut words = line.split_whitespace();
            if words.next() == Some("READY") {
                let rank = words.next().unwrap().parse().unwrap();
                let pid = words.next().unwrap().parse().unwrap();
                let handle = words.next().expect("MPI_COMM_WORLD on the READY line");
                let handle = u64::from_str_radix(handle.trim_start_matches("0x"), 16).unwrap();
                job.ranks.push((rank, pid));
                handles.push((rank, handle));
            }
        }
        job.ranks.sort();
        handles.sort();
        job.comm_world = handles.into_iter().map(|(_, h)| h).collect();
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
