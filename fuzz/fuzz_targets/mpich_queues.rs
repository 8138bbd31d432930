//! The native MPICH CH3 queue decoder over an arbitrary synthetic process
//! (see `src/process.rs`) and an arbitrary layout of MPICH's types (the
//! synthetic MPICH of mpiq-core's tests, with offsets and sizes changed or
//! removed by the input): the decoder built directly and through
//! detection, every queue read twice (the second time from the
//! communicator cache), and the list of what the image lacks.
//!
//! ```text
//! input := process layout
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::checks::{assert_consistent, read_detected, read_twice};
use mpidd_fuzz::{limits, mpich, names, Cursor, Process};
use mpidd_read::TargetParts;
use mpiq_core::model::ProcessQueues;
use mpiq_core::MpichCh3;

fn check(q: &ProcessQueues, max: u64) {
    assert!(q.communicators.len() as u64 <= max);
    for c in &q.communicators {
        for ops in [
            &c.pending_sends,
            &c.pending_receives,
            &c.unexpected_messages,
        ] {
            assert!(ops.operations().len() as u64 <= max);
        }
    }
    assert_consistent(q);
}

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let process = Process::parse(&mut c, names::MPICH);
    let types = mpich::parse(&mut c);
    let limits = limits();
    let target = TargetParts {
        memory: &process,
        symbols: &process,
        layouts: &types,
    };
    let _ = MpichCh3::missing(&types, &process);
    let check = |q: &ProcessQueues| check(q, limits.max_list_len);
    if let Ok(decoder) = MpichCh3::new(&target, "4.0.2", "ch3:nemesis") {
        let differs = "the cached communicators changed the reading";
        read_twice(&decoder, &target, &limits, check, differs);
    }
    read_detected(&target, &limits, check);
});
