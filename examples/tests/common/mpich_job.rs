//! The reference MPICH build, the mpidd binary, and 4-rank jobs of the
//! programs in tests/mpich/ that have stopped themselves.

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
    // MPI_File's ADIOI_FileD is in the DWARF only when ROMIO was built with
    // -g, which the build script has done since it says so in its stamp.
    let stamp = std::fs::read_to_string(prefix.join(".mpidd-complete")).unwrap_or_default();
    assert!(
        stamp.contains("ROMIO"),
        "the reference MPICH at {} was built before ROMIO got debug info: run \
         `bash scripts/build-ref-mpich.sh` again to rebuild it",
        prefix.display()
    );
    prefix
}

/// The reference CH3 MPICH built without `--enable-debuginfo`
/// (`scripts/build-ref-mpich.sh ch3-nodebugger`): the other choice of the
/// one configure option that moves members of the 4.0 ch3:nemesis
/// family's layouts.
pub fn ref_mpich_nodebugger() -> PathBuf {
    let prefix = std::env::var_os("MPIDD_REF_MPICH_NODEBUGGER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                .join(".cache/mpidd/mpich-4.0.2-ch3-nodebugger")
        });
    assert!(
        prefix.join(".mpidd-complete").exists() && prefix.join("lib/libmpi.so").exists(),
        "the reference MPICH without debugger support is not built at {}: run \
         `bash scripts/build-ref-mpich.sh ch3-nodebugger` (scripts/test.sh does)",
        prefix.display()
    );
    prefix
}

/// The reference MPICH with the CH4 device (ch4:ucx), built beside the
/// CH3 one by `scripts/build-ref-mpich.sh ch4`.
pub fn ref_mpich_ch4() -> PathBuf {
    let prefix = std::env::var_os("MPIDD_REF_MPICH_CH4")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                .join(".cache/mpidd/mpich-4.0.2-ch4")
        });
    assert!(
        prefix.join(".mpidd-complete").exists() && prefix.join("lib/libmpi.so").exists(),
        "the reference MPICH with CH4 is not built at {}: run \
         `bash scripts/build-ref-mpich.sh ch4` (scripts/test.sh does)",
        prefix.display()
    );
    prefix
}

/// Debian's own MPICH: its compiler wrapper and launcher, which build and
/// run against the stock, stripped `libmpich.so.12` (`scripts/test.sh`
/// installs `mpich` and `libmpich-dev`).
pub fn stock_mpich() -> Toolchain {
    let tools = Toolchain {
        cc: PathBuf::from("/usr/bin/mpicc.mpich"),
        // As a user builds: no debug info asked for, in the program or the
        // library.
        cflags: &["-O0"],
        mpiexec: PathBuf::from("/usr/bin/mpiexec.mpich"),
    };
    for tool in [&tools.cc, &tools.mpiexec] {
        assert!(
            tool.exists(),
            "{} is missing: install Debian's MPICH (apt-get install mpich libmpich-dev; \
             scripts/test.sh does)",
            tool.display()
        );
    }
    assert!(
        Path::new("/usr/include/x86_64-linux-gnu/mpich/mpi.h").exists(),
        "MPICH's headers are missing: apt-get install libmpich-dev (scripts/test.sh does)"
    );
    tools
}

/// How a job's program is built and launched.
pub struct Toolchain {
    pub cc: PathBuf,
    pub cflags: &'static [&'static str],
    pub mpiexec: PathBuf,
}

impl Toolchain {
    /// The reference build's own `mpicc` and `mpiexec.hydra` under
    /// `prefix`, with debug info in the program.
    pub fn reference(prefix: &Path) -> Toolchain {
        Toolchain {
            cc: prefix.join("bin/mpicc"),
            cflags: &["-g", "-O0"],
            mpiexec: prefix.join("bin/mpiexec.hydra"),
        }
    }
}

/// The mpidd binary, with a layout cache of this test binary's own,
/// emptied when the binary starts: the first read of each build goes
/// through its DWARF and fills the cache, and the later ones read from it,
/// so both paths are checked on every run, and the user's cache is left
/// alone.
pub fn mpidd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mpidd"));
    command.env("MPIDD_CACHE_DIR", test_layout_cache());
    command
}

/// This test binary's layout cache directory (see [`mpidd`]).
pub fn test_layout_cache() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("layout-cache-{}", env!("CARGO_CRATE_NAME")));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    })
}

/// A running `mpiexec -n 4 PROGRAM` whose ranks have stopped themselves.
/// Dropping it continues the ranks and ends the job, so a failed assertion
/// leaves nothing stopped behind.
pub struct Job {
    pub mpiexec: Child,
    /// (rank, pid), by rank.
    pub ranks: Vec<(i64, i32)>,
    /// Each rank's READY line, by rank: a program may print more there.
    pub ready: Vec<String>,
    pub dir: PathBuf,
}

impl Job {
    /// tests/mpich/queues.c with `args`.
    pub fn start(name: &str, args: &[&str]) -> Job {
        Self::start_with_env(name, args, &[])
    }

    /// As [`Job::start`], with extra environment for the launcher and its
    /// ranks.
    pub fn start_with_env(name: &str, args: &[&str], env: &[(&str, &Path)]) -> Job {
        Self::start_program(name, "queues", args, env)
    }

    /// tests/mpich/PROGRAM.c, built with the reference mpicc, run as 4 ranks
    /// in a fresh directory named `name`; an argument `{dir}` stands for
    /// that directory.
    pub fn start_program(name: &str, program: &str, args: &[&str], env: &[(&str, &Path)]) -> Job {
        Self::start_launched(name, program, &[], args, env)
    }

    /// As [`Job::start_program`], with extra `mpiexec.hydra` options
    /// (before the program) and environment values that are not paths.
    pub fn start_launched<V: AsRef<std::ffi::OsStr>>(
        name: &str,
        program: &str,
        launch: &[&str],
        args: &[&str],
        env: &[(&str, V)],
    ) -> Job {
        Self::start_on(&ref_mpich(), name, program, launch, args, env)
    }

    /// As [`Job::start_launched`], with the MPICH installed at `prefix`.
    pub fn start_on<V: AsRef<std::ffi::OsStr>>(
        prefix: &Path,
        name: &str,
        program: &str,
        launch: &[&str],
        args: &[&str],
        env: &[(&str, V)],
    ) -> Job {
        Job::start_with(
            &Toolchain::reference(prefix),
            name,
            program,
            launch,
            args,
            env,
        )
    }

    /// [`Job::start_on`] with another compiler and launcher, such as
    /// Debian's own ([`stock_mpich`]).
    pub fn start_with<V: AsRef<std::ffi::OsStr>>(
        tools: &Toolchain,
        name: &str,
        program: &str,
        launch: &[&str],
        args: &[&str],
        env: &[(&str, V)],
    ) -> Job {
        Self::start_ranks(tools, 4, name, program, launch, args, env)
    }

    /// [`Job::start_with`] with `n` ranks instead of 4.
    pub fn start_ranks<V: AsRef<std::ffi::OsStr>>(
        tools: &Toolchain,
        n: usize,
        name: &str,
        program: &str,
        launch: &[&str],
        args: &[&str],
        env: &[(&str, V)],
    ) -> Job {
        let dir = super::scratch::fresh_dir(name);
        let exe = dir.join(program);
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/mpich/{program}.c"));
        let args: Vec<std::ffi::OsString> = args
            .iter()
            .map(|a| {
                if *a == "{dir}" {
                    dir.clone().into_os_string()
                } else {
                    (*a).into()
                }
            })
            .collect();
        let out = Command::new(&tools.cc)
            .args(tools.cflags)
            .arg("-o")
            .arg(&exe)
            .arg(src)
            .output()
            .expect("run mpicc");
        assert!(
            out.status.success(),
            "mpicc failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut mpiexec = Command::new(&tools.mpiexec);
        mpiexec
            .args(["-n", &n.to_string()])
            .args(launch)
            .arg(&exe)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v.as_ref())));
        Self::launch(mpiexec, n, dir)
    }

    /// Runs `mpiexec` (a whole launch line of `n` ranks, by any launcher:
    /// one run inside another root too) in `dir` and waits for the `n`
    /// ranks to print READY and stop themselves.
    pub fn launch(mut mpiexec: Command, n: usize, dir: PathBuf) -> Job {
        let mut mpiexec = mpiexec
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start mpiexec");
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
            ready: Vec::new(),
            dir,
        };
        let mut ready = Vec::new();
        while job.ranks.len() < n {
            let line = rx
                .recv_timeout(Duration::from_secs(120))
                .expect("every rank prints READY within 2 minutes");
            let mut words = line.split_whitespace();
            if words.next() == Some("READY") {
                let rank = words.next().unwrap().parse().unwrap();
                let pid = words.next().unwrap().parse().unwrap();
                job.ranks.push((rank, pid));
                ready.push((rank, line.clone()));
            }
        }
        job.ranks.sort();
        ready.sort();
        job.ready = ready.into_iter().map(|(_, line)| line).collect();
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
        end_stopped_job(&self.ranks, &mut self.mpiexec);
        super::scratch::remove_unless_failed(&self.dir);
    }
}

/// Ends a job whose ranks may be stopped: each rank is continued and
/// killed, then the launcher. For the jobs' `Drop`, so that a failed
/// assertion leaves nothing behind.
pub fn end_stopped_job(ranks: &[(i64, i32)], launcher: &mut Child) {
    if ranks.is_empty() {
        return;
    }
    for &(_, pid) in ranks {
        let _ = Command::new("kill")
            .args(["-CONT", &pid.to_string()])
            .status();
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    let _ = launcher.kill();
    let _ = launcher.wait();
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

pub use super::procs::gcore;
// Not every test binary that takes this module dumps all of a job's ranks.
#[allow(unused_imports)]
pub use super::procs::gcore_each;
