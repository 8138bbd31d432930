//! Inputs the `ompi_ob1_queues` fuzz target (fuzz/fuzz_targets/
//! ompi_ob1_queues.rs) found, and the bounds it checks, each reduced to
//! the smallest Open MPI process that shows it: a corrupt target must give
//! a reading that holds together or a typed error, never a panic, a hang,
//! an unbounded reading or one at odds with itself.

use std::collections::BTreeMap;

use mpidd_read::TargetParts;
use mpidd_read::{Limits, SymbolTable, SyntheticMemory};
use mpidd_types::{TargetAbi, TargetAddr};
use mpiq_core::compare::compare;
use mpiq_core::model::ProcessQueues;
use mpiq_core::{DecodeError, LayoutTable, OmpiOb1, QueueDecoder, OB1_LAYOUT};

/// Every question of `OB1_LAYOUT` answered: each member an 8-byte slot of
/// its own after the 32 bytes of the `opal_list_item_t` that requests and
/// fragments begin with (their class pointer at 0, their links at 16 and
/// 24, as in Open MPI); enumerators Open MPI 4.1's. Returns the table and
/// every member's offset, by `type.member`. Open MPI 4.1's shape: no
/// `c_index`, the name an array in the communicator.
fn layout() -> (LayoutTable, BTreeMap<String, u64>) {
    let mut t = LayoutTable::default();
    let mut at = BTreeMap::new();
    for need in OB1_LAYOUT.iter().filter(|n| !n.is_enum) {
        let ty = need.type_name;
        let mut next = 32;
        for &m in need.members.iter().filter(|&&m| m != "c_index") {
            let offset = match m {
                "obj_class" => 0,
                "opal_list_next" | "super.super.opal_list_next" => 16,
                "opal_list_prev" | "super.super.opal_list_prev" => 24,
                _ => {
                    next += 8;
                    next - 8
                }
            };
            if m == "c_name" {
                t.add_array(ty, m, offset, 8, 8);
            } else {
                t.add_member(ty, m, offset, 8);
            }
            at.insert(format!("{ty}.{m}"), offset);
        }
        t.add_type(ty, next.max(64));
        at.insert(ty.to_string(), next.max(64));
    }
    // A fragment ends with room for two segments, as Open MPI's ends with
    // an array of 16.
    let frag = "mca_pml_ob1_recv_frag_t";
    let (segments, seg) = (
        at[&format!("{frag}.segments")],
        at["mca_btl_base_segment_t"],
    );
    t.add_array(frag, "segments", segments, 2 * seg, 2)
        .add_type(frag, segments + 2 * seg);
    at.insert(frag.to_string(), segments + 2 * seg);
    t.add_enum(
        "ompi_request_state_t",
        &[("OMPI_REQUEST_INVALID", 0), ("OMPI_REQUEST_CANCELLED", 3)],
    )
    .add_enum("ompi_request_type_t", &[("OMPI_REQUEST_PML", 0)])
    .add_enum(
        "mca_pml_base_request_type_t",
        &[("MCA_PML_REQUEST_SEND", 1)],
    )
    .add_enum(
        "mca_pml_base_send_mode_t",
        &[
            ("MCA_PML_BASE_SEND_SYNCHRONOUS", 0),
            ("MCA_PML_BASE_SEND_BUFFERED", 2),
        ],
    );
    (t, at)
}

/// A little-endian 64-bit process: one region of memory at `BASE`, and the
/// symbols the decoder starts from.
struct Process {
    bytes: Vec<u8>,
    at: BTreeMap<String, u64>,
    symbols: SymbolTable,
}

const BASE: u64 = 0x10_0000;

impl Process {
    /// Selected PML ob1, an empty send-request free list, and an
    /// `ompi_mpi_communicators` of `table` (communicator addresses).
    fn new(at: BTreeMap<String, u64>, table: &[u64]) -> Process {
        let mut p = Process {
            bytes: vec![0; 0x10000],
            at,
            symbols: SymbolTable::new(),
        };
        let component = BASE;
        p.text(
            component + p.off("mca_pml_base_component_t.pmlm_version.mca_component_name"),
            "ob1",
        );
        p.symbols.insert(
            "libmpi.so.40",
            "mca_pml_base_selected_component",
            TargetAddr(component),
            64,
        );
        let fl = BASE + 0x100;
        let sentinel =
            fl + p.off("opal_free_list_t.fl_allocations") + p.off("opal_list_t.opal_list_sentinel");
        p.word(
            sentinel + p.off("opal_list_item_t.opal_list_next"),
            sentinel,
        );
        p.word(
            sentinel + p.off("opal_list_item_t.opal_list_prev"),
            sentinel,
        );
        let frag = p.off("mca_pml_ob1_send_request_t");
        p.word(fl + p.off("opal_free_list_t.fl_frag_size"), frag);
        p.word(fl + p.off("opal_free_list_t.fl_frag_alignment"), 8);
        p.symbols.insert(
            "libmpi.so.40",
            "mca_pml_base_send_requests",
            TargetAddr(fl),
            128,
        );
        let pa = BASE + 0x300;
        let addrs = BASE + 0x400;
        p.word(pa + p.off("opal_pointer_array_t.size"), table.len() as u64);
        p.word(pa + p.off("opal_pointer_array_t.addr"), addrs);
        for (i, &c) in table.iter().enumerate() {
            p.word(addrs + 8 * i as u64, c);
        }
        p.symbols
            .insert("libmpi.so.40", "ompi_mpi_communicators", TargetAddr(pa), 32);
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

    /// A communicator at `addr` with an empty group and no ob1 state; its
    /// name must fit the 8-byte slot.
    fn comm(&mut self, addr: u64, name: &str, context_id: u64) {
        self.text(addr + self.off("ompi_communicator_t.c_name"), name);
        self.word(
            addr + self.off("ompi_communicator_t.c_contextid"),
            context_id,
        );
        let group = addr + 0x200;
        self.word(addr + self.off("ompi_communicator_t.c_local_group"), group);
    }

    /// An empty `opal_list_t` at `list`: its sentinel links to itself.
    fn empty_list(&mut self, list: u64) {
        let sentinel = list + self.off("opal_list_t.opal_list_sentinel");
        self.word(
            sentinel + self.off("opal_list_item_t.opal_list_next"),
            sentinel,
        );
        self.word(
            sentinel + self.off("opal_list_item_t.opal_list_prev"),
            sentinel,
        );
    }

    /// `items` linked into the `opal_list_t` at `list`.
    fn list(&mut self, list: u64, items: &[u64]) {
        let sentinel = list + self.off("opal_list_t.opal_list_sentinel");
        let mut ring = vec![sentinel];
        ring.extend_from_slice(items);
        for (i, &node) in ring.iter().enumerate() {
            let next = ring[(i + 1) % ring.len()];
            self.word(node + self.off("opal_list_item_t.opal_list_next"), next);
        }
    }

    fn read(self, types: &LayoutTable) -> Result<ProcessQueues, DecodeError> {
        self.read_with(types, &Limits::default())
    }

    fn read_with(self, types: &LayoutTable, limits: &Limits) -> Result<ProcessQueues, DecodeError> {
        let mut memory = SyntheticMemory::new(TargetAbi::X86_64);
        memory.map(TargetAddr(BASE), self.bytes);
        let target = TargetParts {
            memory: &memory,
            symbols: &self.symbols,
            layouts: types,
        };
        OmpiOb1::new(&target, limits)?.read_queues(&target, limits)
    }
}

/// Found by the fuzz target within seconds: the communicator table
/// holding the same communicator twice (or two with one context id) gave
/// two communicators with one unique id, so a reading differed from
/// itself when compared. A context id is the communicator's index in the
/// table; the second entry is left out, and said so.
#[test]
fn a_communicator_listed_twice_is_read_once() {
    let (types, at) = layout();
    let world = BASE + 0x1000;
    let other = BASE + 0x2000;
    let mut p = Process::new(at, &[world, world, other]);
    p.comm(world, "world", 0);
    p.comm(other, "other", 0);
    let q = p.read(&types).expect("a reading");
    assert_eq!(q.communicators.len(), 1, "{q:#?}");
    assert_eq!(q.communicators[0].name, "world");
    assert_eq!(q.diagnostics.len(), 2, "{:#?}", q.diagnostics);
    assert!(
        q.diagnostics[0].contains("ompi_mpi_communicators[1]")
            && q.diagnostics[0].contains("repeats the context id 0"),
        "{:#?}",
        q.diagnostics
    );
    assert!(compare(&q, &q).is_empty());
}

/// The bound the fuzz target checks: one communicator's posted receives
/// are one queue, however ob1 spreads them over lists (the wildcard one
/// and one per peer), and the queue is bounded by `max_list_len` as a
/// list is. Two peers' lists of 6 receives each are within a limit of 12
/// and past one of 11; a queue past the limit fails that communicator's
/// queues, naming the bound, and the reading goes on.
#[test]
fn a_queue_spread_over_lists_is_bounded_as_one_list() {
    let (types, at) = layout();
    let read = |limit: u64| {
        let world = BASE + 0x1000;
        let mut p = Process::new(at.clone(), &[world]);
        p.comm(world, "world", 0);
        let pml = BASE + 0x1400;
        p.word(world + p.off("ompi_communicator_t.c_pml_comm"), pml);
        p.empty_list(pml + p.off("mca_pml_ob1_comm_t.wild_receives"));
        let peers = BASE + 0x1800;
        p.word(pml + p.off("mca_pml_ob1_comm_t.procs"), peers);
        p.word(pml + p.off("mca_pml_ob1_comm_t.num_procs"), 2);
        let size = p.off("mca_pml_ob1_recv_request_t");
        for i in 0..2u64 {
            let peer = BASE + 0x2000 + i * 0x400;
            p.word(peers + 8 * i, peer);
            p.empty_list(peer + p.off("mca_pml_ob1_comm_proc_t.unexpected_frags"));
            let requests: Vec<u64> = (0..6).map(|k| BASE + 0x4000 + (i * 6 + k) * size).collect();
            p.list(
                peer + p.off("mca_pml_ob1_comm_proc_t.specific_receives"),
                &requests,
            );
        }
        let limits = Limits {
            max_list_len: limit,
            ..Limits::default()
        };
        p.read_with(&types, &limits).expect("a reading")
    };
    let within = read(12);
    assert_eq!(
        within.communicators[0].pending_receives.operations().len(),
        12
    );
    let past = read(11);
    let text = format!("{:?}", past.communicators[0].pending_receives);
    assert!(
        text.contains("posted receives of one communicator") && text.contains("limit of 11"),
        "{text}"
    );
}

/// A bound the fuzz target led to: a fragment's `num_segments` was taken
/// as it came (up to `max_table_entries`, 16 million by default), each
/// segment past the first read from the target one by one. Open MPI's
/// fragment has room for 16; a count past its room is a corrupt fragment,
/// named, and that communicator's unexpected messages say so.
#[test]
fn a_fragment_with_more_segments_than_room_is_corrupt() {
    let (types, at) = layout();
    let read = |segments: u64| {
        let world = BASE + 0x1000;
        let mut p = Process::new(at.clone(), &[world]);
        p.comm(world, "world", 0);
        let pml = BASE + 0x1400;
        p.word(world + p.off("ompi_communicator_t.c_pml_comm"), pml);
        p.empty_list(pml + p.off("mca_pml_ob1_comm_t.wild_receives"));
        let peers = BASE + 0x1800;
        p.word(pml + p.off("mca_pml_ob1_comm_t.procs"), peers);
        p.word(pml + p.off("mca_pml_ob1_comm_t.num_procs"), 1);
        let peer = BASE + 0x2000;
        p.word(peers, peer);
        p.empty_list(peer + p.off("mca_pml_ob1_comm_proc_t.specific_receives"));
        let frag = BASE + 0x3000;
        p.list(
            peer + p.off("mca_pml_ob1_comm_proc_t.unexpected_frags"),
            &[frag],
        );
        let f = "mca_pml_ob1_recv_frag_t";
        p.word(frag + p.off(&format!("{f}.hdr.hdr_common.hdr_type")), 0x41);
        p.word(frag + p.off(&format!("{f}.num_segments")), segments);
        let first = frag + p.off(&format!("{f}.segments"));
        p.word(
            first + p.off("mca_btl_base_segment_t.seg_addr"),
            BASE + 0x5000,
        );
        p.word(first + p.off("mca_btl_base_segment_t.seg_len"), 14 + 20);
        p.read(&types).expect("a reading")
    };
    let fine = read(1);
    let ops = fine.communicators[0].unexpected_messages.operations();
    assert_eq!(ops.len(), 1);
    assert_eq!(
        ops[0].actual_length, 20,
        "the segment's data, less the header"
    );
    let corrupt = read(1_000_000);
    let text = format!("{:?}", corrupt.communicators[0].unexpected_messages);
    assert!(
        text.contains("num_segments 1000000 is more than the 2 segments it has room for"),
        "{text}"
    );
}

/// Not a fuzz finding: the refusal of a process whose PML is not ob1
/// names the library found (its version from `opal_version_string`) and
/// says what makes its queues readable.
#[test]
fn another_pml_is_refused_with_a_way_out() {
    let (types, at) = layout();
    let refusal = |pml: &str| {
        let mut p = Process::new(at.clone(), &[]);
        let name = BASE + p.off("mca_pml_base_component_t.pmlm_version.mca_component_name");
        p.text(name, "\0\0\0\0\0\0\0\0");
        p.text(name, pml);
        p.text(BASE + 0x800, "4.1.4\0");
        p.symbols.insert(
            "libopen-pal.so.40",
            "opal_version_string",
            TargetAddr(BASE + 0x800),
            32,
        );
        match p.read(&types) {
            Err(e @ DecodeError::Unsupported { .. }) => e.to_string(),
            other => panic!("{pml:?}: {other:?}"),
        }
    };
    // The UCX PML has its own decoder, which `detect` chooses: ob1's
    // says so rather than offering a way around it.
    let ucx = refusal("ucx");
    for needle in [
        "Open MPI with the \"ucx\" PML, which the ob1 decoder does not read",
        "(the library: libmpi.so.40, Open MPI 4.1.4, no build-id found)",
        "The ucx PML's own decoder reads it",
    ] {
        assert!(ucx.contains(needle), "{needle:?} missing from: {ucx}");
    }
    let cm = refusal("cm");
    assert!(
        cm.contains("the \"cm\" PML: only ob1 and ucx have a native decoder"),
        "{cm}"
    );
    assert!(
        cm.contains("Open MPI with the ob1 or ucx PML (checked on 4.1)"),
        "{cm}"
    );
    assert!(cm.contains("`mpirun --mca pml ob1`"), "{cm}");
    let none = refusal("");
    assert!(none.contains("has not selected a PML yet"), "{none}");
    assert!(none.contains("once MPI_Init has returned"), "{none}");
}

/// Open MPI 5.0's shape of the same layout: the communicator's name
/// pointed to, and its slot in the table (`c_index`, its context id) in a
/// member of its own.
fn layout_5_0() -> (LayoutTable, BTreeMap<String, u64>) {
    let (mut t, mut at) = layout();
    let c = "ompi_communicator_t";
    let index = at[c];
    t.add_member(c, "c_name", at[&format!("{c}.c_name")], 8)
        .add_member(c, "c_index", index, 4)
        .add_type(c, index + 8);
    at.insert(format!("{c}.c_index"), index);
    (t, at)
}

impl Process {
    /// A 5.0 communicator at `addr` in slot `index`, named by the text at
    /// `addr + 0x300`.
    fn comm_5_0(&mut self, addr: u64, name: &str, index: u64) {
        self.text(addr + 0x300, name);
        self.word(addr + self.off("ompi_communicator_t.c_name"), addr + 0x300);
        self.word(addr + self.off("ompi_communicator_t.c_index"), index);
        let group = addr + 0x200;
        self.word(addr + self.off("ompi_communicator_t.c_local_group"), group);
    }
}

/// Open MPI 5.0: the table is indexed by `c_index`, which is each
/// communicator's context id; a slot held while a context id is agreed on
/// (`OMPI_COMM_SENTINEL`, 1) is no communicator; the name is read where
/// `c_name` points.
#[test]
fn open_mpi_5_communicators_by_c_index_with_sentinels() {
    let (types, at) = layout_5_0();
    let world = BASE + 0x1000;
    let dup = BASE + 0x2000;
    let mut p = Process::new(at, &[world, 1, dup]);
    p.comm_5_0(world, "MPI_COMM_WORLD", 0);
    p.comm_5_0(dup, "a longer name than 8 bytes", 2);
    let q = p.read(&types).expect("a reading");
    let names: Vec<(&str, Option<i64>)> = q
        .communicators
        .iter()
        .map(|c| (c.name.as_str(), c.context_id))
        .collect();
    assert_eq!(
        names,
        [
            ("MPI_COMM_WORLD", Some(0)),
            ("a longer name than 8 bytes", Some(2))
        ]
    );
    assert!(q.diagnostics.is_empty(), "{:#?}", q.diagnostics);
}

/// A `c_index` past the table's slots is a corrupt communicator: a typed
/// error naming it and its slot, never a context id nothing can hold.
#[test]
fn a_c_index_past_the_table_is_corrupt() {
    let (types, at) = layout_5_0();
    let world = BASE + 0x1000;
    let stray = BASE + 0x2000;
    let mut p = Process::new(at, &[world, stray]);
    p.comm_5_0(world, "MPI_COMM_WORLD", 0);
    p.comm_5_0(stray, "stray", 4096);
    match p.read(&types) {
        Err(DecodeError::Corrupt { what, addr, reason }) => {
            assert_eq!(what, "ompi_communicator_t");
            assert_eq!(addr, TargetAddr(stray));
            assert!(
                reason.contains("c_index 4096")
                    && reason.contains("2 slots")
                    && reason.contains("slot 1"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
}
