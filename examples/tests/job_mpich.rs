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

use common::hung_job::{tracer_pid, HangMpi, HungJob};
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
            // The kernel lets the ranks go as the killed mpidd exits; on a
            // loaded 2-core machine, beside four spinning ranks, that exit
            // has taken over 2 s. A rank left stopped stays stopped.
            job.assert_running_within(Duration::from_secs(10), &what);
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

/// The state letter of every thread of `pid` (its `/proc/PID/task`).
fn thread_states(pid: i32) -> Vec<(i32, Option<char>)> {
    let mut tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap_or_else(|e| panic!("list the threads of {pid}: {e}"))
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    tids.into_iter()
        .map(|tid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok();
            let state = stat.and_then(|s| s.rsplit_once(") ")?.1.chars().next());
            (tid, state)
        })
        .collect()
}

/// Waits up to 5 s for every thread of every rank to be in job-control
/// stop (`T`) and untraced; panics naming the first that is not.
fn assert_stopped_untraced(job: &HungJob, when: &str) {
    let start = Instant::now();
    loop {
        let wrong = job.ranks.iter().find_map(|&(rank, pid)| {
            let traced = tracer_pid(pid);
            if traced != Some(0) {
                return Some(format!("rank {rank} (pid {pid}) has TracerPid {traced:?}"));
            }
            thread_states(pid)
                .into_iter()
                .find(|(_, s)| *s != Some('T'))
                .map(|(tid, s)| format!("rank {rank} (pid {pid}) thread {tid} is in state {s:?}"))
        });
        match wrong {
            None => return,
            Some(what) if start.elapsed() > Duration::from_secs(5) => panic!("{when}: {what}"),
            Some(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Ranks the user stopped (SIGSTOP) before mpidd came are read through
/// their launcher like running ones, and left exactly as they were found:
/// every thread still in job-control stop, and none traced. Stopped ranks
/// do not compete for the CPUs either, which is how the benchmark
/// (scripts/bench-live-split.sh) measures a rank's own cost; `--timings`
/// gives that cost's split for each rank.
#[test]
fn ranks_stopped_first_are_read_and_left_stopped() {
    let _serial = one_at_a_time();
    let job = HungJob::start("job-stopped-first", "hang_ring");
    let launcher = job.mpiexec_pid().to_string();
    for &(_, pid) in &job.ranks {
        kill(Pid::from_raw(pid), Signal::SIGSTOP).expect("SIGSTOP a rank");
    }
    assert_stopped_untraced(&job, "after SIGSTOP");
    // Twice: a second read finds them as the first left them.
    for round in ["first", "second"] {
        let report = job_json(&["--pid", &launcher, "--timings"]);
        assert_eq!(cycles(&report), vec![vec![0, 3, 2, 1]], "{round} read");
        check_ring_receives(&report);
        for rank in report["ranks"].as_array().expect("ranks") {
            assert_eq!(rank["state"], "in_mpi", "{round} read: {rank}");
            let t = &rank["timings"];
            assert!(t["threads_stopped"].as_u64() >= Some(1), "{round}: {rank}");
            let phases = ["open", "stop", "queues", "world_rank", "stacks", "release"];
            let sum: f64 = phases.iter().map(|p| t[*p].as_f64().unwrap()).sum();
            let total = t["total"].as_f64().unwrap();
            assert!(sum > 0.0 && sum <= total + 1e-6, "{round}: {t}");
        }
        assert_stopped_untraced(&job, &format!("after the {round} read"));
        // And still so a while later: nothing let them run on.
        std::thread::sleep(Duration::from_millis(300));
        assert_stopped_untraced(&job, &format!("300 ms after the {round} read"));
    }
    for &(_, pid) in &job.ranks {
        kill(Pid::from_raw(pid), Signal::SIGCONT).expect("SIGCONT a rank");
    }
    job.assert_running_within(Duration::from_secs(2), "after SIGCONT");
}
