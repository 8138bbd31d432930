//! The native Open MPI ob1 queue decoder over an arbitrary synthetic
//! process (see `src/process.rs`) and an arbitrary layout of ob1's
//! structures (the synthetic Open MPI of `src/ob1.rs`, bent by the input):
//! the decoder built directly and through detection, with every
//! queue read twice; the communicator table, the groups' procs, the
//! wildcard and per-peer receive lists, the unexpected and out-of-order
//! fragments (rings of rings), and the send requests' free list walked
//! chunk by chunk.
//!
//! ```text
//! input := process layout
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::checks::{assert_consistent, read_detected, read_twice};
use mpidd_fuzz::{limits, names, ob1, Cursor, Process};
use mpidd_read::Limits;
use mpidd_read::TargetParts;
use mpiq_core::model::ProcessQueues;
use mpiq_core::{identify, OmpiOb1};

/// A reading holds at most `max_table_entries` communicators (the table's
/// bound), in each at most `max_table_entries` pending sends (the send
/// requests' free list holds no more) and `max_list_len` operations in
/// each receive queue (the decoder's bound on a queue, whatever lists it
/// spreads over).
fn check(q: &ProcessQueues, limits: &Limits) {
    assert!(q.communicators.len() as u64 <= limits.max_table_entries);
    for c in &q.communicators {
        let sends = c.pending_sends.operations().len() as u64;
        assert!(sends <= limits.max_table_entries, "{sends} pending sends");
        for ops in [&c.pending_receives, &c.unexpected_messages] {
            let n = ops.operations().len() as u64;
            assert!(n <= limits.max_list_len, "{n} operations in one queue");
        }
    }
    assert_consistent(q);
}

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let process = Process::parse(&mut c, names::OB1);
    let word = mpidd_read::TargetMemory::abi(&process).address_bytes() as u64;
    let types = ob1::SPEC.read(&mut c, word);
    let limits = limits();
    let target = TargetParts {
        memory: &process,
        symbols: &process,
        layouts: &types,
    };
    let _ = OmpiOb1::missing(&types, &process);
    let _ = OmpiOb1::missing_layouts(&types);
    let check = |q: &ProcessQueues| check(q, &limits);
    if let Ok(decoder) = OmpiOb1::new(&target, &limits) {
        read_twice(
            &decoder,
            &target,
            &limits,
            check,
            "a second reading differs",
        );
    }
    let _ = identify(&process, &process, &limits);
    read_detected(&target, &limits, check);
});
