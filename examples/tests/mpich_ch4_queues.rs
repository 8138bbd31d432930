//! The native CH4 decoder (`mpidd queues`) against a real 4-rank job of
//! the reference MPICH built with `ch4:ucx` on Debian's UCX
//! (`scripts/build-ref-mpich.sh ch4`), live and from gcore cores. What the
//! queues must hold is known from the program's source
//! (tests/mpich/queues.c), the same program and expectations as the CH3
//! tests.
//!
//! With shared memory (the default on one node) every message takes
//! CH4's active-message path, whose MPIDIG lists hold it all. With
//! `MPIR_CVAR_NOLOCAL=1` every message goes through UCX: receives are
//! then found in the request pools, and what only UCX keeps is checked to
//! be reported as such (docs/ch4.md).

mod common;

use serde_json::Value;

use common::mpich_job::{gcore, ref_mpich_ch4, wait_stopped, Job};
use common::queue_checks::{check_rank_native, comm, native, ops};

fn start(name: &str, env: &[(&str, &str)]) -> Job {
    Job::start_on(&ref_mpich_ch4(), name, "queues", &[], &[], env)
}

fn source(q: &Value) -> &str {
    q["source"].as_str().unwrap()
}

#[test]
fn ch4_shared_memory_live_and_from_gcore_cores() {
    let job = start("mpich-ch4-queues", &[]);
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let q = native(&["--pid", &pid]);
        assert!(source(&q).contains("ch4:ucx"), "{}", source(&q));
        check_rank_native(rank, &q);
        // Let go: the rank is stopped as it was, not left traced.
        wait_stopped(job.pid(rank));
    }
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        check_rank_native(rank, &native(&["--core", core.to_str().unwrap()]));
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// What the program posted, as far as MPICH and UCX keep it when every
/// message goes through UCX.
fn check_rank_through_ucx(rank: i64, q: &Value) {
    assert_eq!(q["global_rank"], rank);
    let world = comm(q, "MPI_COMM_WORLD");
    assert_eq!(world["group"], serde_json::json!([0, 1, 2, 3]));
    let dup = comm(q, "mpidd_dup");
    let split = comm(
        q,
        if rank % 2 == 0 {
            "mpidd_split_even"
        } else {
            "mpidd_split_odd"
        },
    );
    match rank {
        0 => {
            // Every receive rank 0 posted is there, whichever path took it.
            let r = ops(world, "pending_receives");
            assert_eq!(r.len(), 1, "WORLD source 1 tag 11: {world:#}");
            check_ucx_receive(&r[0], Some((1, 1)), Some(11), 40);
            let r = ops(dup, "pending_receives");
            assert_eq!(
                r.len(),
                1,
                "one entry for both halves of an MPI_ANY_SOURCE receive"
            );
            assert_eq!(
                (
                    r[0]["desired_local_rank"].as_i64(),
                    r[0]["desired_tag"].as_i64(),
                    r[0]["desired_length"].as_i64()
                ),
                (Some(-1), Some(22), Some(80)),
                "the shared-memory half of MPI_ANY_SOURCE is in the MPIDIG list"
            );
            let r = ops(split, "pending_receives");
            assert_eq!(r.len(), 1, "split source 1 (world 2), MPI_ANY_TAG");
            check_ucx_receive(&r[0], Some((1, 2)), None, 120);
        }
        2 => {
            let s = ops(world, "pending_sends");
            assert_eq!(s.len(), 1, "{world:#}");
            assert_eq!(s[0]["status"], "pending", "a rendezvous not yet received");
            assert_eq!(
                (
                    s[0]["desired_global_rank"].as_i64(),
                    s[0]["desired_tag"].as_i64()
                ),
                (Some(3), Some(33))
            );
        }
        _ => {}
    }
}

/// A receive posted to UCX: its source and tag come from UCX's request
/// when UCX's types are known, else the entry says they are missing.
fn check_ucx_receive(op: &Value, rank: Option<(i64, i64)>, tag: Option<i64>, bytes: i64) {
    assert_eq!(op["status"], "pending");
    let text = op["extra_text"].to_string();
    assert!(text.contains("UCX"), "says it went to UCX: {op:#}");
    if text.contains("without UCX's debug info") {
        return;
    }
    let (local, global) = rank.unwrap();
    assert_eq!(
        (
            op["desired_local_rank"].as_i64(),
            op["desired_global_rank"].as_i64()
        ),
        (Some(local), Some(global)),
        "{op:#}"
    );
    match tag {
        Some(t) => assert_eq!(op["desired_tag"], t),
        None => assert_eq!(op["tag_wild"], true),
    }
    assert_eq!(op["desired_length"], bytes);
}

#[test]
fn ch4_through_ucx_only_live_and_from_gcore_cores() {
    let job = start("mpich-ch4-queues-nolocal", &[("MPIR_CVAR_NOLOCAL", "1")]);
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        check_rank_through_ucx(rank, &native(&["--pid", &pid]));
        wait_stopped(job.pid(rank));
    }
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        check_rank_through_ucx(rank, &native(&["--core", core.to_str().unwrap()]));
    }
    assert_eq!(job.finish(), 0);
}
