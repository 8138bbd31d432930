//! P2: cold type lookup in the reference MPICH's `libmpi.so`: a new
//! oracle each time (nothing cached), finding `MPIR_Comm` and
//! `MPIR_Request` and a member offset of each.

use criterion::{criterion_main, Criterion};
use mpidd_read::TypeOracle;

fn type_lookup(c: &mut Criterion) {
    let lib = mpidd_benches::reference_mpich().join("lib/libmpi.so");
    let mut group = c.benchmark_group("P2");
    group.bench_function("cold MPIR_Comm + MPIR_Request offsets", |b| {
        b.iter(|| {
            let mut oracle = TypeOracle::new();
            oracle.add_object("libmpi.so", &lib, None);
            let comm = oracle
                .offset_of("MPIR_Comm", "comm_next")
                .expect("MPIR_Comm");
            let req = oracle
                .offset_of("MPIR_Request", "dev.match.parts.tag")
                .expect("MPIR_Request");
            (comm.offset, req.offset)
        })
    });
    group.finish();
}

// The macro makes an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::type_lookup);
}
criterion_main!(group::benches);
