//! The readers over backends a debugger writes itself, which keep the
//! read contract of `TargetMemory` in other ways than a core or a live
//! process do: reads that are all or nothing, reads capped at a few bytes,
//! reads that fail for some ranges, and memory that is garbage throughout.
//! The first two must give what the plain backend gives; the others typed
//! errors naming the address and what was read, never a panic or a hang.

use std::collections::HashMap;

use mpidd_read::mpi2dd::Mpi2ddPeer;
use mpidd_read::mpir::{self, MpirError};
use mpidd_read::synthetic::{Mpi2ddSpec, OutsideMemory, OutsideReads, PeerSpec, RankSpec};
use mpidd_read::walk::{self, JobTree};
use mpidd_read::{
    Connector, CoreTarget, ElfSymbols, Limits, Packing, ReadError, ReadRecords, Record, StackArch,
    StackLimits, StackUnwinder, SymbolSource, SyntheticCoreOptions, SyntheticJob, SyntheticMemory,
    TargetAbi, TargetAddr, TargetMemory, ThreadRegisters,
};
use mpidd_types::MpirProcdesc;
use proptest::prelude::*;

/// The kinds that must read exactly what the plain backend reads.
fn faithful() -> Vec<OutsideReads> {
    vec![
        OutsideReads::AllOrNothing,
        OutsideReads::Capped(1),
        OutsideReads::Capped(3),
        OutsideReads::Capped(8),
        OutsideReads::Capped(100),
        OutsideReads::Capped(4096),
    ]
}

const ABIS: [TargetAbi; 4] = [
    TargetAbi::X86_64,
    TargetAbi::I686,
    TargetAbi::S390X,
    TargetAbi::POWERPC,
];

fn ranks(n: i32) -> Vec<(String, String, i32)> {
    (0..n)
        .map(|r| {
            (
                format!("node{:03}.cluster", r / 3),
                format!(
                    "/opt/app/bin/rank-{r}-{}",
                    "x".repeat((r * 37 % 300) as usize)
                ),
                4000 + r,
            )
        })
        .collect()
}

fn starter(abi: TargetAbi, ranks: &[(String, String, i32)]) -> SyntheticJob {
    let spec: Vec<_> = ranks
        .iter()
        .map(|(h, e, p)| (h.as_str(), e.as_str(), *p))
        .collect();
    SyntheticJob::builder(abi)
        .pid(77)
        .mpir_starter(&spec)
        .mpir_dll_name("/usr/lib/libtvmpich.so")
        .mpir_abort("rank 2 called MPI_Abort")
        .mpir_executable_path("/usr/bin/mpiexec", 256)
        .build()
}

#[test]
fn the_mpir_table_reads_the_same_through_all_or_nothing_and_capped_reads() {
    for abi in ABIS {
        let table = ranks(40);
        let job = starter(abi, &table);
        let plain = mpir::read_state(&job, &Limits::default()).unwrap();
        assert_eq!(plain.proctable.len(), table.len());
        for kind in faithful() {
            let outside = OutsideMemory::new(&job.memory, kind.clone());
            let got = mpir::read_state_from(&outside, &job.symbols, &Limits::default()).unwrap();
            assert_eq!(got, plain, "{abi} {kind:?}");
        }
    }
}

/// The same through a real ELF core read by the core backend (the
/// builder's job written out), wrapped as a debugger's backend would be.
#[test]
fn the_mpir_table_of_a_core_file_reads_the_same_through_outside_backends() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("outside_backends");
    std::fs::create_dir_all(&dir).unwrap();
    for abi in ABIS {
        let job = starter(abi, &ranks(40));
        let (core, exe) = (
            dir.join(format!("{abi}.core")),
            dir.join(format!("{abi}-mpiexec")),
        );
        job.write_files(&core, &exe, SyntheticCoreOptions::default())
            .unwrap();
        let target = CoreTarget::open(&core, Some(&exe), None).unwrap();
        let plain = mpir::read_state(&target, &Limits::default()).unwrap();
        assert_eq!(plain.proctable.len(), 40, "{abi}");
        for kind in faithful() {
            let outside = OutsideMemory::new(&target, kind.clone());
            let got = mpir::read_state(&outside, &Limits::default()).unwrap();
            assert_eq!(got, plain, "{abi} {kind:?}");
        }
    }
}

/// `MPIR_server_arguments` of unknown size, ending a few bytes before the
/// end of its mapping: the list is read up to what is readable.
#[test]
fn a_string_list_at_the_end_of_a_mapping_reads_the_same() {
    for tail in [0usize, 1, 3, 255, 4095, 4097] {
        let mut job = starter(TargetAbi::X86_64, &ranks(3));
        let at = 0x7700_0000u64;
        let mut bytes = b"-n\x004\x00--host\x00a,b\x00\x00".to_vec();
        bytes.extend(std::iter::repeat_n(0x41, tail));
        job.memory.map(TargetAddr(at), bytes);
        let mut symbols = job.symbols.clone();
        symbols.insert(
            "/usr/bin/mpiexec",
            "MPIR_server_arguments",
            TargetAddr(at),
            0,
        );
        let plain = mpir::read_state_from(&job.memory, &symbols, &Limits::default()).unwrap();
        let args = plain.server_arguments.clone().unwrap();
        assert_eq!(args, ["-n", "4", "--host", "a,b"], "tail {tail}");
        for kind in faithful() {
            let outside = OutsideMemory::new(&job.memory, kind.clone());
            let got = mpir::read_state_from(&outside, &symbols, &Limits::default()).unwrap();
            assert_eq!(got, plain, "tail {tail} {kind:?}");
        }
    }
}

/// Strings that end at every distance from the end of their mapping, on
/// mappings that end on and off a page boundary: read as the plain
/// backend reads them, in a bounded number of calls.
#[test]
fn strings_near_the_end_of_a_mapping_read_the_same() {
    for end_offset in [0x1000u64, 0x1003, 0x1ff0] {
        let base = 0x10_0000u64;
        for gap in [0usize, 1, 2, 7, 200, 255, 256, 257, 1000] {
            let text = b"rank-host-name".repeat(3);
            let len = end_offset as usize;
            let mut bytes = vec![b'z'; len];
            let start = len - gap - text.len() - 1;
            bytes[start..start + text.len()].copy_from_slice(&text);
            bytes[start + text.len()] = 0;
            let mut mem = SyntheticMemory::new(TargetAbi::S390X);
            mem.map(TargetAddr(base), bytes);
            let addr = TargetAddr(base + start as u64);
            // Unterminated: the last `gap + 1` bytes of a mapping without
            // a NUL.
            let open_base = 0x20_0000u64;
            mem.map(TargetAddr(open_base), vec![b'y'; len]);
            let open = TargetAddr(open_base + (len - gap - 1) as u64);
            let plain = mem.read_c_string(addr, 4096).unwrap();
            assert_eq!(plain, text);
            let plain_open = mem.read_c_string(open, 4096).unwrap_err().to_string();
            for kind in faithful() {
                let outside = OutsideMemory::new(&mem, kind.clone());
                let what = format!("end {end_offset:#x} gap {gap} {kind:?}");
                assert_eq!(outside.read_c_string(addr, 4096).unwrap(), plain, "{what}");
                let many = outside.read_c_strings(&[addr, open, addr], 4096);
                assert_eq!(many[0].as_ref().unwrap(), &plain, "{what}");
                assert_eq!(
                    many[1].as_ref().unwrap_err().to_string(),
                    plain_open,
                    "{what}"
                );
                assert_eq!(many[2].as_ref().unwrap(), &plain, "{what}");
                let open_err = outside.read_c_string(open, 4096).unwrap_err().to_string();
                assert_eq!(open_err, plain_open, "{what}");
                // A few dozen calls per string at most, whatever the kind,
                // but for reads capped at 1 or 3 bytes, which need one per
                // piece.
                if !matches!(kind, OutsideReads::Capped(k) if k < 100) {
                    assert!(outside.calls() < 200, "{what}: {} calls", outside.calls());
                }
            }
        }
    }
}

/// Arrays of records that end at, or run past, the end of their mapping.
#[test]
fn arrays_read_the_same_and_fail_the_same() {
    for abi in ABIS {
        let table = ranks(20);
        let job = starter(abi, &table);
        let symbols = &job.symbols;
        let table_at = job
            .memory
            .read_pointer(
                symbols.lookup("MPIR_proctable").unwrap().addr,
                "MPIR_proctable",
            )
            .unwrap();
        // The table's segment, and how many records fit before its end.
        let (seg, bytes) = job
            .memory
            .segments()
            .find(|(a, b)| a.0 <= table_at.0 && table_at.0 < a.0 + b.len() as u64)
            .unwrap();
        let size = MpirProcdesc::size_for(abi) as u64;
        let fit = (seg.0 + bytes.len() as u64 - table_at.0) / size;
        let limits = Limits::default();
        for count in [1i64, 20, fit as i64, fit as i64 + 1, fit as i64 + 300] {
            let plain = job
                .memory
                .read_records::<MpirProcdesc>(table_at, count, &limits)
                .map_err(|e| e.to_string());
            for kind in faithful() {
                let outside = OutsideMemory::new(&job.memory, kind.clone());
                let got = outside
                    .read_records::<MpirProcdesc>(table_at, count, &limits)
                    .map_err(|e| e.to_string());
                assert_eq!(got, plain, "{abi} count {count} {kind:?}");
            }
        }
    }
}

/// MPI-2 processes keyed by (host, pid), each behind the same kind of
/// outside backend.
struct Jobs {
    jobs: HashMap<(String, i32), SyntheticJob>,
    kind: OutsideReads,
}

impl Connector for Jobs {
    type Target = OutsideMemory<Box<SyntheticJob>>;
    fn connect(
        &mut self,
        host: &str,
        pid: i32,
        _: &str,
    ) -> Result<Self::Target, Box<dyn std::error::Error + Send + Sync>> {
        let job = self
            .jobs
            .get(&(host.to_string(), pid))
            .cloned()
            .ok_or_else(|| format!("no process {pid} on {host}"))?;
        Ok(OutsideMemory::new(Box::new(job), self.kind.clone()))
    }
}

const META: PeerSpec = PeerSpec {
    host: "login",
    exe: "/usr/bin/mpirun",
    pid: 100,
};
const DIR: PeerSpec = PeerSpec {
    host: "node-a",
    exe: "/usr/bin/orted",
    pid: 200,
};

/// A metadirectory, a directory with three ranks, and a rank.
fn mpi2_jobs(abi: TargetAbi, packing: Packing, kind: OutsideReads) -> Jobs {
    let build = |spec: Mpi2ddSpec<'_>| {
        SyntheticJob::builder(abi)
            .mpi2dd(&Mpi2ddSpec { packing, ..spec })
            .build()
    };
    let rank = |pid, rank| RankSpec {
        host: "node-a",
        exe: "/opt/ring",
        pid,
        rank,
        world: "w0",
        spawn: None,
    };
    let ranks = [rank(201, 0), rank(202, 1), rank(203, 2)];
    let mut jobs = HashMap::new();
    jobs.insert(
        ("login".to_string(), 100),
        build(Mpi2ddSpec {
            mpi_flags: 0x05,
            meta: Some(META),
            directories: &[DIR],
            ..Mpi2ddSpec::default()
        }),
    );
    jobs.insert(
        ("node-a".to_string(), 200),
        build(Mpi2ddSpec {
            mpi_flags: 0x02,
            meta: Some(META),
            ranks: &ranks,
            ..Mpi2ddSpec::default()
        }),
    );
    jobs.insert(
        ("node-a".to_string(), 201),
        build(Mpi2ddSpec {
            meta: Some(META),
            ..Mpi2ddSpec::default()
        }),
    );
    Jobs { jobs, kind }
}

fn start() -> Mpi2ddPeer {
    Mpi2ddPeer {
        host_name: "node-a".into(),
        executable_name: "/opt/ring".into(),
        pid: 201,
    }
}

fn mpi2_walk(
    abi: TargetAbi,
    packing: Packing,
    kind: OutsideReads,
) -> Result<JobTree, walk::WalkError> {
    let mut jobs = mpi2_jobs(abi, packing, kind);
    walk::walk(&mut jobs, &start(), None, &Limits::default())
}

#[test]
fn the_mpi2_walk_finds_the_same_tree() {
    for abi in ABIS {
        for packing in [Packing::Packed, Packing::Natural] {
            let plain = mpi2_walk(abi, packing, OutsideReads::Partial).unwrap();
            assert_eq!(plain.ranks.len(), 3, "{abi} {packing:?}");
            assert!(plain.failures.is_empty(), "{abi} {packing:?}");
            for kind in faithful() {
                let got = mpi2_walk(abi, packing, kind.clone()).unwrap();
                assert_eq!(got, plain, "{abi} {packing:?} {kind:?}");
            }
        }
    }
}

/// A frame-pointer chain whose last frames sit just below the end of the
/// stack's mapping, which ends off a page boundary.
#[test]
fn stacks_unwind_the_same() {
    let stack = 0x7fff_0000u64;
    let len = 0x2ff8usize;
    let mut bytes = vec![0u8; len];
    let frames = [
        (0x100u64, 0x800u64, 0x40_1111u64),
        (0x800, 0x2fe8, 0x40_2222),
        (0x2fe8, 0, 0x40_3333),
    ];
    for (at, next, ret) in frames {
        let at = at as usize;
        let next = if next == 0 { 0 } else { stack + next };
        bytes[at..at + 8].copy_from_slice(&next.to_le_bytes());
        bytes[at + 8..at + 16].copy_from_slice(&ret.to_le_bytes());
    }
    let mut mem = SyntheticMemory::new(TargetAbi::X86_64);
    mem.map(TargetAddr(stack), bytes);
    let regs = ThreadRegisters {
        tid: 7,
        arch: StackArch::X86_64,
        pc: 0x40_1000,
        sp: stack,
        fp: stack + 0x100,
        lr: None,
        general: Vec::new(),
    };
    let unwinder = StackUnwinder::new(StackLimits::default());
    let objects = ElfSymbols::new();
    let plain = unwinder.unwind(&mem, &objects, &regs);
    let pcs = |s: &mpidd_read::ThreadStack| s.frames.iter().map(|f| f.pc).collect::<Vec<_>>();
    assert_eq!(pcs(&plain), [0x40_1000, 0x40_1111, 0x40_2222, 0x40_3333]);
    for kind in faithful() {
        let outside = OutsideMemory::new(&mem, kind.clone());
        let got = unwinder.unwind(&outside, &objects, &regs);
        assert_eq!(pcs(&got), pcs(&plain), "{kind:?}");
        assert_eq!(got.error, plain.error, "{kind:?}");
    }
}

/// Where a debugger's read fails, the reader says what it was reading
/// and where; it does not read around the failure.
#[test]
fn failing_reads_are_typed_errors_naming_the_record_and_the_address() {
    let abi = TargetAbi::I686;
    let job = starter(abi, &ranks(10));
    let limits = Limits::default();
    let sym = |name| job.symbols.lookup(name).unwrap().addr;
    let table_at = job
        .memory
        .read_pointer(sym("MPIR_proctable"), "MPIR_proctable")
        .unwrap();
    let size = MpirProcdesc::size_for(abi) as u64;
    // The table's fourth record; the proctable size; a host name.
    let fourth = table_at.0 + 3 * size;
    let host_at = job
        .memory
        .read_record::<MpirProcdesc>(TargetAddr(fourth))
        .unwrap()
        .host_name;
    assert!(!host_at.is_null());
    let cases = [
        (fourth + 1, fourth + 2, "MPIR_PROCDESC"),
        (
            sym("MPIR_proctable_size").0,
            sym("MPIR_proctable_size").0 + 1,
            "MPIR_proctable_size",
        ),
        (host_at.0 + 2, host_at.0 + 3, "string"),
    ];
    for (start, end, record) in cases {
        let outside = OutsideMemory::new(
            &job.memory,
            OutsideReads::FailIn {
                start: TargetAddr(start),
                end: TargetAddr(end),
            },
        );
        let err = mpir::read_state_from(&outside, &job.symbols, &limits).unwrap_err();
        let MpirError::Read(ReadError::Backend { what, addr, cause }) = &err else {
            panic!("{record}: not a backend error: {err:?}");
        };
        assert_eq!(*what, record, "{err}");
        assert!(addr.0 <= start, "{record}: {err}");
        assert!(cause.to_string().contains("PEEKDATA"), "{err}");
        let text = err.to_string();
        assert!(
            text.contains(record) && text.contains(&format!("{addr}")),
            "{text}"
        );
        // The failure is not retried around: a handful of calls.
        assert!(outside.calls() < 100, "{record}: {} calls", outside.calls());
    }
    // A backend that claims more than it was asked for is refused, not
    // trusted.
    struct Boastful;
    impl TargetMemory for Boastful {
        fn abi(&self) -> TargetAbi {
            TargetAbi::X86_64
        }
        fn read_into(&self, _: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
            Ok(buf.len() + 5)
        }
    }
    let err = Boastful
        .read_u32(TargetAddr(0x1000), "MPIR_debug_state")
        .unwrap_err();
    assert!(
        matches!(
            err,
            ReadError::Backend {
                what: "MPIR_debug_state",
                addr: TargetAddr(0x1000),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(Boastful.read_c_string(TargetAddr(0x1000), 64).is_err());
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

    /// Garbage everywhere but the symbols: the readers end, with a value
    /// or a typed error, in a bounded number of reads.
    #[test]
    fn garbage_memory_never_panics_or_hangs(abi in abis(), seed in any::<u64>()) {
        let job = starter(abi, &ranks(4));
        let limits = Limits {
            max_table_entries: 1 << 12,
            max_total_bytes: 1 << 22,
            ..Limits::default()
        };
        let outside = OutsideMemory::new(&job.memory, OutsideReads::Garbage { seed });
        match mpir::read_state_from(&outside, &job.symbols, &limits) {
            Ok(state) => prop_assert!(state.proctable.len() <= 1 << 12),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
        prop_assert!(outside.calls() < 100_000, "{} calls", outside.calls());
        for packing in [Packing::Packed, Packing::Natural] {
            let _ = mpi2_walk(abi, packing, OutsideReads::Garbage { seed });
        }
    }

    /// Garbage that fails in places: still typed errors, still bounded.
    #[test]
    fn garbage_that_fails_in_places_stays_typed(
        abi in abis(),
        seed in any::<u64>(),
        start in any::<u32>(),
        len in 1u64..0x10000,
    ) {
        let job = starter(abi, &ranks(4));
        let garbage = OutsideMemory::new(&job.memory, OutsideReads::Garbage { seed });
        let failing = OutsideMemory::new(
            &garbage,
            OutsideReads::FailIn {
                start: TargetAddr(u64::from(start)),
                end: TargetAddr(u64::from(start) + len),
            },
        );
        let limits = Limits { max_table_entries: 1 << 12, ..Limits::default() };
        if let Err(e) = mpir::read_state_from(&failing, &job.symbols, &limits) {
            prop_assert!(!e.to_string().is_empty());
        }
    }
}
