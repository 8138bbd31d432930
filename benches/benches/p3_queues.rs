//! P3: one rank's message queues decoded from the same core, by the
//! native MPICH decoder and by MPICH's `libtvmpich.so` through the mqs
//! host. The core and its types are opened once; each iteration is one
//! full queue read, as a debugger refreshing its queue window does.
//!
//! The core comes from `$MPIDD_BENCH_QUEUES_CORE`: a `gcore` of rank 0 of
//! `tests/mpich/queues.c scale 100000`, which `scripts/benchmarks.sh`
//! makes.

use criterion::{criterion_main, Criterion};
use mpidd_read::{CoreTarget, Limits, TargetMemory};
use mpiq_core::{detect, MqsLibrary, MqsTarget, TargetTypeSizes};

fn queues(c: &mut Criterion) {
    let core = std::env::var_os("MPIDD_BENCH_QUEUES_CORE").expect(
        "MPIDD_BENCH_QUEUES_CORE names a core of a rank with posted receives; \
         scripts/benchmarks.sh makes one",
    );
    let target = CoreTarget::open(std::path::Path::new(&core), None, None).expect("open core");
    // The core's own DWARF, which the native decoder reads through the
    // target and the vendor library through its callbacks.
    let types = target.types();
    let limits = Limits::default();
    let count = |q: &mpiq_core::model::ProcessQueues| -> usize {
        q.communicators
            .iter()
            .map(|c| c.pending_receives.operations().len())
            .sum()
    };
    let library = MqsLibrary::load(&mpidd_benches::reference_mpich().join("lib/libtvmpich.so"))
        .expect("libtvmpich.so");
    let mqs_target = MqsTarget {
        image_name: target.executable().display().to_string(),
        memory: &target,
        symbols: &target,
        types,
        global_rank: 0,
        type_sizes: TargetTypeSizes::from_oracle(types, target.abi()),
    };
    // Both readers must see the same receives, or the comparison is void.
    let native_count = count(&detect(&target, &limits).unwrap().read_queues().unwrap());
    let dll_count = count(
        &library
            .read_queues(&mqs_target, &Limits::default())
            .unwrap(),
    );
    assert_eq!(native_count, dll_count);

    let mut group = c.benchmark_group("P3");
    group.sample_size(10);
    group.bench_function(
        format!("native decoder, {native_count} posted receives"),
        |b| {
            b.iter(|| {
                let decoder = detect(&target, &limits).expect("MPICH CH3");
                decoder.read_queues().expect("queues")
            })
        },
    );
    group.bench_function(
        format!("libtvmpich.so via the mqs host, {dll_count} posted receives"),
        |b| {
            b.iter(|| {
                library
                    .read_queues(&mqs_target, &Limits::default())
                    .expect("queues")
            })
        },
    );
    group.finish();
}

// The macro makes an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::queues);
}
criterion_main!(group::benches);
