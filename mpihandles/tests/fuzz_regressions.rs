//! Inputs the `handles` fuzz target (fuzz/fuzz_targets/handles.rs) found,
//! and the overflows of the same kind found next to them, reduced to the
//! smallest target that shows each: corrupt symbol sizes and debug info
//! must give a typed error, never a hang or a panic.

use std::time::{Duration, Instant};

use mpidd_read::{Limits, ReadError, SymbolTable, SyntheticMemory};
use mpidd_types::{TargetAbi, TargetAddr};
use mpihandles::{Details, HandleError, HandleKind, LayoutTable, Mpich};

/// A group pool (one direct group of 2 members at 0x1000, its allocator
/// at 0x1100) in a 32-bit big-endian target, with `MPIR_Comm_builtin` of
/// `comm_builtin_size` bytes at 0x2000 (its first 0x100 bytes mapped, and
/// empty) and communicators of `comm_size` bytes.
fn target(comm_builtin_size: u64, comm_size: u64) -> (SyntheticMemory, SymbolTable, LayoutTable) {
    let mut layouts = LayoutTable::default();
    layouts
        .add_enum("MPII_Object_kind", &[("MPIR_COMM", 1), ("MPIR_GROUP", 2)])
        .add_type("MPIR_Group", 20)
        .add_member("MPIR_Group", "handle", 0, 4)
        .add_member("MPIR_Group", "ref_count", 4, 4)
        .add_member("MPIR_Group", "size", 8, 4)
        .add_member("MPIR_Group", "rank", 12, 4)
        .add_member("MPIR_Group", "lrank_to_lpid", 16, 4)
        .add_type("MPII_Group_pmap_t", 8)
        .add_member("MPII_Group_pmap_t", "lpid", 0, 4)
        .add_type("MPIR_Handle_common", 12)
        .add_member("MPIR_Handle_common", "next", 8, 4)
        .add_type("MPIR_Object_alloc_t", 40)
        .add_type("MPIR_Comm", comm_size)
        .add_member("MPIR_Comm", "handle", 0, 4)
        .add_member("MPIR_Comm", "local_group", 0, 4)
        .add_member("MPIR_Comm", "remote_group", 0, 4);
    for (name, offset) in [
        ("avail", 0),
        ("initialized", 4),
        ("indirect", 8),
        ("indirect_size", 12),
        ("size", 28),
        ("direct_size", 36),
    ] {
        layouts.add_member("MPIR_Object_alloc_t", name, offset, 4);
    }
    let mut bytes = vec![0u8; 0x2100];
    let mut put = |at: usize, v: u32| bytes[at..at + 4].copy_from_slice(&v.to_be_bytes());
    put(0x1000, 0x8800_0000); // the group's handle
    put(0x1004, 1);
    put(0x1008, 2); // two members
    put(0x1010, 0x1800); // lrank_to_lpid
    put(0x1800, 5);
    put(0x1808, 9);
    put(0x1104, 1); // the allocator: initialized
    put(0x111c, 20);
    put(0x1124, 1);
    let mut memory = SyntheticMemory::new(TargetAbi::POWERPC);
    memory.map(TargetAddr(0), bytes);
    let mut symbols = SymbolTable::new();
    symbols.insert("libmpi.so", "MPIR_Group_direct", TargetAddr(0x1000), 20);
    symbols.insert("libmpi.so", "MPIR_Group_mem", TargetAddr(0x1100), 40);
    symbols.insert("libmpi.so", "MPIR_Group_builtin", TargetAddr(0x1200), 0);
    symbols.insert("libmpi.so", "MPIR_Comm_direct", TargetAddr(0x1300), 0);
    symbols.insert("libmpi.so", "MPIR_Comm_mem", TargetAddr(0x1100), 40);
    symbols.insert(
        "libmpi.so",
        "MPIR_Comm_builtin",
        TargetAddr(0x2000),
        comm_builtin_size,
    );
    (memory, symbols, layouts)
}

/// Found by the fuzzer as a timeout: the communicators that use a group
/// were looked for in every slot `MPIR_Comm_builtin`'s symbol size allows,
/// unbounded: a 4 GB symbol over 1-byte communicators took billions of
/// reads. The scan is now bounded by `max_table_entries`, as the pools'
/// scans are.
#[test]
fn a_huge_builtin_communicator_array_is_refused_not_scanned() {
    let (memory, symbols, layouts) = target(u64::from(u32::MAX), 1);
    let mpich = Mpich::from_parts(&memory, &symbols, &layouts, Limits::default()).unwrap();
    let start = Instant::now();
    let v = mpich.resolve(HandleKind::Group, 0x8800_0000).unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    let Details::Group(g) = &v.details else {
        panic!("{v:?}")
    };
    let reason = g.communicators.reason().unwrap();
    assert!(
        reason.contains("MPIR_Comm_builtin") && reason.contains("max_table_entries"),
        "{reason}"
    );
    // A plausible array is still scanned.
    let (memory, symbols, layouts) = target(3 * 16, 16);
    let mpich = Mpich::from_parts(&memory, &symbols, &layouts, Limits::default()).unwrap();
    let v = mpich.resolve(HandleKind::Group, 0x8800_0000).unwrap();
    let Details::Group(g) = &v.details else {
        panic!("{v:?}")
    };
    assert_eq!(g.communicators.value().map(Vec::len), Some(0));
}

/// An object's `handle` member at an offset near 2^64 (corrupt debug
/// info) overflowed the end of the header read: a panic with overflow
/// checks. Now an address-overflow error naming the record and address.
#[test]
fn a_handle_member_past_2_64_is_an_address_overflow() {
    let (memory, symbols, mut layouts) = target(0, 16);
    layouts.add_member("MPIR_Group", "handle", u64::MAX - 1, 4);
    let mpich = Mpich::from_parts(&memory, &symbols, &layouts, Limits::default()).unwrap();
    let e = mpich.resolve(HandleKind::Group, 0x8800_0000).unwrap_err();
    assert!(
        matches!(
            e,
            HandleError::Read(ReadError::AddressOverflow {
                what: "MPIR_Group",
                addr: TargetAddr(0x1000),
                ..
            })
        ),
        "{e}"
    );
}

/// A group map entry's size and `lpid` offset that overflow 2^64 once
/// multiplied by the member index: an error in the group's world ranks.
#[test]
fn group_map_offsets_past_2_64_are_an_address_overflow() {
    let (memory, symbols, mut layouts) = target(0, 16);
    layouts.add_type("MPII_Group_pmap_t", 1 << 63);
    layouts.add_member("MPII_Group_pmap_t", "lpid", 1 << 63, 4);
    let mpich = Mpich::from_parts(&memory, &symbols, &layouts, Limits::default()).unwrap();
    let v = mpich.resolve(HandleKind::Group, 0x8800_0000).unwrap();
    let Details::Group(g) = &v.details else {
        panic!("{v:?}")
    };
    // The bytes of 2 entries of 2^63 bytes are not read either way; what
    // matters is an error, not a panic.
    assert!(g.world_ranks.reason().is_some(), "{:?}", g.world_ranks);
}
