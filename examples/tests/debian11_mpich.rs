//! Debian 11's own MPICH 3.4.1 (`libmpich12` 3.4.1-5~deb11u1, ch3:nemesis),
//! as bullseye ships it: stripped, configured without debugger support
//! (its `MPII_Version_configure` has no `--enable-debuginfo`), with a
//! build-id no shipped profile names, in the Debian 11 root
//! scripts/python-envs.sh makes (`$MPIDD_DEBIAN11_ROOT`). The programs are
//! built with the root's `mpicc.mpich` and run by its `mpiexec.mpich`
//! inside it (scripts/lib/in-debian-root.sh), and read from the host by pid
//! and from gcore cores; the program, which the ranks saw in a directory
//! bound into their own mount namespace, is found in the job's directory by
//! `--search-path`.
//!
//! mpidd ships a profile of this very build
//! (`mpidd-read/profiles/mpich-3.4.1-debian11-amd64.json`, written by
//! scripts/write-debian11-mpich-profile.sh from objects compiled in Debian's
//! own configuration, with the hidden pools and CH3's receive queue heads
//! located in the stock file), checked on each process before use. The
//! queues of tests/mpich/queues.c read as its ranks posted them (no sends:
//! this build records none), and `mpidd job` names the hung ring of
//! tests/mpich/hang_ring.c as a cycle, live and from cores.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::debian_root::{assert_ranks_map, build_mpich_in_root, host_path, in_root, root};
use common::hung_job::HungJob;
use common::job_checks::{
    check_cores_with, check_live, check_ring_receives, one_at_a_time, Expected,
};
use common::mpich_job::{gcore_each, mpidd, wait_stopped, Job};
use common::queue_checks::check_rank_without_sends;
use common::site_build::build_id;
use common::supported_builds::Outcome;
use serde_json::Value;

/// The build as docs/supported-builds.md names it, with where its layouts
/// come from.
const MPICH: &str = "Debian 11 mpich 3.4.1-5~deb11u1, ch3:nemesis (amd64)";
const MPICH_PROFILE: &str = "the MPICH 3.4.1 profile of its build (mpich-3.4.1-debian11-amd64)";

/// Where bullseye's library is inside the root.
const LIBMPICH: &str = "/usr/lib/x86_64-linux-gnu/libmpich.so.12";

/// The Debian 11 root, with MPICH's compiler and launcher.
fn debian11() -> PathBuf {
    root(
        "MPIDD_DEBIAN11_ROOT",
        "debian11",
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
        err.contains("come from the profile of MPICH 3.4.1 (Debian 11 libmpich12"),
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

#[test]
fn mpich_3_4_1_queues_through_its_profile_live_and_from_cores() {
    let live = Outcome::begin(MPICH, MPICH_PROFILE, "queues", "live");
    let cores = Outcome::begin(MPICH, MPICH_PROFILE, "queues", "core");
    let root = debian11();
    let lib = host_path(&root, LIBMPICH);
    let ours = build_id(&lib).expect("Debian's libmpich has a build-id");
    let dir = common::scratch::fresh_dir("debian11-mpich-queues");
    let exe = build_mpich_in_root(&root, &dir, "queues");
    let mut mpiexec = in_root(&root, &[&dir]);
    mpiexec.args(["mpiexec.mpich", "-n", "4"]).arg(&exe);
    let job = Job::launch(mpiexec, 4, dir);
    assert_ranks_map(&job.ranks, &lib);
    let parts = [
        "states    MPICH 3.4.1, device ch3:nemesis",
        &format!("build-id  {ours}"),
        "check     passed",
    ];
    for rank in 0..4 {
        let q = queues_through_profile(&["--pid", &job.pid(rank).to_string()]);
        check_rank_without_sends(rank, &q);
        wait_stopped(job.pid(rank));
    }
    assert_identify(&["--pid", &job.pid(0).to_string()], &parts);
    live.works();
    let search = job.dir.to_str().unwrap().to_string();
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let args = ["--core", core.to_str().unwrap(), "--search-path", &search];
        check_rank_without_sends(rank, &queues_through_profile(&args));
        if rank == 0 {
            assert_identify(&args, &parts);
        }
    }
    cores.works();
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn mpich_3_4_1_ring_is_a_cycle_live_and_from_cores() {
    let _serial = one_at_a_time();
    let live = Outcome::begin(MPICH, MPICH_PROFILE, "job", "live");
    let cores = Outcome::begin(MPICH, MPICH_PROFILE, "job", "core");
    let root = debian11();
    let lib = host_path(&root, LIBMPICH);
    let dir = common::scratch::fresh_dir("debian11-mpich-ring");
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
    assert_ranks_map(&job.ranks, &lib);
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
