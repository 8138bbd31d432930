//! The UCX PML's decoder on small synthetic Open MPI processes: what it
//! gives when UCX's own layouts are unknown (the communicators, and one
//! line saying why the queues are not read), before the PML made its
//! worker, on a process of another PML, and on a corrupt communicator
//! table. The real jobs are examples/tests/ompi_ucx_queues.rs'.

use std::collections::BTreeMap;

use mpidd_read::{Limits, SymbolTable, SyntheticMemory, TargetParts};
use mpidd_types::{TargetAbi, TargetAddr};
use mpiq_core::model::Queue;
use mpiq_core::{
    build_decoder, identify, DecodeError, DecoderKind, LayoutTable, OmpiUcx, OMPI_UCX_LAYOUT,
};

const BASE: u64 = 0x10_0000;

/// Every question of `OMPI_UCX_LAYOUT` answered, each member an 8-byte
/// slot of its own (`proc_endpoints` an array of two); the offsets by
/// `type.member`.
fn layout() -> (LayoutTable, BTreeMap<String, u64>) {
    let mut t = LayoutTable::default();
    let mut at = BTreeMap::new();
    for need in OMPI_UCX_LAYOUT.iter().filter(|n| !n.is_enum) {
        let ty = need.type_name;
        let mut next = 0;
        // Open MPI 4.1's shape: no `c_index`, the name an array.
        for &m in need.members.iter().filter(|&&m| m != "c_index") {
            if m == "c_name" {
                t.add_array(ty, m, next, 8, 8);
                at.insert(format!("{ty}.{m}"), next);
                next += 8;
                continue;
            }
            if m == "proc_endpoints" {
                t.add_array(ty, m, next, 16, 2);
                at.insert(format!("{ty}.{m}"), next);
                next += 16;
                continue;
            }
            t.add_member(ty, m, next, 8);
            at.insert(format!("{ty}.{m}"), next);
            next += 8;
        }
        t.add_type(ty, next.max(64));
    }
    (t, at)
}

/// A little-endian 64-bit process with the UCX PML's symbols: selected
/// PML `pml`, `ompi_pml_ucx` whose worker is `worker`, and a communicator
/// table of one `MPI_COMM_WORLD` (context id 0, rank 1 of the world ranks
/// 0 and 1, each with a proc).
struct Process {
    bytes: Vec<u8>,
    at: BTreeMap<String, u64>,
    symbols: SymbolTable,
}

impl Process {
    fn new(at: BTreeMap<String, u64>, pml: &str, worker: u64) -> Process {
        let mut p = Process {
            bytes: vec![0; 0x4000],
            at,
            symbols: SymbolTable::new(),
        };
        let component = BASE;
        p.text(
            component + p.off("mca_pml_base_component_t.pmlm_version.mca_component_name"),
            pml,
        );
        p.symbols.insert(
            "libmpi.so.40",
            "mca_pml_base_selected_component",
            TargetAddr(component),
            64,
        );
        let module = BASE + 0x100;
        p.word(module + p.off("mca_pml_ucx_module_t.ucp_worker"), worker);
        p.symbols
            .insert("mca_pml_ucx.so", "ompi_pml_ucx", TargetAddr(module), 64);
        let (pa, table, comm, group, procs) = (
            BASE + 0x200,
            BASE + 0x300,
            BASE + 0x400,
            BASE + 0x600,
            BASE + 0x700,
        );
        p.word(pa + p.off("opal_pointer_array_t.size"), 1);
        p.word(pa + p.off("opal_pointer_array_t.addr"), table);
        p.word(table, comm);
        p.symbols
            .insert("libmpi.so.40", "ompi_mpi_communicators", TargetAddr(pa), 32);
        p.text(comm + p.off("ompi_communicator_t.c_name"), "WORLD");
        p.word(comm + p.off("ompi_communicator_t.c_my_rank"), 1);
        p.word(comm + p.off("ompi_communicator_t.c_local_group"), group);
        p.word(group + p.off("ompi_group_t.grp_proc_count"), 2);
        p.word(group + p.off("ompi_group_t.grp_proc_pointers"), procs);
        for rank in 0..2u64 {
            let proc = BASE + 0x800 + 0x100 * rank;
            p.word(procs + 8 * rank, proc);
            p.word(proc + p.off("ompi_proc_t.super.proc_name.vpid"), rank);
        }
        p
    }

    fn off(&self, key: &str) -> u64 {
        *self
            .at
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in the layout"))
    }

    fn word(&mut self, addr: u64, value: u64) {
        let i = (addr - BASE) as usize;
        self.bytes[i..i + 8].copy_from_slice(&value.to_le_bytes());
    }

    fn text(&mut self, addr: u64, s: &str) {
        let i = (addr - BASE) as usize;
        self.bytes[i..i + s.len()].copy_from_slice(s.as_bytes());
    }

    fn read(self, types: &LayoutTable) -> Result<mpiq_core::model::ProcessQueues, DecodeError> {
        let mut memory = SyntheticMemory::new(TargetAbi::X86_64);
        memory.map(TargetAddr(BASE), self.bytes);
        let target = TargetParts {
            memory: &memory,
            symbols: &self.symbols,
            layouts: types,
        };
        let limits = Limits::default();
        // mca_pml_ucx.so's module is loaded and ob1's is not: the layouts
        // are chosen for the UCX PML's decoder.
        assert_eq!(
            identify(&memory, &self.symbols, &limits)?.kind,
            DecoderKind::OmpiUcx
        );
        let decoder = build_decoder(&target, &limits)?;
        assert_eq!(decoder.name(), "native Open MPI UCX PML decoder");
        decoder.read_queues(&target, &limits)
    }
}

/// Without UCX's types the queues cannot be read: the communicators are,
/// and one diagnostic says what is missing; each queue points to it.
#[test]
fn without_ucx_layouts_the_communicators_and_one_line_why() {
    let (types, at) = layout();
    let q = Process::new(at, "ucx", BASE + 0x3000)
        .read(&types)
        .expect("a reading");
    assert_eq!(q.global_rank, 1);
    assert_eq!(q.communicators.len(), 1);
    let world = &q.communicators[0];
    assert_eq!(world.name, "WORLD");
    assert_eq!(world.group.as_deref(), Some(&[0, 1][..]));
    assert_eq!(q.diagnostics.len(), 1, "{:#?}", q.diagnostics);
    let why = &q.diagnostics[0];
    assert!(why.contains("unreadable without UCX's types"), "{why}");
    assert!(why.contains("ucp_request_t"), "{why}");
    for queue in [
        &world.pending_sends,
        &world.pending_receives,
        &world.unexpected_messages,
    ] {
        match queue {
            Queue::Failed { operations, error } => {
                assert!(operations.is_empty());
                assert!(error.contains("the diagnostics say why"), "{error}");
            }
            other => panic!("{other:?}"),
        }
    }
}

/// Before MPI_Init made the worker (or after MPI_Finalize) there is none
/// to read, and the reading says so.
#[test]
fn no_worker_yet_is_said() {
    let (types, at) = layout();
    let q = Process::new(at, "ucx", 0).read(&types).expect("a reading");
    assert_eq!(q.diagnostics.len(), 1, "{:#?}", q.diagnostics);
    assert!(
        q.diagnostics[0].contains("ompi_pml_ucx.ucp_worker is NULL"),
        "{:?}",
        q.diagnostics
    );
}

/// A communicator table that claims 2^40 entries is an error naming it,
/// not an allocation of that size.
#[test]
fn a_huge_communicator_table_is_refused() {
    let (types, at) = layout();
    let mut p = Process::new(at, "ucx", BASE + 0x3000);
    let size = BASE + 0x200 + p.off("opal_pointer_array_t.size");
    p.word(size, 1 << 40);
    let e = p.read(&types).unwrap_err().to_string();
    assert!(e.contains("ompi_mpi_communicators"), "{e}");
}

/// The UCX PML's decoder refuses a process of the ob1 PML, pointing to
/// ob1's decoder.
#[test]
fn another_pml_is_refused() {
    let (types, at) = layout();
    let p = Process::new(at, "ob1", BASE + 0x3000);
    let mut memory = SyntheticMemory::new(TargetAbi::X86_64);
    memory.map(TargetAddr(BASE), p.bytes);
    let target = TargetParts {
        memory: &memory,
        symbols: &p.symbols,
        layouts: &types,
    };
    let e = OmpiUcx::new(&target, &Limits::default()).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, DecodeError::Unsupported { .. }), "{text}");
    assert!(
        text.contains("the \"ob1\" PML, which the ucx decoder does not read"),
        "{text}"
    );
    assert!(
        text.contains("The ob1 PML's own decoder reads it"),
        "{text}"
    );
}
