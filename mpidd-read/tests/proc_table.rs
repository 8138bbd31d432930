//! The interned MPIR process table: the same table whether its strings
//! are borrowed from a core's mapping or copied from memory, strings kept
//! once by their text, and the copying path's errors where the borrowing
//! path gives up.

use mpidd_read::mpir::{self, MpirError, MpirProcess, ProcTable};
use mpidd_read::{CoreTarget, Limits, ReadError, SyntheticCoreOptions, SyntheticJob};
use mpidd_types::TargetAbi;

/// `ranks` ranks on `hosts` hosts, each rank with its own copy of its
/// strings, as Open MPI's mpirun lays them out.
fn spec(ranks: usize, hosts: usize) -> Vec<(String, String, i32)> {
    (0..ranks)
        .map(|r| {
            (
                format!("node{:03}", r * hosts / ranks),
                "/opt/app/bin/ring".to_string(),
                5000 + r as i32,
            )
        })
        .collect()
}

fn job(abi: TargetAbi, ranks: &[(String, String, i32)]) -> SyntheticJob {
    let refs: Vec<(&str, &str, i32)> = ranks
        .iter()
        .map(|(h, e, p)| (h.as_str(), e.as_str(), *p))
        .collect();
    SyntheticJob::builder(abi).mpir_starter(&refs).build()
}

fn core_of(job: &SyntheticJob, name: &str) -> (CoreTarget, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("mpidd-proc-table-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (core, exe) = (dir.join("core"), dir.join("exe"));
    job.write_files(&core, &exe, SyntheticCoreOptions::default())
        .unwrap();
    (CoreTarget::open(&core, Some(&exe), None).unwrap(), dir)
}

#[test]
fn a_core_and_plain_memory_give_the_same_interned_table() {
    let ranks = spec(10_000, 37);
    for (i, abi) in [
        TargetAbi::X86_64,
        TargetAbi::I686,
        TargetAbi::POWERPC,
        TargetAbi::new(mpidd_types::ByteOrder::Big, mpidd_types::AddressWidth::W64),
    ]
    .into_iter()
    .enumerate()
    {
        let job = job(abi, &ranks);
        let (core, dir) = core_of(&job, &i.to_string());
        let limits = Limits::default();
        let from_core = mpir::read_state(&core, &limits).unwrap();
        let from_memory = mpir::read_state(&job, &limits).unwrap();
        assert_eq!(from_core.proctable, from_memory.proctable, "{abi:?}");
        let t = &from_core.proctable;
        assert_eq!(t.len(), ranks.len());
        for (got, (h, e, p)) in t.iter().zip(&ranks) {
            assert_eq!(
                got,
                MpirProcess {
                    host_name: h,
                    executable_name: e,
                    pid: *p
                }
            );
        }
        // 20,000 string pointers, 38 texts.
        assert_eq!(t.distinct_strings(), 38, "{abi:?}");
        assert_eq!(t.distinct_hosts().len(), 37);
        assert_eq!(t.distinct_hosts()[36], "node036");
        assert_eq!(t.distinct_executables(), ["/opt/app/bin/ring"]);
        assert!(
            t.heap_bytes() < ranks.len() * 13 + 1000,
            "{}",
            t.heap_bytes()
        );
        std::fs::remove_dir_all(dir).ok();
    }
}

/// The errors of reading `ranks` under `limits` from a core and from
/// plain memory, in that order.
fn failures(ranks: usize, hosts: usize, limits: Limits) -> [MpirError; 2] {
    let job = job(TargetAbi::X86_64, &spec(ranks, hosts));
    let (core, dir) = core_of(&job, &format!("fail-{ranks}-{hosts}"));
    let errors = [
        mpir::read_state(&core, &limits).unwrap_err(),
        mpir::read_state(&job, &limits).unwrap_err(),
    ];
    std::fs::remove_dir_all(dir).ok();
    errors
}

#[test]
fn a_string_longer_than_the_limit_fails_the_same_from_a_core() {
    // "node000" has 7 bytes: over a limit of 4, the core's mapped bytes do
    // not answer and the copying reader reports the limit.
    let limits = Limits {
        max_string_len: 4,
        ..Limits::default()
    };
    for err in failures(5, 1, limits) {
        assert!(
            matches!(err, MpirError::Read(ReadError::Unterminated { cap: 4, .. })),
            "{err}"
        );
    }
}

#[test]
fn strings_borrowed_from_a_core_count_against_the_read_budget() {
    // The table alone is 2,400 bytes; its 200 strings push it over.
    let limits = Limits {
        max_total_bytes: 3_000,
        ..Limits::default()
    };
    for err in failures(100, 100, limits) {
        assert!(
            matches!(
                err,
                MpirError::Read(ReadError::LimitExceeded {
                    limit: "max_total_bytes",
                    ..
                })
            ),
            "{err}"
        );
    }
}

#[test]
fn tables_compare_and_serialize_by_content() {
    let a = ProcTable::from_processes([
        MpirProcess {
            host_name: "a",
            executable_name: "x",
            pid: 1,
        },
        MpirProcess {
            host_name: "b",
            executable_name: "x",
            pid: 2,
        },
    ]);
    let b = ProcTable::from_processes([
        MpirProcess {
            host_name: "a",
            executable_name: "x",
            pid: 1,
        },
        MpirProcess {
            host_name: "b",
            executable_name: "x",
            pid: 2,
        },
    ]);
    assert_eq!(a, b);
    let d = ProcTable::from_processes(a.iter().take(1));
    assert_ne!(a, d);
    assert_eq!(
        serde_json::to_value(&a).unwrap(),
        serde_json::json!([
            {"host_name": "a", "executable_name": "x", "pid": 1},
            {"host_name": "b", "executable_name": "x", "pid": 2},
        ])
    );
    assert!(a.get(2).is_none());
    assert!(ProcTable::default().is_empty());
}

/// Memory that hands out no borrowed strings (as a core's omitted
/// read-only file mappings, a live process or gdbserver) and counts the
/// reads that start at each address.
struct Counting {
    inner: mpidd_read::SyntheticMemory,
    reads: std::cell::RefCell<std::collections::HashMap<u64, usize>>,
}

impl mpidd_read::TargetMemory for Counting {
    fn abi(&self) -> TargetAbi {
        self.inner.abi()
    }
    fn read_into(&self, addr: mpidd_types::TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        *self.reads.borrow_mut().entry(addr.0).or_default() += 1;
        self.inner.read_into(addr, buf)
    }
}

/// A launcher's table: 20,000 entries (several string batches) pointing
/// at 4 host names and one executable. Each of the 5 addresses is read
/// once for the whole table, not once per batch or per entry.
#[test]
fn each_distinct_string_address_is_read_once() {
    use mpidd_read::{SymbolTable, TargetMemory};
    use mpidd_types::TargetAddr;
    let abi = TargetAbi::X86_64;
    let n = 20_000u64;
    let strings = 0x1000u64;
    let names = ["node-a", "node-b", "node-c", "node-d", "/opt/app/ring"];
    let mut text = Vec::new();
    let mut addrs = Vec::new();
    for s in names {
        addrs.push(strings + text.len() as u64);
        text.extend_from_slice(s.as_bytes());
        text.push(0);
    }
    let table = 0x10_0000u64;
    let mut entries = Vec::new();
    for i in 0..n {
        entries.extend_from_slice(&addrs[(i * 4 / n) as usize].to_le_bytes());
        entries.extend_from_slice(&addrs[4].to_le_bytes());
        entries.extend_from_slice(&(1000 + i as i32).to_le_bytes());
        entries.extend_from_slice(&[0; 4]);
    }
    let vars = 0x8000u64;
    let mut v = Vec::new();
    v.extend_from_slice(&table.to_le_bytes());
    v.extend_from_slice(&(n as i32).to_le_bytes());
    v.extend_from_slice(&1i32.to_le_bytes());
    let mut inner = mpidd_read::SyntheticMemory::new(abi);
    inner.map(TargetAddr(strings), text);
    inner.map(TargetAddr(table), entries);
    inner.map(TargetAddr(vars), v);
    let mut syms = SymbolTable::new();
    syms.insert("starter", "MPIR_proctable", TargetAddr(vars), 8);
    syms.insert("starter", "MPIR_proctable_size", TargetAddr(vars + 8), 4);
    syms.insert("starter", "MPIR_debug_state", TargetAddr(vars + 12), 4);
    let mem = Counting {
        inner,
        reads: Default::default(),
    };
    assert!(mem.borrow_c_string(TargetAddr(strings), 64).is_none());
    let state = mpir::read_state_from(&mem, &syms, &Limits::default()).unwrap();
    let t = &state.proctable;
    assert_eq!(t.len() as u64, n);
    assert_eq!(t.get(0).unwrap().host_name, "node-a");
    assert_eq!(t.get(n as usize - 1).unwrap().host_name, "node-d");
    assert_eq!(t.get(12_345).unwrap().executable_name, "/opt/app/ring");
    assert_eq!(t.get(12_345).unwrap().pid, 13_345);
    assert_eq!(t.distinct_strings(), 5);
    let reads = mem.reads.borrow();
    for (a, name) in addrs.iter().zip(names) {
        assert_eq!(reads.get(a), Some(&1), "{name} at {a:#x}");
    }
}
