//! Ranks that leave the job, or are on their way out, while others wait
//! for them: in `MPI_Finalize`, in `MPI_Abort`, exiting their process, in
//! Python's handling of an exception (with the exception a reader of the
//! interpreter found); and collectives that do not match, told group by
//! group. Each expected sentence is put together from the facts the test
//! gives the ranks (their calls, files and lines), not from the tool.

mod common;

use mpidd_job::synthetic::SyntheticRank;
use mpidd_job::{analyze, FindingKind, JobReport, OperationKind, RankState, WayOut};

use common::{blocked_in, in_call, receiving, WORLD};

fn kinds(report: &JobReport) -> Vec<(FindingKind, Vec<i64>)> {
    report
        .findings
        .iter()
        .map(|f| (f.kind, f.ranks.clone()))
        .collect()
}

fn summary(report: &JobReport, kind: FindingKind) -> &str {
    &report
        .findings
        .iter()
        .find(|f| f.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} in {:#?}", report.verdict))
        .summary
}

const QUEUES_AND_STACKS: &str = "(queues read on 4 of 4 ranks, stacks on 4)";

/// Rank `rank` of 4 in MPI_Barrier, called from main at `file:line`.
fn in_barrier_at(rank: i64, at: &str) -> mpidd_job::RankReading {
    SyntheticRank::new(rank, 4)
        .stack(&["_start", at, "MPI_Barrier", "poll"])
        .reading()
}

#[test]
fn a_rank_in_finalize_cannot_answer_a_receive() {
    let readings = vec![
        SyntheticRank::new(0, 4)
            .stack(&["_start", "fin.c:15@main", "MPI_Finalize", "poll"])
            .reading(),
        SyntheticRank::new(1, 4)
            .receive(WORLD, 0, Some(51))
            .stack(&["_start", "fin.c:14@main", "MPI_Recv", "poll"])
            .reading(),
        SyntheticRank::new(2, 4)
            .stack(&["_start", "fin.c:15@main", "MPI_Finalize", "poll"])
            .reading(),
        SyntheticRank::new(3, 4)
            .stack(&["_start", "fin.c:15@main", "MPI_Finalize", "poll"])
            .reading(),
    ];
    let report = analyze(&readings);
    let ways: Vec<Option<WayOut>> = report.ranks.iter().map(|r| r.way_out).collect();
    let fin = Some(WayOut::Finalize);
    assert_eq!(ways, [fin, None, fin, fin]);
    // Rank 0 waits for nobody: it will never send what rank 1 waits for.
    let edges: Vec<(i64, i64, OperationKind)> = report
        .edges
        .iter()
        .map(|e| (e.from, e.to, e.kind))
        .collect();
    assert_eq!(
        edges,
        [
            (1, 0, OperationKind::Receive),
            (2, 1, OperationKind::Collective),
            (3, 1, OperationKind::Collective),
        ]
    );
    assert!(report.cycles.is_empty());
    assert_eq!(
        kinds(&report)[0],
        (FindingKind::WaitsOnLeavingRank, vec![1, 2, 3, 0])
    );
    assert_eq!(
        summary(&report, FindingKind::WaitsOnLeavingRank),
        "rank 0 is in MPI_Finalize at fin.c:15 in main(), and will send nothing more; \
         rank 1 waits for it in MPI_Recv (a receive from it, tag 51 on MPI_COMM_WORLD); \
         rank(s) 2-3 wait on those in turn"
    );
    assert_eq!(
        report.verdict[0],
        format!(
            "HUNG: rank 0 is in MPI_Finalize while rank(s) 1-3 wait for it {QUEUES_AND_STACKS}."
        )
    );
    assert_eq!(
        summary(&report, FindingKind::CollectiveMismatch),
        "3 of 4 ranks of MPI_COMM_WORLD are in MPI_Finalize; rank 1 is in MPI_Recv at \
         fin.c:14 in main(); ranks 0,2-3 are in MPI_Finalize at fin.c:15 in main()"
    );
}

#[test]
fn a_python_exception_is_named_with_its_line() {
    let python = [
        "_start",
        "main",
        "Py_BytesMain",
        "Py_RunMain",
        "pymain_run_python",
        "_PyErr_PrintEx",
        "_PyErr_Display",
        "write",
    ];
    let readings = vec![
        in_barrier_at(0, "job.c:20@main"),
        SyntheticRank::new(1, 4)
            .stack(&python)
            .raised("ValueError", "bad input on rank 1", "job.py", "check", 12)
            .reading(),
        in_barrier_at(2, "job.c:20@main"),
        in_barrier_at(3, "job.c:20@main"),
    ];
    let report = analyze(&readings);
    let rank1 = &report.ranks[1];
    assert_eq!(rank1.way_out, Some(WayOut::PythonException));
    assert_eq!(rank1.state, RankState::OutsideMpi);
    assert_eq!(
        rank1.python_exception.as_ref().unwrap().type_name,
        "ValueError"
    );
    assert_eq!(
        kinds(&report)[0],
        (FindingKind::WaitsOnLeavingRank, vec![0, 2, 3, 1])
    );
    assert_eq!(
        summary(&report, FindingKind::WaitsOnLeavingRank),
        "rank 1 raised ValueError('bad input on rank 1') at job.py:12 in check(), and is in \
         Python's exception handling (_PyErr_Display); ranks 0,2-3 wait for it in MPI_Barrier"
    );
    assert_eq!(
        report.verdict[0],
        format!(
            "HUNG: rank 1 is in Python's exception handling after it raised ValueError while \
             rank(s) 0,2-3 wait for it {QUEUES_AND_STACKS}."
        )
    );
    // It will not come back to its own code: no advice to look again.
    assert!(
        !report
            .verdict
            .iter()
            .any(|l| l.contains("run mpidd job again")),
        "{:#?}",
        report.verdict
    );
    // The report carries the exception in its JSON form, and reads back.
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["ranks"][1]["way_out"], "python_exception");
    assert_eq!(
        json["ranks"][1]["python_exception"]["type_name"],
        "ValueError"
    );
    assert!(json["ranks"][0].get("way_out").is_none());
    assert!(json["ranks"][0].get("python_exception").is_none());
    let back: JobReport = serde_json::from_value(json).unwrap();
    assert_eq!(back, report);
    // The text and HTML forms name it too.
    let text = mpidd_job::render_text::to_text(&report);
    assert!(
        text.contains("raised: ValueError('bad input on rank 1')"),
        "{text}"
    );
    let html = mpidd_job::render_html::to_html(&report, None);
    assert!(html.contains("waits on a leaving rank"));
    assert!(html.contains("st-leaving\">leaving: Python exception"));
    let dot = mpidd_job::render_dot::to_dot(&report);
    assert!(dot.contains("(leaving: Python exception)"), "{dot}");
}

#[test]
fn a_rank_in_its_exit_handlers_is_leaving() {
    let readings = vec![
        in_barrier_at(0, "exit.c:20@main"),
        in_barrier_at(1, "exit.c:20@main"),
        in_barrier_at(2, "exit.c:20@main"),
        SyntheticRank::new(3, 4)
            .stack(&[
                "_start",
                "exit.c:17@main",
                "exit",
                "__run_exit_handlers",
                "exit.c:9@linger",
                "nanosleep",
            ])
            .reading(),
    ];
    let report = analyze(&readings);
    assert_eq!(report.ranks[3].way_out, Some(WayOut::ProcessExit));
    assert_eq!(
        summary(&report, FindingKind::WaitsOnLeavingRank),
        "rank 3 is exiting its process (in __run_exit_handlers) at exit.c:9 in linger(); \
         ranks 0-2 wait for it in MPI_Barrier"
    );
    assert!(report.verdict[0].starts_with("HUNG: rank 3 is exiting its process while rank(s) 0-2"));
}

#[test]
fn a_rank_in_abort_is_leaving() {
    let readings = vec![
        blocked_in(0, 4, "MPI_Allreduce"),
        blocked_in(1, 4, "MPI_Allreduce"),
        SyntheticRank::new(2, 4)
            .stack(&["_start", "abort.c:11@main", "MPI_Abort", "poll"])
            .reading(),
        blocked_in(3, 4, "MPI_Allreduce"),
    ];
    let report = analyze(&readings);
    assert_eq!(report.ranks[2].way_out, Some(WayOut::Abort));
    assert_eq!(
        summary(&report, FindingKind::WaitsOnLeavingRank),
        "rank 2 is in MPI_Abort at abort.c:11 in main(), tearing the job down; \
         ranks 0-1,3 wait for it in MPI_Allreduce"
    );
    assert!(report.verdict[0].starts_with("HUNG: rank 2 is in MPI_Abort"));
}

#[test]
fn a_rank_in_finalize_that_no_one_waits_for_is_not_the_reason() {
    // Rank 1 computes; the others wait for it in MPI_Finalize.
    let readings = vec![
        blocked_in(0, 3, "MPI_Finalize"),
        SyntheticRank::new(1, 3)
            .stack(&["_start", "busy.c:4@compute"])
            .reading(),
        blocked_in(2, 3, "MPI_Finalize"),
    ];
    let report = analyze(&readings);
    assert!(!kinds(&report)
        .iter()
        .any(|(k, _)| *k == FindingKind::WaitsOnLeavingRank));
    assert_eq!(
        kinds(&report)[0],
        (FindingKind::WaitsOnRankOutsideMpi, vec![0, 2, 1])
    );
    assert!(report.verdict[0].starts_with("HUNG OR SLOW"));
}

#[test]
fn an_exited_rank_keeps_its_finding_and_its_way_out_says_so() {
    let readings = vec![
        SyntheticRank::new(0, 3).exited().reading(),
        receiving(1, 3, 0, Some(41)),
        SyntheticRank::new(2, 3)
            .receive(WORLD, 1, Some(3))
            .stack(&in_call("MPI_Recv"))
            .reading(),
    ];
    let report = analyze(&readings);
    assert_eq!(report.ranks[0].way_out, Some(WayOut::Exited));
    assert!(kinds(&report).contains(&(FindingKind::WaitsOnExitedRank, vec![1, 2, 0])));
    assert!(!kinds(&report)
        .iter()
        .any(|(k, _)| *k == FindingKind::WaitsOnLeavingRank));
}

#[test]
fn mismatched_collectives_are_told_by_call_and_line() {
    let bcast = ["_start", "bcast.c:14@main", "MPI_Bcast", "poll"];
    let readings = vec![
        SyntheticRank::new(0, 4).stack(&bcast).reading(),
        SyntheticRank::new(1, 4)
            .stack(&["_start", "bcast.c:16@main", "MPI_Reduce", "poll"])
            .reading(),
        SyntheticRank::new(2, 4).stack(&bcast).reading(),
        SyntheticRank::new(3, 4).stack(&bcast).reading(),
    ];
    let report = analyze(&readings);
    assert_eq!(
        summary(&report, FindingKind::CollectiveMismatch),
        "3 of 4 ranks of MPI_COMM_WORLD are in MPI_Bcast; rank 1 is in MPI_Reduce at \
         bcast.c:16 in main(); ranks 0,2-3 are in MPI_Bcast at bcast.c:14 in main()"
    );
}

#[test]
fn a_mismatch_over_many_places_names_a_few_and_counts_the_rest() {
    // 100 ranks: 90 in MPI_Barrier at one line, 10 in MPI_Bcast each at
    // a line of its own.
    let lines: Vec<String> = (0..10)
        .map(|i| format!("many.c:{}@main", 100 + i))
        .collect();
    let readings: Vec<_> = (0..100)
        .map(|r| {
            let rank = SyntheticRank::new(r, 100);
            if r % 10 == 3 {
                let at = lines[(r / 10) as usize].as_str();
                rank.stack(&["_start", at, "MPI_Bcast", "poll"]).reading()
            } else {
                rank.stack(&["_start", "many.c:50@main", "MPI_Barrier", "poll"])
                    .reading()
            }
        })
        .collect();
    let report = analyze(&readings);
    assert_eq!(
        summary(&report, FindingKind::CollectiveMismatch),
        "90 of 100 ranks of MPI_COMM_WORLD are in MPI_Barrier; \
         rank 3 is in MPI_Bcast at many.c:100 in main(); \
         rank 13 is in MPI_Bcast at many.c:101 in main(); \
         rank 23 is in MPI_Bcast at many.c:102 in main(); \
         rank 33 is in MPI_Bcast at many.c:103 in main(); \
         and 96 more rank(s) at 7 other place(s)"
    );
}

#[test]
fn what_a_collective_posts_is_not_told_as_a_receive() {
    // Open MPI's MPI_Barrier posts a receive from any source (tag -16):
    // the rank waits in its barrier, which is what the finding says.
    let readings = vec![
        SyntheticRank::new(0, 4)
            .receive(WORLD, -1, Some(-16))
            .stack(&in_call("MPI_Barrier"))
            .reading(),
        blocked_in(1, 4, "MPI_Barrier"),
        blocked_in(2, 4, "MPI_Barrier"),
        SyntheticRank::new(3, 4)
            .stack(&["_start", "main", "exit", "exit.c:9@linger", "pause"])
            .reading(),
    ];
    let report = analyze(&readings);
    assert_eq!(
        summary(&report, FindingKind::WaitsOnLeavingRank),
        "rank 3 is exiting its process (in exit) at exit.c:9 in linger(); \
         ranks 0-2 wait for it in MPI_Barrier"
    );
}

#[test]
fn a_python_rank_finalizing_after_its_exception_names_both() {
    // mpi4py finalizes MPI from the interpreter's exit, after the
    // traceback is printed: the rank is in MPI_Finalize, and the reader
    // of its interpreter still found the exception.
    let readings = vec![
        in_barrier_at(0, "job.c:20@main"),
        SyntheticRank::new(1, 4)
            .stack(&[
                "_start",
                "main",
                "Py_BytesMain",
                "Py_RunMain",
                "Py_FinalizeEx",
                "atexit_callfuncs",
                "MPI_Finalize",
                "poll",
            ])
            .raised("ValueError", "bad input on rank 1", "job.py", "check", 12)
            .reading(),
        in_barrier_at(2, "job.c:20@main"),
        in_barrier_at(3, "job.c:20@main"),
    ];
    let report = analyze(&readings);
    assert_eq!(report.ranks[1].way_out, Some(WayOut::Finalize));
    assert_eq!(
        summary(&report, FindingKind::WaitsOnLeavingRank),
        "rank 1 raised ValueError('bad input on rank 1') at job.py:12 in check(), and is in \
         MPI_Finalize in main(), and will send nothing more; ranks 0,2-3 wait for it in \
         MPI_Barrier"
    );
    assert!(report.verdict[0].starts_with(
        "HUNG: rank 1 is in MPI_Finalize after it raised ValueError while rank(s) 0,2-3 wait"
    ));
}
