//! The MPICH resolver on hand-laid targets: a big-endian 32-bit process
//! (PowerPC) whose MPICH objects are laid out here, member by member,
//! independently of the decoders, with layouts given by a table rather than
//! any compiler. The cases are the ones a corrupt or hostile target brings:
//! loops in lists, huge and negative counts, unterminated strings, handles
//! of the wrong kind or out of range, a missing member.

use mpidd_read::{Limits, ReadError, SymbolTable, SyntheticMemory};
use mpidd_types::{TargetAbi, TargetAddr};
use mpihandles::{
    Availability, Details, HandleError, HandleKind, LayoutTable, Mpich, ObjectState, Peer,
    RequestKind,
};

const BASE: u64 = 0x1_0000;
const SIZE: usize = 0x1_0000;

/// A 32-bit big-endian target being laid out.
struct Fake {
    bytes: Vec<u8>,
    symbols: SymbolTable,
    layouts: LayoutTable,
}

impl Fake {
    fn new() -> Fake {
        let mut layouts = LayoutTable::default();
        layouts
            .add_enum(
                "MPII_Object_kind",
                &[
                    ("MPIR_COMM", 1),
                    ("MPIR_GROUP", 2),
                    ("MPIR_DATATYPE", 3),
                    ("MPIR_INFO", 7),
                    ("MPIR_REQUEST", 11),
                ],
            )
            .add_type("MPIR_Handle_common", 12)
            .add_member("MPIR_Handle_common", "next", 8, 4)
            .add_type("MPIR_Object_alloc_t", 40);
        for (name, offset) in [
            ("avail", 0),
            ("initialized", 4),
            ("indirect", 8),
            ("indirect_size", 12),
            ("num_allocated", 16),
            ("num_avail", 20),
            ("kind", 24),
            ("size", 28),
            ("direct", 32),
            ("direct_size", 36),
        ] {
            layouts.add_member("MPIR_Object_alloc_t", name, offset, 4);
        }
        // Groups: handle, ref_count, size, rank, lrank_to_lpid; the map's
        // entries are a u64 lpid and an int.
        layouts
            .add_type("MPIR_Group", 20)
            .add_member("MPIR_Group", "handle", 0, 4)
            .add_member("MPIR_Group", "ref_count", 4, 4)
            .add_member("MPIR_Group", "size", 8, 4)
            .add_member("MPIR_Group", "rank", 12, 4)
            .add_member("MPIR_Group", "lrank_to_lpid", 16, 4)
            .add_type("MPII_Group_pmap_t", 16)
            .add_member("MPII_Group_pmap_t", "lpid", 0, 8)
            // Info: handle, ref_count, next, key, value.
            .add_type("MPIR_Info", 20)
            .add_member("MPIR_Info", "handle", 0, 4)
            .add_member("MPIR_Info", "ref_count", 4, 4)
            .add_member("MPIR_Info", "next", 8, 4)
            .add_member("MPIR_Info", "key", 12, 4)
            .add_member("MPIR_Info", "value", 16, 4)
            // A status as MPICH lays it out.
            .add_type("MPI_Status", 20)
            .add_member("MPI_Status", "count_lo", 0, 4)
            .add_member("MPI_Status", "count_hi_and_cancelled", 4, 4)
            .add_member("MPI_Status", "MPI_SOURCE", 8, 4)
            .add_member("MPI_Status", "MPI_TAG", 12, 4)
            .add_member("MPI_Status", "MPI_ERROR", 16, 4)
            // A request, with CH3's 16-bit match rank.
            .add_type("MPIR_Request", 64)
            .add_member("MPIR_Request", "handle", 0, 4)
            .add_member("MPIR_Request", "ref_count", 4, 4)
            .add_member("MPIR_Request", "kind", 8, 4)
            .add_member("MPIR_Request", "cc_ptr", 12, 4)
            .add_member("MPIR_Request", "cc", 16, 4)
            .add_member("MPIR_Request", "comm", 20, 4)
            .add_member("MPIR_Request", "status", 24, 20)
            .add_member("MPIR_Request", "u.persist.real_request", 44, 4)
            .add_member("MPIR_Request", "dev.match.parts.tag", 48, 4)
            .add_member("MPIR_Request", "dev.match.parts.rank", 52, 2)
            .add_member_enum("MPIR_Request", "kind", "MPIR_Request_kind_t")
            .add_enum(
                "MPIR_Request_kind_t",
                &[
                    ("MPIR_REQUEST_KIND__SEND", 1),
                    ("MPIR_REQUEST_KIND__RECV", 2),
                    ("MPIR_REQUEST_KIND__PREQUEST_RECV", 4),
                ],
            );
        let mut fake = Fake {
            bytes: vec![0; SIZE],
            symbols: SymbolTable::new(),
            layouts,
        };
        // Present, for detection; no communicator is looked up here.
        fake.symbol("MPIR_Comm_builtin", 0xf000, 0);
        fake
    }

    fn symbol(&mut self, name: &str, at: u64, size: u64) {
        self.symbols
            .insert("libmpi.so.12", name, TargetAddr(BASE + at), size);
    }

    fn u32(&mut self, at: u64, v: u32) {
        let i = at as usize;
        self.bytes[i..i + 4].copy_from_slice(&v.to_be_bytes());
    }

    fn u16(&mut self, at: u64, v: u16) {
        let i = at as usize;
        self.bytes[i..i + 2].copy_from_slice(&v.to_be_bytes());
    }

    fn u64(&mut self, at: u64, v: u64) {
        let i = at as usize;
        self.bytes[i..i + 8].copy_from_slice(&v.to_be_bytes());
    }

    /// A pointer to offset `at` of the region.
    fn ptr(at: u64) -> u32 {
        (BASE + at) as u32
    }

    fn text(&mut self, at: u64, s: &[u8]) {
        let i = at as usize;
        self.bytes[i..i + s.len()].copy_from_slice(s);
    }

    /// An allocator at `at`: initialized, `num_avail` free objects from
    /// `avail`, and one indirect block table at `indirect` with `blocks`
    /// blocks of `per_block` objects of `size` bytes besides `direct`.
    #[allow(clippy::too_many_arguments)]
    fn allocator(
        &mut self,
        at: u64,
        avail: u32,
        num_avail: u32,
        indirect: u32,
        blocks: u32,
        per_block: u32,
        direct: u32,
        size: u32,
    ) {
        self.u32(at, avail);
        self.u32(at + 4, 1);
        self.u32(at + 8, indirect);
        self.u32(at + 12, blocks);
        self.u32(at + 16, direct + blocks * per_block);
        self.u32(at + 20, num_avail);
        self.u32(at + 28, size);
        self.u32(at + 36, direct);
    }

    /// A group pool: 4 direct groups at 0x100, allocator at 0x80.
    fn group_pool(&mut self) {
        self.symbol("MPIR_Group_direct", 0x100, 4 * 20);
        self.symbol("MPIR_Group_mem", 0x80, 40);
        self.symbol("MPIR_Group_builtin", 0xe00, 0);
        self.allocator(0x80, 0, 0, 0, 0, 0, 4, 20);
        for i in 0..4u32 {
            self.u32(0x100 + u64::from(i) * 20, 0x8800_0000 | i);
        }
    }

    fn group(&mut self, index: u64, size: u32, rank: u32, map: u32) {
        let at = 0x100 + index * 20;
        self.u32(at + 4, 1);
        self.u32(at + 8, size);
        self.u32(at + 12, rank);
        self.u32(at + 16, map);
    }

    /// An info pool: 4 direct objects at 0x300, allocator at 0x280.
    fn info_pool(&mut self) {
        self.symbol("MPIR_Info_direct", 0x300, 4 * 20);
        self.symbol("MPIR_Info_mem", 0x280, 40);
        self.symbol("MPIR_Info_builtin", 0xe40, 0);
        self.allocator(0x280, 0, 0, 0, 0, 0, 4, 20);
        for i in 0..4u32 {
            self.u32(0x300 + u64::from(i) * 20, 0x9c00_0000 | i);
        }
    }

    fn info(&mut self, index: u64, next: u32, key: u32, value: u32) {
        let at = 0x300 + index * 20;
        self.u32(at + 8, next);
        self.u32(at + 12, key);
        self.u32(at + 16, value);
    }

    fn resolve(&self, kind: HandleKind, value: i64) -> Result<mpihandles::HandleView, HandleError> {
        self.resolve_with(kind, value, Limits::default())
    }

    fn resolve_with(
        &self,
        kind: HandleKind,
        value: i64,
        limits: Limits,
    ) -> Result<mpihandles::HandleView, HandleError> {
        let mut mem = SyntheticMemory::new(TargetAbi::POWERPC);
        mem.map(TargetAddr(BASE), self.bytes.clone());
        let mpich = Mpich::from_parts(&mem, &self.symbols, &self.layouts, limits)?;
        mpich.resolve(kind, value)
    }
}

fn group_details(v: &mpihandles::HandleView) -> &mpihandles::GroupDetails {
    match &v.details {
        Details::Group(g) => g,
        other => panic!("not a group: {other:?}"),
    }
}

#[test]
fn a_group_and_its_world_ranks_big_endian() {
    let mut f = Fake::new();
    f.group_pool();
    f.group(1, 3, 2, Fake::ptr(0x800));
    for (i, lpid) in [5u64, 0x1_0000_0007, 1].iter().enumerate() {
        f.u64(0x800 + i as u64 * 16, *lpid);
    }
    let v = f.resolve(HandleKind::Group, 0x8800_0001).unwrap();
    assert_eq!(v.state, Availability::Value(ObjectState::Live));
    assert_eq!(v.reference_count, Availability::Value(1));
    let g = group_details(&v);
    assert_eq!(g.size, Availability::Value(3));
    assert_eq!(g.rank, Availability::Value(Some(2)));
    assert_eq!(
        g.world_ranks,
        Availability::Value(vec![5, 0x1_0000_0007, 1]),
        "64-bit lpids, big-endian"
    );
    // No communicator pool here: that list is not available, and says why.
    assert!(g.communicators.reason().unwrap().contains("MPIR_Comm"));
}

#[test]
fn huge_and_negative_group_sizes_are_refused_before_allocating() {
    let mut f = Fake::new();
    f.group_pool();
    f.group(0, 0x7fff_ffff, 0, Fake::ptr(0x800));
    f.group(1, (-5i32) as u32, 0, Fake::ptr(0x800));
    let huge = f.resolve(HandleKind::Group, 0x8800_0000).unwrap();
    let reason = group_details(&huge)
        .world_ranks
        .reason()
        .unwrap()
        .to_string();
    assert!(reason.contains("max_table_entries"), "{reason}");
    let negative = f.resolve(HandleKind::Group, 0x8800_0001).unwrap();
    let reason = group_details(&negative)
        .world_ranks
        .reason()
        .unwrap()
        .to_string();
    assert!(reason.contains("negative"), "{reason}");
}

#[test]
fn objects_on_the_free_list_are_stale_and_a_looping_free_list_is_an_error() {
    let mut f = Fake::new();
    f.group_pool();
    // Groups 2 and 3 are free: avail -> 3 -> 2 -> NULL.
    let (g2, g3) = (0x100 + 2 * 20, 0x100 + 3 * 20);
    f.u32(0x80, Fake::ptr(g3));
    f.u32(0x80 + 20, 2);
    f.u32(g3 + 8, Fake::ptr(g2));
    let v = f.resolve(HandleKind::Group, 0x8800_0002).unwrap();
    assert_eq!(v.state, Availability::Value(ObjectState::Freed));
    assert_eq!(v.freed_by_implementation, Availability::Value(true));
    assert_eq!(v.freed_by_application, Availability::Value(true));
    assert!(matches!(v.details, Details::Undecoded { .. }));
    let live = f.resolve(HandleKind::Group, 0x8800_0000).unwrap();
    assert_eq!(live.state, Availability::Value(ObjectState::Live));
    assert!(live
        .freed_by_application
        .reason()
        .unwrap()
        .contains("MPI_Group_free"));

    // 2 -> 3 -> 2 ...
    f.u32(g2 + 8, Fake::ptr(g3));
    let e = f.resolve(HandleKind::Group, 0x8800_0000).unwrap_err();
    assert!(
        matches!(e, HandleError::Read(ReadError::Cycle { .. })),
        "{e}"
    );
    // A free list longer than the allocator says it is.
    f.u32(g2 + 8, Fake::ptr(0x100));
    let e = f.resolve(HandleKind::Group, 0x8800_0001).unwrap_err();
    assert!(e.to_string().contains("num_avail"), "{e}");
}

#[test]
fn wrong_kinds_null_handles_and_indices_out_of_range_say_so() {
    let mut f = Fake::new();
    f.group_pool();
    let e = f.resolve(HandleKind::Group, 0x8400_0001).unwrap_err();
    assert!(
        e.to_string()
            .contains("not an MPI_Group handle: its bits name MPIR_COMM (1)"),
        "{e}"
    );
    let e = f.resolve(HandleKind::Group, 0x0800_0000).unwrap_err();
    assert_eq!(
        e.to_string(),
        "0x08000000 is MPI_GROUP_NULL, the null MPI_Group: it refers to no object"
    );
    let e = f.resolve(HandleKind::Group, 0x8800_0004).unwrap_err();
    assert_eq!(
        e.to_string(),
        "0x88000004: direct index 4 is out of range (MPIR_Group_direct has 4)"
    );
    let e = f.resolve(HandleKind::Group, 0xc800_0000).unwrap_err();
    assert!(
        e.to_string().contains("indirect block 0 is out of range"),
        "{e}"
    );
    let e = f.resolve(HandleKind::Group, 0x1_0000_0000).unwrap_err();
    assert!(matches!(e, HandleError::BadValue { .. }), "{e}");
    // An empty slot: the object was never handed out.
    f.u32(0x100 + 3 * 20, 0);
    let e = f.resolve(HandleKind::Group, 0x8800_0003).unwrap_err();
    assert!(
        matches!(e, HandleError::NeverAllocated { found: 0, .. }),
        "{e}"
    );
}

#[test]
fn indirect_blocks_are_found_and_bounded() {
    let mut f = Fake::new();
    f.group_pool();
    // One indirect block of 4 groups at 0x1000, its table at 0xa00.
    f.allocator(0x80, 0, 0, Fake::ptr(0xa00), 1, 4, 4, 20);
    f.u32(0xa00, Fake::ptr(0x1000));
    for i in 0..4u32 {
        f.u32(0x1000 + u64::from(i) * 20, 0xc800_0000 | i);
    }
    f.u32(0x1000 + 2 * 20 + 8, 7);
    let v = f.resolve(HandleKind::Group, 0xc800_0002).unwrap();
    assert_eq!(
        v.object_address,
        Availability::Value(TargetAddr(BASE + 0x1000 + 40))
    );
    assert_eq!(group_details(&v).size, Availability::Value(7));
    let e = f.resolve(HandleKind::Group, 0xc800_0004).unwrap_err();
    assert_eq!(
        e.to_string(),
        "0xc8000004: index in its indirect block 4 is out of range (each block of MPIR_Group_mem has 4)"
    );
    let e = f.resolve(HandleKind::Group, 0xc800_1000).unwrap_err();
    assert!(
        e.to_string().contains("indirect block 1 is out of range"),
        "{e}"
    );
}

#[test]
fn info_lists_loops_and_unterminated_strings() {
    let mut f = Fake::new();
    f.info_pool();
    f.text(0x900, b"key_a\0one\0key_b\0two\0");
    // Head 0 -> 1 -> 2.
    f.info(0, Fake::ptr(0x300 + 20), 0, 0);
    f.info(1, Fake::ptr(0x300 + 40), Fake::ptr(0x900), Fake::ptr(0x906));
    f.info(2, 0, Fake::ptr(0x90a), Fake::ptr(0x910));
    let v = f.resolve(HandleKind::Info, 0x9c00_0000).unwrap();
    let Details::Info(info) = &v.details else {
        panic!("{v:?}")
    };
    let pairs: Vec<(String, String)> = info
        .entries
        .value()
        .unwrap()
        .iter()
        .map(|e| (e.key.clone(), e.value.clone()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("key_a".into(), "one".into()),
            ("key_b".into(), "two".into())
        ]
    );
    assert!(
        v.reference_count.reason().is_some(),
        "info has no reference count"
    );

    // 2 -> 1: a loop.
    f.info(2, Fake::ptr(0x300 + 20), Fake::ptr(0x90a), Fake::ptr(0x910));
    let e = f.resolve(HandleKind::Info, 0x9c00_0000).unwrap_err();
    assert!(
        matches!(
            e,
            HandleError::Read(ReadError::Cycle {
                what: "MPIR_Info.next",
                ..
            })
        ),
        "{e}"
    );

    // A key with no terminator within the cap.
    f.info(2, 0, Fake::ptr(0xa00), Fake::ptr(0x910));
    f.text(0xa00, &[b'k'; 200]);
    let limits = Limits {
        max_string_len: 64,
        ..Limits::default()
    };
    let e = f
        .resolve_with(HandleKind::Info, 0x9c00_0000, limits)
        .unwrap_err();
    assert!(
        matches!(
            e,
            HandleError::Read(ReadError::Unterminated { cap: 64, .. })
        ),
        "{e}"
    );

    // A list longer than the cap.
    f.info(2, 0, Fake::ptr(0x90a), Fake::ptr(0x910));
    let limits = Limits {
        max_list_len: 1,
        ..Limits::default()
    };
    let e = f
        .resolve_with(HandleKind::Info, 0x9c00_0000, limits)
        .unwrap_err();
    assert!(e.to_string().contains("max_list_len"), "{e}");
}

#[test]
fn a_missing_member_is_named() {
    let mut f = Fake::new();
    f.group_pool();
    // The group type without `rank`.
    f.layouts = {
        let mut t = LayoutTable::default();
        t.add_enum("MPII_Object_kind", &[("MPIR_GROUP", 2)])
            .add_type("MPIR_Group", 20)
            .add_member("MPIR_Group", "handle", 0, 4)
            .add_member("MPIR_Group", "ref_count", 4, 4)
            .add_member("MPIR_Group", "size", 8, 4)
            .add_type("MPIR_Object_alloc_t", 40)
            .add_type("MPIR_Handle_common", 12)
            .add_member("MPIR_Handle_common", "next", 8, 4);
        for (name, offset) in [
            ("avail", 0),
            ("initialized", 4),
            ("indirect", 8),
            ("indirect_size", 12),
            ("num_allocated", 16),
            ("num_avail", 20),
            ("size", 28),
            ("direct_size", 36),
        ] {
            t.add_member("MPIR_Object_alloc_t", name, offset, 4);
        }
        t
    };
    let e = f.resolve(HandleKind::Group, 0x8800_0000).unwrap_err();
    assert!(matches!(e, HandleError::Layout(_)), "{e}");
    assert!(
        e.to_string()
            .starts_with("member `rank` of `MPIR_Group`: no such member"),
        "{e}"
    );
}

#[test]
fn a_status_and_a_request_in_a_second_pool_big_endian() {
    let mut f = Fake::new();
    // A status in user memory: 2^32 + 5 bytes, cancelled, from
    // MPI_ANY_SOURCE (-2), tag 9.
    f.u32(0x400, 5);
    f.u32(0x404, (1 << 1) | 1);
    f.u32(0x408, (-2i32) as u32);
    f.u32(0x40c, 9);
    let mut mem = SyntheticMemory::new(TargetAbi::POWERPC);
    mem.map(TargetAddr(BASE), f.bytes.clone());
    let mpich = Mpich::from_parts(&mem, &f.symbols, &f.layouts, Limits::default()).unwrap();
    let s = mpich.status(TargetAddr(BASE + 0x400), None).unwrap();
    assert_eq!((s.source, s.tag, s.error), (-2, 9, 0));
    assert_eq!(s.count_bytes, Availability::Value((1 << 32) + 5));
    assert_eq!(s.cancelled, Availability::Value(true));

    // Requests: two pools' allocators at 0x500; pool 1 has one block of
    // 2 requests at 0x2000 (table at 0x600).
    f.symbol("MPIR_Request_mem", 0x500, 2 * 40);
    f.symbol("MPIR_Request_direct", 0x700, 0);
    f.symbol("MPIR_Request_builtins", 0x780, 0);
    f.allocator(0x500, 0, 0, 0, 0, 0, 0, 64);
    f.allocator(0x528, 0, 0, Fake::ptr(0x600), 1, 2, 0, 64);
    f.u32(0x600, Fake::ptr(0x2000));
    let handle = 0xec10_0001u32; // indirect request, pool 1, block 0, index 1
    let r = 0x2000 + 64;
    f.u32(0x2000, 0xec10_0000);
    f.u32(r, handle);
    f.u32(r + 4, 1);
    f.u32(r + 8, 2); // RECV
    f.u32(r + 12, Fake::ptr(r + 16));
    f.u32(r + 16, 1); // not complete
    f.u32(r + 48, 33);
    f.u16(r + 52, (-2i16) as u16);
    let v = f
        .resolve(HandleKind::Request, i64::from(handle as i32))
        .unwrap();
    assert_eq!(v.object_address, Availability::Value(TargetAddr(BASE + r)));
    let enc = v.encoding.as_ref().unwrap();
    assert_eq!(
        (enc.pool, enc.block, enc.block_index),
        (Some(1), Some(0), Some(1))
    );
    let Details::Request(d) = &v.details else {
        panic!("{v:?}")
    };
    assert_eq!(d.request_kind, Availability::Value(RequestKind::Receive));
    assert_eq!(d.complete, Availability::Value(false));
    assert_eq!(d.peer, Availability::Value(Peer::AnySource), "a 16-bit -2");
    assert_eq!(d.tag, Availability::Value(Some(33)));
    assert_eq!(d.communicator, Availability::Value(None));
    // Pool 2 does not exist.
    let e = f.resolve(HandleKind::Request, 0xec20_0000).unwrap_err();
    assert!(
        e.to_string().contains("request pool 2 is out of range"),
        "{e}"
    );
}

/// A datatype pool: builtin types at 0x3000 (MPI_INT, index 5, and
/// MPI_CHAR, index 1), 4 direct types at 0x3400, allocator at 0x3380. A
/// 32-bit `MPIR_Datatype` of 60 bytes with a 16-byte name.
fn datatype_pool(f: &mut Fake) {
    const T: &str = "MPIR_Datatype";
    f.layouts.add_type(T, 60);
    for (name, offset) in [
        ("handle", 0),
        ("ref_count", 4),
        ("size", 8),
        ("extent", 12),
        ("ub", 16),
        ("lb", 20),
        ("true_ub", 24),
        ("true_lb", 28),
        ("is_committed", 48),
        ("is_contig", 52),
        ("contents", 56),
    ] {
        f.layouts.add_member(T, name, offset, 4);
    }
    f.layouts
        .add_array(T, "name", 32, 16, 16)
        .add_type("MPIR_Datatype_contents", 20)
        .add_enum(
            "enum MPIR_Combiner_enum",
            &[
                ("MPI_COMBINER_NAMED", 1),
                ("MPI_COMBINER_CONTIGUOUS", 3),
                ("MPI_COMBINER_STRUCT", 12),
            ],
        );
    for (name, offset) in [
        ("combiner", 0),
        ("nr_ints", 4),
        ("nr_aints", 8),
        ("nr_counts", 12),
        ("nr_types", 16),
    ] {
        f.layouts
            .add_member("MPIR_Datatype_contents", name, offset, 4);
    }
    f.symbol("MPIR_Datatype_builtin", 0x3000, 6 * 60);
    f.symbol("MPIR_Datatype_direct", 0x3400, 4 * 60);
    f.symbol("MPIR_Datatype_mem", 0x3380, 40);
    f.allocator(0x3380, 0, 0, 0, 0, 0, 4, 60);
    for (index, handle, name, size) in [
        (5u64, 0x4c00_0405u32, &b"MPI_INT\0"[..], 4),
        (1, 0x4c00_0101, b"MPI_CHAR\0", 1),
    ] {
        let at = 0x3000 + index * 60;
        f.u32(at, handle);
        f.u32(at + 4, 1);
        f.u32(at + 8, size);
        f.u32(at + 12, size);
        f.u32(at + 16, size);
        f.text(at + 32, name);
    }
    for i in 0..4u32 {
        f.u32(0x3400 + u64::from(i) * 60, 0x8c00_0000 | i);
    }
}

/// Direct datatype `index` with `contents` at `contents_at`.
fn derived(f: &mut Fake, index: u64, size: u32, extent: u32, contents_at: u64) {
    let at = 0x3400 + index * 60;
    f.u32(at + 4, 1);
    f.u32(at + 8, size);
    f.u32(at + 12, extent);
    f.u32(at + 16, extent);
    f.u32(at + 24, extent);
    f.u32(at + 48, 1);
    f.u32(at + 56, Fake::ptr(contents_at));
}

#[test]
fn datatype_contents_under_an_8_byte_max_alignment_and_their_holes() {
    let mut f = Fake::new();
    datatype_pool(&mut f);
    // struct { int at 0; char at 8 }, extent 12: contents at 0x3800 padded
    // to 8 bytes: header 20 -> 24, types at 24 (8 bytes), ints at 32
    // (12 -> 16 bytes), aints at 48.
    derived(&mut f, 0, 5, 12, 0x3800);
    f.u32(0x3800, 12);
    f.u32(0x3804, 3);
    f.u32(0x3808, 2);
    f.u32(0x3810, 2);
    f.u32(0x3800 + 24, 0x4c00_0405);
    f.u32(0x3800 + 28, 0x4c00_0101);
    for (i, v) in [2u32, 1, 1].iter().enumerate() {
        f.u32(0x3800 + 32 + i as u64 * 4, *v);
    }
    f.u32(0x3800 + 48, 0);
    f.u32(0x3800 + 52, 8);
    let v = f.resolve(HandleKind::Datatype, 0x8c00_0000).unwrap();
    let Details::Datatype(d) = &v.details else {
        panic!("{v:?}")
    };
    let c = d.constructor.value().unwrap();
    assert_eq!(c.combiner, "MPI_COMBINER_STRUCT");
    assert_eq!(c.integers, [2, 1, 1]);
    assert_eq!(c.addresses, [0, 8]);
    let holes: Vec<(i64, i64)> = d
        .holes
        .value()
        .unwrap()
        .iter()
        .map(|h| (h.offset, h.length))
        .collect();
    assert_eq!(holes, [(4, 4), (9, 3)]);
}

#[test]
fn a_datatype_built_from_itself_ends() {
    let mut f = Fake::new();
    datatype_pool(&mut f);
    // Type 1 = contiguous(2, type 1): a cycle only a corrupt target has;
    // each level doubles the work, which the decoder must bound.
    derived(&mut f, 1, 8, 8, 0x3900);
    f.u32(0x3900, 3);
    f.u32(0x3904, 1);
    f.u32(0x3910, 1);
    f.u32(0x3900 + 32, 0x8c00_0001);
    f.u32(0x3900 + 48, 2);
    let start = std::time::Instant::now();
    let v = f.resolve(HandleKind::Datatype, 0x8c00_0001).unwrap();
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    let Details::Datatype(d) = &v.details else {
        panic!("{v:?}")
    };
    assert!(d.type_map.reason().is_some(), "{:?}", d.type_map);
    assert!(d.holes.reason().is_some());
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(256))]

    /// Whatever the target's bytes and whatever the handle, resolving ends
    /// without a panic: with a view or an error.
    #[test]
    fn random_memory_never_panics(
        noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0x4000),
        raw in proptest::prelude::any::<u32>(),
        pick in 0u32..8,
    ) {
        let mut f = Fake::new();
        f.group_pool();
        f.info_pool();
        datatype_pool(&mut f);
        f.symbol("MPIR_Request_mem", 0x500, 2 * 40);
        f.symbol("MPIR_Request_direct", 0x700, 0);
        f.symbol("MPIR_Request_builtins", 0x780, 0);
        // Scramble the allocators, the objects and what they point to,
        // then give the objects back their handles so that decoding goes
        // past the lookup.
        f.bytes[0x80..0x80 + noise.len()].copy_from_slice(&noise);
        for i in 0..4u32 {
            f.u32(0x100 + u64::from(i) * 20, 0x8800_0000 | i);
            f.u32(0x300 + u64::from(i) * 20, 0x9c00_0000 | i);
            f.u32(0x3400 + u64::from(i) * 60, 0x8c00_0000 | i);
        }
        f.u32(0x3000 + 5 * 60, 0x4c00_0405);
        // Handles of the kinds laid out, most of the time.
        let raw = match pick {
            0 => 0x8800_0000 | (raw & 7),
            1 => 0x9c00_0000 | (raw & 7),
            2 => 0x8c00_0000 | (raw & 7),
            3 => 0xc800_0000 | (raw & 0x3fff),
            4 => 0xec00_0000 | (raw & 0x3ff_ffff),
            _ => raw,
        };
        let limits = Limits { max_list_len: 4096, max_table_entries: 1 << 16, ..Limits::default() };
        for kind in [HandleKind::Group, HandleKind::Info, HandleKind::Datatype, HandleKind::Request] {
            let _ = f.resolve_with(kind, i64::from(raw), limits);
        }
    }
}

#[test]
fn a_target_without_mpich_is_refused() {
    let mem = SyntheticMemory::new(TargetAbi::X86_64);
    let symbols = SymbolTable::new();
    let layouts = LayoutTable::default();
    let Err(e) = Mpich::from_parts(&mem, &symbols, &layouts, Limits::default()) else {
        panic!("accepted a target without MPICH");
    };
    assert!(e.to_string().contains("MPIR_Comm_builtin"), "{e}");
}

/// The check a profile or a family passes before use: the builtin
/// communicators read as themselves, and every allocator's object size is
/// the size the layouts give its type. A family whose request is 8 bytes
/// shorter than the library's (a configure choice that adds a member) is
/// refused in one line naming the allocator and both sizes.
#[test]
fn the_check_refuses_layouts_whose_object_sizes_the_allocators_contradict() {
    let mut f = Fake::new();
    f.layouts
        .add_type("MPIR_Comm", 64)
        .add_member("MPIR_Comm", "handle", 0, 4)
        .add_member("MPIR_Comm", "name", 16, 32);
    // MPIR_Comm_builtin (at 0xf000): world, then self.
    f.u32(0xf000, 0x4400_0000);
    f.text(0xf010, b"MPI_COMM_WORLD\0");
    f.u32(0xf040, 0x4400_0001);
    f.text(0xf050, b"MPI_COMM_SELF\0");
    f.group_pool();
    // Requests of 64 bytes, as the layouts say.
    f.symbol("MPIR_Request_mem", 0x500, 40);
    f.allocator(0x500, 0, 0, 0, 0, 0, 4, 64);
    let mut mem = SyntheticMemory::new(TargetAbi::POWERPC);
    mem.map(TargetAddr(BASE), f.bytes.clone());
    let limits = Limits::default();
    mpihandles::check_layouts(&mem, &f.symbols, &f.layouts, &limits)
        .expect("the layouts the process was built with");

    // The library's requests are 72 bytes: these layouts are of another
    // configuration.
    f.u32(0x500 + 28, 72);
    let mut mem = SyntheticMemory::new(TargetAbi::POWERPC);
    mem.map(TargetAddr(BASE), f.bytes.clone());
    let refused = mpihandles::check_layouts(&mem, &f.symbols, &f.layouts, &limits)
        .expect_err("a request size the allocator contradicts");
    assert_eq!(
        refused.0,
        format!(
            "MPIR_Request_mem at {} makes MPIR_Request objects of 72 bytes, where these layouts \
             say 64",
            TargetAddr(BASE + 0x500)
        )
    );

    // An allocator MPI_Init has not set up (size 0) is not checked.
    f.u32(0x500 + 28, 0);
    let mut mem = SyntheticMemory::new(TargetAbi::POWERPC);
    mem.map(TargetAddr(BASE), f.bytes.clone());
    mpihandles::check_layouts(&mem, &f.symbols, &f.layouts, &limits).expect("no size recorded yet");
}
