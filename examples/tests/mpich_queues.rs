//! `mpidd queues --dll libtvmpich.so` against a real 4-rank MPICH job built
//! with the reference MPICH (scripts/build-ref-mpich.sh), live and from
//! gcore cores. What the queues must hold is known from the program's
//! source (tests/mpich/queues.c), not from our output.

mod common;

use common::mpich_job::{gcore, gcore_each, wait_stopped, Job};
use common::queue_checks::{
    check_comparison, check_rank, check_rank_native, check_rank_without_sends, comm, native, ops,
    queues,
};

/// The same program on the same CH3 source built without
/// `--enable-debuginfo` (`scripts/build-ref-mpich.sh ch3-nodebugger`,
/// with its DWARF): no `MPIR_All_communicators`, no
/// `MPID_Recvq_*_head_ptr`, no send queue. The native decoder takes the
/// communicators from their pool and the receive queues from ch3u_recvq.c's
/// head variables in `.symtab`, live and from cores; it records no sends,
/// and says so.
#[test]
fn a_build_without_debugger_support_live_and_from_gcore_cores() {
    let prefix = common::mpich_job::ref_mpich_nodebugger();
    let job = Job::start_on(
        &prefix,
        "mpich-queues-nodebugger",
        "queues",
        &[],
        &[],
        &[] as &[(&str, &str)],
    );
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        check_rank_without_sends(rank, &native(&["--pid", &pid]));
        wait_stopped(job.pid(rank));
    }
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        check_rank_without_sends(rank, &native(&["--core", core.to_str().unwrap()]));
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

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
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
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
