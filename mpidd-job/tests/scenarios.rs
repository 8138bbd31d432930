//! The hangs the job analysis must name, described rank by rank as a
//! decoder would read them, with the expected graph worked out by hand.

use mpidd_job::synthetic::SyntheticRank;
use mpidd_job::{analyze, Edge, FindingKind, JobReport, OperationKind, RankState};

const WORLD: &str = "MPI_COMM_WORLD";

fn in_call(call: &str) -> Vec<&str> {
    vec!["_start", "main", call, "MPIDI_CH3I_Progress", "poll"]
}

fn edges(report: &JobReport) -> Vec<(i64, i64, OperationKind)> {
    report
        .edges
        .iter()
        .map(|e: &Edge| (e.from, e.to, e.kind))
        .collect()
}

fn kinds(report: &JobReport) -> Vec<(FindingKind, Vec<i64>)> {
    report
        .findings
        .iter()
        .map(|f| (f.kind, f.ranks.clone()))
        .collect()
}

#[test]
fn a_ring_of_blocking_receives_is_one_cycle() {
    // Every rank receives from its left neighbour before it sends.
    let readings: Vec<_> = (0..4)
        .map(|r| {
            SyntheticRank::new(r, 4)
                .receive(WORLD, (r + 3) % 4, Some(0))
                .stack(&in_call("MPI_Recv"))
                .reading()
        })
        .collect();
    let report = analyze(&readings);
    assert_eq!(report.cycles, vec![vec![0, 3, 2, 1]]);
    assert_eq!(
        edges(&report),
        vec![
            (0, 3, OperationKind::Receive),
            (1, 0, OperationKind::Receive),
            (2, 1, OperationKind::Receive),
            (3, 2, OperationKind::Receive),
        ]
    );
    assert_eq!(
        kinds(&report),
        vec![(FindingKind::DeadlockCycle, vec![0, 3, 2, 1])]
    );
    assert!(
        report.verdict[0].starts_with("DEADLOCK"),
        "{:?}",
        report.verdict
    );
    assert!(
        report.verdict[1].contains("0 → 3 → 2 → 1 → 0"),
        "{:?}",
        report.verdict
    );
}

#[test]
fn a_long_ring_is_summarized_in_its_line_and_whole_in_its_data() {
    let n = 64;
    let readings: Vec<_> = (0..n)
        .map(|r| {
            SyntheticRank::new(r, n)
                .receive(WORLD, (r + n - 1) % n, Some(0))
                .stack(&in_call("MPI_Recv"))
                .reading()
        })
        .collect();
    let report = analyze(&readings);
    let ring: Vec<i64> = std::iter::once(0).chain((1..n).rev()).collect();
    assert_eq!(report.cycles, vec![ring.clone()]);
    let finding = &report.findings[0];
    assert_eq!(finding.ranks, ring, "every rank stays in the data");
    assert_eq!(finding.operations.len(), 64, "and every wait");
    assert!(
        finding
            .summary
            .starts_with("deadlock: ranks 0 → 63 → 62 → 61 → … → 2 → 1 → 0 (64 ranks) wait"),
        "{}",
        finding.summary
    );
    assert!(
        finding
            .summary
            .ends_with("; and the waits of the other 61 ranks"),
        "{}",
        finding.summary
    );
    assert!(finding.summary.len() < 600, "{}", finding.summary);
}

#[test]
fn head_to_head_ssends_are_inferred_from_unexpected_rendezvous_requests() {
    // 0 and 1 MPI_Ssend 8 MiB to each other: neither send is in a send
    // queue, each waits at the other as a rendezvous request. 2 and 3
    // receive from 0.
    let big = 8 << 20;
    let readings = vec![
        SyntheticRank::new(0, 4)
            .unexpected(WORLD, 1, 5, big, true)
            .stack(&in_call("MPI_Ssend"))
            .reading(),
        SyntheticRank::new(1, 4)
            .unexpected(WORLD, 0, 5, big, true)
            .stack(&in_call("MPI_Ssend"))
            .reading(),
        SyntheticRank::new(2, 4)
            .receive(WORLD, 0, Some(9))
            .stack(&in_call("MPI_Recv"))
            .reading(),
        SyntheticRank::new(3, 4)
            .receive(WORLD, 0, Some(9))
            .stack(&in_call("MPI_Recv"))
            .reading(),
    ];
    let report = analyze(&readings);
    assert_eq!(report.cycles, vec![vec![0, 1]]);
    assert_eq!(
        edges(&report),
        vec![
            (0, 1, OperationKind::InferredSend),
            (1, 0, OperationKind::InferredSend),
            (2, 0, OperationKind::Receive),
            (3, 0, OperationKind::Receive),
        ]
    );
    assert_eq!(
        kinds(&report),
        vec![
            (FindingKind::DeadlockCycle, vec![0, 1]),
            (FindingKind::WaitsOnDeadlock, vec![2, 3]),
        ]
    );
    // The inferred sends are listed with the sender's operations.
    let zero = &report.ranks[0];
    assert!(zero
        .pending
        .iter()
        .any(|o| o.kind == OperationKind::InferredSend && o.peer == 1 && o.length == big));
}

#[test]
fn a_tag_mismatch_is_named() {
    // 0 sent tag 1 to 1 (eager, done) and went on to the barrier; 1 waits
    // for tag 2 from 0; 2 and 3 are in the barrier.
    let readings = vec![
        SyntheticRank::new(0, 4)
            .stack(&in_call("MPI_Barrier"))
            .reading(),
        SyntheticRank::new(1, 4)
            .receive(WORLD, 0, Some(2))
            .unexpected(WORLD, 0, 1, 4, false)
            .stack(&in_call("MPI_Recv"))
            .reading(),
        SyntheticRank::new(2, 4)
            .stack(&in_call("MPI_Barrier"))
            .reading(),
        SyntheticRank::new(3, 4)
            .stack(&in_call("MPI_Barrier"))
            .reading(),
    ];
    let report = analyze(&readings);
    assert!(report.cycles.is_empty());
    assert_eq!(edges(&report), vec![(1, 0, OperationKind::Receive)]);
    assert_eq!(
        kinds(&report),
        vec![
            (FindingKind::WaitsOnRankInMpi, vec![1, 0]),
            (FindingKind::UnmatchableReceive, vec![1, 0]),
            (FindingKind::CollectiveMismatch, vec![1]),
        ]
    );
    let mismatch = &report.findings[2].summary;
    assert!(
        mismatch.starts_with(
            "3 of 4 ranks of MPI_COMM_WORLD are in MPI_Barrier; rank 1 is in MPI_Recv"
        ),
        "{mismatch}"
    );
}

#[test]
fn a_chain_ends_at_the_rank_that_computes() {
    let readings = vec![
        SyntheticRank::new(0, 4)
            .stack(&["_start", "main", "busy.c:42@compute"])
            .reading(),
        SyntheticRank::new(1, 4)
            .receive(WORLD, 0, Some(0))
            .stack(&in_call("MPI_Recv"))
            .reading(),
        SyntheticRank::new(2, 4)
            .receive(WORLD, 1, Some(0))
            .stack(&in_call("MPI_Recv"))
            .reading(),
        SyntheticRank::new(3, 4)
            .receive(WORLD, 2, Some(0))
            .stack(&in_call("MPI_Recv"))
            .reading(),
    ];
    let report = analyze(&readings);
    assert!(report.cycles.is_empty());
    assert_eq!(report.ranks[0].state, RankState::OutsideMpi);
    assert_eq!(
        report.ranks[0].location.as_deref(),
        Some("compute at busy.c:42")
    );
    assert_eq!(
        kinds(&report),
        vec![(FindingKind::WaitsOnRankOutsideMpi, vec![1, 2, 3, 0])]
    );
    assert!(report.findings[0]
        .summary
        .contains("rank 0, which is outside MPI, in compute at busy.c:42"));
}

#[test]
fn a_cycle_across_two_communicators() {
    // 0 waits on 1 in WORLD, 1 on 2 in "pair12" (ranks 1, 2), 2 on 0 in
    // "pair02" (ranks 0, 2); 3 waits on 0 in WORLD.
    let readings = vec![
        SyntheticRank::new(0, 4)
            .comm("pair02", &[0, 2])
            .receive(WORLD, 1, Some(3))
            .stack(&in_call("MPI_Recv"))
            .reading(),
        SyntheticRank::new(1, 4)
            .comm("pair12", &[1, 2])
            .receive("pair12", 2, Some(3))
            .stack(&in_call("MPI_Recv"))
            .reading(),
        SyntheticRank::new(2, 4)
            .comm("pair12", &[1, 2])
            .comm("pair02", &[0, 2])
            .receive("pair02", 0, Some(3))
            .stack(&in_call("MPI_Recv"))
            .reading(),
        SyntheticRank::new(3, 4)
            .receive(WORLD, 0, None)
            .stack(&in_call("MPI_Recv"))
            .reading(),
    ];
    let report = analyze(&readings);
    assert_eq!(report.cycles, vec![vec![0, 1, 2]]);
    assert_eq!(
        kinds(&report),
        vec![
            (FindingKind::DeadlockCycle, vec![0, 1, 2]),
            (FindingKind::WaitsOnDeadlock, vec![3]),
        ]
    );
    assert!(report.findings[0]
        .summary
        .contains("across 3 communicators (MPI_COMM_WORLD, pair02, pair12)"));
    let any = report.edges.iter().find(|e| e.from == 3).unwrap();
    assert_eq!(any.tag, None);
}

#[test]
fn any_source_receives_wait_on_every_other_member() {
    // 0 receives from anyone; everyone else computes: no deadlock.
    let readings = vec![
        SyntheticRank::new(0, 3)
            .receive(WORLD, -1, Some(1))
            .stack(&in_call("MPI_Recv"))
            .reading(),
        SyntheticRank::new(1, 3)
            .stack(&["main", "app.c:7@work"])
            .reading(),
        SyntheticRank::new(2, 3)
            .stack(&["main", "app.c:7@work"])
            .reading(),
    ];
    let report = analyze(&readings);
    assert!(report.cycles.is_empty());
    assert_eq!(
        edges(&report),
        vec![
            (0, 1, OperationKind::Receive),
            (0, 2, OperationKind::Receive)
        ]
    );
    assert!(report.edges.iter().all(|e| e.any_source));
    assert_eq!(
        kinds(&report),
        vec![
            (FindingKind::WaitsOnRankOutsideMpi, vec![0, 1]),
            (FindingKind::WaitsOnRankOutsideMpi, vec![0, 2]),
        ]
    );
}

#[test]
fn an_unreadable_rank_is_reported_and_the_rest_analysed() {
    let mut readings: Vec<_> = (0..2)
        .map(|r| {
            SyntheticRank::new(r, 3)
                .receive(WORLD, (r + 1) % 2, Some(0))
                .stack(&in_call("MPI_Recv"))
                .reading()
        })
        .collect();
    readings.push(mpidd_job::RankReading::failed(
        "pid 4242".into(),
        Some(4242),
        None,
        "no such process".into(),
    ));
    let report = analyze(&readings);
    assert_eq!(report.cycles, vec![vec![0, 1]]);
    assert_eq!(report.ranks.len(), 3);
    assert_eq!(report.ranks[2].state, RankState::Unreadable);
    assert_eq!(
        report.findings.last().map(|f| f.kind),
        Some(FindingKind::UnreadableRanks)
    );
}

#[test]
fn a_reading_with_a_negative_world_rank_is_not_matched_and_does_not_panic() {
    let mut odd = SyntheticRank::new(0, 2)
        .receive(WORLD, 1, Some(0))
        .stack(&in_call("MPI_Recv"))
        .reading();
    odd.world_rank = Some(-5);
    let report = analyze(&[odd]);
    assert!(report.edges.is_empty());
    assert_eq!(report.ranks[0].world_rank, -5);
}
