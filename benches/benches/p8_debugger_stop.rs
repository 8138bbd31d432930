//! P8: what a debugger that embeds the crates pays at each stop of an MPI
//! rank to show its message queues. Three figures on the same stopped
//! rank:
//!
//! - the first stop: a new [`Session`], [`LiveTarget::open`] and
//!   [`Session::read_queues`], as a debugger's first stop of a process
//!   (cold within the process; the OS page cache is warm);
//! - a later stop: one `Session` and one `LiveTarget` kept across stops,
//!   [`LiveTarget::refresh`] then `read_queues`: the per-stop cost;
//! - the read alone: the decoder built once ([`mpiq_core::detect`]) and
//!   [`QueueDecoder::read_queues`] per iteration, the share of the bytes;
//!   over the layouts the target's own answered, kept in a table as a
//!   session keeps them, and over the target's own layouts
//!   ([`LiveTarget::loaded_layouts`]: its DWARF, then the shipped
//!   profiles, asked at every question), as a caller of `detect` alone
//!   has them.
//!
//! The rank comes from `$MPIDD_BENCH_STOP_PID`: rank 0 of
//! `tests/mpich/queues.c` or `tests/openmpi/queues.c` in `scale N` mode,
//! stopped, with `$MPIDD_BENCH_STOP_RECEIVES` (N) posted receives, which
//! `scripts/bench-debugger-stop.sh` starts. Nothing here stops, continues
//! or writes to it.

use criterion::{criterion_main, Criterion};
use mpidd_read::{LayoutTable, Limits, LiveTarget, Target, TargetParts};
use mpiq_core::model::ProcessQueues;
use mpiq_core::{QueueDecoder, Session};

/// The receives a reading places under their communicators.
fn receives(q: &ProcessQueues) -> usize {
    q.communicators
        .iter()
        .map(|c| c.pending_receives.operations().len())
        .sum()
}

fn stop(c: &mut Criterion) {
    let pid: i32 = std::env::var("MPIDD_BENCH_STOP_PID")
        .expect(
            "MPIDD_BENCH_STOP_PID names a stopped MPI rank with posted receives; \
             scripts/bench-debugger-stop.sh starts one",
        )
        .parse()
        .expect("MPIDD_BENCH_STOP_PID is a pid");
    let expected: usize = std::env::var("MPIDD_BENCH_STOP_RECEIVES")
        .expect(
            "MPIDD_BENCH_STOP_RECEIVES is the number of receives the rank posted; \
             scripts/bench-debugger-stop.sh sets it",
        )
        .parse()
        .expect("MPIDD_BENCH_STOP_RECEIVES is a number");
    let limits = Limits::default();

    // Each way of reading must see every receive, or its time is void.
    let session = Session::new();
    let mut target = LiveTarget::open(pid).expect("open the rank");
    let first = session
        .read_queues(&target, target.symbols())
        .expect("the first stop's reading");
    assert_eq!(
        receives(&first.queues),
        expected,
        "first stop: {}",
        first.provenance
    );
    target.refresh().expect("refresh");
    let later = session
        .read_queues(&target, target.symbols())
        .expect("a later stop's reading");
    assert_eq!(receives(&later.queues), expected);
    assert!(later.provenance.reused, "{}", later.provenance);
    // The read-only figures read through a target of their own, opened
    // on the same process, while the later stops refresh theirs.
    let reader = LiveTarget::open(pid).expect("open the rank");
    let decoder: Box<dyn QueueDecoder> = mpiq_core::detect(&reader, &limits)
        .expect("a decoder")
        .into_decoder();
    let alone = decoder.read_queues(&reader, &limits).expect("queues");
    assert_eq!(receives(&alone), expected);
    // What the decoder asked of the target's layouts, answered from a
    // table, as a session keeps them for the build.
    let (table, _) = LayoutTable::record(reader.layouts(), &|l| {
        let parts = TargetParts {
            memory: &reader,
            symbols: &reader,
            layouts: l,
        };
        let _ = mpiq_core::detect(&parts, &limits).and_then(|r| r.read_queues());
    });
    let tabled = TargetParts {
        memory: &reader,
        symbols: &reader,
        layouts: &table,
    };
    let table_decoder = mpiq_core::detect(&tabled, &limits)
        .expect("a decoder over the table")
        .into_decoder();
    let alone = table_decoder.read_queues(&tabled, &limits).expect("queues");
    assert_eq!(receives(&alone), expected);
    eprintln!("P8 on {}", later.provenance);

    let mut group = c.benchmark_group("P8");
    group.sample_size(10);
    group.bench_function(format!("first stop, {expected} posted receives"), |b| {
        b.iter(|| {
            let session = Session::new();
            let target = LiveTarget::open(pid).expect("open the rank");
            session
                .read_queues(&target, target.symbols())
                .expect("queues")
        })
    });
    group.sample_size(50);
    group.bench_function(format!("later stop, {expected} posted receives"), |b| {
        b.iter(|| {
            target.refresh().expect("refresh");
            session
                .read_queues(&target, target.symbols())
                .expect("queues")
        })
    });
    group.bench_function(format!("read only, {expected} posted receives"), |b| {
        b.iter(|| table_decoder.read_queues(&tabled, &limits).expect("queues"))
    });
    group.bench_function(
        format!("target layouts read only, {expected} posted receives"),
        |b| b.iter(|| decoder.read_queues(&reader, &limits).expect("queues")),
    );
    group.finish();
}

// The macro makes an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::stop);
}
criterion_main!(group::benches);
