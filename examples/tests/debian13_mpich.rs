//! Debian 13's own MPICH 4.2.1 (`libmpich12` 4.3.0+really4.2.1-1,
//! ch4:ucx, a direct-netmod build: every point-to-point operation goes to
//! UCX), as trixie ships it: stripped, with a build-id, MPICH's globals
//! hidden, no debugger support, on Debian 13's stripped UCX 1.18.1, in the
//! Debian 13 root scripts/python-envs.sh makes (`$MPIDD_DEBIAN13_ROOT`).
//! The programs are built with the root's `mpicc.mpich` and run by its
//! `mpiexec.mpich` inside it (scripts/lib/in-debian-root.sh), and read from
//! the host by pid and from gcore cores; the program, which the ranks saw
//! in a directory bound into their own mount namespace, is found in the
//! job's directory by `--search-path`.
//!
//! mpidd ships a profile of this very build
//! (`mpidd-read/profiles/mpich-4.2.1-debian13-amd64.json`, written by
//! scripts/write-debian13-mpich-profile.sh from upstream v4.2.1 compiled
//! with the stock file's configure line in the root, with the hidden
//! globals located in the stock file), and one of its UCX
//! (`ucx-1.18.1-debian13-amd64.json`), both checked on each process before
//! use. The queues of tests/mpich/queues.c read as its ranks posted them,
//! every handle of tests/mpich/handles.c is what the rank wrote down, and
//! `mpidd job` names the hung ring of tests/mpich/hang_ring.c as a cycle,
//! live and from cores.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::debian_root::{assert_ranks_map, build_mpich_in_root, host_path, in_root, root};
use common::handle_checks::check_every_rank;
use common::hung_job::HungJob;
use common::job_checks::{
    check_cores_with, check_live, check_ring_receives, one_at_a_time, Expected,
};
use common::mpich_handle_checks::{check_rank as check_handles, Device};
use common::mpich_job::{gcore_each, mpidd, wait_stopped, Job};
use common::queue_checks::check_rank_stock;
use common::site_build::build_id;
use common::supported_builds::Outcome;
use serde_json::Value;

/// The build as docs/supported-builds.md names it, with where its layouts
/// come from.
const MPICH: &str = "Debian 13 mpich 4.3.0+really4.2.1-1, ch4:ucx (amd64)";
const MPICH_PROFILE: &str = "the MPICH 4.2.1 profile of its build (mpich-4.2.1-debian13-amd64)";

/// Where trixie's library is inside the root.
const LIBMPICH: &str = "/usr/lib/x86_64-linux-gnu/libmpich.so.12";

/// The Debian 13 root, with MPICH's compiler and launcher.
fn debian13() -> PathBuf {
    root(
        "MPIDD_DEBIAN13_ROOT",
        "debian13",
        &["usr/bin/mpicc.mpich", "usr/bin/mpiexec.mpich"],
    )
}

/// `mpidd ARGS`: its standard output, standard error and success.
fn run(args: &[&str]) -> (String, String, bool) {
    let out = mpidd().args(args).output().expect("run mpidd");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// `mpidd queues ARGS --json --verbose`: the reading, after checking that
/// mpidd says the layouts came from the profile of this build.
fn queues_through_profile(args: &[&str]) -> Value {
    let (out, err, ok) = run(&[&["queues"], args, &["--json", "--verbose"]].concat());
    assert!(ok, "mpidd queues {args:?} failed: {err}");
    assert!(
        err.contains("come from the profile of MPICH 4.2.1 (Debian 13 libmpich12"),
        "the layouts are not the profile's: {err}"
    );
    serde_json::from_str(&out).expect("queues JSON")
}

/// `mpidd identify ARGS` succeeds and says each of `parts`.
fn assert_identify(args: &[&str], parts: &[&str]) {
    let (out, err, ok) = run(&[&["identify"], args].concat());
    assert!(ok, "mpidd identify {args:?} failed: {err}");
    for part in parts {
        assert!(out.contains(part), "{part:?} missing from identify: {out}");
    }
}

/// `program` started as 4 ranks by the root's `mpiexec.mpich`, in a fresh
/// directory `name` (its argument when `dir_argument`), each rank checked
/// to be on trixie's library.
fn start(root: &Path, name: &str, program: &str, dir_argument: bool) -> Job {
    let dir = common::scratch::fresh_dir(name);
    let exe = build_mpich_in_root(root, &dir, program);
    let mut mpiexec = in_root(root, &[&dir]);
    mpiexec.args(["mpiexec.mpich", "-n", "4"]).arg(&exe);
    if dir_argument {
        mpiexec.arg(&dir);
    }
    let job = Job::launch(mpiexec, 4, dir);
    assert_ranks_map(&job.ranks, &host_path(root, LIBMPICH));
    job
}

#[test]
fn mpich_4_2_1_queues_through_its_profile_live_and_from_cores() {
    let live = Outcome::begin(MPICH, MPICH_PROFILE, "queues", "live");
    let cores = Outcome::begin(MPICH, MPICH_PROFILE, "queues", "core");
    let root = debian13();
    let ours = build_id(&host_path(&root, LIBMPICH)).expect("Debian's libmpich has a build-id");
    let job = start(&root, "debian13-mpich-queues", "queues", false);
    let parts = [
        "states    MPICH 4.2.1, device ch4:ucx",
        &format!("build-id  {ours}"),
        "check     passed",
    ];
    for rank in 0..4 {
        let q = queues_through_profile(&["--pid", &job.pid(rank).to_string()]);
        check_rank_stock(rank, &q);
        wait_stopped(job.pid(rank));
    }
    assert_identify(&["--pid", &job.pid(0).to_string()], &parts);
    live.works();
    let search = job.dir.to_str().unwrap().to_string();
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let args = ["--core", core.to_str().unwrap(), "--search-path", &search];
        check_rank_stock(rank, &queues_through_profile(&args));
        if rank == 0 {
            assert_identify(&args, &parts);
        }
    }
    cores.works();
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// tests/mpich/handles.c, given its directory, every rank checked live
/// and then from its core against what it wrote down
/// (`common::mpich_handle_checks`); UCX's request is described too, and
/// from 4.1 the UCX netmod keeps a receive's communicator
/// ([`Device::Ch4UcxKeepsComm`]).
#[test]
fn mpich_4_2_1_every_handle_kind_live_and_from_cores() {
    let live = Outcome::begin(MPICH, MPICH_PROFILE, "handle", "live");
    let cores = Outcome::begin(MPICH, MPICH_PROFILE, "handle", "core");
    let root = debian13();
    let job = start(&root, "debian13-mpich-handles", "handles", true);
    // A core names the program where the ranks saw it, in the job's
    // directory bound into the root.
    let search = vec!["--search-path".to_string(), job.dir.display().to_string()];
    check_every_rank(
        &job.dir,
        |r| job.pid(r),
        &search,
        |rank, s, w, full| check_handles(rank, s, w, full, Device::Ch4UcxKeepsComm),
    );
    live.works();
    cores.works();
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn mpich_4_2_1_ring_is_a_cycle_live_and_from_cores() {
    let _serial = one_at_a_time();
    let live = Outcome::begin(MPICH, MPICH_PROFILE, "job", "live");
    let cores = Outcome::begin(MPICH, MPICH_PROFILE, "job", "core");
    let root = debian13();
    let dir = common::scratch::fresh_dir("debian13-mpich-ring");
    let exe = build_mpich_in_root(&root, &dir, "hang_ring");
    let source = dir.join("hang_ring.c");
    // The blocked ranks busy-poll: at the lowest priority they leave the
    // CPUs to mpidd (nice and the root's entry exec, so the pid is
    // mpiexec's).
    let mut launch = Command::new("nice");
    launch
        .args(["-n", "19"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/lib/in-debian-root.sh"))
        .arg(&root)
        .arg("--bind")
        .arg(&dir)
        .args(["mpiexec.mpich", "-n", "4"])
        .arg(&exe);
    let job = HungJob::run(launch, dir, source, "hang_ring");
    assert_ranks_map(&job.ranks, &host_path(&root, LIBMPICH));
    let expected = Expected::ring();
    check_ring_receives(&check_live(&job, &expected));
    live.works();
    let search = job.dir.to_str().unwrap().to_string();
    check_ring_receives(&check_cores_with(
        &job,
        &expected,
        &["--search-path", &search],
    ));
    cores.works();
}
