//! What the embedding example's tests share: the three MPIs, a 2-rank job
//! of tests/c/recv_stops.c that is always ended (a guard), the example
//! tracer run as a child that is always ended too, the `mpidd` CLI and gdb.
#![allow(dead_code)]

pub mod checks;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long any one wait of a test lasts at most.
pub const LIMIT: Duration = Duration::from_secs(120);

/// An MPI: its compiler wrapper and its launcher with the options a job
/// needs.
pub struct Mpi {
    pub name: &'static str,
    pub cc: PathBuf,
    pub cflags: &'static [&'static str],
    pub launcher: PathBuf,
    pub launch: &'static [&'static str],
}

fn require(path: &Path, how: &str) {
    assert!(path.exists(), "{} is missing: {how}", path.display());
}

/// Debian's Open MPI 4.1 (stripped: its layouts come from the shipped
/// profile).
pub fn debian_open_mpi() -> Mpi {
    let mpi = Mpi {
        name: "openmpi",
        cc: "/usr/bin/mpicc.openmpi".into(),
        cflags: &["-O0"],
        launcher: "/usr/bin/mpirun.openmpi".into(),
        launch: &["--allow-run-as-root", "--oversubscribe"],
    };
    let how = "install Debian's Open MPI (apt-get install openmpi-bin libopenmpi-dev; \
               scripts/test.sh does)";
    require(&mpi.cc, how);
    require(&mpi.launcher, how);
    mpi
}

/// Debian's MPICH 4.0.2 (ch4:ucx, stripped).
pub fn debian_mpich() -> Mpi {
    let mpi = Mpi {
        name: "mpich",
        cc: "/usr/bin/mpicc.mpich".into(),
        cflags: &["-O0"],
        launcher: "/usr/bin/mpiexec.mpich".into(),
        launch: &[],
    };
    let how = "install Debian's MPICH (apt-get install mpich libmpich-dev; scripts/test.sh does)";
    require(&mpi.cc, how);
    require(&mpi.launcher, how);
    mpi
}

/// The reference debug MPICH (CH3) at `MPIDD_REF_MPICH`, else where
/// `scripts/build-ref-mpich.sh` puts it.
pub fn reference_mpich() -> Mpi {
    let prefix = std::env::var_os("MPIDD_REF_MPICH")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/mpidd/mpich-4.0.2")
        });
    assert!(
        prefix.join(".mpidd-complete").exists() && prefix.join("bin/mpicc").exists(),
        "the reference MPICH is not built at {}: run `bash scripts/build-ref-mpich.sh` and set \
         MPIDD_REF_MPICH to the prefix it prints last (scripts/test.sh does)",
        prefix.display()
    );
    Mpi {
        name: "ref-mpich",
        cc: prefix.join("bin/mpicc"),
        cflags: &["-g", "-O0"],
        launcher: prefix.join("bin/mpiexec.hydra"),
        launch: &[],
    }
}

/// The jobs of one test binary run one at a time: each has two ranks
/// that spin in MPI_Recv, on a machine of few cores.
pub fn one_job_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A scratch directory under the tests' own, emptied.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    dir
}

/// A running 2-rank job of tests/c/recv_stops.c whose ranks printed READY.
/// Dropping it continues and kills the ranks, then the launcher, so a
/// failing test leaves nothing behind, stopped or running.
pub struct Job {
    pub launcher: Child,
    /// The launcher's standard output after the READY lines.
    pub lines: mpsc::Receiver<String>,
    /// The ranks' pids, by rank.
    pub ranks: Vec<i32>,
    pub dir: PathBuf,
}

impl Job {
    pub fn start(mpi: &Mpi, name: &str) -> Job {
        Self::start_under(mpi, name, &[])
    }

    /// As [`Job::start`], each rank started as `WRAPPER... PROGRAM` (a
    /// debugger that runs the program).
    pub fn start_under(mpi: &Mpi, name: &str, wrapper: &[&str]) -> Job {
        let dir = fresh_dir(name);
        let exe = dir.join("recv_stops");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/recv_stops.c");
        let out = Command::new(&mpi.cc)
            .args(mpi.cflags)
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .output()
            .expect("run the MPI compiler wrapper");
        assert!(
            out.status.success(),
            "{} failed: {}",
            mpi.cc.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let mut launcher = Command::new(&mpi.launcher)
            .args(mpi.launch)
            .args(["-n", "2"])
            .args(wrapper)
            .arg(&exe)
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the launcher");
        let lines = read_lines(launcher.stdout.take().expect("the launcher's stdout"));
        let mut job = Job {
            launcher,
            lines,
            ranks: Vec::new(),
            dir,
        };
        let mut ranks = Vec::new();
        while ranks.len() < 2 {
            let line = job
                .lines
                .recv_timeout(LIMIT)
                .expect("both ranks print READY within the bound");
            let mut words = line.split_whitespace();
            if words.next() == Some("READY") {
                let rank: usize = words.next().unwrap().parse().unwrap();
                let pid: i32 = words.next().unwrap().parse().unwrap();
                ranks.push((rank, pid));
                // Kept at once, so that Drop ends this rank if the other
                // never comes.
                job.ranks.push(pid);
            }
        }
        ranks.sort();
        job.ranks = ranks.into_iter().map(|(_, pid)| pid).collect();
        job
    }

    /// The launcher's pid, for `mpidd job --pid`.
    pub fn launcher_pid(&self) -> i32 {
        self.launcher.id() as i32
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        for &pid in &self.ranks {
            signal(pid, "CONT");
            signal(pid, "KILL");
        }
        let _ = self.launcher.kill();
        let _ = self.launcher.wait();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Sends `kill -NAME` to `pid`.
pub fn signal(pid: i32, name: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status();
}

/// The lines of `from`, read on a thread of their own.
fn read_lines(from: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The example tracer, running; dropping it kills it (its own SIGTERM
/// handling lets the rank go first).
pub struct Embed {
    child: Child,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
    seen_stderr: Vec<String>,
}

impl Embed {
    pub fn start(args: &[&str]) -> Embed {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mpidd-embed"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mpidd-embed");
        let stdout = read_lines(child.stdout.take().unwrap());
        let stderr = read_lines(child.stderr.take().unwrap());
        Embed {
            child,
            stdout,
            stderr,
            seen_stderr: Vec::new(),
        }
    }

    /// Waits for a line of its stderr that starts with `prefix`.
    pub fn wait_stderr(&mut self, prefix: &str) {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) if line.starts_with(prefix) => return,
                Ok(line) => self.seen_stderr.push(line),
                Err(_) => panic!(
                    "mpidd-embed never said `{prefix}`; its stderr: {:?}",
                    self.seen_stderr
                ),
            }
        }
    }

    /// Its next line of standard output, as JSON.
    pub fn next_stop(&mut self) -> Value {
        match self.stdout.recv_timeout(LIMIT) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("a stop is one JSON object ({e}): {line}")),
            Err(_) => {
                self.seen_stderr.extend(self.stderr.try_iter());
                panic!("no stop within {LIMIT:?}; stderr: {:?}", self.seen_stderr)
            }
        }
    }

    /// Waits for it to end, and checks it succeeded.
    pub fn finish(&mut self) {
        let deadline = Instant::now() + LIMIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "mpidd-embed did not end");
            std::thread::sleep(Duration::from_millis(20));
        };
        std::thread::sleep(Duration::from_millis(100));
        self.seen_stderr.extend(self.stderr.try_iter());
        assert!(
            status.success(),
            "mpidd-embed failed ({status}): {:?}",
            self.seen_stderr
        );
    }
}

impl Drop for Embed {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            // SIGTERM first: it restores its breakpoints and detaches.
            let _ = Command::new("kill")
                .arg(self.child.id().to_string())
                .status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// The `mpidd` CLI built beside mpidd-embed in the same target directory:
/// `cargo test --workspace` builds it; a test run of this package alone
/// needs `cargo build -p mpidd` first.
pub fn mpidd() -> Command {
    let embed = PathBuf::from(env!("CARGO_BIN_EXE_mpidd-embed"));
    let cli = embed.with_file_name("mpidd");
    assert!(
        cli.exists(),
        "the mpidd CLI is not built at {}: run `cargo build -p mpidd` with the same \
         CARGO_TARGET_DIR (cargo test --workspace builds it)",
        cli.display()
    );
    let mut command = Command::new(cli);
    // A cache of this test's own, so the user's is neither read nor
    // written.
    command.env(
        "MPIDD_CACHE_DIR",
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("embed-layout-cache"),
    );
    command
}

/// Runs a command and parses its standard output as JSON.
pub fn json_of(command: &mut Command) -> Value {
    let out = command.output().expect("run the command");
    assert!(
        out.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{command:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Waits until process `pid` is stopped (state T).
pub fn wait_stopped(pid: i32) {
    let deadline = Instant::now() + LIMIT;
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]) == Some("T") {
            return;
        }
        assert!(Instant::now() < deadline, "process {pid} never stopped");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The function names gdb shows for the main thread of `pid` (`bt`),
/// innermost first; `None` for a frame it cannot name.
pub fn gdb_backtrace(pid: i32) -> Vec<Option<String>> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| d.join("gdb").exists()),
        "gdb is not on PATH: apt-get install gdb (scripts/test.sh installs it)"
    );
    let out = Command::new("timeout")
        .arg(LIMIT.as_secs().to_string())
        .args(["gdb", "-nx", "-batch", "-p", &pid.to_string(), "-ex", "bt"])
        .output()
        .expect("run gdb under timeout");
    let text = String::from_utf8_lossy(&out.stdout);
    let frames: Vec<Option<String>> = text
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| {
            // "#1  0x... in main () at f.c:3" or "#0  PMPI_Recv (...) at ...".
            let rest = l.split_once(' ').map(|(_, r)| r.trim_start()).unwrap_or("");
            let rest = match rest.split_once(" in ") {
                Some((addr, name)) if addr.starts_with("0x") => name,
                _ => rest,
            };
            let name = rest.split([' ', '(']).next().unwrap_or("");
            (name != "??" && !name.is_empty()).then(|| name.to_string())
        })
        .collect();
    assert!(
        !frames.is_empty(),
        "gdb showed no frames for {pid}: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    frames
}

/// The function names of a stop's thread `tid`, innermost first.
pub fn stop_frames(stop: &Value, tid: i32) -> Vec<Option<String>> {
    let thread = stop["threads"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["tid"] == tid))
        .unwrap_or_else(|| panic!("stop shows no thread {tid}: {stop}"));
    thread["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| f["function"].as_str().map(str::to_string))
        .collect()
}

/// A function name without the profiling prefix, so MPI_Recv and its
/// alias PMPI_Recv compare equal.
pub fn plain(name: &str) -> &str {
    name.strip_prefix('P')
        .filter(|n| n.starts_with("MPI"))
        .unwrap_or(name)
}
