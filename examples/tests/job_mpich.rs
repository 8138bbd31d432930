//! `mpidd job` on real hung 4-rank jobs of the reference MPICH
//! (scripts/build-ref-mpich.sh): tests/mpich/hang_*.c, which block for real
//! inside MPI calls. Each job is read live through its `mpiexec.hydra` and
//! from `gcore` cores of its ranks; the cycles, edges and findings expected
//! are worked out from the programs' sources (the same hangs as
//! mpidd-job/tests/scenarios.rs describes on synthetic ranks), not from
//! our output. A live read must leave every rank running and untraced, even
//! when `mpidd job` is interrupted or killed in the middle.
//!
//! The same five hung jobs also run on Debian's own stripped MPICH
//! (`ch4:ucx`, read through the shipped profile; the `debian_mpich_*`
//! tests), with the same cycles, edges and findings: where CH3 keeps a
//! message in its own queues, ch4:ucx leaves it to UCX, whose requests and
//! worker (unexpected messages) the decoder reads.
//!
//! The jobs' blocked ranks busy-poll, so the tests of this file run one at
//! a time.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use common::hung_job::{HangMpi, HungJob};
use common::job_checks::{
    chain_location, check_chain_location, check_comms, check_job, check_job_on,
    check_ring_receives, check_tag_mismatch, check_unexpected_ssend, cycles, edges, job_json,
    one_at_a_time, pending, Expected, MIB8,
};
use common::mpich_job::{mpidd, wait_timeout};

#[test]
fn ring_of_receives_is_one_cycle() {
    let _serial = one_at_a_time();
    let (_job, live, cores) = check_job("hang_ring", &Expected::ring());
    for report in [&live, &cores] {
        let verdict = report["verdict"].to_string();
        assert!(verdict.contains("0 → 3 → 2 → 1 → 0"), "{verdict}");
        check_ring_receives(report);
    }
}

#[test]
fn head_to_head_ssends_are_a_cycle_of_inferred_sends() {
    let _serial = one_at_a_time();
    let expected = Expected::head_to_head("inferred_send");
    let (_job, live, cores) = check_job("hang_ssend", &expected);
    for report in [&live, &cores] {
        for (r, peer) in [(0usize, 1i64), (1, 0)] {
            // Its own send, inferred from the request waiting at the peer,
            // and the peer's, unexpected in its own queue.
            let sends = pending(report, r, "inferred_send");
            assert!(
                sends
                    .iter()
                    .any(|o| o["peer"] == peer && o["tag"] == 5 && o["length"] == MIB8),
                "rank {r}'s inferred send of 8 MiB to {peer}: {sends:?}"
            );
            check_unexpected_ssend(report, r, peer);
        }
        for r in [2usize, 3] {
            let recv = pending(report, r, "receive");
            assert!(
                recv.iter().any(|o| o["peer"] == 0 && o["tag"] == 9),
                "rank {r}: {recv:?}"
            );
        }
    }
}

/// tests/mpich/hang_tag.c, on any MPICH: rank 0 in the barrier waits for
/// rank 1, the one rank that has not entered it, and rank 1 waits for rank
/// 0's message: a cycle through the collective, which ranks 2 and 3 wait
/// on from the barrier. MPICH's barrier sends and receives on the
/// collectives' context, which no queue shows.
fn tag_mismatch() -> Expected {
    Expected {
        cycles: vec![vec![0, 1]],
        edges: vec![
            (0, 1, "collective"),
            (1, 0, "receive"),
            (2, 1, "collective"),
            (3, 1, "collective"),
        ],
        findings: vec![
            ("deadlock_cycle", vec![0, 1]),
            ("waits_on_deadlock", vec![2, 3]),
            ("unmatchable_receive", vec![1, 0]),
            ("collective_mismatch", vec![1]),
        ],
        calls: [
            Some("MPI_Barrier"),
            Some("MPI_Recv"),
            Some("MPI_Barrier"),
            Some("MPI_Barrier"),
        ],
    }
}

#[test]
fn tag_mismatch_is_named() {
    let _serial = one_at_a_time();
    let (_job, live, cores) = check_job("hang_tag", &tag_mismatch());
    for report in [&live, &cores] {
        check_tag_mismatch(report, 3);
    }
}

#[test]
fn chain_ends_at_the_rank_that_computes() {
    let _serial = one_at_a_time();
    let (job, live, cores) = check_job("hang_chain", &Expected::chain());
    let location = chain_location(&job);
    for report in [&live, &cores] {
        check_chain_location(report, &location);
        let summary = report["findings"][0]["summary"].as_str().unwrap();
        assert!(
            summary.contains(&format!("rank 0, which is outside MPI, in {location}")),
            "{summary}"
        );
    }
}

#[test]
fn cycle_across_three_communicators() {
    let _serial = one_at_a_time();
    let (_job, live, cores) = check_job("hang_comms", &Expected::comms());
    for report in [&live, &cores] {
        check_comms(report);
        let by_from: Vec<(i64, String, Value, bool)> = report["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["from"].as_i64().unwrap(),
                    e["communicator"].as_str().unwrap().to_string(),
                    e["tag"].clone(),
                    e["any_source"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            by_from,
            vec![
                (0, "MPI_COMM_WORLD".into(), Value::from(3), false),
                (1, "pair12".into(), Value::from(3), false),
                (2, "pair02".into(), Value::from(3), false),
                (3, "MPI_COMM_WORLD".into(), Value::Null, false),
            ]
        );
    }
}

/// `mpidd job --pid <launcher>`, interrupted (SIGINT) or killed (SIGKILL)
/// at many points of its read, leaves no rank stopped or traced.
#[test]
fn interrupted_or_killed_live_read_lets_every_rank_go() {
    let _serial = one_at_a_time();
    let job = HungJob::start("job-interrupted", "hang_ring");
    let launcher = job.mpiexec_pid().to_string();

    // How long a whole read takes, to interrupt it also in its middle.
    let start = Instant::now();
    let whole = job_json(&["--pid", &launcher]);
    let took = start.elapsed();
    assert_eq!(cycles(&whole), vec![vec![0, 3, 2, 1]]);
    job.assert_running("after a whole read");

    let mut delays: Vec<Duration> = [5, 10, 20, 35, 50]
        .into_iter()
        .map(Duration::from_millis)
        .collect();
    delays.extend([took / 4, took / 2, took * 3 / 4]);
    for delay in delays {
        for signal in [Signal::SIGINT, Signal::SIGKILL] {
            let what = format!("{signal} after {delay:?} (a whole read takes {took:?})");
            let mut child = mpidd()
                .args(["job", "--pid", &launcher, "--json"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start mpidd job");
            std::thread::sleep(delay);
            let _ = kill(Pid::from_raw(child.id() as i32), signal);
            job.assert_running_within(Duration::from_secs(2), &what);
            wait_timeout(&mut child, Duration::from_secs(60));
            job.assert_running(&format!("{what}, once mpidd has ended"));
        }
    }

    // The job is as it was: the same hang, read whole.
    let again = job_json(&["--pid", &launcher]);
    assert_eq!(cycles(&again), vec![vec![0, 3, 2, 1]]);
    assert_eq!(edges(&again), edges(&whole));
    job.assert_running("after the last read");
}

const DEBIAN_MPICH: HangMpi = HangMpi::DebianMpich;

#[test]
fn debian_mpich_ring_of_receives_is_one_cycle() {
    let _serial = one_at_a_time();
    let (_job, live, cores) = check_job_on(DEBIAN_MPICH, "hang_ring", &Expected::ring());
    for report in [&live, &cores] {
        check_ring_receives(report);
    }
}

/// Debian's MPICH has no send queue (no debugger support), so the decoder
/// lists every send of the request pool UCX has not completed, blocking
/// ones included: each blocked 8 MiB `MPI_Ssend` is a pending send of its
/// own, as under Open MPI's ob1, and the peer's, a rendezvous request in
/// UCX's worker, is unexpected at each rank.
#[test]
fn debian_mpich_head_to_head_ssends_are_a_cycle_of_pending_sends() {
    let _serial = one_at_a_time();
    let expected = Expected::head_to_head("send");
    let (_job, live, cores) = check_job_on(DEBIAN_MPICH, "hang_ssend", &expected);
    for report in [&live, &cores] {
        for (r, peer) in [(0usize, 1i64), (1, 0)] {
            let sends = pending(report, r, "send");
            assert!(
                sends
                    .iter()
                    .any(|o| o["peer"] == peer && o["tag"] == 5 && o["length"] == MIB8),
                "rank {r}'s own send of 8 MiB to {peer}: {sends:?}"
            );
            assert!(
                pending(report, r, "inferred_send").is_empty(),
                "nothing needs inferring where the send is in memory"
            );
            check_unexpected_ssend(report, r, peer);
        }
        for r in [2usize, 3] {
            let recv = pending(report, r, "receive");
            assert!(
                recv.iter().any(|o| o["peer"] == 0 && o["tag"] == 9),
                "rank {r}: {recv:?}"
            );
        }
    }
}

/// The tag-1 message rank 1 has not received is in its UCX worker's
/// unexpected list.
#[test]
fn debian_mpich_tag_mismatch_is_named() {
    let _serial = one_at_a_time();
    let (_job, live, cores) = check_job_on(DEBIAN_MPICH, "hang_tag", &tag_mismatch());
    for report in [&live, &cores] {
        check_tag_mismatch(report, 3);
    }
}

#[test]
fn debian_mpich_chain_ends_at_the_rank_that_computes() {
    let _serial = one_at_a_time();
    let (job, live, cores) = check_job_on(DEBIAN_MPICH, "hang_chain", &Expected::chain());
    let location = chain_location(&job);
    for report in [&live, &cores] {
        check_chain_location(report, &location);
    }
}

#[test]
fn debian_mpich_cycle_across_three_communicators() {
    let _serial = one_at_a_time();
    let (_job, live, cores) = check_job_on(DEBIAN_MPICH, "hang_comms", &Expected::comms());
    for report in [&live, &cores] {
        check_comms(report);
    }
}
