//! `mpidd queues --dll libtvmpich.so` against a real 4-rank MPICH job built
//! with the reference MPICH (scripts/build-ref-mpich.sh), live and from
//! gcore cores. What the queues must hold is known from the program's
//! source (tests/mpich/queues.c), not from our output.
//!
//! Also: Debian's own Open MPI message-queue library against Debian's
//! stripped Open MPI must fail with a clear "debug info missing" message.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::mpich_job::{gcore, mpidd, wait_stopped, Job};
use common::queue_checks::{
    check_comparison, check_rank, check_rank_native, comm, native, ops, queues,
};

#[test]
fn libtvmpich_live_and_from_gcore_cores() {
    let job = Job::start("mpich-queues", &[]);
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        check_rank(rank, &queues(&["--pid", &pid]));
        check_rank_native(rank, &native(&["--pid", &pid]));
        check_comparison(&["--pid", &pid]);
        wait_stopped(job.pid(rank));
    }
    for rank in 0..4 {
        let pid = job.pid(rank);
        let core = gcore(&job.dir, pid);
        let core = core.to_str().unwrap();
        check_rank(rank, &queues(&["--core", core]));
        check_rank_native(rank, &native(&["--core", core]));
        check_comparison(&["--core", core]);
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// One rank posts 100,000 receives; both readers see all of them, in
/// posting order, from the same core. (Their times are in the issue note,
/// measured with scripts/bench-queues.sh, not asserted here.)
#[test]
fn a_hundred_thousand_posted_receives() {
    const N: usize = 100_000;
    let job = Job::start("mpich-queues-scale", &["scale", &N.to_string()]);
    let pid = job.pid(0);
    let core = gcore(&job.dir, pid);
    let core = core.to_str().unwrap();
    for q in [native(&["--core", core]), queues(&["--core", core])] {
        let world = comm(&q, "MPI_COMM_WORLD");
        let r = ops(world, "pending_receives");
        assert_eq!(r.len(), N, "{}", q["source"]);
        for (i, op) in r.iter().enumerate() {
            assert_eq!(op["desired_tag"], 1000 + i as i64, "posting order");
            assert_eq!(op["desired_local_rank"], 1);
        }
    }
    assert_eq!(job.finish(), 0);
}

#[test]
fn open_mpi_library_on_stripped_open_mpi_says_what_went_unanswered() {
    let dll = Path::new("/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/libompi_dbg_msgq.so");
    assert!(
        dll.exists(),
        "{} is missing: install libopenmpi-dev (scripts/test.sh does)",
        dll.display()
    );
    // A real Open MPI job (tests/openmpi/run-job.sh): 2 ranks waiting in
    // main after MPI_Init.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/openmpi/run-job.sh");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ompi-queues");
    let out = Command::new("bash")
        .arg(&script)
        .arg("start")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "starting the Open MPI job failed (scripts/test.sh installs openmpi-bin):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let rank0 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RANK0_PID="))
        .expect("run-job.sh prints RANK0_PID")
        .trim_matches('"')
        .to_string();
    let out = mpidd()
        .args(["queues", "--pid", &rank0, "--rank", "0", "--dll"])
        .arg(dll)
        .output()
        .unwrap();
    let _ = Command::new("bash")
        .arg(&script)
        .arg("stop")
        .arg(&dir)
        .output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a clean failure, not a crash: {stderr}"
    );
    assert!(stderr.contains("no queues"), "{stderr}");
    // Debian's libraries carry no DWARF, so the library's questions go to
    // Debian 12's shipped profile, which records what mpidd's decoders
    // ask, not all Open MPI 4.1's own library does.
    assert!(
        stderr.contains("opal_free_list_t") && stderr.contains("no such member"),
        "names what went unanswered: {stderr}"
    );
    assert!(
        stderr.contains("questions about types are answered from the profile of Open MPI 4.1.4")
            && stderr.contains("a question it does not record goes unanswered"),
        "says why: {stderr}"
    );
}
