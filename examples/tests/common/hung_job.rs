//! 4-rank jobs of the tests/mpich/hang_*.c programs (plain MPI, whatever
//! their folder says), run with the reference MPICH's `mpiexec.hydra` or
//! with Debian's own Open MPI, that hang for real inside MPI calls (nothing
//! stops them). Dropping a [`HungJob`] kills the whole job: the launcher,
//! its proxies and the ranks, so a failed assertion leaves nothing behind.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::mpich_job::{ref_mpich, stock_mpich};
use super::ompi_job::{debian_ompi, DEBIAN_MPICC, DEBIAN_MPIRUN};
pub use super::procs::{proc_state, tracer_pid};

/// `mpirun.openmpi`'s arguments for 4 ranks on this one node: root in
/// containers, more ranks than cores, and each (name, value) pair of
/// `mca` as `--mca NAME VALUE` (the transport: shared memory between the
/// ranks, or UCX on whatever this machine has, not only on InfiniBand).
fn ompi_args(mca: &[&'static str]) -> Vec<&'static str> {
    let mut args = vec!["--allow-run-as-root", "--oversubscribe"];
    for pair in mca.chunks(2) {
        args.push("--mca");
        args.extend_from_slice(pair);
    }
    args.extend(["-n", "4"]);
    args
}

/// Which MPI builds and runs a hung job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HangMpi {
    /// The reference MPICH (CH3, debug info), `mpiexec.hydra`.
    ReferenceMpich,
    /// Debian's own Open MPI, stripped, `mpirun.openmpi` on the
    /// shared-memory transport; the program itself is built with `-g`, as
    /// a user's is while they look for a hang.
    DebianOpenMpi,
    /// The same over Open MPI's UCX PML, whose queues are UCX's worker's
    /// (`mpiq_core::OmpiUcx` reads them).
    DebianOpenMpiUcx,
    /// Debian's own MPICH (CH4 on UCX, stripped), `mpiexec.mpich`; the
    /// program is built with `-g`.
    DebianMpich,
}

/// A running `mpiexec.hydra -n 4 PROGRAM` whose ranks have all printed
/// `READY` and then blocked.
pub struct HungJob {
    pub mpiexec: Child,
    /// (rank, pid), by rank.
    pub ranks: Vec<(i64, i32)>,
    /// The job's own directory (its executable, cores, outputs).
    pub dir: PathBuf,
    /// The C source it was built from.
    pub source: PathBuf,
    /// What the ranks printed before they were all READY, other than
    /// their READY lines.
    pub output: Vec<String>,
}

impl HungJob {
    /// tests/mpich/PROGRAM.c, built with the reference mpicc (`-g -O0`),
    /// run as 4 ranks in a fresh directory named `name`.
    pub fn start(name: &str, program: &str) -> HungJob {
        Self::start_on(HangMpi::ReferenceMpich, name, program)
    }

    /// The same on `mpi`.
    pub fn start_on(mpi: HangMpi, name: &str, program: &str) -> HungJob {
        let (mpicc, launcher, args): (PathBuf, PathBuf, Vec<&str>) = match mpi {
            HangMpi::ReferenceMpich => {
                let prefix = ref_mpich();
                (
                    prefix.join("bin/mpicc"),
                    prefix.join("bin/mpiexec.hydra"),
                    vec!["-n", "4"],
                )
            }
            HangMpi::DebianOpenMpi => {
                debian_ompi();
                (
                    PathBuf::from(DEBIAN_MPICC),
                    PathBuf::from(DEBIAN_MPIRUN),
                    ompi_args(&["btl", "self,vader"]),
                )
            }
            HangMpi::DebianOpenMpiUcx => {
                debian_ompi();
                (
                    PathBuf::from(DEBIAN_MPICC),
                    PathBuf::from(DEBIAN_MPIRUN),
                    ompi_args(&["pml", "ucx", "pml_ucx_tls", "any", "pml_ucx_devices", "any"]),
                )
            }
            HangMpi::DebianMpich => {
                let tools = stock_mpich();
                (tools.cc, tools.mpiexec, vec!["-n", "4"])
            }
        };
        let (dir, exe, source) = build(&mpicc, name, program);
        // The blocked ranks busy-poll: at the lowest priority they leave the
        // CPUs to mpidd, which reads them (nice execs, so the pid is
        // mpiexec's).
        let mut launch = Command::new("nice");
        launch
            .args(["-n", "19"])
            .arg(&launcher)
            .args(&args)
            .arg(&exe);
        Self::run(launch, dir, source, program)
    }

    /// Runs `launch` (a launcher of 4 ranks of `program`, built by
    /// [`build`] into `dir` from `source`) in `dir` and waits until every
    /// rank has printed READY.
    pub fn run(mut launch: Command, dir: PathBuf, source: PathBuf, program: &str) -> HungJob {
        let mut mpiexec = launch
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            // Its own process group, so that the whole job can be killed at
            // once even if a proxy outlives the launcher.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("start {launch:?}: {e}"));
        let stdout = mpiexec.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut job = HungJob {
            mpiexec,
            ranks: Vec::new(),
            dir,
            source,
            output: Vec::new(),
        };
        let start = Instant::now();
        while job.ranks.len() < 4 {
            let left = Duration::from_secs(120).saturating_sub(start.elapsed());
            let line = rx.recv_timeout(left).unwrap_or_else(|_| {
                panic!("the 4 ranks of {program} print READY within 2 minutes")
            });
            let mut words = line.split_whitespace();
            if words.next() == Some("READY") {
                let rank = words.next().unwrap().parse().unwrap();
                let pid = words.next().unwrap().parse().unwrap();
                job.ranks.push((rank, pid));
            } else {
                job.output.push(line);
            }
        }
        job.ranks.sort();
        let ranks: Vec<i64> = job.ranks.iter().map(|r| r.0).collect();
        assert_eq!(ranks, [0, 1, 2, 3], "one READY line per rank");
        // Blocked CH3 nemesis ranks busy-poll (state R), so nothing tells
        // that a rank is inside its blocking call yet: give them a second.
        std::thread::sleep(Duration::from_secs(1));
        job.assert_running("after start");
        job
    }

    pub fn pid(&self, rank: i64) -> i32 {
        self.ranks[rank as usize].1
    }

    pub fn mpiexec_pid(&self) -> i32 {
        self.mpiexec.id() as i32
    }

    /// Every rank is alive and neither stopped nor traced.
    pub fn assert_running(&self, when: &str) {
        for &(rank, pid) in &self.ranks {
            let state = proc_state(pid)
                .unwrap_or_else(|| panic!("{when}: rank {rank} (pid {pid}) is gone"));
            assert!(
                !matches!(state, 'T' | 't' | 'Z' | 'X'),
                "{when}: rank {rank} (pid {pid}) is in state {state}, not running"
            );
            assert_eq!(
                tracer_pid(pid),
                Some(0),
                "{when}: rank {rank} (pid {pid}) is still traced"
            );
        }
    }

    /// Waits up to `limit` until no rank is stopped or traced, then
    /// asserts it.
    pub fn assert_running_within(&self, limit: Duration, when: &str) {
        let start = Instant::now();
        while start.elapsed() < limit {
            let settled = self.ranks.iter().all(|&(_, pid)| {
                proc_state(pid).is_some_and(|s| !matches!(s, 'T' | 't'))
                    && tracer_pid(pid) == Some(0)
            });
            if settled {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.assert_running(when);
    }

    /// `gcore`s every rank into the fresh directory `dir` (named `core.PID`).
    pub fn gcore_all(&self, dir: &str) -> PathBuf {
        let dir = self.dir.join(dir);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let pids: Vec<i32> = self.ranks.iter().map(|r| r.1).collect();
        super::procs::gcore_each(&dir, &pids);
        dir
    }

    /// The line of the program's source that holds `marker`.
    pub fn source_line(&self, marker: &str) -> usize {
        let text = std::fs::read_to_string(&self.source).unwrap();
        text.lines()
            .position(|l| l.contains(marker))
            .unwrap_or_else(|| panic!("{} has no {marker}", self.source.display()))
            + 1
    }
}

impl Drop for HungJob {
    fn drop(&mut self) {
        let ranks: Vec<i32> = self.ranks.iter().map(|r| r.1).collect();
        super::procs::kill_job(self.mpiexec_pid(), &ranks);
        let _ = self.mpiexec.kill();
        let _ = self.mpiexec.wait();
        super::scratch::remove_unless_failed(&self.dir);
    }
}

/// tests/mpich/PROGRAM.c built with `mpicc` (`-g -O0`) into a fresh
/// directory `name`: (the directory, the executable, the source).
pub fn build(mpicc: &Path, name: &str, program: &str) -> (PathBuf, PathBuf, PathBuf) {
    build_with(mpicc, name, program, &[])
}

/// [`build`] with a compiler that is no MPI wrapper: `extra` gives what
/// the wrapper would (include and library paths, `-lmpi`), after the source.
pub fn build_with(
    mpicc: &Path,
    name: &str,
    program: &str,
    extra: &[&str],
) -> (PathBuf, PathBuf, PathBuf) {
    let dir = super::scratch::fresh_dir(name);
    let exe = dir.join(program);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/mpich/{program}.c"));
    let out = Command::new(mpicc)
        .args(["-g", "-O0", "-Wall", "-o"])
        .arg(&exe)
        .arg(&source)
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", mpicc.display()));
    assert!(
        out.status.success(),
        "mpicc {} failed: {}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, exe, source)
}
