//! Debian 13's own Open MPI 5.0.7, as it ships (stripped libmpi.so.40
//! with a build-id, ob1 and OMPIO built into it), read from this machine
//! through the layout profile mpidd ships for it
//! (scripts/write-ompi5-profile.sh). The programs of tests/openmpi/ are
//! built with the root's mpicc.openmpi and run by its mpirun.openmpi
//! (prterun) inside the Debian 13 root (scripts/lib/in-debian13.sh); the
//! ranks keep their pids there, and write them on their READY lines
//! (prterun has no MPIR table). `mpidd queues` and `mpidd handle` read
//! them live and from gcore cores, and every queue entry and handle view
//! must be what the program wrote down, as for Open MPI 4.1. gdb on the
//! host names the cores' files as the host sees them (under the root),
//! except the program, which the rank saw in a directory bound into its
//! own mount namespace: `--search-path` finds it in the test's directory.
//! Open MPI 5.0.7's own libompi_dbg_msgq.so (scripts/build-ompi5-dll.sh)
//! reads the same ranks through mpidd's host (`--compare-dll`), its type
//! questions answered from the same profile.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::mpich_job::{gcore_each, mpidd, wait_stopped};
use common::ob1_checks::check_dll_comparison;
use common::ompi5_reading::{check_handle_job, check_queue_job};
use common::ompi_job::OmpiJob;

/// The Debian 13 root (`$MPIDD_DEBIAN13_ROOT`, default
/// `~/.cache/mpidd/debian13`), with Open MPI 5.0.7 installed.
fn root() -> PathBuf {
    let root = std::env::var_os("MPIDD_DEBIAN13_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/mpidd/debian13")
        });
    assert!(
        root.join("usr/bin/mpirun.openmpi").exists() && root.join("usr/bin/mpicc.openmpi").exists(),
        "no Debian 13 root with Open MPI at {}: run `bash scripts/python-envs.sh debian13` \
         (scripts/test.sh does)",
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

/// tests/openmpi/PROGRAM.c built in the root with mpicc.openmpi and run
/// there by mpirun.openmpi as 4 ranks of ob1 over shared memory, in a
/// fresh directory `name` (seen at the same path inside) that is also the
/// program's argument.
fn start(name: &str, program: &str) -> OmpiJob {
    let root = root();
    let dir = common::scratch::fresh_dir(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/openmpi/{program}.c"));
    let copy = dir.join(format!("{program}.c"));
    std::fs::copy(&src, &copy).unwrap();
    let exe = dir.join(program);
    let out = in_debian13(&root, &dir)
        .args(["mpicc.openmpi", "-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&copy)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc.openmpi in the Debian 13 root failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut mpirun = in_debian13(&root, &dir);
    mpirun.args([
        "mpirun.openmpi",
        "--allow-run-as-root",
        "--oversubscribe",
        "--mca",
        "btl",
        "self,sm",
        "--mca",
        "pml",
        "ob1",
    ]);
    let job = OmpiJob::launch(mpirun, &exe, dir);
    // Each rank runs on the root's own library, not the host's.
    let want = std::fs::canonicalize(root.join("usr/lib/x86_64-linux-gnu/libmpi.so.40")).unwrap();
    let want = Path::new("/").join(want.strip_prefix(&root).unwrap());
    for &(_, pid) in &job.ranks {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
        assert!(
            maps.contains(want.to_str().unwrap()),
            "rank {pid} does not map {}",
            want.display()
        );
    }
    job
}

#[test]
fn ob1_queues_of_debian13_open_mpi_5_live_and_from_cores() {
    check_queue_job(start("ompi5-queues", "queues"), "5.0.7", true, true);
}

#[test]
fn every_handle_kind_of_debian13_open_mpi_5_live_and_from_cores() {
    check_handle_job(start("ompi5-handles", "handles"), "5.0.7", true);
}

/// Open MPI 5.0.7's own message-queue library, built with debug info from
/// Debian 13's source by scripts/build-ompi5-dll.sh, in
/// `$MPIDD_OMPI5_DLL` (default `${XDG_CACHE_HOME:-~/.cache}/mpidd/openmpi-5.0.7-dll`,
/// as the script's).
fn ompi5_msgq_dll() -> PathBuf {
    let dir = std::env::var_os("MPIDD_OMPI5_DLL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache")
                })
                .join("mpidd/openmpi-5.0.7-dll")
        });
    let dll = dir.join("libompi_dbg_msgq.so");
    assert!(
        dll.exists(),
        "no Open MPI 5.0.7 libompi_dbg_msgq.so at {}: run `bash scripts/build-ompi5-dll.sh` \
         (scripts/test.sh does, and exports MPIDD_OMPI5_DLL)",
        dll.display()
    );
    dll
}

/// `mpidd queues ARGS --compare-dll DLL --json`: the native reading, the
/// library's, their differences; and what mpidd said on standard error.
fn compare_with(dll: &Path, args: &[&str]) -> (serde_json::Value, String) {
    let out = mpidd()
        .arg("queues")
        .args(args)
        .arg("--compare-dll")
        .arg(dll)
        .arg("--json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "mpidd queues {args:?} --compare-dll failed: {err}"
    );
    (serde_json::from_slice(&out.stdout).expect("JSON"), err)
}

/// Open MPI 5's own message-queue library on Debian 13's stripped build,
/// live and from cores: mpidd's host answers its type questions from the
/// shipped profile (which records them), and it reads every communicator
/// and every pending send and receive the program posted, as the native
/// decoder does. The only differences are the documented ones
/// (`msgq_dll_difference`): it shows no unexpected messages (it has no
/// code for them), an unmatched receive's zeroed status as its actual
/// values, and notes of its own.
#[test]
fn ob1_queues_of_debian13_open_mpi_5_through_its_own_libompi_dbg_msgq() {
    let dll = ompi5_msgq_dll();
    let job = start("ompi5-queues-dll", "queues");
    let check = |rank: i64, args: &[&str], what: &str| {
        let (v, err) = compare_with(&dll, args);
        assert!(
            err.contains("message-queue library's questions about types are answered from the profile of Open MPI 5.0.7"),
            "rank {rank} ({what}): the library's types should come from the shipped profile: {err}"
        );
        assert!(
            v["dll"]["source"].as_str().unwrap().contains("v5.0.7"),
            "{}",
            v["dll"]["source"]
        );
        check_dll_comparison(rank, &v, &job.posted(rank), what);
    };
    for rank in 0..4 {
        check(rank, &["--pid", &job.pid(rank).to_string()], "live");
        wait_stopped(job.pid(rank));
    }
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let args = [
            "--core",
            core.to_str().unwrap(),
            "--search-path",
            job.dir.to_str().unwrap(),
        ];
        check(rank, &args, "core");
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
