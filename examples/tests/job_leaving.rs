//! `mpidd job` on real 4-rank jobs where a rank is on its way out while
//! the others wait for it, and where ranks are in collectives that do not
//! match (tests/mpich/hang_exit.c, hang_mismatch.c, hang_two_comms.c; the rank in
//! `MPI_Finalize` against a receive is job_blocking_calls.rs's
//! hang_finalize). Each runs on the reference MPICH, Debian's MPICH and
//! Debian's Open MPI (shared memory, and its UCX PML), and is read live and
//! from `gcore` cores, with and without queues.
//!
//! Every expected sentence is put together from the program's own facts:
//! its ranks, their calls, and the lines of the source that hold the
//! marker comments. A rank in `MPI_Abort` (hang_abort.c) is seen only on
//! Open MPI, told to keep the aborting rank there (`--mca mpi_abort_delay
//! -1`, as a user does to look at it): MPICH's launcher tears the job down
//! within moments, before a reader can be sure to see it, so there that
//! state is tested on synthetic jobs (mpidd-job/tests/leaving_ranks.rs).

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use common::hung_job::{build, HangMpi, HungJob};
use common::job_checks::{findings, job_json, mpi_prefix, one_at_a_time};
use common::ompi_job::{debian_ompi, DEBIAN_MPICC, DEBIAN_MPIRUN};

const MPIS: [HangMpi; 4] = [
    HangMpi::ReferenceMpich,
    HangMpi::DebianMpich,
    HangMpi::DebianOpenMpi,
    HangMpi::DebianOpenMpiUcx,
];

/// Every report of `job`: (report, what it was, whether queues were read).
fn reports(job: &HungJob, what: &str) -> Vec<(Value, String, bool)> {
    let launcher = job.mpiexec_pid().to_string();
    let mut out = Vec::new();
    for queues in [true, false] {
        let mut args = vec!["--pid", launcher.as_str()];
        if !queues {
            args.push("--no-queues");
        }
        out.push((
            job_json(&args),
            format!("{what} live, queues {queues}"),
            queues,
        ));
        job.assert_running(&format!("after {what} live"));
    }
    let dir = job.gcore_all("cores");
    let dir = dir.to_str().unwrap().to_string();
    for queues in [true, false] {
        let mut args = vec!["--core-dir", dir.as_str()];
        if !queues {
            args.push("--no-queues");
        }
        out.push((
            job_json(&args),
            format!("{what} from cores, queues {queues}"),
            queues,
        ));
    }
    out
}

fn finding<'a>(report: &'a Value, kind: &str) -> &'a str {
    report["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["kind"] == kind))
        .and_then(|f| f["summary"].as_str())
        .unwrap_or_else(|| panic!("no {kind}: {:#}", report["verdict"]))
}

/// What the headline rests on, in its parentheses.
fn rests_on(report: &Value, queues: bool, context: &str) {
    let headline = report["verdict"][0].as_str().unwrap();
    let rests = if queues {
        "(queues read on 4 of 4 ranks, stacks on 4)."
    } else {
        "from stacks alone"
    };
    assert!(headline.contains(rests), "{context}: {headline}");
}

/// hang_exit.c: rank 3 returned from main and sits in its exit handler;
/// ranks 0 to 2 wait for it in MPI_Barrier.
#[test]
fn a_rank_exiting_its_process_while_the_others_wait_in_a_barrier() {
    let _serial = one_at_a_time();
    for mpi in MPIS {
        let job = HungJob::start_on(
            mpi,
            &format!("leaving-{}exit", mpi_prefix(mpi)),
            "hang_exit",
        );
        let linger = job.source_line("/* LINGER_LINE */");
        let barrier = job.source_line("/* BARRIER_LINE */");
        for (report, what, queues) in reports(&job, &format!("{mpi:?} hang_exit")) {
            let context = format!("{what}: {:#}", report["verdict"]);
            let ranks = report["ranks"].as_array().unwrap();
            for rank in &ranks[..3] {
                assert_eq!(rank["mpi_call"], "MPI_Barrier", "{context}");
                assert_eq!(
                    rank["location"],
                    format!("main at hang_exit.c:{barrier}"),
                    "{context}"
                );
                assert!(rank.get("way_out").is_none(), "{context}");
            }
            assert_eq!(ranks[3]["state"], "outside_mpi", "{context}");
            assert_eq!(ranks[3]["way_out"], "process_exit", "{context}");
            assert_eq!(
                findings(&report)[0],
                ("waits_on_leaving_rank".to_string(), vec![0, 1, 2, 3]),
                "{context}"
            );
            // The C library names its exit function; its handlers' runner
            // is named only where its symbols are at hand.
            let summary = finding(&report, "waits_on_leaving_rank");
            let expected = |frame: &str| {
                format!(
                    "rank 3 is exiting its process (in {frame}) at hang_exit.c:{linger} in \
                     linger(); ranks 0-2 wait for it in MPI_Barrier"
                )
            };
            assert!(
                summary == expected("exit") || summary == expected("__run_exit_handlers"),
                "{context}: {summary}"
            );
            let headline = report["verdict"][0].as_str().unwrap();
            assert!(
                headline.starts_with(
                    "HUNG: rank 3 is exiting its process while rank(s) 0-2 wait for it ("
                ),
                "{context}"
            );
            rests_on(&report, queues, &context);
            // Rank 3 will not come back to its work.
            assert!(
                !report["verdict"]
                    .to_string()
                    .contains("run mpidd job again"),
                "{context}"
            );
        }
    }
}

/// hang_mismatch.c: ranks 0, 2 and 3 in MPI_Bcast, rank 1 in MPI_Reduce.
#[test]
fn a_bcast_against_a_reduce_is_told_by_call_and_line() {
    let _serial = one_at_a_time();
    for mpi in MPIS {
        let job = HungJob::start_on(
            mpi,
            &format!("leaving-{}mismatch", mpi_prefix(mpi)),
            "hang_mismatch",
        );
        let bcast = job.source_line("/* BCAST_LINE */");
        let reduce = job.source_line("/* REDUCE_LINE */");
        for (report, what, queues) in reports(&job, &format!("{mpi:?} hang_mismatch")) {
            let context = format!("{what}: {:#}", report["verdict"]);
            // Without queues no communicator's members are known, so the
            // count is of the ranks read.
            let of = if queues { "of MPI_COMM_WORLD" } else { "read" };
            assert_eq!(
                finding(&report, "collective_mismatch"),
                format!(
                    "3 of 4 ranks {of} are in MPI_Bcast; rank 1 is in MPI_Reduce at \
                     hang_mismatch.c:{reduce} in main(); ranks 0,2-3 are in MPI_Bcast at \
                     hang_mismatch.c:{bcast} in main()"
                ),
                "{context}"
            );
            let headline = report["verdict"][0].as_str().unwrap();
            assert!(headline.starts_with("DEADLOCK:"), "{context}");
            rests_on(&report, queues, &context);
        }
    }
}

/// hang_two_comms.c on Debian's Open MPI, whose queues show a barrier's
/// point-to-point traffic and so its communicator: ranks 0 and 2 in
/// MPI_Barrier on MPI_COMM_WORLD, ranks 1 and 3 on "solver". (MPICH's
/// queues do not show its barrier's messages, so there every rank is
/// only in MPI_Barrier, and no communicator can be told.)
#[test]
fn one_collective_on_two_communicators_is_told_apart_by_their_queues() {
    let _serial = one_at_a_time();
    for mpi in [HangMpi::DebianOpenMpi] {
        let job = HungJob::start_on(
            mpi,
            &format!("leaving-{}two-comms", mpi_prefix(mpi)),
            "hang_two_comms",
        );
        let world = job.source_line("/* WORLD_LINE */");
        let solver = job.source_line("/* SOLVER_LINE */");
        for (report, what, queues) in reports(&job, &format!("{mpi:?} hang_two_comms")) {
            let context = format!("{what}: {:#}", report["verdict"]);
            let summary = report["findings"]
                .as_array()
                .and_then(|f| f.iter().find(|f| f["kind"] == "collective_mismatch"))
                .and_then(|f| f["summary"].as_str());
            if !queues {
                assert_eq!(summary, None, "{context}");
                continue;
            }
            let summary = summary.unwrap_or_else(|| panic!("no collective_mismatch: {context}"));
            assert!(
                summary.starts_with(
                    "every rank read is in MPI_Barrier, but on 2 different communicators \
                     (MPI_COMM_WORLD, solver): "
                ),
                "{context}"
            );
            // A rank whose barrier has nothing pending at the moment it
            // is read has no communicator shown: each rank is either with
            // its own barrier's group or said to be unseen, never with the
            // other.
            for (rank, comm, line) in [
                (0, "MPI_COMM_WORLD", world),
                (2, "MPI_COMM_WORLD", world),
                (1, "solver", solver),
                (3, "solver", solver),
            ] {
                let here = format!("on {comm} at hang_two_comms.c:{line} in main()");
                let unseen = format!(
                    "on a communicator its queues do not show at hang_two_comms.c:{line} in main()"
                );
                let part = summary
                    .split(": ")
                    .nth(1)
                    .unwrap_or("")
                    .split("; ")
                    .find(|p| {
                        let ranks = p.split(' ').nth(1).unwrap_or("");
                        ranks.split(',').any(|r| {
                            r == rank.to_string() || r.split('-').next() == Some(&rank.to_string())
                        })
                    })
                    .unwrap_or_else(|| panic!("rank {rank} is not named: {context}"));
                assert!(
                    part.ends_with(&here) || part.ends_with(&unseen),
                    "rank {rank}: {part}: {context}"
                );
            }
            rests_on(&report, queues, &context);
        }
    }
}

/// hang_abort.c on Debian's Open MPI, whose aborting rank waits for ever
/// in MPI_Abort: rank 2 is there, ranks 0, 1 and 3 wait in MPI_Allreduce.
#[test]
fn a_rank_held_in_mpi_abort_while_the_others_wait_in_an_allreduce() {
    let _serial = one_at_a_time();
    debian_ompi();
    let (dir, exe, source) = build(Path::new(DEBIAN_MPICC), "leaving-ompi-abort", "hang_abort");
    let mut launch = Command::new("nice");
    launch
        .args([
            "-n",
            "19",
            DEBIAN_MPIRUN,
            "--allow-run-as-root",
            "--oversubscribe",
        ])
        .args([
            "--mca",
            "btl",
            "self,vader",
            "--mca",
            "mpi_abort_delay",
            "-1",
        ])
        .args(["-n", "4"])
        .arg(&exe);
    let job = HungJob::run(launch, dir, source, "hang_abort");
    let abort = job.source_line("/* ABORT_LINE */");
    let allreduce = job.source_line("/* ALLREDUCE_LINE */");
    for (report, what, queues) in reports(&job, "DebianOpenMpi hang_abort") {
        let context = format!("{what}: {:#}", report["verdict"]);
        let ranks = report["ranks"].as_array().unwrap();
        assert_eq!(ranks[2]["mpi_call"], "MPI_Abort", "{context}");
        assert_eq!(ranks[2]["way_out"], "abort", "{context}");
        for r in [0, 1, 3] {
            assert_eq!(ranks[r]["mpi_call"], "MPI_Allreduce", "{context}");
            assert_eq!(
                ranks[r]["location"],
                format!("main at hang_abort.c:{allreduce}"),
                "{context}"
            );
        }
        assert_eq!(
            findings(&report)[0],
            ("waits_on_leaving_rank".to_string(), vec![0, 1, 3, 2]),
            "{context}"
        );
        assert_eq!(
            finding(&report, "waits_on_leaving_rank"),
            format!(
                "rank 2 is in MPI_Abort at hang_abort.c:{abort} in main(), tearing the job \
                 down; ranks 0-1,3 wait for it in MPI_Allreduce"
            ),
            "{context}"
        );
        let headline = report["verdict"][0].as_str().unwrap();
        assert!(
            headline.starts_with("HUNG: rank 2 is in MPI_Abort while rank(s) 0-1,3 wait for it ("),
            "{context}"
        );
        rests_on(&report, queues, &context);
    }
}
