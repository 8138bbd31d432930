//! What tests/mpich/queues.c leaves pending on pip's MPICH wheels, as
//! `mpidd queues --json` gives it: shared by the tests of programs built
//! with the wheel's `mpicc` (mpich_wheels.rs) and with its `mpicc_abi`
//! (mpich_abi_wheels.rs), which must read alike.

use serde_json::Value;

use super::mpich_wheel_builds::Wheel;
use super::queue_checks::{ops, queues_communicators};

/// The netmod a job is started with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Netmod {
    /// The build's first (no variable set): UCX from 4.3, OFI before.
    Default,
    /// The build's second, chosen by `MPIR_CVAR_CH4_NETMOD`.
    Other,
}

/// (source or -1, world source or -1, tag or -1 for any, bytes) of each
/// operation of `queue`.
pub fn envelopes(c: &Value, queue: &str) -> Vec<(i64, i64, i64, i64)> {
    let mut out: Vec<_> = ops(c, queue)
        .iter()
        .map(|o| {
            assert_eq!(o["status"], "pending", "{o:#}");
            let tag = if o["tag_wild"] == true {
                -1
            } else {
                o["desired_tag"].as_i64().unwrap()
            };
            (
                o["desired_local_rank"].as_i64().unwrap(),
                o["desired_global_rank"].as_i64().unwrap(),
                tag,
                o["desired_length"].as_i64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// What tests/mpich/queues.c leaves pending on a wheel, where the four
/// ranks of one node talk through MPICH's shared memory (posix shmmod),
/// whose receives and unexpected messages are MPIDIG's queues: rank 0's
/// three receives and rank 1's two small messages; rank 1's eager
/// `MPI_Isend` has completed into shared memory; rank 2's 1 MiB
/// rendezvous send is pending (MPICH keeps its tag only in the header it
/// sent) and unexpected at rank 3 (on 3.4 a note: see below).
pub fn check_rank(wheel: &Wheel, rank: i64, q: &Value, netmod: Netmod) {
    let decoder = format!("MPICH {} decoder ({})", wheel.version, wheel.device);
    assert!(
        q["source"].as_str().unwrap().contains(&decoder),
        "{}",
        q["source"]
    );
    let diagnostics: Vec<&str> = q["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    // 3.4 keeps nothing that tells rank 2's rendezvous send from a
    // synchronous eager send waiting for its acknowledgement: it is said
    // in a note, with what its record would mean, and not listed.
    let shm_send_34 = wheel
        .version
        .starts_with("3.4")
        .then_some("a pending send on the shared-memory path (MPIR_Request at 0x");
    let unplaced: Vec<&&str> = diagnostics
        .iter()
        .filter(|d| d.starts_with("a pending"))
        .collect();
    match (&shm_send_34, rank) {
        (Some(note), 2) => {
            assert_eq!(unplaced.len(), 1, "{diagnostics:#?}");
            let d = unplaced[0];
            assert!(d.starts_with(note), "{d}");
            assert!(
                d.contains(
                    "on `MPI_COMM_WORLD`: as a rendezvous send it would be 1048576 bytes from 0x"
                ) && d.contains(" to rank 3 (world rank 3), but MPICH 3.4 keeps nothing"),
                "{d}"
            );
        }
        _ => assert!(
            unplaced.is_empty(),
            "every operation placed: {diagnostics:#?}"
        ),
    }
    assert!(
        diagnostics
            .iter()
            .any(|d| d.starts_with("MPIR_All_communicators is missing")),
        "{diagnostics:#?}"
    );
    // The netmod the rank runs, and what that says of the network's
    // unexpected messages.
    let netmods: Vec<&str> = wheel.device["ch4:".len()..].split(' ').collect();
    let runs = match netmod {
        Netmod::Default => format!(
            "the rank runs the {0} netmod: no MPICH_CH4_NETMOD, MPIR_PARAM_CH4_NETMOD, \
             MPIR_CVAR_CH4_NETMOD in the rank's environment, so the build's first netmod, {0}",
            netmods[0]
        ),
        Netmod::Other => format!(
            "the rank runs the {0} netmod: MPIR_CVAR_CH4_NETMOD={0} in the rank's environment",
            netmods[1]
        ),
    };
    let unexpected = if runs.starts_with("the rank runs the ucx netmod") {
        "unexpected messages, which only UCX's worker keeps, are not read"
    } else {
        "unexpected messages that came over the network are held by the ofi netmod's \
         transport (libfabric's provider for ofi), of which MPICH keeps no queue"
    };
    assert!(diagnostics.contains(&runs.as_str()), "{diagnostics:#?}");
    assert!(
        diagnostics.iter().any(|d| d.starts_with(unexpected)),
        "{diagnostics:#?}"
    );
    let [world, dup, split] = queues_communicators(rank, q);
    let none: Vec<(i64, i64, i64, i64)> = Vec::new();
    let mib = 1 << 20;
    let expect = |c: &Value, queue: &str, want: Vec<(i64, i64, i64, i64)>| {
        assert_eq!(
            envelopes(c, queue),
            want,
            "rank {rank}, {queue} of {}",
            c["name"]
        );
    };
    match rank {
        0 => {
            expect(world, "pending_receives", vec![(1, 1, 11, 40)]);
            expect(dup, "pending_receives", vec![(-1, -1, 22, 80)]);
            expect(split, "pending_receives", vec![(1, 2, -1, 120)]);
            expect(world, "unexpected_messages", vec![(1, 1, 99, 20)]);
            expect(dup, "unexpected_messages", vec![(1, 1, 44, 12)]);
            for c in [world, dup, split] {
                expect(c, "pending_sends", none.clone());
            }
        }
        2 => {
            let big_send = if shm_send_34.is_some() {
                none.clone()
            } else {
                vec![(3, 3, -1, mib)]
            };
            expect(world, "pending_sends", big_send);
            for c in [world, dup, split] {
                expect(c, "pending_receives", none.clone());
                expect(c, "unexpected_messages", none.clone());
            }
            expect(dup, "pending_sends", none.clone());
            expect(split, "pending_sends", none.clone());
        }
        3 => {
            expect(world, "unexpected_messages", vec![(2, 2, 33, mib)]);
            for c in [world, dup, split] {
                expect(c, "pending_receives", none.clone());
                expect(c, "pending_sends", none.clone());
            }
            expect(dup, "unexpected_messages", none.clone());
            expect(split, "unexpected_messages", none.clone());
        }
        _ => {
            for c in [world, dup, split] {
                for queue in ["pending_receives", "pending_sends", "unexpected_messages"] {
                    expect(c, queue, none.clone());
                }
            }
        }
    }
}
