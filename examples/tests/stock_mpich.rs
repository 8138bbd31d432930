//! Debian's own MPICH, as users have it installed: `libmpich12` 4.0.2
//! (ch4:ucx), stripped, built without debugger support, on Debian's
//! stripped UCX. A 4-rank job of tests/mpich/queues.c (the program of the
//! CH3 and CH4 tests), compiled by Debian's `mpicc.mpich` without `-g` and
//! run by its `mpiexec.mpich`, is read live (stopped and let go) and from
//! gcore cores through the profile mpidd ships for this build
//! (mpidd-read/profiles/mpich-4.0.2-debian12-amd64.json, written by
//! scripts/write-stock-mpich-profile.sh; docs/stock-mpich.md). What the
//! queues must hold comes from the program's source.

mod common;

use mpidd_read::Layouts;

use common::mpich_job::{gcore, gcore_each, stock_mpich, wait_stopped, Job};
use common::queue_checks::{
    check_rank_stock, check_self_pending, check_self_pending_handles, native,
};

fn live_and_cores(job: Job) {
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        check_rank_stock(rank, &native(&["--pid", &pid]));
        // Let go: the rank is stopped as it was, not left traced.
        wait_stopped(job.pid(rank));
    }
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        check_rank_stock(rank, &native(&["--core", core.to_str().unwrap()]));
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn debian_mpich_queues_live_and_from_gcore_cores() {
    live_and_cores(Job::start_with(
        &stock_mpich(),
        "stock-mpich-queues",
        "queues",
        &[],
        &[],
        &[] as &[(&str, &str)],
    ));
}

/// MPICH's switch for "no shared memory" changes nothing under ch4:ucx
/// (docs/ch4.md), and the reading must be the same.
#[test]
fn debian_mpich_without_local_peers_live_and_from_gcore_cores() {
    live_and_cores(Job::start_with(
        &stock_mpich(),
        "stock-mpich-queues-nolocal",
        "queues",
        &[],
        &[],
        &[("MPIR_CVAR_NOLOCAL", "1")],
    ));
}

/// A 1-rank job's messages to itself take CH4's self path, never UCX
/// (tests/mpich/self_pending.c): they are read from MPICH's own fields,
/// live and from a gcore core.
#[test]
fn debian_mpich_self_messages_live_and_from_a_gcore_core() {
    let job = Job::start_ranks(
        &stock_mpich(),
        1,
        "stock-mpich-self",
        "self_pending",
        &[],
        &[],
        &[] as &[(&str, &str)],
    );
    let pid = job.pid(0).to_string();
    check_self_pending(&native(&["--pid", &pid]), &job.ready[0]);
    check_self_pending_handles(&["--pid", &pid], &job.ready[0]);
    wait_stopped(job.pid(0));
    let core = gcore(&job.dir, job.pid(0));
    check_self_pending(&native(&["--core", core.to_str().unwrap()]), &job.ready[0]);
    check_self_pending_handles(&["--core", core.to_str().unwrap()], &job.ready[0]);
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// The shipped profile with `MPIR_Request` 8 bytes longer, as the profile
/// of a configuration with one more request member would be, given on the
/// command line: made for this very build (its build-id), it is still
/// refused by the check on the process, whose request allocator records
/// the size the library was compiled with, in one line; nothing is read.
#[test]
fn a_profile_whose_request_size_the_allocator_contradicts_is_refused() {
    let job = Job::start_with(
        &stock_mpich(),
        "stock-mpich-bent-request",
        "queues",
        &[],
        &[],
        &[] as &[(&str, &str)],
    );
    let mut bent = mpidd_read::shipped_profiles()
        .into_iter()
        .find(|p| p.identity.implementation == "MPICH" && p.identity.version == "4.0.2")
        .expect("the Debian 12 MPICH profile is shipped");
    let size = bent.layouts.size_of("MPIR_Request").unwrap();
    bent.layouts.add_type("MPIR_Request", size + 8);
    let path = job.dir.join("bent.json");
    std::fs::write(&path, bent.to_json()).unwrap();
    let core = gcore(&job.dir, job.pid(0));
    let out = common::mpich_job::mpidd()
        .args(["queues", "--json", "--profile"])
        .arg(&path)
        .arg("--core")
        .arg(&core)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a contradicted profile was used: {err}"
    );
    let want = format!(
        "makes MPIR_Request objects of {size} bytes, where these layouts say {}",
        size + 8
    );
    assert!(err.contains("MPIR_Request_mem at 0x"), "{err}");
    assert!(err.contains(&want), "{want:?} missing from: {err}");
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
