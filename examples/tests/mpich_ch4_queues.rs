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
//! source and tag are only in UCX's request; UCX's types are not in this
//! process (Debian's UCX is stripped), so each of rank 0's three receives
//! must be reported as such, no more and no fewer.

mod common;

use serde_json::Value;

use common::mpich_job::{gcore, ref_mpich_ch4, wait_stopped, Job};
use common::queue_checks::{comm, native, ops};

fn start(name: &str, env: &[(&str, &str)]) -> Job {
    Job::start_on(&ref_mpich_ch4(), name, "queues", &[], &[], env)
}

/// What the program posted, as far as MPICH keeps it under CH4 with UCX.
fn check_rank(rank: i64, q: &Value) {
    assert!(
        q["source"].as_str().unwrap().contains("ch4:ucx"),
        "{}",
        q["source"]
    );
    assert_eq!(q["global_rank"], rank);
    let world = comm(q, "MPI_COMM_WORLD");
    assert_eq!(
        (world["size"].as_i64(), world["local_rank"].as_i64()),
        (Some(4), Some(rank))
    );
    assert_eq!(world["group"], serde_json::json!([0, 1, 2, 3]));
    let dup = comm(q, "mpidd_dup");
    assert_eq!(dup["group"], serde_json::json!([0, 1, 2, 3]));
    let split = comm(
        q,
        if rank % 2 == 0 {
            "mpidd_split_even"
        } else {
            "mpidd_split_odd"
        },
    );
    let members = if rank % 2 == 0 { [0, 2] } else { [1, 3] };
    assert_eq!(
        (split["size"].as_i64(), split["local_rank"].as_i64()),
        (Some(2), Some(rank / 2))
    );
    assert_eq!(
        split["group"],
        serde_json::json!(members),
        "the split's world ranks, from CH4's rank map"
    );
    let diagnostics: Vec<&str> = q["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    let ucx_receives = diagnostics
        .iter()
        .filter(|d| d.starts_with("a pending receive posted to UCX"))
        .count();
    match rank {
        0 => {
            // The three receives rank 0 posted, one entry each.
            assert_eq!(ucx_receives, 3, "{diagnostics:#?}");
            assert!(
                diagnostics
                    .iter()
                    .any(|d| d.starts_with("UCX's types:") && d.contains("ucp_request_t")),
                "says which types are missing: {diagnostics:#?}"
            );
        }
        2 => {
            assert_eq!(ucx_receives, 0, "{diagnostics:#?}");
            let s = ops(world, "pending_sends");
            assert_eq!(s.len(), 1, "the rendezvous MPI_Isend: {world:#}");
            assert_eq!(s[0]["status"], "pending", "its receiver has not received");
            assert_eq!(
                (
                    s[0]["desired_local_rank"].as_i64(),
                    s[0]["desired_global_rank"].as_i64(),
                    s[0]["desired_tag"].as_i64()
                ),
                (Some(3), Some(3), Some(33))
            );
        }
        _ => assert_eq!(ucx_receives, 0, "{diagnostics:#?}"),
    }
}

fn live_and_cores(job: Job) {
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        check_rank(rank, &native(&["--pid", &pid]));
        // Let go: the rank is stopped as it was, not left traced.
        wait_stopped(job.pid(rank));
    }
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        check_rank(rank, &native(&["--core", core.to_str().unwrap()]));
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
