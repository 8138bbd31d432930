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
//!   [`QueueDecoder::read_queues`] per iteration, the share of the bytes.
//!
//! The rank comes from `$MPIDD_BENCH_STOP_PID`: rank 0 of
//! `tests/mpich/queues.c` or `tests/openmpi/queues.c` in `scale N` mode,
//! stopped, with `$MPIDD_BENCH_STOP_RECEIVES` (N) posted receives, which
//! `scripts/bench-debugger-stop.sh` starts. Nothing here stops, continues
//! or writes to it.

use criterion::{criterion_main, Criterion};
use mpidd_read::{Limits, LiveTarget};
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
    let decoder: Box<dyn QueueDecoder> = mpiq_core::detect(&target, &limits)
        .expect("a decoder")
        .into_decoder();
    let alone = decoder.read_queues(&target, &limits).expect("queues");
    assert_eq!(receives(&alone), expected);
    eprintln!("P8 on {}: {}", decoder.name(), later.provenance);

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
        b.iter(|| decoder.read_queues(&target, &limits).expect("queues"))
    });
    group.finish();
}

// The macro makes an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::stop);
}
criterion_main!(group::benches);
