//! P1: the MPIR process table of a 1,000,000-rank core, opened and read
//! (table, and every entry's host and executable strings).

use criterion::{criterion_main, Criterion};
use mpidd_read::{mpir, CoreTarget, CoreTargetOptions, Limits};

fn proctable(c: &mut Criterion) {
    let files = mpidd_benches::million_rank_core();
    let options = CoreTargetOptions {
        exe: Some(files.exe.clone()),
        ..CoreTargetOptions::default()
    };
    let mut group = c.benchmark_group("P1");
    group.sample_size(10);
    group.bench_function("open core + read 1M-entry MPIR table", |b| {
        b.iter(|| {
            let target = CoreTarget::open_with(&files.core, &options).expect("open");
            let state = mpir::read_state(&target, &Limits::default()).expect("read");
            assert_eq!(state.proctable.len(), mpidd_benches::RANKS);
            state
        })
    });
    group.finish();
}

// The macro makes an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::proctable);
}
criterion_main!(group::benches);
