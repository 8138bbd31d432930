//! Synthetic hung jobs written as ELF cores, executables and libraries,
//! then read back by the real reader from the files alone: the queues by
//! the native CH3 decoder with the job's layout table, the stacks by the
//! unwinder through the objects' `.eh_frame`. The analysis must find what
//! was laid out, and damaged cores must give errors, never a panic.

use std::path::PathBuf;

use mpidd_job::synthetic_cores::{
    demo_job, innermost_first, write_hung_job, FrameSpec, Hostile, HungJobSpec, HungRankSpec,
    SyntheticJobCores,
};
use mpidd_job::{
    analyze, FindingKind, JobReader, JobReport, OperationKind, RankTarget, ReadOptions,
};
use mpidd_types::TargetAbi;

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mpidd-job-cores-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn read(job: &SyntheticJobCores, stacks: bool) -> JobReport {
    let reader = JobReader::new(ReadOptions {
        layouts: Some(job.layouts.clone()),
        stacks,
        ..Default::default()
    });
    let targets: Vec<RankTarget> = job.cores.iter().map(RankTarget::core).collect();
    analyze(&reader.read_all(&targets, &|_, _| {}))
}

fn edges(report: &JobReport) -> Vec<(i64, i64, OperationKind, String)> {
    report
        .edges
        .iter()
        .map(|e| (e.from, e.to, e.kind, e.communicator.clone()))
        .collect()
}

#[test]
fn the_demo_job_reads_back_as_laid_out() {
    let spec = demo_job();
    let d = dir("demo");
    let job = write_hung_job(&d, &spec).unwrap();
    assert_eq!(job.cores.len(), 6);
    let report = read(&job, true);

    for r in &report.ranks {
        assert!(r.errors.is_empty(), "rank {}: {:?}", r.world_rank, r.errors);
    }
    assert_eq!(
        report
            .ranks
            .iter()
            .map(|r| r.world_rank)
            .collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5]
    );
    assert_eq!(report.cycles, vec![vec![0, 1, 2]]);
    let world = "MPI_COMM_WORLD".to_string();
    let halo = "halo".to_string();
    let pipeline = "pipeline".to_string();
    assert_eq!(
        edges(&report),
        vec![
            (0, 1, OperationKind::Receive, world),
            (1, 2, OperationKind::Receive, halo.clone()),
            (2, 0, OperationKind::Receive, halo),
            (3, 4, OperationKind::Receive, pipeline.clone()),
            (4, 5, OperationKind::InferredSend, pipeline),
        ]
    );
    let kinds: Vec<_> = report
        .findings
        .iter()
        .map(|f| (f.kind, f.ranks.clone()))
        .collect();
    assert_eq!(kinds[0], (FindingKind::DeadlockCycle, vec![0, 1, 2]));
    assert!(
        kinds.contains(&(FindingKind::WaitsOnRankOutsideMpi, vec![3, 4, 5])),
        "{kinds:?}"
    );
    assert!(
        kinds
            .iter()
            .any(|(k, r)| *k == FindingKind::UnreceivedMessage && r.contains(&3)),
        "{kinds:?}"
    );

    let calls: Vec<_> = report.ranks.iter().map(|r| r.mpi_call.as_deref()).collect();
    assert_eq!(
        calls,
        [
            Some("MPI_Recv"),
            Some("MPI_Recv"),
            Some("MPI_Recv"),
            Some("MPI_Recv"),
            Some("MPI_Send"),
            None
        ]
    );
    assert_eq!(
        report.ranks[5].location.as_deref(),
        Some("compute at solver.c:42")
    );
    assert_eq!(
        report.ranks[0].location.as_deref(),
        Some("main at demo.c:30")
    );
    for (r, laid_out) in report.ranks.iter().zip(&spec.ranks) {
        assert_eq!(r.threads.len(), 1);
        let t = &r.threads[0];
        assert_eq!(t.error, None, "rank {}", r.world_rank);
        let names: Vec<String> = t
            .frames
            .iter()
            .map(|f| f.function.clone().unwrap_or_default())
            .collect();
        assert_eq!(
            names,
            innermost_first(&laid_out.stack),
            "rank {}",
            r.world_rank
        );
        let objects: Vec<_> = t.frames.iter().map(|f| f.object.as_deref()).collect();
        assert_eq!(objects.last(), Some(&Some("app")));
    }
    // The pending operations, as the decoder gave them in world ranks.
    let r3 = &report.ranks[3];
    assert_eq!(r3.pending.len(), 2);
    assert_eq!((r3.pending[0].peer, r3.pending[0].tag), (4, None));
    assert_eq!(r3.pending[1].protocol.as_deref(), Some("eager"));
    let r5 = &report.ranks[5].pending[0];
    assert_eq!((r5.peer, r5.tag, r5.length), (4, Some(11), 1 << 20));
    assert_eq!(r5.protocol.as_deref(), Some("rendezvous"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn any_source_receives_and_nonblocking_sends_read_back() {
    let spec = HungJobSpec::new(3)
        .comm("pair", &[2, 1])
        .rank(
            HungRankSpec::new(0)
                .receive("MPI_COMM_WORLD", None, None, 8)
                .stack(FrameSpec::in_mpi("MPI_Recv")),
        )
        .rank(
            HungRankSpec::new(1)
                .send("pair", 2, 5, 400)
                .stack(FrameSpec::in_mpi("MPI_Wait")),
        )
        .rank(HungRankSpec::new(2).stack(FrameSpec::computing("compute", "solver.c", 42)));
    let d = dir("any");
    let job = write_hung_job(&d, &spec).unwrap();
    let report = read(&job, true);
    let r0 = &report.ranks[0].pending[0];
    assert_eq!((r0.peer, r0.peer_local, r0.tag), (-1, -1, None));
    let r1 = &report.ranks[1].pending[0];
    assert_eq!(
        (r1.kind, r1.peer, r1.peer_local, r1.tag, r1.length),
        (OperationKind::Send, 2, 0, Some(5), 400)
    );
    assert_eq!(r1.communicator, "pair");
    // An any-source receive waits on every other rank of the world.
    let from0: Vec<_> = report.edges.iter().filter(|e| e.from == 0).collect();
    assert_eq!(from0.len(), 2);
    assert!(from0.iter().all(|e| e.any_source));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn without_stacks_the_queues_still_give_the_cycle() {
    let d = dir("nostacks");
    let job = write_hung_job(&d, &demo_job()).unwrap();
    let report = read(&job, false);
    assert_eq!(report.cycles, vec![vec![0, 1, 2]]);
    assert!(report.ranks.iter().all(|r| r.threads.is_empty()));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_big_endian_job_gives_its_queues() {
    let spec = HungJobSpec {
        abi: TargetAbi::S390X,
        ..demo_job()
    };
    let d = dir("s390x");
    let job = write_hung_job(&d, &spec).unwrap();
    let report = read(&job, true);
    assert_eq!(report.cycles, vec![vec![0, 1, 2]]);
    assert_eq!(report.ranks[3].pending[0].peer, 4);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn damaged_cores_give_errors_and_the_other_ranks_are_analysed() {
    let mut spec = demo_job();
    spec.ranks[1] = spec.ranks[1].clone().hostile(Hostile::LoopingPostedQueue);
    spec.ranks[3] = spec.ranks[3].clone().hostile(Hostile::UnmappedStackPointer);
    let d = dir("hostile");
    let job = write_hung_job(&d, &spec).unwrap();
    // A core that is not one at all, among them.
    let garbage = d.join("core.garbage");
    std::fs::write(&garbage, b"not an ELF file").unwrap();
    let mut targets: Vec<RankTarget> = job.cores.iter().map(RankTarget::core).collect();
    targets.push(RankTarget::core(&garbage));
    let reader = JobReader::new(ReadOptions {
        layouts: Some(job.layouts.clone()),
        ..Default::default()
    });
    let report = analyze(&reader.read_all(&targets, &|_, _| {}));

    let rank = |w: i64| report.ranks.iter().find(|r| r.world_rank == w).unwrap();
    // The looping queue: no queues, an error that says so; its stack still
    // says where it is. Its world rank came from its queues, so it has none.
    let r1 = report
        .ranks
        .iter()
        .find(|r| r.target.ends_with("core.1"))
        .unwrap();
    assert_eq!(r1.world_rank, -1);
    assert!(r1.queue_source.is_none());
    match &r1.basis.queues {
        mpidd_job::model::Evidence::NotRead { why } => assert!(why.contains("queue"), "{why}"),
        read => panic!("rank 1's queues are not read: {read:?}"),
    }
    assert_eq!(r1.mpi_call.as_deref(), Some("MPI_Recv"));
    // The wild stack pointer: the walk stops at the first frame with a
    // reason; the queues are read.
    let t3 = &rank(3).threads[0];
    assert_eq!(t3.frames.len(), 1);
    assert_eq!(t3.frames[0].function.as_deref(), Some("poll"));
    assert!(t3.error.is_some());
    assert_eq!(rank(3).pending.len(), 2);
    // The garbage file: unreadable, with its error.
    let bad = report
        .ranks
        .iter()
        .find(|r| r.target.ends_with("core.garbage"))
        .unwrap();
    assert!(!bad.errors.is_empty());
    assert!(report
        .findings
        .iter()
        .any(|f| f.kind == FindingKind::UnreadableRanks));
    // The others are analysed: the chain to the computing rank remains.
    assert!(report.edges.iter().any(|e| (e.from, e.to) == (4, 5)));
    assert_eq!(rank(5).location.as_deref(), Some("compute at solver.c:42"));
    std::fs::remove_dir_all(&d).unwrap();
}
