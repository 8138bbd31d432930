//! The native MPICH CH4 queue decoder over an arbitrary synthetic process
//! (see `src/process.rs`) and an arbitrary layout of MPICH's types (the
//! synthetic MPICH of the `handles` target, whose CH4 members and UCX's
//! request are in it too, bent by the input): the decoder built directly
//! and through detection, every queue read twice (the second time from the
//! communicator cache), and the debugger lists read as their own source.
//! The request pools it walks for receives handed to UCX are the handle
//! decoders' pools.
//!
//! ```text
//! input := process layout
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::checks::{assert_consistent, read_detected, read_twice};
use mpidd_fuzz::{handles, limits, Cursor, Process, CH4_SYMBOLS};
use mpidd_read::TargetParts;
use mpiq_core::model::ProcessQueues;
use mpiq_core::{MpichCh4, QueueDecoder};

fn check(q: &ProcessQueues, max: u64) {
    for c in &q.communicators {
        for ops in [
            &c.pending_sends,
            &c.pending_receives,
            &c.unexpected_messages,
        ] {
            // Each VCI's two lists and the pools add at most their limits.
            assert!(ops.operations().len() as u64 <= 8 * max);
        }
    }
    assert_consistent(q);
}

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let process = Process::parse(&mut c, CH4_SYMBOLS);
    let word = mpidd_read::TargetMemory::abi(&process).address_bytes() as u64;
    let types = handles::SPEC.read(&mut c, word);
    let limits = limits();
    let target = TargetParts {
        memory: &process,
        symbols: &process,
        layouts: &types,
    };
    let check = |q: &ProcessQueues| check(q, limits.max_table_entries.max(limits.max_list_len));
    if let Ok(decoder) = MpichCh4::new(&target, "4.0.2", "ch4:ucx") {
        let differs = "the cached communicators changed the reading";
        read_twice(&decoder, &target, &limits, check, differs);
        if let Ok(q) = decoder.read_debugger_lists(&target, &limits) {
            check(&q);
        }
    }
    read_detected(&target, &limits, check);
});
