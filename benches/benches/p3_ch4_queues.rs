//! P3 on CH4: one rank's message queues with 100,000 posted receives,
//! decoded from a core of the reference MPICH built with `ch4:ucx`. The
//! core and its types are opened once; each iteration is one full queue
//! read, as for CH3 (`p3_queues`).
//!
//! Under `ch4:ucx` every receive is handed to UCX: the decoder finds each
//! one among the `MPIR_Request`s of the request pools, and without UCX's
//! types reports it in the notes rather than under its communicator
//! (docs/ch4.md). The benchmark checks that all of them are there.
//!
//! The core comes from `$MPIDD_BENCH_CH4_QUEUES_CORE`: a `gcore` of rank 0
//! of `tests/mpich/queues.c scale 100000` on the CH4 build, which
//! `scripts/bench-ch4-queues.sh` makes, or on Debian's own MPICH
//! (`scripts/bench-stock-mpich-queues.sh`), read with its shipped profile.

use criterion::{criterion_main, Criterion};
use mpidd_read::{shipped_profiles, CoreTarget, Limits, TargetParts};
use mpiq_core::{decoder_layouts, detect, identify};

/// The receives a reading holds: under their communicators, or in the
/// notes when only UCX knows their communicator.
fn receives(q: &mpiq_core::model::ProcessQueues) -> usize {
    let placed: usize = q
        .communicators
        .iter()
        .map(|c| c.pending_receives.operations().len())
        .sum();
    let in_notes = q
        .diagnostics
        .iter()
        .filter(|d| d.starts_with("a pending receive posted to UCX"))
        .count();
    placed + in_notes
}

fn queues(c: &mut Criterion) {
    let core = std::env::var_os("MPIDD_BENCH_CH4_QUEUES_CORE").expect(
        "MPIDD_BENCH_CH4_QUEUES_CORE names a core of a CH4 rank with posted receives; \
         scripts/bench-ch4-queues.sh makes one",
    );
    let core = CoreTarget::open(std::path::Path::new(&core), None, None).expect("open core");
    let limits = Limits::default();
    // The library's own DWARF (the reference build), else the profile made
    // for its build (Debian's stripped MPICH), as `mpidd queues` chooses.
    let found = identify(&core, &core, &limits).expect("an MPI library");
    let profiles = shipped_profiles();
    let (layouts, _) =
        decoder_layouts(&found, core.types(), core.symbols(), &profiles).expect("layouts");
    let target = TargetParts {
        memory: &core,
        symbols: &core,
        layouts: &layouts,
    };
    let first = detect(&target, &limits)
        .expect("MPICH CH4")
        .read_queues()
        .expect("queues");
    assert!(first.source.contains("ch4"), "{}", first.source);
    let count = receives(&first);
    assert!(count >= 100_000, "only {count} receives in the core");

    let mut group = c.benchmark_group("P3-CH4");
    group.sample_size(10);
    group.bench_function(format!("native decoder, {count} posted receives"), |b| {
        b.iter(|| {
            let decoder = detect(&target, &limits).expect("MPICH CH4");
            decoder.read_queues().expect("queues")
        })
    });
    group.finish();
}

// The macro makes an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::queues);
}
criterion_main!(group::benches);
