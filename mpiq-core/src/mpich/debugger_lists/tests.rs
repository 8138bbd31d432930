//! The debugger lists read from synthetic memory laid out by hand, for
//! a 64-bit little-endian and a 32-bit big-endian target: placement by
//! context id, statuses, wildcards, and the refusals of hostile lists.

use mpidd_read::{
    ByteOrder, LayoutTable, Limits, ReadError, SymbolTable, SyntheticMemory, TargetAbi,
};
use mpidd_types::TargetAddr;
use mpihandles::MpichConstants;

use super::{read_debugger_lists, read_list, DebugHeads, DebugList, DebugqLayout};
use crate::decoder::DecodeError;
use crate::model::OperationStatus;
use crate::mpich::common::CommInfo;

const LIBRARY: &str = "/synthetic/libmpi.so.12";
const SENDQ_HEAD: u64 = 0x1000;
const RECVQ_HEAD: u64 = 0x1010;
const UNEXPQ_HEAD: u64 = 0x1020;
const RECORDS: u64 = 0x2000;
const REQUESTS: u64 = 0x3000;
/// A completion counter shared by several requests (`cc_ptr` away from
/// the request's own `cc`).
const SHARED_CC: u64 = 0x4000;
const RECORD_STRIDE: u64 = 0x80;
const REQUEST_STRIDE: u64 = 0x40;

/// `MPIR_Debugq` on a target of `w`-byte words, as a C compiler lays out
/// `{ MPIR_Request *req; int tag, rank, context_id; const void *buf;
/// MPI_Aint count; next; prev; }`.
struct Shape {
    w: u64,
    tag: u64,
    rank: u64,
    context: u64,
    buf: u64,
    count: u64,
    next: u64,
    size: u64,
}

fn shape(abi: TargetAbi) -> Shape {
    let w = abi.address_bytes() as u64;
    let buf = (w + 12).div_ceil(w) * w;
    let count = buf + w;
    let next = count + w;
    Shape {
        w,
        tag: w,
        rank: w + 4,
        context: w + 8,
        buf,
        count,
        next,
        size: next + 2 * w,
    }
}

fn layouts(abi: TargetAbi) -> LayoutTable {
    let s = shape(abi);
    let mut t = LayoutTable::default();
    t.add_type("MPIR_Debugq", s.size)
        .add_member("MPIR_Debugq", "req", 0, s.w)
        .add_member("MPIR_Debugq", "tag", s.tag, 4)
        .add_member("MPIR_Debugq", "rank", s.rank, 4)
        .add_member("MPIR_Debugq", "context_id", s.context, 4)
        .add_member("MPIR_Debugq", "buf", s.buf, s.w)
        .add_member("MPIR_Debugq", "count", s.count, s.w)
        .add_member("MPIR_Debugq", "next", s.next, s.w)
        .add_member("MPIR_Debugq", "prev", s.next + s.w, s.w);
    t.add_type("MPIR_Request", REQUEST_STRIDE)
        .add_member("MPIR_Request", "cc_ptr", 0, s.w)
        .add_member("MPIR_Request", "cc", 2 * s.w, 4);
    t
}

fn put(b: &mut [u8], order: ByteOrder, at: u64, value: u64, width: u64) {
    let mut v = value.to_le_bytes()[..width as usize].to_vec();
    if order == ByteOrder::Big {
        v.reverse();
    }
    b[at as usize..(at + width) as usize].copy_from_slice(&v);
}

/// One record: (request's completion counter, tag, rank, context id,
/// buffer, count); `cc` `None` makes the request count through the
/// shared counter.
type Rec = (Option<u64>, i64, i64, i64, u64, i64);

/// Memory with the three lists: each a chain of the records given, in
/// that order, the records numbered across the lists from 0. `next_of`
/// may redirect a record's `next` (by its number) to a record's address
/// or anywhere.
struct Built {
    mem: SyntheticMemory,
    symbols: SymbolTable,
}

fn build(abi: TargetAbi, lists: [&[Rec]; 3], next_of: &dyn Fn(usize) -> Option<u64>) -> Built {
    let s = shape(abi);
    let o = abi.byte_order;
    let mut mem = SyntheticMemory::new(abi);
    let mut heads = vec![0u8; 0x30];
    let mut records = vec![0u8; (RECORD_STRIDE * 16) as usize];
    let mut requests = vec![0u8; (REQUEST_STRIDE * 16) as usize];
    let mut n = 0usize;
    for (list, head) in lists.iter().zip([SENDQ_HEAD, RECVQ_HEAD, UNEXPQ_HEAD]) {
        for (i, &(cc, tag, rank, context, buf, count)) in list.iter().enumerate() {
            let rec = RECORD_STRIDE * n as u64;
            let req = REQUESTS + REQUEST_STRIDE * n as u64;
            if i == 0 {
                put(&mut heads, o, head - SENDQ_HEAD, RECORDS + rec, s.w);
            }
            let next = match next_of(n) {
                Some(to) => to,
                None if i + 1 < list.len() => RECORDS + rec + RECORD_STRIDE,
                None => 0,
            };
            put(&mut records, o, rec, req, s.w);
            put(&mut records, o, rec + s.tag, tag as u64, 4);
            put(&mut records, o, rec + s.rank, rank as u64, 4);
            put(&mut records, o, rec + s.context, context as u64, 4);
            put(&mut records, o, rec + s.buf, buf, s.w);
            put(&mut records, o, rec + s.count, count as u64, s.w);
            put(&mut records, o, rec + s.next, next, s.w);
            let r = REQUEST_STRIDE * n as u64;
            match cc {
                Some(cc) => {
                    put(&mut requests, o, r, req + 2 * s.w, s.w);
                    put(&mut requests, o, r + 2 * s.w, cc, 4);
                }
                None => put(&mut requests, o, r, SHARED_CC, s.w),
            }
            n += 1;
        }
    }
    mem.map(TargetAddr(SENDQ_HEAD), heads);
    mem.map(TargetAddr(RECORDS), records);
    mem.map(TargetAddr(REQUESTS), requests);
    let mut shared = vec![0u8; 4];
    put(&mut shared, o, 0, 2, 4);
    mem.map(TargetAddr(SHARED_CC), shared);
    let mut symbols = SymbolTable::new();
    for (name, at) in [
        ("MPIR_Sendq_head", SENDQ_HEAD),
        ("MPIR_Recvq_head", RECVQ_HEAD),
        ("MPIR_Unexpq_head", UNEXPQ_HEAD),
    ] {
        symbols.insert(LIBRARY, name, TargetAddr(at), s.w);
    }
    Built { mem, symbols }
}

fn comm(name: &str, addr: u64, recvcontext_id: i64, world: Vec<i64>) -> CommInfo {
    CommInfo {
        addr: TargetAddr(addr),
        name: name.to_string(),
        context_id: recvcontext_id,
        recvcontext_id,
        rank: 0,
        size: world.len() as i64,
        world: Some(world),
        world_error: None,
    }
}

fn comms() -> Vec<CommInfo> {
    vec![
        comm("MPI_COMM_WORLD", 0xa000, 0, vec![0, 1, 2, 3]),
        comm("mpidd_dup", 0xb000, 0x10, vec![0, 1, 2, 3]),
        // World ranks 1 and 3, as an odd split holds them.
        comm("mpidd_split_odd", 0xc000, 0x20, vec![1, 3]),
    ]
}

const ANY_SOURCE: i64 = -2;
const ANY_TAG: i64 = -1;

fn job(abi: TargetAbi) -> Built {
    build(
        abi,
        [
            // Sends: newest first, as MPICH prepends.
            &[
                (Some(1), 44, 0, 0x10, 0x7000, 3),
                (None, 33, 3, 0, 0x7100, 262144),
            ],
            // Receives: one on each communicator, one of them complete but
            // not yet freed, one on a context no communicator has.
            &[
                (Some(1), 11, 1, 0, 0x7200, 10),
                (Some(0), 22, ANY_SOURCE, 0x10, 0x7300, 20),
                (Some(1), ANY_TAG, 1, 0x20, 0x7400, 30),
                (Some(1), 5, 0, 0x77, 0x7500, 1),
            ],
            // Unexpected: MPICH records neither buffer nor count.
            &[(Some(1), 99, 1, 0, 0, 0)],
        ],
        &|_| None,
    )
}

fn heads(b: &Built) -> DebugHeads {
    DebugHeads::find(&b.symbols).expect("the three heads")
}

#[test]
fn the_three_lists_are_placed_in_their_communicators() {
    for abi in [TargetAbi::X86_64, TargetAbi::POWERPC] {
        let b = job(abi);
        let l = DebugqLayout::resolve(&layouts(abi)).expect("the layouts");
        let comms = comms();
        let placed = read_debugger_lists(
            &b.mem,
            &heads(&b),
            &l,
            &comms,
            MpichConstants::MPICH,
            &Limits::default(),
        )
        .expect("a reading");
        // World: receive from 1 tag 11, 10 elements, into its buffer.
        let r = &placed.posted[0];
        assert_eq!(r.len(), 1, "{abi:?}");
        assert_eq!(
            (
                r[0].desired_local_rank,
                r[0].desired_global_rank,
                r[0].desired_tag
            ),
            (1, 1, 11)
        );
        assert_eq!((r[0].desired_length, r[0].desired_count), (10, Some(10)));
        assert_eq!(r[0].buffer, 0x7200);
        assert!(!r[0].tag_wild);
        assert_eq!(r[0].status, OperationStatus::Pending);
        // Dup: any source, complete (cc 0) but still listed.
        let r = &placed.posted[1];
        assert_eq!(r.len(), 1);
        assert_eq!(
            (r[0].desired_local_rank, r[0].desired_global_rank),
            (-1, -1)
        );
        assert_eq!(r[0].status, OperationStatus::Complete);
        // Split: rank 1 is world rank 3; any tag.
        let r = &placed.posted[2];
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].desired_local_rank, r[0].desired_global_rank), (1, 3));
        assert!(r[0].tag_wild);
        // Unexpected on world from 1, tag 99, length unknown.
        let u = &placed.unexpected[0];
        assert_eq!(u.len(), 1);
        assert_eq!((u[0].actual_local_rank, u[0].actual_tag), (1, 99));
        assert_eq!((u[0].desired_length, u[0].buffer), (-1, 0));
        assert!(placed.unexpected[1].is_empty() && placed.unexpected[2].is_empty());
        // Sends, in the list's order per communicator; the second counts
        // through a shared counter (2: pending).
        assert_eq!(placed.sends[1].len(), 1);
        assert_eq!(
            (
                placed.sends[1][0].actual_local_rank,
                placed.sends[1][0].actual_tag
            ),
            (0, 44)
        );
        let big = &placed.sends[0];
        assert_eq!(big.len(), 1);
        assert_eq!(
            (big[0].actual_local_rank, big[0].actual_global_rank),
            (3, 3)
        );
        assert_eq!((big[0].desired_length, big[0].buffer), (262144, 0x7100));
        assert_eq!(big[0].status, OperationStatus::Pending);
        // The receive of context 0x77 is said, not shown.
        assert!(
            placed
                .notes
                .iter()
                .any(|n| n.contains("MPIR_Recvq_head") && n.contains("119")),
            "{:?}",
            placed.notes
        );
    }
}

#[test]
fn a_missing_head_or_member_is_named() {
    let mut symbols = SymbolTable::new();
    symbols.insert(LIBRARY, "MPIR_Sendq_head", TargetAddr(SENDQ_HEAD), 8);
    assert_eq!(
        DebugHeads::find(&symbols).unwrap_err(),
        vec!["MPIR_Recvq_head", "MPIR_Unexpq_head"]
    );
    let mut t = layouts(TargetAbi::X86_64);
    t.add_offsets("MPIR_Debugq", 56, &[("sreq", 0)]);
    let missing = DebugqLayout::resolve(&t).unwrap_err();
    let named: Vec<String> = missing.iter().filter_map(|e| e.member.clone()).collect();
    for m in ["req", "tag", "rank", "context_id", "buf", "count", "next"] {
        assert!(named.iter().any(|n| n == m), "{m} not in {named:?}");
    }
}

#[test]
fn a_list_that_loops_is_a_cycle_naming_its_list() {
    let abi = TargetAbi::X86_64;
    let recs: &[Rec] = &[(Some(1), 1, 0, 0, 0, 1), (Some(1), 2, 0, 0, 0, 1)];
    // The receive list's second record (number 1) points back at the first.
    let b = build(abi, [&[], recs, &[]], &|n| (n == 1).then_some(RECORDS));
    let l = DebugqLayout::resolve(&layouts(abi)).unwrap();
    match read_list(
        &b.mem,
        &heads(&b),
        DebugList::Receives,
        &l,
        &Limits::default(),
    ) {
        Err(DecodeError::Cycle { what, addr, .. }) => {
            assert_eq!(what, "MPIR_Debugq (MPIR_Recvq_head)");
            assert_eq!(addr, TargetAddr(RECORDS));
        }
        other => panic!("not a cycle: {other:?}"),
    }
}

#[test]
fn a_list_longer_than_the_limit_stops() {
    let abi = TargetAbi::X86_64;
    let recs: &[Rec] = &[(Some(1), 1, 0, 0, 0, 1); 5];
    let b = build(abi, [recs, &[], &[]], &|_| None);
    let l = DebugqLayout::resolve(&layouts(abi)).unwrap();
    let limits = Limits {
        max_list_len: 3,
        ..Limits::default()
    };
    assert!(matches!(
        read_list(&b.mem, &heads(&b), DebugList::Sends, &l, &limits),
        Err(DecodeError::TooLong { limit: 3, .. })
    ));
    assert_eq!(
        read_list(&b.mem, &heads(&b), DebugList::Sends, &l, &Limits::default())
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn a_null_request_or_a_wild_next_is_an_error_naming_the_record() {
    let abi = TargetAbi::POWERPC;
    let l = DebugqLayout::resolve(&layouts(abi)).unwrap();
    // The unexpected list's only record (number 0) leads nowhere mapped.
    let b = build(abi, [&[], &[], &[(Some(1), 9, 0, 0, 0, 0)]], &|n| {
        (n == 0).then_some(0xdead_0000)
    });
    match read_list(
        &b.mem,
        &heads(&b),
        DebugList::Unexpected,
        &l,
        &Limits::default(),
    ) {
        Err(DecodeError::Read(e)) => {
            let text = e.to_string();
            assert!(text.contains("MPIR_Unexpq_head"), "{text}");
            assert!(
                matches!(e, ReadError::ShortRead { addr, .. } if addr == TargetAddr(0xdead_0000)),
                "{e:?}"
            );
        }
        other => panic!("not a read error: {other:?}"),
    }
    // A record whose request is NULL.
    let mut b = build(abi, [&[(Some(1), 9, 0, 0, 0, 0)], &[], &[]], &|_| None);
    let mut records = b
        .mem
        .segments()
        .find(|(at, _)| *at == TargetAddr(RECORDS))
        .map(|(_, bytes)| bytes.to_vec())
        .unwrap();
    records[..4].fill(0);
    b.mem.map(TargetAddr(RECORDS), records);
    match read_list(&b.mem, &heads(&b), DebugList::Sends, &l, &Limits::default()) {
        Err(DecodeError::Corrupt { what, addr, .. }) => {
            assert_eq!(what, "MPIR_Debugq (MPIR_Sendq_head)");
            assert_eq!(addr, TargetAddr(RECORDS));
        }
        other => panic!("not corrupt: {other:?}"),
    }
}

#[test]
fn empty_lists_read_as_empty() {
    let abi = TargetAbi::X86_64;
    let b = build(abi, [&[], &[], &[]], &|_| None);
    let l = DebugqLayout::resolve(&layouts(abi)).unwrap();
    let placed = read_debugger_lists(
        &b.mem,
        &heads(&b),
        &l,
        &comms(),
        MpichConstants::MPICH,
        &Limits::default(),
    )
    .unwrap();
    assert!(placed
        .posted
        .iter()
        .chain(&placed.unexpected)
        .chain(&placed.sends)
        .all(Vec::is_empty));
    assert_eq!(placed.notes.len(), 1);
}
