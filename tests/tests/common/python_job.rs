//! Hung mpi4py jobs: the programs of tests/python/ run as N ranks in one
//! of the Python MPI environments that scripts/python-envs.sh prepares
//! (scripts/test.sh exports where). A [`PyJob`] is started, waits until
//! every rank has printed `READY RANK PID` (just before its hang line), and
//! kills the whole job when dropped, so a failed assertion leaves nothing
//! behind.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::procs::{descendants, gcore, kill_job, proc_state, tracer_pid};
use super::scratch::{fresh_dir, remove_unless_failed};

/// How long the ranks of a job get to print READY: Python and MPI start
/// slowly on a loaded 2-core machine.
const READY_WITHIN: Duration = Duration::from_secs(180);

/// A Python MPI environment that a job runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PyEnv {
    /// Debian 12's CPython 3.11 in a virtual environment with pip's MPICH
    /// wheel and mpi4py, launched by the wheel's `mpiexec` (hydra).
    HostMpich,
    /// Debian 12's CPython 3.11 in a virtual environment whose mpi4py was
    /// built against Debian's Open MPI 4.1, launched by `mpirun.openmpi`.
    HostOpenMpi,
    /// A Debian 13 root (a chroot) with CPython 3.13 and a virtual
    /// environment with pip's MPICH and mpi4py; the launcher and the ranks
    /// run inside it, with the host's pids.
    Debian13,
}

impl PyEnv {
    /// Every environment.
    pub const ALL: [PyEnv; 3] = [PyEnv::HostMpich, PyEnv::HostOpenMpi, PyEnv::Debian13];

    /// A short name, for directories and messages.
    pub fn name(self) -> &'static str {
        match self {
            PyEnv::HostMpich => "py311-mpich",
            PyEnv::HostOpenMpi => "py311-ompi",
            PyEnv::Debian13 => "debian13",
        }
    }

    /// The CPython version the ranks run (`major.minor`).
    pub fn python_version(self) -> &'static str {
        match self {
            PyEnv::HostMpich | PyEnv::HostOpenMpi => "3.11",
            PyEnv::Debian13 => "3.13",
        }
    }

    /// The environment's directory on the host: the virtual environment,
    /// or the Debian 13 root. Panics, saying how to make it, when it is
    /// not there.
    pub fn dir(self) -> PathBuf {
        let (var, default) = match self {
            PyEnv::HostMpich => ("MPIDD_PY_MPICH_VENV", "py311-mpich"),
            PyEnv::HostOpenMpi => ("MPIDD_PY_OMPI_VENV", "py311-ompi"),
            PyEnv::Debian13 => ("MPIDD_DEBIAN13_ROOT", "debian13"),
        };
        let dir = std::env::var_os(var)
            .map(PathBuf::from)
            .unwrap_or_else(|| cache_dir().join(default));
        assert!(
            dir.join(".mpidd-complete").exists(),
            "the Python environment {} is not made at {} ({var}): run \
             `bash scripts/python-envs.sh {}` (scripts/test.sh does)",
            self.name(),
            dir.display(),
            match self {
                PyEnv::HostMpich => "mpich",
                PyEnv::HostOpenMpi => "ompi",
                PyEnv::Debian13 => "debian13",
            }
        );
        dir
    }

    /// The launcher's command line for `ranks` ranks of `python SCRIPT
    /// ARGS`, the job's directory `dir` being visible at the same path to
    /// the ranks.
    fn launch(self, dir: &Path, ranks: usize, script: &Path, args: &[&str]) -> Command {
        let n = ranks.to_string();
        // The blocked ranks busy-poll: at the lowest priority they leave
        // the CPUs to what reads them (nice execs: its pid is the
        // launcher's).
        let mut launch = Command::new("nice");
        launch.args(["-n", "19"]);
        match self {
            PyEnv::HostMpich => {
                let venv = self.dir();
                launch
                    .arg(venv.join("bin/mpiexec"))
                    .args(["-n", &n])
                    .arg(venv.join("bin/python"));
            }
            PyEnv::HostOpenMpi => {
                let venv = self.dir();
                assert!(
                    Path::new(OMPI_MPIRUN).exists(),
                    "{OMPI_MPIRUN} is missing: apt-get install openmpi-bin (scripts/test.sh does)"
                );
                launch
                    .arg(OMPI_MPIRUN)
                    .args(["--allow-run-as-root", "--oversubscribe"])
                    .args(["--mca", "btl", "self,vader", "-n", &n])
                    .arg(venv.join("bin/python"));
            }
            PyEnv::Debian13 => {
                let root = self.dir();
                launch
                    .arg(in_debian13())
                    .env("MPIDD_DEBIAN13_ROOT", &root)
                    .arg("--bind")
                    .arg(dir)
                    .arg(format!("{DEBIAN13_VENV}/bin/mpiexec"))
                    .args(["-n", &n])
                    .arg(format!("{DEBIAN13_VENV}/bin/python"));
            }
        }
        launch.arg(script).args(args);
        launch
    }
}

/// Debian's Open MPI launcher.
const OMPI_MPIRUN: &str = "/usr/bin/mpirun.openmpi";

/// The virtual environment inside the Debian 13 root.
const DEBIAN13_VENV: &str = "/opt/mpidd-venv";

/// ${XDG_CACHE_HOME:-$HOME/.cache}/mpidd, as scripts/python-envs.sh.
fn cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache"))
        .join("mpidd")
}

/// scripts/lib/in-debian13.sh of this checkout.
fn in_debian13() -> PathBuf {
    repo().join("scripts/lib/in-debian13.sh")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is in the workspace")
        .to_path_buf()
}

/// A running job of a tests/python/ program whose ranks have all printed
/// READY. Dropping it kills the launcher, its proxies and the ranks.
pub struct PyJob {
    /// Where it runs.
    pub env: PyEnv,
    /// The launcher (`mpiexec` or `mpirun`), leader of its own process
    /// group.
    pub launcher: Child,
    /// (rank, host pid), by rank.
    pub ranks: Vec<(i64, i32)>,
    /// The job's scratch directory: its copy of the program, the
    /// launcher's stderr, cores.
    pub dir: PathBuf,
    /// The program the ranks run (in `dir`; the same path inside the
    /// Debian 13 root), as Python names it in its frames.
    pub script: PathBuf,
}

impl PyJob {
    /// tests/python/PROGRAM.py with `args`, as `ranks` ranks in `env`, in
    /// a fresh scratch directory named after them; returns once every
    /// rank has printed READY, and checks that each READY pid is a live
    /// process below the launcher (so, in the Debian 13 root too, a pid
    /// the host can read).
    pub fn start(env: PyEnv, program: &str, args: &[&str], ranks: usize) -> PyJob {
        let mut name = format!("python-{}-{program}", env.name());
        for a in args {
            name.push('-');
            name.push_str(a);
        }
        let dir = fresh_dir(&name);
        let source = repo().join(format!("tests/python/{program}.py"));
        let script = dir.join(format!("{program}.py"));
        std::fs::copy(&source, &script)
            .unwrap_or_else(|e| panic!("copy {} to {}: {e}", source.display(), dir.display()));
        let stderr = std::fs::File::create(dir.join("stderr.txt")).expect("create stderr.txt");
        let mut launch = env.launch(&dir, ranks, &script, args);
        let mut launcher = launch
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            // Its own process group, so that the whole job can be killed at
            // once even if a proxy outlives the launcher.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("start {launch:?}: {e}"));
        let stdout = launcher.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        // Kept in stdout.txt too, for the messages of a later failure (a
        // launcher reports a dead rank there).
        let mut copy = std::fs::File::create(dir.join("stdout.txt")).expect("create stdout.txt");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = writeln!(copy, "{line}");
                let _ = tx.send(line);
            }
        });
        let mut job = PyJob {
            env,
            launcher,
            ranks: Vec::new(),
            dir,
            script,
        };
        let start = Instant::now();
        while job.ranks.len() < ranks {
            if let Ok(Some(status)) = job.launcher.try_wait() {
                panic!(
                    "{name}: the launcher ended ({status}) before every rank printed READY; {}",
                    job.output()
                );
            }
            if start.elapsed() > READY_WITHIN {
                panic!(
                    "{name}: {} of {ranks} ranks printed READY within {READY_WITHIN:?}; {}",
                    job.ranks.len(),
                    job.output()
                );
            }
            let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) else {
                continue;
            };
            if let Some(rank) = ready_line(&line) {
                job.ranks.push(rank);
            }
        }
        job.ranks.sort();
        let numbers: Vec<i64> = job.ranks.iter().map(|r| r.0).collect();
        let expected: Vec<i64> = (0..ranks as i64).collect();
        assert_eq!(numbers, expected, "{name}: one READY line per rank");
        let below = descendants(job.launcher_pid());
        for &(rank, pid) in &job.ranks {
            assert!(
                below.contains(&pid),
                "{name}: rank {rank}'s pid {pid} is not a process below the launcher {} \
                 (a pid namespace?): {below:?}",
                job.launcher_pid()
            );
        }
        // READY comes just before the hang line: give every rank a moment
        // to get into it.
        std::thread::sleep(Duration::from_secs(1));
        job
    }

    /// The launcher's pid.
    pub fn launcher_pid(&self) -> i32 {
        self.launcher.id() as i32
    }

    /// The host pid of `rank`.
    pub fn pid(&self, rank: i64) -> i32 {
        self.ranks
            .iter()
            .find(|r| r.0 == rank)
            .unwrap_or_else(|| panic!("no rank {rank} in {:?}", self.ranks))
            .1
    }

    /// Every rank is alive (not a zombie) and neither stopped nor traced.
    pub fn assert_running(&self, when: &str) {
        for &(rank, pid) in &self.ranks {
            let state = proc_state(pid).unwrap_or_else(|| {
                panic!("{when}: rank {rank} (pid {pid}) is gone; {}", self.output())
            });
            if matches!(state, 'Z' | 'X') {
                // The launcher reports the death a moment later.
                std::thread::sleep(Duration::from_secs(2));
                panic!(
                    "{when}: rank {rank} (pid {pid}) has ended ({}); {}",
                    exit_status(pid),
                    self.output()
                );
            }
            assert!(
                !matches!(state, 'T' | 't'),
                "{when}: rank {rank} (pid {pid}) is in state {state}, not running"
            );
            assert_eq!(
                tracer_pid(pid),
                Some(0),
                "{when}: rank {rank} (pid {pid}) is still traced"
            );
        }
    }

    /// The first line (1-based) of the program that ends in the comment
    /// `marker`, such as `# hang: rank 1`, after code: the docstrings,
    /// which quote the markers, are not such lines.
    pub fn source_line(&self, marker: &str) -> usize {
        let text = std::fs::read_to_string(&self.script).expect("read the job's program");
        text.lines()
            .position(|l| {
                l.find(marker).is_some_and(|at| {
                    let code = l[..at].trim();
                    !code.is_empty() && !code.ends_with('`')
                })
            })
            .unwrap_or_else(|| panic!("{} has no line with {marker:?}", self.script.display()))
            + 1
    }

    /// gdb's `gcore` of every rank, attached from the host by host pid,
    /// into the fresh directory `name` of the job's directory: (rank, core
    /// file), by rank. Every core is checked to be a non-empty file.
    pub fn gcore_all(&self, name: &str) -> Vec<(i64, PathBuf)> {
        let dir = self.dir.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the cores' directory");
        self.ranks
            .iter()
            .map(|&(rank, pid)| {
                let core = gcore(&dir, pid);
                let len = std::fs::metadata(&core).map(|m| m.len()).unwrap_or(0);
                assert!(
                    len > 0,
                    "gcore of rank {rank} (pid {pid}) wrote no {}",
                    core.display()
                );
                (rank, core)
            })
            .collect()
    }

    /// What the launcher and the ranks wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default()
    }

    /// What they wrote to stdout and then to stderr so far, for messages.
    pub fn output(&self) -> String {
        let stdout = std::fs::read_to_string(self.dir.join("stdout.txt")).unwrap_or_default();
        format!("stdout:\n{stdout}stderr:\n{}", self.stderr())
    }
}

impl Drop for PyJob {
    fn drop(&mut self) {
        let ranks: Vec<i32> = self.ranks.iter().map(|r| r.1).collect();
        kill_job(self.launcher_pid(), &ranks);
        let _ = self.launcher.kill();
        let _ = self.launcher.wait();
        remove_unless_failed(&self.dir);
    }
}

/// How the zombie `pid` ended, from the exit code that /proc/PID/stat
/// keeps as its last field.
fn exit_status(pid: i32) -> String {
    let code = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.split_whitespace().last()?.parse::<i32>().ok());
    match code {
        Some(c) if c & 0x7f != 0 => format!("killed by signal {}", c & 0x7f),
        Some(c) => format!("exit status {}", c >> 8),
        None => "its exit status is gone".to_string(),
    }
}

/// (rank, pid) of a `READY RANK PID` line.
fn ready_line(line: &str) -> Option<(i64, i32)> {
    let mut words = line.split_whitespace();
    if words.next()? != "READY" {
        return None;
    }
    Some((words.next()?.parse().ok()?, words.next()?.parse().ok()?))
}

/// The mpidd binary of this build (`cargo build -p mpidd`; `cargo test
/// --workspace` builds it), beside this test binary's directory, with a
/// layout cache of this test binary's own.
pub fn mpidd() -> Command {
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/debug/deps/TEST-HASH -> target/debug/mpidd
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("mpidd"))
        .expect("the test binary is in a target directory");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build -p mpidd` first (cargo test --workspace builds it)",
        bin.display()
    );
    let mut command = Command::new(bin);
    command.env(
        "MPIDD_CACHE_DIR",
        PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("layout-cache-{}", env!("CARGO_CRATE_NAME"))),
    );
    command
}
