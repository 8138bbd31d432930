//! The hangs the job analysis must name, described rank by rank as a
//! decoder would read them, with the expected graph worked out by hand.

mod common;

use mpidd_job::synthetic::SyntheticRank;
use mpidd_job::{analyze, Edge, FindingKind, JobReport, OperationKind, RankState};

use common::{blocked_in, head_to_head, in_call, receiving, ring, MIB8, WORLD};

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
    let report = analyze(&ring(4));
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
    let report = analyze(&ring(n));
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
    let report = analyze(&head_to_head(4));
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
        .any(|o| o.kind == OperationKind::InferredSend && o.peer == 1 && o.length == MIB8));
}

#[test]
fn a_tag_mismatch_is_named() {
    // 0 sent tag 1 to 1 (eager, done) and went on to the barrier; 1 waits
    // for tag 2 from 0; 2 and 3 are in the barrier.
    let readings = vec![
        blocked_in(0, 4, "MPI_Barrier"),
        SyntheticRank::new(1, 4)
            .receive(WORLD, 0, Some(2))
            .unexpected(WORLD, 0, 1, 4, false)
            .stack(&in_call("MPI_Recv"))
            .reading(),
        blocked_in(2, 4, "MPI_Barrier"),
        blocked_in(3, 4, "MPI_Barrier"),
    ];
    let report = analyze(&readings);
    // 0 waits in the barrier for 1, the one rank that has not entered
    // it; 1 waits for 0's message: a cycle through the collective, which
    // 2 and 3 wait on from the barrier too.
    assert_eq!(report.cycles, vec![vec![0, 1]]);
    assert_eq!(
        edges(&report),
        vec![
            (0, 1, OperationKind::Collective),
            (1, 0, OperationKind::Receive),
            (2, 1, OperationKind::Collective),
            (3, 1, OperationKind::Collective),
        ]
    );
    assert_eq!(
        kinds(&report),
        vec![
            (FindingKind::DeadlockCycle, vec![0, 1]),
            (FindingKind::WaitsOnDeadlock, vec![2, 3]),
            (FindingKind::UnmatchableReceive, vec![1, 0]),
            (FindingKind::CollectiveMismatch, vec![1]),
        ]
    );
    let cycle = &report.findings[0].summary;
    assert!(
        cycle.contains("rank 0 in MPI_Barrier waits for rank 1 to enter it"),
        "{cycle}"
    );
    let mismatch = &report.findings[3].summary;
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
        receiving(1, 4, 0, Some(0)),
        receiving(2, 4, 1, Some(0)),
        receiving(3, 4, 2, Some(0)),
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
        receiving(3, 4, 0, None),
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
        receiving(0, 3, -1, Some(1)),
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
        .map(|r| receiving(r, 3, (r + 1) % 2, Some(0)))
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
    let mut odd = receiving(0, 2, 1, Some(0));
    odd.world_rank = Some(-5);
    let report = analyze(&[odd]);
    assert!(report.edges.is_empty());
    assert_eq!(report.ranks[0].world_rank, -5);
}

fn headline(report: &JobReport) -> &str {
    &report.verdict[0]
}

#[test]
fn a_ring_whose_queues_cannot_be_read_is_a_deadlock_from_stacks_alone() {
    let why = "queues: no native message-queue decoder for this target: Open MPI's UCX PML";
    let readings: Vec<_> = (0..4)
        .map(|r| {
            SyntheticRank::new(r, 4)
                .queues_unread(why)
                .stack(&[
                    "_start",
                    "main",
                    "ring.c:12@main",
                    "PMPI_Recv",
                    "ucp_worker_progress",
                ])
                .reading()
        })
        .collect();
    let report = analyze(&readings);
    assert!(report.edges.is_empty());
    assert_eq!(
        kinds(&report),
        vec![(FindingKind::GlobalDeadlock, vec![0, 1, 2, 3])]
    );
    let h = headline(&report);
    assert!(
        h.starts_with("DEADLOCK: every rank is blocked in MPI"),
        "{h}"
    );
    assert!(
        h.contains("from stacks alone: queues unreadable on 4 of 4 ranks"),
        "{h}"
    );
    assert!(h.contains("Open MPI's UCX PML"), "{h}");
    assert!(!report.verdict.join("\n").contains("No rank waits"));
    assert_eq!(report.basis.queues_read, 0);
    assert!(report.basis.stacks_alone);
    for r in &report.ranks {
        assert!(!r.basis.queues.is_read());
        assert!(r.basis.stacks.is_read());
        assert_eq!(
            r.call_class,
            Some(mpidd_job::mpi_call::CallClass::PointToPoint)
        );
    }
}

#[test]
fn probes_that_nothing_satisfies_are_a_global_deadlock() {
    // Queues read and empty: a probe posts no receive.
    let readings: Vec<_> = (0..4).map(|r| blocked_in(r, 4, "MPI_Probe")).collect();
    let report = analyze(&readings);
    assert_eq!(
        kinds(&report),
        vec![(FindingKind::GlobalDeadlock, vec![0, 1, 2, 3])]
    );
    let summary = &report.findings[0].summary;
    assert!(
        summary.contains("no message in their queues can complete any of their calls"),
        "{summary}"
    );
    assert!(headline(&report).contains("queues read on 4 of 4 ranks"));
}

#[test]
fn a_message_in_flight_is_no_global_deadlock() {
    // 0 waits for 1's message, and it is there, unexpected: the library
    // will match it, so the job is moving.
    let readings = vec![
        SyntheticRank::new(0, 2)
            .receive(WORLD, 1, Some(5))
            .unexpected(WORLD, 1, 5, 4, false)
            .stack(&in_call("MPI_Recv"))
            .reading(),
        blocked_in(1, 2, "MPI_Probe"),
    ];
    let report = analyze(&readings);
    assert!(!kinds(&report)
        .iter()
        .any(|(k, _)| *k == FindingKind::GlobalDeadlock));
}

#[test]
fn a_receive_from_itself_is_a_cycle_of_one() {
    let readings = vec![
        receiving(0, 4, 0, Some(61)),
        receiving(1, 4, 0, Some(61)),
        blocked_in(2, 4, "MPI_Barrier"),
        blocked_in(3, 4, "MPI_Barrier"),
    ];
    let report = analyze(&readings);
    assert_eq!(report.cycles, vec![vec![0]]);
    assert_eq!(
        kinds(&report),
        vec![
            (FindingKind::DeadlockCycle, vec![0]),
            (FindingKind::WaitsOnDeadlock, vec![1, 2, 3]),
            (FindingKind::CollectiveMismatch, vec![0, 1]),
        ]
    );
    assert!(headline(&report).starts_with("DEADLOCK: 1 cycle(s)"));
}

#[test]
fn a_rank_that_exited_is_waited_on() {
    let readings = vec![
        SyntheticRank::new(0, 4).exited().reading(),
        receiving(1, 4, 0, Some(41)),
        blocked_in(2, 4, "MPI_Finalize"),
        blocked_in(3, 4, "MPI_Finalize"),
    ];
    let report = analyze(&readings);
    assert_eq!(report.ranks[0].state, RankState::Exited);
    // 2 and 3 in MPI_Finalize wait for 1 alone: 0 has passed it.
    assert_eq!(
        edges(&report),
        vec![
            (1, 0, OperationKind::Receive),
            (2, 1, OperationKind::Collective),
            (3, 1, OperationKind::Collective),
        ]
    );
    let found = kinds(&report);
    assert_eq!(found[0], (FindingKind::GlobalDeadlock, vec![0, 1, 2, 3]));
    assert_eq!(found[1], (FindingKind::WaitsOnExitedRank, vec![1, 2, 3, 0]));
    assert!(headline(&report).starts_with("DEADLOCK: every rank is blocked in MPI"));
}

#[test]
fn waitany_needs_one_request_and_waitall_every_one() {
    // Each rank waits for its left (tag 21) and right (tag 22) neighbour;
    // 0 and 1 in MPI_Waitany, 2 and 3 in MPI_Waitall. Nobody sends.
    let readings: Vec<_> = (0..4)
        .map(|r| {
            SyntheticRank::new(r, 4)
                .receive(WORLD, (r + 3) % 4, Some(21))
                .receive(WORLD, (r + 1) % 4, Some(22))
                .stack(&in_call(if r < 2 { "MPI_Waitany" } else { "MPI_Waitall" }))
                .reading()
        })
        .collect();
    let report = analyze(&readings);
    for e in &report.edges {
        assert_eq!(e.any_of, e.from < 2, "{e:?}");
        assert!(!e.any_source);
    }
    assert!(!report.cycles.is_empty());
    let on_cycles: std::collections::BTreeSet<i64> =
        report.cycles.iter().flatten().copied().collect();
    assert_eq!(on_cycles.into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    // A waitany rank is freed by one running peer.
    let mut readings = readings;
    readings[3] = SyntheticRank::new(3, 4)
        .stack(&["_start", "main", "busy.c:9@compute"])
        .reading();
    let report = analyze(&readings);
    assert!(report.cycles.is_empty(), "{:?}", report.cycles);
}

#[test]
fn every_rank_in_one_collective_is_no_deadlock_claimed() {
    let readings: Vec<_> = (0..4).map(|r| blocked_in(r, 4, "MPI_Allreduce")).collect();
    let report = analyze(&readings);
    assert!(report.edges.is_empty());
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let h = headline(&report);
    assert!(
        h.starts_with("HUNG OR SLOW: rank(s) 0-3 are blocked in MPI"),
        "{h}"
    );
}

#[test]
fn a_rank_that_sleeps_first_is_advised_to_be_looked_at_again() {
    let readings = vec![
        SyntheticRank::new(0, 2)
            .stack(&[
                "_start",
                "main",
                "hang.c:7@main",
                "sleep",
                "clock_nanosleep",
            ])
            .reading(),
        receiving(1, 2, 0, Some(1)),
    ];
    let report = analyze(&readings);
    assert!(headline(&report).starts_with("HUNG OR SLOW"));
    let last = report.verdict.last().unwrap();
    assert!(last.contains("run mpidd job again in a while"), "{last}");
    assert!(report
        .verdict
        .iter()
        .any(|l| l.starts_with("Where the ranks are: rank 0: outside MPI")));
}

#[test]
fn the_world_rank_source_is_reported() {
    let report = analyze(&[blocked_in(0, 1, "MPI_Recv")]);
    assert_eq!(
        report.ranks[0].basis.world_rank.as_deref(),
        Some("synthetic")
    );
    assert_eq!(
        report.ranks[0].basis.queues,
        mpidd_job::model::Evidence::Read {
            by: "synthetic".into(),
            provenance: None,
        }
    );
}
