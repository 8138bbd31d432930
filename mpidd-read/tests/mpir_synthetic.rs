//! The MPIR reader over synthetic jobs, whose bytes the builder lays out
//! without the decoders' help.

use mpidd_read::mpir::{self, MpirError};
use mpidd_read::{
    Limits, ReadError, ReadRecords, SymbolTable, SyntheticJob, SyntheticMemory, TargetMemory,
    TargetMemoryMut,
};
use mpidd_types::{AddressWidth, ByteOrder, MpirDebugState, TargetAbi, TargetAddr};
use proptest::prelude::*;

fn abis() -> impl Strategy<Value = TargetAbi> {
    (
        prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)],
        prop_oneof![Just(AddressWidth::W32), Just(AddressWidth::W64)],
    )
        .prop_map(|(o, w)| TargetAbi::new(o, w))
}

fn ranks() -> impl Strategy<Value = Vec<(String, String, i32)>> {
    proptest::collection::vec(
        ("[a-z0-9.-]{0,40}", "/[a-zA-Z0-9/_.]{0,200}", any::<i32>()),
        0..64,
    )
}

proptest! {
    #[test]
    fn random_tables_read_back(abi in abis(), ranks in ranks()) {
        let spec: Vec<(&str, &str, i32)> =
            ranks.iter().map(|(h, e, p)| (h.as_str(), e.as_str(), *p)).collect();
        let job = SyntheticJob::builder(abi).mpir_starter(&spec).build();
        let state = mpir::read_state(&job, &Limits::default()).unwrap();
        prop_assert_eq!(state.debug_state, MpirDebugState::Spawned);
        prop_assert_eq!(state.proctable_size as usize, ranks.len());
        prop_assert_eq!(state.proctable.len(), ranks.len());
        for (got, (h, e, p)) in state.proctable.iter().zip(&ranks) {
            prop_assert_eq!(&got.host_name, h);
            prop_assert_eq!(&got.executable_name, e);
            prop_assert_eq!(got.pid, *p);
        }
        prop_assert!(state.presence.i_am_starter);
        prop_assert!(!state.presence.partial_attach_ok);
    }

    /// Whatever the table pointer and size, the reader returns or fails: no
    /// panic, no allocation of what a size claims.
    #[test]
    fn hostile_tables_fail_cleanly(abi in abis(), table in any::<u32>(), size in any::<i32>(),
                                   state in any::<i32>()) {
        let job = SyntheticJob::builder(abi)
            .mpir_raw(TargetAddr(u64::from(table)), size, state)
            .build();
        let limits = Limits { max_table_entries: 1 << 16, ..Limits::default() };
        let _ = mpir::read_state(&job, &limits);
    }
}

#[test]
fn every_optional_symbol_is_read() {
    let job = SyntheticJob::builder(TargetAbi::POWERPC)
        .object("/usr/lib/x86_64-linux-gnu/libopen-rte.so.40")
        .mpir_starter(&[("n1", "/bin/x", 7)])
        .mpir_dll_name("libtvmpich.so")
        .mpir_executable_path("/bin/x", 512)
        .presence("MPIR_partial_attach_ok")
        .presence("MPIR_force_to_main")
        .mpir_abort("rank 3 called MPI_Abort")
        .build();
    let s = mpir::read_state(&job, &Limits::default()).unwrap();
    assert_eq!(s.debug_state, MpirDebugState::Aborting);
    assert_eq!(s.abort_string.as_deref(), Some("rank 3 called MPI_Abort"));
    assert_eq!(s.dll_name.as_deref(), Some("libtvmpich.so"));
    assert_eq!(s.executable_path.as_deref(), Some("/bin/x"));
    assert_eq!(s.debug_gate, Some(0));
    assert_eq!(s.being_debugged, Some(0));
    assert!(s.presence.partial_attach_ok && s.presence.force_to_main);
    assert!(!s.presence.acquired_pre_main && !s.presence.ignore_queues);
    assert_eq!(s.defined_in, "/usr/lib/x86_64-linux-gnu/libopen-rte.so.40");
    assert_eq!(s.attach_fifo, None);
}

#[test]
fn a_target_without_mpir_symbols_says_where_it_looked() {
    let mut syms = SymbolTable::new();
    syms.add_object("/usr/bin/mpiexec.hydra");
    let mem = SyntheticMemory::new(TargetAbi::X86_64);
    let err = mpir::read_state_from(&mem, &syms, &Limits::default()).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, MpirError::NoMpirSymbols { .. }));
    assert!(msg.contains("/usr/bin/mpiexec.hydra"), "{msg}");
    assert!(msg.contains("stripped"), "{msg}");
}

#[test]
fn counts_beyond_the_limit_are_refused_before_reading() {
    let job = SyntheticJob::builder(TargetAbi::X86_64)
        .mpir_raw(TargetAddr(0x1000), i32::MAX, 1)
        .build();
    let err = mpir::read_state(&job, &Limits::default()).unwrap_err();
    match err {
        MpirError::Read(ReadError::LimitExceeded {
            count, limit, addr, ..
        }) => {
            assert_eq!(count, i32::MAX as u64);
            assert_eq!(limit, "max_table_entries");
            assert_eq!(addr, TargetAddr(0x1000));
        }
        other => panic!("{other:?}"),
    }
    let job = SyntheticJob::builder(TargetAbi::X86_64)
        .mpir_raw(TargetAddr(0x1000), -4, 1)
        .build();
    let err = mpir::read_state(&job, &Limits::default()).unwrap_err();
    assert!(
        matches!(
            err,
            MpirError::Read(ReadError::NegativeCount { count: -4, .. })
        ),
        "{err:?}"
    );
}

#[test]
fn a_count_times_size_past_u64_is_an_error_not_an_overflow() {
    let mem = SyntheticMemory::new(TargetAbi::X86_64);
    let unlimited = Limits {
        max_table_entries: u64::MAX,
        ..Limits::default()
    };
    let err = mem
        .read_records::<mpidd_types::MpirProcdesc>(TargetAddr(0x1000), i64::MAX, &unlimited)
        .unwrap_err();
    assert!(matches!(err, ReadError::AddressOverflow { .. }), "{err:?}");
    let mut buf = [0u8; 16];
    assert_eq!(
        mem.read_into(TargetAddr(u64::MAX - 4), &mut buf).unwrap(),
        0
    );
}

#[test]
fn an_unmapped_table_names_its_address() {
    let job = SyntheticJob::builder(TargetAbi::S390X)
        .mpir_raw(TargetAddr(0xdead_0000), 3, 1)
        .build();
    let err = mpir::read_state(&job, &Limits::default()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("MPIR_PROCDESC at 0xdead0000"), "{msg}");
}

#[test]
fn strings_are_capped_and_must_end() {
    let mut mem = SyntheticMemory::new(TargetAbi::I686);
    mem.map(TargetAddr(0x1000), b"abcdef".to_vec());
    mem.map(TargetAddr(0x2000), b"abcdef\0".to_vec());
    // No terminator before the end of the mapping.
    let err = mem.read_c_string(TargetAddr(0x1000), 100).unwrap_err();
    assert!(
        matches!(
            err,
            ReadError::ShortRead {
                addr: TargetAddr(0x1000),
                ..
            }
        ),
        "{err:?}"
    );
    // Longer than the cap.
    let err = mem.read_c_string(TargetAddr(0x2000), 3).unwrap_err();
    assert!(
        matches!(err, ReadError::Unterminated { cap: 3, .. }),
        "{err:?}"
    );
    assert_eq!(mem.read_c_string(TargetAddr(0x2000), 6).unwrap(), b"abcdef");
    // A string running to the top of a 32-bit address space.
    mem.map(TargetAddr(0xffff_fffc), b"abcd".to_vec());
    assert!(mem.read_c_string(TargetAddr(0xffff_fffc), 100).is_err());
}

#[test]
fn reads_span_segments_and_short_reads_count() {
    let mut mem = SyntheticMemory::new(TargetAbi::X86_64);
    mem.map(TargetAddr(0x1000), vec![1; 16]);
    mem.map(TargetAddr(0x1010), vec![2; 16]);
    let mut buf = [0u8; 24];
    assert_eq!(mem.read_into(TargetAddr(0x1008), &mut buf).unwrap(), 24);
    assert_eq!(&buf[7..9], &[1, 2]);
    let mut buf = [0u8; 64];
    assert_eq!(mem.read_into(TargetAddr(0x1010), &mut buf).unwrap(), 16);
    assert_eq!(mem.read_into(TargetAddr(0x3000), &mut buf).unwrap(), 0);
}

#[test]
fn writes_only_touch_what_was_asked() {
    let mut job = SyntheticJob::builder(TargetAbi::S390X)
        .mpir_starter(&[("n", "/x", 1)])
        .build();
    let before = mpir::read_state(&job, &Limits::default()).unwrap();
    assert!(mpir::set_being_debugged(&mut job.memory, &job.symbols, 1).unwrap());
    assert!(mpir::release_gate(&mut job.memory, &job.symbols).unwrap());
    let after = mpir::read_state(&job, &Limits::default()).unwrap();
    assert_eq!(after.being_debugged, Some(1));
    assert_eq!(after.debug_gate, Some(1));
    assert_eq!(after.proctable, before.proctable);
    // Big-endian: the int 1 is stored as 00 00 00 01.
    let gate = job
        .symbols
        .iter()
        .find(|s| s.name == "MPIR_debug_gate")
        .unwrap()
        .addr;
    let mut b = [0u8; 4];
    job.memory.read_exact(gate, &mut b, "gate").unwrap();
    assert_eq!(b, [0, 0, 0, 1]);

    // Without the symbol, nothing is written and the caller is told.
    let mut bare = SyntheticJob::builder(TargetAbi::S390X)
        .mpir_raw(TargetAddr(0), 0, 0)
        .build();
    assert!(!mpir::release_gate(&mut bare.memory, &bare.symbols).unwrap());
    assert!(bare.memory.write_i32(TargetAddr(0x10), 1).is_err());
}

#[test]
fn the_total_read_budget_covers_the_strings_too() {
    use mpidd_read::{mpir, Limits, ReadError, SyntheticJob};
    use mpidd_types::TargetAbi;
    let ranks: Vec<(String, String, i32)> = (0..100)
        .map(|i| (format!("node{i:03}"), "/bin/app".to_string(), 1000 + i))
        .collect();
    let refs: Vec<(&str, &str, i32)> = ranks
        .iter()
        .map(|(h, e, p)| (h.as_str(), e.as_str(), *p))
        .collect();
    let job = SyntheticJob::builder(TargetAbi::X86_64)
        .mpir_starter(&refs)
        .build();
    // The table alone is 2,400 bytes; its 101 distinct strings push it over.
    let limits = Limits {
        max_total_bytes: 3_000,
        ..Limits::default()
    };
    let err = mpir::read_state(&job, &limits).unwrap_err();
    assert!(
        matches!(
            err,
            mpir::MpirError::Read(ReadError::LimitExceeded {
                limit: "max_total_bytes",
                ..
            })
        ),
        "{err}"
    );
    assert!(mpir::read_state(&job, &Limits::default()).is_ok());
}
