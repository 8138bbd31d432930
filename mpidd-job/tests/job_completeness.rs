//! A job's ranks say how many ranks it has and, under PMIx, which job
//! they are of: given only some of its ranks, or the ranks of two jobs,
//! the verdict says so and never gives an all-clear.

mod common;

use mpidd_job::synthetic::SyntheticRank;
use mpidd_job::{analyze, FindingKind, RankReading};

use common::{in_call, WORLD};

/// Rank `rank` of a 4-rank job `ns` in `MPI_Recv` from the next rank,
/// which never sends (tests/openmpi5/recv_ring.c).
fn recv_ring(rank: i64, ns: &str) -> RankReading {
    SyntheticRank::new(rank, 4)
        .job(ns, 4)
        .receive(WORLD, (rank + 1) % 4, Some(0))
        .stack(&in_call("MPI_Recv"))
        .reading()
}

/// Rank `rank` of job `ns` of `size` ranks, running its own code with
/// nothing pending: a job that looks fine.
fn computing(rank: i64, ns: &str, size: i64) -> RankReading {
    SyntheticRank::new(rank, size)
        .job(ns, size)
        .stack(&["_start", "main", "compute"])
        .reading()
}

fn kinds(report: &mpidd_job::JobReport) -> Vec<FindingKind> {
    report.findings.iter().map(|f| f.kind).collect()
}

#[test]
fn ranks_left_out_are_named_and_no_all_clear_rests_on_the_others() {
    // The whole ring: a cycle, nothing missing.
    let all: Vec<RankReading> = (0..4).map(|r| recv_ring(r, "job@1")).collect();
    let report = analyze(&all);
    assert!(!kinds(&report).contains(&FindingKind::MissingRanks));
    assert_eq!(report.basis.job_size, Some(4));
    assert_eq!(report.basis.missing_ranks, 0);
    assert_eq!(report.basis.namespaces, ["job@1"]);
    assert_eq!(report.ranks[2].pmix_namespace.as_deref(), Some("job@1"));
    assert_eq!(report.ranks[2].pmix_rank, Some(2));
    assert_eq!(report.ranks[2].job_size, Some(4));
    assert!(
        report.verdict[0].starts_with("DEADLOCK"),
        "{:?}",
        report.verdict
    );

    // Ranks 0-2 alone: their chain ends at rank 3, which was not read.
    let report = analyze(&all[..3]);
    let missing = report
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::MissingRanks)
        .expect("a missing_ranks finding");
    assert_eq!(missing.ranks, [3]);
    assert!(
        missing.summary.contains("rank(s) 3 were not read"),
        "{}",
        missing.summary
    );
    assert_eq!(report.basis.missing_ranks, 1);
    let headline = &report.verdict[0];
    assert!(
        headline.starts_with("INCOMPLETE: ranks wait on rank(s) 3, which were not read"),
        "{headline}"
    );
    assert!(
        headline.contains("1 of the job's 4 ranks not read"),
        "{headline}"
    );
    let chain = report
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::WaitsOnRankInMpi)
        .unwrap();
    assert!(
        chain.summary.contains("rank 3, which was not read"),
        "{}",
        chain.summary
    );

    // A job that looks fine, with ranks 1 and 4-6 of 8 not given: no
    // all-clear.
    let some: Vec<RankReading> = [0, 2, 3, 7].iter().map(|&r| computing(r, "j", 8)).collect();
    let report = analyze(&some);
    let headline = &report.verdict[0];
    assert!(
        headline.starts_with(
            "INCOMPLETE: no rank read waits on another, but rank(s) 1,4-6 of the job were not read"
        ),
        "{headline}"
    );
    assert!(report
        .verdict
        .iter()
        .all(|l| !l.starts_with("No rank waits")));
    // The same ranks all given: the all-clear may be given.
    let every: Vec<RankReading> = (0..8).map(|r| computing(r, "j", 8)).collect();
    assert!(
        analyze(&every).verdict[0].starts_with("No rank waits"),
        "{:?}",
        analyze(&every).verdict
    );
}

#[test]
fn every_rank_blocked_is_no_deadlock_while_ranks_are_missing() {
    // Ranks 0 and 1 of 3 in MPI_Recv from rank 2: rank 2 may send.
    let two: Vec<RankReading> = (0..2)
        .map(|r| {
            SyntheticRank::new(r, 3)
                .job("j", 3)
                .stack(&in_call("MPI_Barrier"))
                .reading()
        })
        .collect();
    let report = analyze(&two);
    assert!(
        !kinds(&report).contains(&FindingKind::GlobalDeadlock),
        "{:?}",
        report.verdict
    );
    assert!(kinds(&report).contains(&FindingKind::MissingRanks));
    assert!(
        !report.verdict[0].starts_with("DEADLOCK"),
        "{:?}",
        report.verdict
    );
}

#[test]
fn ranks_of_two_jobs_are_told_apart() {
    let mut mixed: Vec<RankReading> = (0..2).map(|r| computing(r, "prterun-a@1", 2)).collect();
    mixed.extend((0..2).map(|r| computing(r, "prterun-b@1", 2)));
    let report = analyze(&mixed);
    let f = report
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::MixedJobs)
        .expect("a mixed_jobs finding");
    assert!(
        f.summary.contains(
            "2 jobs, by their PMIx namespaces: namespace prterun-a@1 (rank(s) 0-1); namespace \
             prterun-b@1 (rank(s) 0-1)"
        ),
        "{}",
        f.summary
    );
    assert!(
        report.verdict[0].starts_with("MIXED JOBS"),
        "{:?}",
        report.verdict
    );
    assert_eq!(report.basis.namespaces, ["prterun-a@1", "prterun-b@1"]);
    // Without PMIx (Hydra), different sizes tell two jobs apart.
    let mixed = vec![computing(0, "x", 4), computing(1, "x", 2)];
    let mut mixed: Vec<RankReading> = mixed;
    for r in &mut mixed {
        r.pmix_namespace = None;
    }
    let report = analyze(&mixed);
    assert!(
        kinds(&report).contains(&FindingKind::MixedJobs),
        "{:?}",
        report.verdict
    );
    assert!(
        report.verdict[0].starts_with("MIXED JOBS"),
        "{:?}",
        report.verdict
    );
}

#[test]
fn a_corrupt_size_costs_no_more_than_the_ranks_read() {
    // One rank claims the largest job an int can number.
    let big = i64::from(i32::MAX);
    let rank = SyntheticRank::new(0, 1)
        .job("j", big)
        .stack(&["_start", "main", "compute"])
        .reading();
    let report = analyze(&[rank]);
    let f = report
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::MissingRanks)
        .unwrap();
    assert_eq!(f.ranks.len(), 1024);
    assert!(
        f.summary
            .contains(&format!("rank(s) 1-{} were not read", big - 1)),
        "{}",
        f.summary
    );
    assert_eq!(report.basis.missing_ranks, (big - 1) as u64);
    // Even one that no reader gives (a reading from elsewhere).
    let mut r = computing(5, "j", 4);
    r.job_size = Some(i64::MAX);
    let report = analyze(&[r]);
    assert!(kinds(&report).contains(&FindingKind::MissingRanks));
}

#[test]
fn readings_without_identity_read_as_before() {
    // No rank says its job's size: nothing is missing that anyone knows.
    let report = analyze(&[SyntheticRank::new(0, 4)
        .stack(&["_start", "main", "compute"])
        .reading()]);
    assert_eq!(report.basis.job_size, None);
    let json = serde_json::to_value(&report).unwrap();
    for absent in ["job_size", "missing_ranks", "namespaces"] {
        assert!(
            json["basis"].get(absent).is_none(),
            "{absent}: {}",
            json["basis"]
        );
    }
    for absent in ["pmix_namespace", "pmix_rank", "job_size"] {
        assert!(json["ranks"][0].get(absent).is_none(), "{absent}");
    }
}
