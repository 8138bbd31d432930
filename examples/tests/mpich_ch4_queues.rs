//! The native CH4 decoder (`mpidd queues`) against a real 4-rank job of
//! the reference MPICH built with `ch4:ucx` on Debian's UCX
//! (`scripts/build-ref-mpich.sh ch4`), live and from gcore cores. What the
//! queues must hold is known from the program's source
//! (tests/mpich/queues.c, the program of the CH3 tests) and from where
//! MPICH 4.0.2 keeps each operation (docs/ch4.md).
//!
//! MPICH's configure gives `ch4:ucx` no shared-memory module
//! (`MPIDI_CH4_DIRECT_NETMOD`, `src/mpid/ch4/subconfigure.m4`): every
//! message goes through UCX, with or without `MPIR_CVAR_NOLOCAL=1`. A
//! receive is then an `MPIR_Request` of the pools whose communicator,
//! source and tag are only in UCX's request, and an unexpected message is
//! only in UCX's worker. Debian's UCX is stripped: its types come from the
//! profile mpidd ships for it, layered under this build's DWARF, and every
//! receive, send and unexpected message must be read whole.

mod common;

use common::mpich_job::{gcore, gcore_each, mpidd, ref_mpich_ch4, wait_stopped, Job, Toolchain};
use common::queue_checks::{
    check_rank_ch4, check_self_pending, check_self_pending_handles, native, Ch4Reader,
};

fn start(name: &str, env: &[(&str, &str)]) -> Job {
    Job::start_on(&ref_mpich_ch4(), name, "queues", &[], &[], env)
}

fn live_and_cores(job: Job) {
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        check_rank_ch4(rank, &native(&["--pid", &pid]), Ch4Reader::Native);
        // Let go: the rank is stopped as it was, not left traced.
        wait_stopped(job.pid(rank));
    }
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        check_rank_ch4(
            rank,
            &native(&["--core", core.to_str().unwrap()]),
            Ch4Reader::Native,
        );
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn ch4_ucx_live_and_from_gcore_cores() {
    live_and_cores(start("mpich-ch4-queues", &[]));
}

/// MPICH's switch for "no shared memory": under ch4:ucx there is none to
/// turn off, and the reading must be the same.
#[test]
fn ch4_ucx_without_local_peers_live_and_from_gcore_cores() {
    live_and_cores(start(
        "mpich-ch4-queues-nolocal",
        &[("MPIR_CVAR_NOLOCAL", "1")],
    ));
}

/// A 1-rank job's messages to itself take CH4's self path, never UCX
/// (tests/mpich/self_pending.c): they are read from MPICH's own fields,
/// the send from the send queue too, live and from a gcore core.
#[test]
fn ch4_self_messages_live_and_from_a_gcore_core() {
    let job = Job::start_ranks(
        &Toolchain::reference(&ref_mpich_ch4()),
        1,
        "mpich-ch4-self",
        "self_pending",
        &[],
        &[],
        &[] as &[(&str, &str)],
    );
    let pid = job.pid(0).to_string();
    check_self_pending(&native(&["--pid", &pid]), &job.ready[0]);
    check_self_pending_handles(&["--pid", &pid], &job.ready[0]);
    wait_stopped(job.pid(0));
    // 4.0.2 keeps the send list only (of `MPIR_Sendq` records): its
    // debugger lists are refused, naming the two heads it lacks.
    let out = mpidd()
        .args(["queues", "--pid", &pid, "--debugger-lists"])
        .output()
        .expect("run mpidd");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "4.0.2 has no debugger lists: {err}");
    for needle in ["MPIR_Recvq_head", "MPIR_Unexpq_head", "--enable-debuginfo"] {
        assert!(err.contains(needle), "{needle:?} missing from: {err}");
    }
    assert!(
        !err.contains("MPIR_Sendq_head,"),
        "the send list is there: {err}"
    );
    wait_stopped(job.pid(0));
    let core = gcore(&job.dir, job.pid(0));
    check_self_pending(&native(&["--core", core.to_str().unwrap()]), &job.ready[0]);
    check_self_pending_handles(&["--core", core.to_str().unwrap()], &job.ready[0]);
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
