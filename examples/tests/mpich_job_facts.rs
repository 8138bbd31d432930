//! What the native MPICH CH3 decoder gives a job-level analysis, against
//! real 4-rank jobs of the reference MPICH (scripts/build-ref-mpich.sh),
//! live and from gcore cores: context ids that pair communicators across
//! ranks, how each unexpected message came (eager, rendezvous,
//! synchronous), and the world ranks of every communicator, MPICH's own
//! internal ones included, when the job spans two "nodes".
//!
//! What the queues must hold is known from tests/mpich/jobfacts.c, not
//! from our output.

mod common;

use std::collections::BTreeMap;

use serde_json::Value;

use common::mpich_job::{gcore_each, wait_stopped, Job};
use common::queue_checks::{comm, native, ops};

/// MPICH's `MPIR_CONTEXT_INTRANODE_OFFSET` and `_INTERNODE_OFFSET`
/// (mpir_contextid.h: 1 and 2 shifted past the one-bit suffix): the
/// context ids of a communicator's node and node-roots communicators.
const INTRANODE: i64 = 2;
const INTERNODE: i64 = 4;

/// The four ranks' native readings, live then from cores.
fn readings(job: &Job) -> Vec<Vec<Value>> {
    let live: Vec<Value> = (0..4)
        .map(|rank| native(&["--pid", &job.pid(rank).to_string()]))
        .collect();
    for rank in 0..4 {
        wait_stopped(job.pid(rank));
    }
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    let cores: Vec<Value> = rank_cores
        .iter()
        .map(|core| native(&["--core", core.to_str().unwrap()]))
        .collect();
    vec![live, cores]
}

fn communicators(q: &Value) -> &Vec<Value> {
    q["communicators"].as_array().unwrap()
}

fn int(v: &Value, field: &str) -> i64 {
    v[field]
        .as_i64()
        .unwrap_or_else(|| panic!("no integer {field} in {v:#}"))
}

fn group(c: &Value) -> Vec<i64> {
    c["group"]
        .as_array()
        .unwrap_or_else(|| panic!("no group for {:#}", c))
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect()
}

/// Every communicator of every rank has a group of exactly its size, with
/// this rank at its local rank; each member of it has a communicator with
/// the same context id and the same group; and one process never has two
/// communicators with one receive context id (MPICH could not match
/// messages otherwise).
fn check_groups_agree(ranks: &[Value]) {
    for (rank, q) in ranks.iter().enumerate() {
        assert_eq!(int(q, "global_rank"), rank as i64);
        let mut seen = BTreeMap::new();
        for c in communicators(q) {
            let g = group(c);
            assert_eq!(g.len() as i64, int(c, "size"), "rank {rank}: {c:#}");
            assert_eq!(g[int(c, "local_rank") as usize], rank as i64, "{c:#}");
            let ctx = int(c, "context_id");
            assert_eq!(ctx, int(c, "recv_context_id"), "an intracommunicator");
            if let Some(other) = seen.insert(int(c, "recv_context_id"), c["name"].clone()) {
                panic!(
                    "rank {rank}: context id {ctx} for {other} and {}",
                    c["name"]
                );
            }
            for &member in &g {
                let theirs = communicators(&ranks[member as usize])
                    .iter()
                    .find(|d| int(d, "context_id") == ctx && group(d) == g);
                assert!(
                    theirs.is_some(),
                    "rank {rank}'s {} (context {ctx}, group {g:?}) has no counterpart at rank {member}",
                    c["name"]
                );
            }
        }
    }
}

/// Context ids of the named communicators: one per communicator across
/// its members, different between communicators.
fn check_context_ids(ranks: &[Value]) {
    let ctx = |q: &Value, name: &str| int(comm(q, name), "context_id");
    let world = ctx(&ranks[0], "MPI_COMM_WORLD");
    let dup = ctx(&ranks[0], "jf_dup");
    let even = ctx(&ranks[0], "jf_split_even");
    let odd = ctx(&ranks[1], "jf_split_odd");
    for q in ranks {
        assert_eq!(ctx(q, "MPI_COMM_WORLD"), world);
        assert_eq!(ctx(q, "jf_dup"), dup);
    }
    assert_eq!(ctx(&ranks[2], "jf_split_even"), even);
    assert_eq!(ctx(&ranks[3], "jf_split_odd"), odd);
    assert_ne!(world, dup);
    assert_ne!(dup, even);
    assert_ne!(world, even);
}

/// The unexpected messages at rank 0 and the pending sends at ranks 1
/// and 2, as tests/mpich/jobfacts.c made them.
fn check_messages(ranks: &[Value]) {
    let q = &ranks[0];
    let facts = |c: &Value| -> Vec<(i64, i64, Value, Value, i64)> {
        ops(c, "unexpected_messages")
            .iter()
            .map(|u| {
                (
                    int(u, "actual_tag"),
                    int(u, "actual_global_rank"),
                    u["protocol"].clone(),
                    u["synchronous"].clone(),
                    int(u, "actual_length"),
                )
            })
            .collect()
    };
    let s = |v: &str| Value::from(v);
    let b = Value::from;
    let none = Value::Null;
    const BIG: i64 = 8 << 20;
    assert_eq!(
        facts(comm(q, "MPI_COMM_WORLD")),
        [
            (1, 1, s("eager"), b(false), 20),
            // A rendezvous carries no sync flag: MPICH does not say.
            (2, 1, s("rendezvous"), none.clone(), BIG),
            (3, 1, s("eager"), b(true), 12),
            // No data, no buffer, and still eager.
            (4, 1, s("eager"), b(false), 0),
        ],
        "{q:#}"
    );
    assert_eq!(
        facts(comm(q, "jf_dup")),
        [
            (5, 2, s("rendezvous"), none, BIG),
            (6, 2, s("eager"), b(true), 0),
        ]
    );
    let world = ops(comm(q, "MPI_COMM_WORLD"), "unexpected_messages");
    assert_eq!(world[0]["system_buffer"], true, "eager data is buffered");
    assert_eq!(world[1]["system_buffer"], false, "a rendezvous has none");
    assert_eq!(world[3]["system_buffer"], false, "zero bytes need none");
    // The senders' pending nonblocking sends: the request type says which
    // are synchronous; the rendezvous ones say so.
    // MPICH pushes onto the send queue's head: sorted by tag here.
    let sends = |rank: usize, name: &str| -> Vec<(i64, Value, Value)> {
        let mut sends: Vec<_> = ops(comm(&ranks[rank], name), "pending_sends")
            .iter()
            .map(|o| {
                (
                    int(o, "desired_tag"),
                    o["protocol"].clone(),
                    o["synchronous"].clone(),
                )
            })
            .collect();
        sends.sort_by_key(|s| s.0);
        sends
    };
    let s1 = sends(1, "MPI_COMM_WORLD");
    assert_eq!(s1.len(), 2, "{s1:?}");
    assert_eq!(
        (s1[0].0, &s1[0].1, &s1[0].2),
        (2, &s("rendezvous"), &b(false))
    );
    assert_eq!((s1[1].0, &s1[1].2), (3, &b(true)));
    let s2 = sends(2, "jf_dup");
    assert_eq!(s2.len(), 2, "{s2:?}");
    assert_eq!(
        (s2[0].0, &s2[0].1, &s2[0].2),
        (5, &s("rendezvous"), &b(false))
    );
    assert_eq!((s2[1].0, &s2[1].1, &s2[1].2), (6, &s("eager"), &b(true)));
}

#[test]
fn context_ids_protocols_and_groups_on_one_node() {
    let job = Job::start_program("mpich-job-facts", "jobfacts", &[], &[]);
    for ranks in readings(&job) {
        check_context_ids(&ranks);
        check_messages(&ranks);
        check_groups_agree(&ranks);
        for (rank, q) in ranks.iter().enumerate() {
            assert_eq!(group(comm(q, "MPI_COMM_WORLD")), [0, 1, 2, 3]);
            assert_eq!(group(comm(q, "MPI_COMM_SELF")), [rank as i64]);
        }
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// The reported bug: under srun on two nodes (2 ranks each), rank 0's
/// node communicator, which MPICH builds for itself, was reported with
/// the world ranks [0, 1, 2, 3]. Hydra's fork launcher with two hosts
/// gives the same process mapping on one machine: world ranks 0 and 1 on
/// node 0, 2 and 3 on node 1. The hosts are two loopback addresses because
/// each rank resolves its host's name for its TCP business card (a made-up
/// name fails in MPI_Init), and hydra gives each entry of `-hosts` its own
/// node id. Rank 0's node communicator then shares MPI_COMM_WORLD's
/// 4-entry connection table (its members are the table's first two), the
/// cause of the bug; rank 2's has a table of its own.
#[test]
fn world_ranks_of_every_communicator_on_two_nodes() {
    let job = Job::start_launched::<&str>(
        "mpich-job-facts-two-nodes",
        "jobfacts",
        &["-launcher", "fork", "-hosts", "127.0.0.1:2,127.0.0.2:2"],
        &[],
        &[],
    );
    for ranks in readings(&job) {
        check_context_ids(&ranks);
        check_messages(&ranks);
        check_groups_agree(&ranks);
        let world = int(comm(&ranks[0], "MPI_COMM_WORLD"), "context_id");
        for (rank, q) in ranks.iter().enumerate() {
            let by_context = |ctx: i64| {
                communicators(q)
                    .iter()
                    .find(|c| int(c, "context_id") == ctx)
                    .map(group)
            };
            let node: Vec<i64> = if rank < 2 { vec![0, 1] } else { vec![2, 3] };
            assert_eq!(
                by_context(world + INTRANODE),
                Some(node),
                "rank {rank}'s node communicator: {q:#}"
            );
            let roots = by_context(world + INTERNODE);
            if rank % 2 == 0 {
                assert_eq!(
                    roots,
                    Some(vec![0, 2]),
                    "rank {rank}'s node-roots communicator"
                );
            } else {
                assert_eq!(roots, None, "rank {rank} is no node root");
            }
            assert_eq!(group(comm(q, "MPI_COMM_SELF")), [rank as i64]);
            let diagnostics = q["diagnostics"].as_array().unwrap();
            assert!(
                diagnostics
                    .iter()
                    .all(|d| !d.as_str().unwrap().contains("world ranks")),
                "{diagnostics:?}"
            );
        }
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
