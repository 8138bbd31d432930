//! P7: the job analysis alone (`mpidd_job::analyze`), on synthetic
//! readings of N ranks, for the shapes whose cost the verdict's stack-based
//! waits could make grow faster than the job:
//!
//! - `ring`: a ring of receives with queues read (the cycle search);
//! - `ring_stacks_alone`: the same ring with no queues, every rank blocked
//!   in `MPI_Recv` (the global-deadlock check);
//! - `barrier_missing_64`: every rank but 64 in `MPI_Barrier`, the 64 in
//!   `MPI_Recv` from rank 0, which is itself in the barrier: the most
//!   collective waits the analysis draws (64 per rank in the barrier).
//!
//!     cargo bench -p mpidd-benches --bench p7_verdict

use criterion::{criterion_main, BenchmarkId, Criterion};
use mpidd_job::synthetic::SyntheticRank;
use mpidd_job::{analyze, RankReading};

const WORLD: &str = "MPI_COMM_WORLD";

fn stack(call: &str) -> Vec<&str> {
    vec!["_start", "main", "app.c:12@main", call, "progress", "poll"]
}

fn ring(n: i64, queues: bool) -> Vec<RankReading> {
    (0..n)
        .map(|r| {
            let rank = SyntheticRank::new(r, n);
            let rank = if queues {
                rank.receive(WORLD, (r + n - 1) % n, Some(0))
            } else {
                rank.queues_unread("no decoder")
            };
            rank.stack(&stack("MPI_Recv")).reading()
        })
        .collect()
}

fn barrier_missing_64(n: i64) -> Vec<RankReading> {
    (0..n)
        .map(|r| {
            if (1..=64).contains(&r) {
                SyntheticRank::new(r, n)
                    .receive(WORLD, 0, Some(3))
                    .stack(&stack("MPI_Recv"))
                    .reading()
            } else {
                SyntheticRank::new(r, n)
                    .stack(&stack("MPI_Barrier"))
                    .reading()
            }
        })
        .collect()
}

fn verdict(c: &mut Criterion) {
    let mut group = c.benchmark_group("p7_verdict");
    group.sample_size(10);
    for n in [1_000i64, 10_000] {
        let shapes: [(&str, Vec<RankReading>); 3] = [
            ("ring", ring(n, true)),
            ("ring_stacks_alone", ring(n, false)),
            ("barrier_missing_64", barrier_missing_64(n)),
        ];
        for (name, readings) in &shapes {
            group.bench_with_input(BenchmarkId::new(*name, n), readings, |b, r| {
                b.iter(|| analyze(r))
            });
        }
    }
    group.finish();
}

// The macro's function has no docs of its own.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::verdict);
}
criterion_main!(group::benches);
