//! `detect` and `read_queues` over backends a debugger writes itself
//! (`mpidd_read::synthetic::OutsideMemory`): reads that are all or nothing
//! and reads capped at a few bytes give the queues the plain backend
//! gives; reads that fail, and garbage, give a typed `DecodeError`, never
//! a panic or a hang. The process is a small MPICH CH3 one laid out by
//! hand, with its version strings at the very end of their mappings.

use mpidd_read::synthetic::{OutsideMemory, OutsideReads};
use mpidd_read::{
    ByteOrder, Limits, ReadError, SymbolTable, SyntheticMemory, TargetAbi, TargetAddr, TargetParts,
};
use mpiq_core::model::ProcessQueues;
use mpiq_core::{DecodeError, LayoutTable};
use proptest::prelude::*;

/// Offsets of this synthetic MPICH (not the real one's).
fn layout() -> LayoutTable {
    let mut t = LayoutTable::default();
    t.add_offsets("MPIR_Comm_list", 16, &[("sequence_number", 0), ("head", 8)]);
    t.add_offsets(
        "MPIR_Comm",
        256,
        &[
            ("name", 0),
            ("context_id", 128),
            ("recvcontext_id", 130),
            ("remote_size", 132),
            ("rank", 136),
            ("local_size", 140),
            ("comm_kind", 144),
            ("local_group", 152),
            ("comm_next", 160),
            ("dev", 168),
        ],
    );
    t.add_offsets("MPIDI_CH3I_comm_t", 16, &[("vcrt", 0)]);
    t.add_offsets("MPIDI_VCRT", 24, &[("size", 0), ("vcr_table", 8)]);
    t.add_offsets("MPIDI_VC", 8, &[("pg_rank", 0)]);
    t.add_offsets("MPIR_Group", 16, &[("size", 0), ("lrank_to_lpid", 8)]);
    t.add_offsets("MPII_Group_pmap_t", 16, &[("lpid", 0)]);
    t.add_offsets("MPIR_Request", 128, &[("cc", 0), ("next", 8), ("dev", 16)]);
    t.add_offsets(
        "MPIDI_Request",
        64,
        &[
            ("match", 0),
            ("user_buf", 8),
            ("user_count", 16),
            ("datatype", 24),
            ("recv_data_sz", 32),
            ("tmpbuf", 40),
            ("state", 48),
        ],
    );
    t.add_offsets("MPIDI_Message_match", 8, &[("parts", 0)]);
    t.add_offsets(
        "MPIDI_Message_match_parts_t",
        8,
        &[("tag", 0), ("rank", 4), ("context_id", 6)],
    );
    t.add_offsets(
        "MPIR_Sendq",
        40,
        &[
            ("sreq", 0),
            ("tag", 8),
            ("rank", 12),
            ("context_id", 16),
            ("next", 24),
        ],
    );
    t
}

const LIST: u64 = 0x1000;
const POSTED_PTR: u64 = 0x1100;
const UNEXPECTED_PTR: u64 = 0x1200;
const SENDQ_HEAD: u64 = 0x1300;
const COMM: u64 = 0x2000;
const VCRT: u64 = 0x3000;
const VCS: u64 = 0x3100;
const REQS: u64 = 0x4000;
const SENDQ: u64 = 0x5000;
const VERSION: u64 = 0x9000;
const DEVICE: u64 = 0xa000;
/// MPICH's handle of MPI_INT: a builtin datatype of 4 bytes.
const MPI_INT: u64 = 0x4c00_0405;

/// Writes `value` as `width` bytes at `at` of `bytes`, in `order`.
fn put(bytes: &mut [u8], order: ByteOrder, at: u64, value: u64, width: usize) {
    let mut b = value.to_le_bytes()[..width].to_vec();
    if order == ByteOrder::Big {
        b.reverse();
    }
    bytes[at as usize..at as usize + width].copy_from_slice(&b);
}

/// One communicator ("world", context 0, rank 1 of 2, world ranks 5 and
/// 9), two posted receives (rank 0 tag 11; any source, any tag), one
/// eager unexpected message (rank 0, tag 99, 20 bytes), one pending send
/// (tag 44 to rank 0, 3 ints).
fn process(abi: TargetAbi) -> (SyntheticMemory, SymbolTable) {
    let (w, o) = (abi.address_bytes(), abi.byte_order);
    let mut mem = SyntheticMemory::new(abi);
    let mut region = |at: u64, len: usize, fill: &dyn Fn(&mut [u8])| {
        let mut b = vec![0u8; len];
        fill(&mut b);
        mem.map(TargetAddr(at), b);
    };
    region(LIST, 16, &|b| {
        put(b, o, 0, 7, 4);
        put(b, o, 8, COMM, w);
    });
    region(POSTED_PTR, 16, &|b| {
        put(b, o, 0, POSTED_PTR + 8, w);
        put(b, o, 8, REQS, w);
    });
    region(UNEXPECTED_PTR, 16, &|b| {
        put(b, o, 0, UNEXPECTED_PTR + 8, w);
        put(b, o, 8, REQS + 256, w);
    });
    region(SENDQ_HEAD, 8, &|b| put(b, o, 0, SENDQ, w));
    region(COMM, 256, &|b| {
        b[..5].copy_from_slice(b"world");
        for (at, v, n) in [(132, 2, 4), (136, 1, 4), (140, 2, 4)] {
            put(b, o, at, v, n);
        }
        put(b, o, 168, VCRT, w);
    });
    region(VCRT, 24, &|b| {
        put(b, o, 0, 2, 4);
        put(b, o, 8, VCS, w);
        put(b, o, 8 + w as u64, VCS + 8, w);
    });
    region(VCS, 16, &|b| {
        put(b, o, 0, 5, 4);
        put(b, o, 8, 9, 4);
    });
    // Requests: (next, cc, tag, rank, recv_data_sz, tmpbuf, state).
    let reqs: [(u64, u64, i64, i64, u64, u64, u64); 3] = [
        (REQS + 128, 1, 11, 0, 0, 0, 0),
        (0, 1, -1, -2, 0, 0, 0),
        (0, 0, 99, 0, 20, 0xda7a, 1),
    ];
    region(REQS, 3 * 128, &|b| {
        for (i, &(next, cc, tag, rank, sz, tmp, state)) in reqs.iter().enumerate() {
            let r = (i * 128) as u64;
            put(b, o, r, cc, 4);
            put(b, o, r + 8, next, w);
            put(b, o, r + 16, tag as u64, 4);
            put(b, o, r + 20, rank as u64, 2);
            put(b, o, r + 24, 0xb0f0, w);
            put(b, o, r + 32, 10, w);
            put(b, o, r + 40, MPI_INT, 4);
            put(b, o, r + 48, sz, w);
            put(b, o, r + 56, tmp, w);
            put(b, o, r + 64, state, 4);
        }
    });
    region(SENDQ, 40 + 128, &|b| {
        put(b, o, 0, SENDQ + 40, w);
        put(b, o, 8, 44, 4);
        put(b, o, 40, 1, 4);
        put(b, o, 40 + 64, (3 << 4) | 2, 4);
        put(b, o, 40 + 32, 3, w);
        put(b, o, 40 + 40, MPI_INT, 4);
        put(b, o, 40 + 24, 0x5e00, w);
    });
    // The version strings end their mappings: a string read asks for
    // more than is mapped.
    mem.map(TargetAddr(VERSION), b"4.0.2\0".to_vec());
    mem.map(TargetAddr(DEVICE), b"ch3:nemesis\0".to_vec());
    let mut symbols = SymbolTable::new();
    for (name, addr) in [
        ("MPIR_All_communicators", LIST),
        ("MPID_Recvq_posted_head_ptr", POSTED_PTR),
        ("MPID_Recvq_unexpected_head_ptr", UNEXPECTED_PTR),
        ("MPIR_Sendq_head", SENDQ_HEAD),
        ("MPII_Version_string", VERSION),
        ("MPII_Version_device", DEVICE),
    ] {
        symbols.insert("/synthetic/libmpi.so.12", name, TargetAddr(addr), w as u64);
    }
    (mem, symbols)
}

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
