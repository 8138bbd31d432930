//! `detect` and `read_queues` over backends a debugger writes itself
//! (`mpidd_read::synthetic::OutsideMemory`): reads that are all or nothing
//! and reads capped at a few bytes give the queues the plain backend
//! gives; reads that fail, and garbage, give a typed `DecodeError`, never
//! a panic or a hang. The process is a small MPICH CH3 one laid out by
//! hand, with its version strings at the very end of their mappings.

use mpidd_read::synthetic::{OutsideMemory, OutsideReads};
use mpidd_read::{
    Limits, ReadError, SymbolTable, SyntheticMemory, TargetAbi, TargetAddr, TargetParts,
};
use mpiq_core::model::ProcessQueues;
use mpiq_core::DecodeError;
use proptest::prelude::*;

mod common;

use common::{layout, process, COMM, REQS, SENDQ, VERSION};

/// `detect(...)?.read_queues()` over `memory`.
fn queues(
    memory: &dyn mpidd_read::TargetMemory,
    symbols: &SymbolTable,
    limits: &Limits,
) -> Result<ProcessQueues, DecodeError> {
    let types = layout();
    let target = TargetParts {
        memory,
        symbols,
        layouts: &types,
    };
    let reader = mpiq_core::detect(&target, limits)?;
    assert!(reader.name().contains("4.0.2"), "{}", reader.name());
    reader.read_queues()
}

const ABIS: [TargetAbi; 4] = [
    TargetAbi::X86_64,
    TargetAbi::I686,
    TargetAbi::S390X,
    TargetAbi::POWERPC,
];

#[test]
fn all_or_nothing_and_capped_reads_give_the_same_queues() {
    for abi in ABIS {
        let (mem, symbols) = process(abi);
        let plain = queues(&mem, &symbols, &Limits::default()).unwrap();
        // What the builder laid out, so the comparison below is of a
        // reading that is right, not of two wrong ones.
        assert_eq!(plain.communicators.len(), 1);
        let world = &plain.communicators[0];
        assert_eq!(world.name, "world");
        assert_eq!(world.pending_receives.operations().len(), 2, "{abi}");
        assert_eq!(world.unexpected_messages.operations().len(), 1, "{abi}");
        assert_eq!(world.pending_sends.operations().len(), 1, "{abi}");
        assert_eq!(world.group.as_deref(), Some(&[5, 9][..]));
        for reads in [
            OutsideReads::AllOrNothing,
            OutsideReads::Capped(1),
            OutsideReads::Capped(5),
            OutsideReads::Capped(64),
        ] {
            let outside = OutsideMemory::new(&mem, reads.clone());
            let got = queues(&outside, &symbols, &Limits::default()).unwrap();
            assert_eq!(got, plain, "{abi} {reads:?}");
        }
    }
}

#[test]
fn failing_reads_are_typed_errors_naming_the_address() {
    let (mem, symbols) = process(TargetAbi::X86_64);
    // The second posted request, the send queue's entry, the communicator.
    for (start, name) in [
        (REQS + 128 + 8, "request"),
        (SENDQ + 8, "send"),
        (COMM + 130, "comm"),
    ] {
        let outside = OutsideMemory::new(
            &mem,
            OutsideReads::FailIn {
                start: TargetAddr(start),
                end: TargetAddr(start + 1),
            },
        );
        let err = queues(&outside, &symbols, &Limits::default()).unwrap_err();
        let DecodeError::Read(ReadError::Backend { addr, cause, .. }) = &err else {
            panic!("{name}: {err:?}");
        };
        assert!(addr.0 <= start && start - addr.0 < 4096, "{name}: {err}");
        assert!(cause.to_string().contains("PEEKDATA"), "{name}: {err}");
        assert!(err.to_string().contains(&addr.to_string()), "{name}: {err}");
    }
    // Memory that fails everywhere but the version strings: the decoder
    // is found, and its first read fails.
    let outside = OutsideMemory::new(
        &mem,
        OutsideReads::FailIn {
            start: TargetAddr(0),
            end: TargetAddr(VERSION),
        },
    );
    let err = queues(&outside, &symbols, &Limits::default()).unwrap_err();
    assert!(matches!(err, DecodeError::Read(_)), "{err:?}");
}

fn abis() -> impl Strategy<Value = TargetAbi> {
    prop_oneof![
        Just(TargetAbi::X86_64),
        Just(TargetAbi::I686),
        Just(TargetAbi::S390X),
        Just(TargetAbi::POWERPC)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Garbage everywhere but the version strings: a reading or a typed
    /// error, in a bounded number of reads.
    #[test]
    fn garbage_memory_gives_a_reading_or_a_typed_error(abi in abis(), seed in any::<u64>()) {
        let (mem, symbols) = process(abi);
        let garbage = OutsideMemory::new(&mem, OutsideReads::Garbage { seed });
        // The version strings stay readable, so the decoder is found and
        // then reads garbage.
        let mut mixed = SyntheticMemory::new(abi);
        for (at, bytes) in mem.segments() {
            let mut copy = vec![0u8; bytes.len()];
            if at.0 < VERSION {
                mpidd_read::TargetMemory::read_exact(&garbage, at, &mut copy, "garbage").unwrap();
            } else {
                copy.copy_from_slice(bytes);
            }
            mixed.map(at, copy);
        }
        let limits = Limits {
            max_list_len: 1 << 12,
            max_total_bytes: 1 << 22,
            ..Limits::default()
        };
        for reads in [OutsideReads::Partial, OutsideReads::AllOrNothing, OutsideReads::Capped(7)] {
            let outside = OutsideMemory::new(&mixed, reads);
            match queues(&outside, &symbols, &limits) {
                Ok(q) => prop_assert!(q.communicators.len() <= 1 << 12),
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
            prop_assert!(outside.calls() < 1_000_000, "{} calls", outside.calls());
        }
        // Garbage for the version strings too: refused or read, typed.
        let _ = queues(&garbage, &symbols, &limits).map_err(|e| e.to_string());
    }
}
