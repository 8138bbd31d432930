//! P6: one Open MPI rank's message queues decoded from the same core, by
//! the native ob1 decoder and by Open MPI's `libompi_dbg_msgq.so` through
//! the mqs host. The core and its types are opened once; each iteration is
//! one full queue read, as a debugger refreshing its queue window does.
//!
//! The core comes from `$MPIDD_BENCH_OMPI_QUEUES_CORE`: a `gcore` of rank 0
//! of `tests/openmpi/queues.c scale 100000` under the reference Open MPI,
//! which `scripts/bench-ompi-queues.sh` makes.

use criterion::{criterion_main, Criterion};
use mpidd_read::TargetParts;
use mpidd_read::{CoreTarget, Limits, TargetMemory, TypeOracle};
use mpiq_core::{read_native_queues, TargetTypeSizes};
use mpiq_core::{MqsLibrary, MqsTarget, OmpiOb1, QueueDecoder};

fn queues(c: &mut Criterion) {
    let core = std::env::var_os("MPIDD_BENCH_OMPI_QUEUES_CORE").expect(
        "MPIDD_BENCH_OMPI_QUEUES_CORE names a core of an Open MPI rank with posted \
         receives; scripts/bench-ompi-queues.sh makes one",
    );
    let target = CoreTarget::open(std::path::Path::new(&core), None, None).expect("open core");
    let types = TypeOracle::from_symbols(target.symbols());
    let limits = Limits::default();
    let native_target = TargetParts {
        memory: &target,
        symbols: &target,
        layouts: &types,
    };
    let count = |q: &mpiq_core::model::ProcessQueues| -> usize {
        q.communicators
            .iter()
            .map(|c| c.pending_receives.operations().len())
            .sum()
    };
    let library =
        MqsLibrary::load(&mpidd_benches::reference_ompi().join("lib/openmpi/libompi_dbg_msgq.so"))
            .expect("libompi_dbg_msgq.so");
    let mqs_target = MqsTarget {
        image_name: target.executable().display().to_string(),
        memory: &target,
        symbols: &target,
        types: &types,
        global_rank: 0,
        type_sizes: TargetTypeSizes::from_oracle(&types, target.abi()),
    };
    // The reading the command makes, from the debug info: the decoder
    // the benchmark times must be the one it picks.
    let (native, _) = read_native_queues(&target, &target, target.symbols(), &types, &[], &limits)
        .expect("the native reading");
    assert!(native.source.contains("ob1"), "{}", native.source);
    // Both readers must see the same receives, or the comparison is void.
    let native_count = count(&native);
    let dll_count = count(
        &library
            .read_queues(&mqs_target, &Limits::default())
            .unwrap(),
    );
    assert_eq!(native_count, dll_count);

    let mut group = c.benchmark_group("P6");
    group.sample_size(10);
    group.bench_function(
        format!("native decoder, {native_count} posted receives"),
        |b| {
            b.iter(|| {
                let decoder = OmpiOb1::new(&native_target, &limits).expect("Open MPI ob1");
                decoder
                    .read_queues(&native_target, &limits)
                    .expect("queues")
            })
        },
    );
    group.bench_function(
        format!("libompi_dbg_msgq.so via the mqs host, {dll_count} posted receives"),
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
