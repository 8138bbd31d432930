//! The native MPICH CH3 decoder on synthetic targets laid out by hand
//! (not by the decoder's code): a well-formed process on little- and
//! big-endian ABIs, and hostile ones — a request list that loops, a queue
//! head pointing into unmapped memory, a list longer than the limit, and a
//! library whose debug info lacks a member.

mod common;

use common::layout;
use mpidd_read::TargetParts;
use mpidd_read::{Limits, SymbolTable, SyntheticMemory, TargetMemory};
use mpidd_types::{ByteOrder, TargetAbi, TargetAddr};
use mpiq_core::model::{Protocol, Queue};
use mpiq_core::{DecodeError, LayoutTable, MpichCh3, QueueDecoder};

const LIST: u64 = 0x1000;
const POSTED_PTR: u64 = 0x1100;
const POSTED_HEAD: u64 = 0x1108;
const UNEXPECTED_PTR: u64 = 0x1200;
const UNEXPECTED_HEAD: u64 = 0x1208;
const SENDQ_HEAD: u64 = 0x1300;
const COMM: u64 = 0x2000;
const VCRT: u64 = 0x3000;
const VCS: u64 = 0x3100;
const REQS: u64 = 0x4000;
const SENDQ: u64 = 0x5000;
/// MPICH's handle of MPI_INT: a builtin datatype of 4 bytes.
const MPI_INT: u64 = 0x4c00_0405;

/// Bytes of one region, written field by field in the target's order.
struct Region {
    bytes: Vec<u8>,
    order: ByteOrder,
}

impl Region {
    fn new(len: usize, abi: TargetAbi) -> Self {
        Region {
            bytes: vec![0; len],
            order: abi.byte_order,
        }
    }

    fn put(&mut self, at: u64, value: u64, width: usize) -> &mut Self {
        let mut b = value.to_le_bytes()[..width].to_vec();
        if self.order == ByteOrder::Big {
            b.reverse();
        }
        self.bytes[at as usize..at as usize + width].copy_from_slice(&b);
        self
    }
}

/// A request for the receive queues at `REQS + i * 128`.
struct Req {
    next: u64,
    cc: u64,
    tag: i64,
    rank: i64,
    context: u64,
    count: u64,
    recv_data_sz: u64,
    tmpbuf: u64,
    /// `dev.state`: message kind in bits 0-1, the sync-send flag in bit 3,
    /// the request type in bits 4-9 (MPICH's mpidimpl.h).
    state: u64,
}

/// A process with one communicator ("world", context 0, 2 ranks, this one
/// rank 1), the given posted and unexpected requests, and one pending send.
fn process(
    abi: TargetAbi,
    posted: &[Req],
    unexpected_first: u64,
    unexpected: &[Req],
) -> (SyntheticMemory, SymbolTable) {
    let w = abi.address_bytes();
    let mut mem = SyntheticMemory::new(abi);
    let mut r = Region::new(16, abi);
    r.put(0, 7, 4).put(8, COMM, w);
    mem.map(TargetAddr(LIST), r.bytes);
    let mut r = Region::new(16, abi);
    r.put(0, POSTED_HEAD, w)
        .put(8, if posted.is_empty() { 0 } else { REQS }, w);
    mem.map(TargetAddr(POSTED_PTR), r.bytes);
    let mut r = Region::new(16, abi);
    r.put(0, UNEXPECTED_HEAD, w).put(8, unexpected_first, w);
    mem.map(TargetAddr(UNEXPECTED_PTR), r.bytes);
    let mut r = Region::new(8, abi);
    r.put(0, SENDQ, w);
    mem.map(TargetAddr(SENDQ_HEAD), r.bytes);

    let mut c = Region::new(256, abi);
    c.bytes[..5].copy_from_slice(b"world");
    c.put(128, 0, 2)
        .put(130, 0, 2)
        .put(132, 2, 4)
        .put(136, 1, 4)
        .put(140, 2, 4);
    c.put(144, 0, 4)
        .put(152, 0, w)
        .put(160, 0, w)
        .put(168, VCRT, w);
    mem.map(TargetAddr(COMM), c.bytes);
    let mut v = Region::new(24, abi);
    v.put(0, 2, 4).put(8, VCS, w).put(8 + w as u64, VCS + 8, w);
    mem.map(TargetAddr(VCRT), v.bytes);
    let mut vc = Region::new(16, abi);
    // Peers are world ranks 5 and 9, so a translation cannot pass by luck.
    vc.put(0, 5, 4).put(8, 9, 4);
    mem.map(TargetAddr(VCS), vc.bytes);

    let mut reqs = Region::new(128 * (posted.len() + unexpected.len()).max(1), abi);
    for (i, q) in posted.iter().chain(unexpected).enumerate() {
        let b = (i * 128) as u64;
        reqs.put(b, q.cc, 4).put(b + 8, q.next, w);
        reqs.put(b + 16, q.tag as u64, 4)
            .put(b + 20, q.rank as u64, 2)
            .put(b + 22, q.context, 2);
        reqs.put(b + 24, 0xb0f0, w)
            .put(b + 32, q.count, w)
            .put(b + 40, MPI_INT, 4);
        reqs.put(b + 48, q.recv_data_sz, w)
            .put(b + 56, q.tmpbuf, w)
            .put(b + 64, q.state, 4);
    }
    mem.map(TargetAddr(REQS), reqs.bytes);

    // One pending send of 3 ints to rank 0, tag 44.
    let mut s = Region::new(40 + 128, abi);
    s.put(0, SENDQ + 40, w)
        .put(8, 44, 4)
        .put(12, 0, 4)
        .put(16, 0, 4)
        .put(24, 0, w);
    // An MPI_Issend in rendezvous: request type SSEND (3 << 4), message
    // kind RNDV (2).
    s.put(40, 1, 4)
        .put(40 + 64, (3 << 4) | 2, 4)
        .put(40 + 32, 3, w)
        .put(40 + 40, MPI_INT, 4)
        .put(40 + 24, 0x5e00, w);
    mem.map(TargetAddr(SENDQ), s.bytes);

    let mut symbols = SymbolTable::new();
    for (name, addr) in [
        ("MPIR_All_communicators", LIST),
        ("MPID_Recvq_posted_head_ptr", POSTED_PTR),
        ("MPID_Recvq_unexpected_head_ptr", UNEXPECTED_PTR),
        ("MPIR_Sendq_head", SENDQ_HEAD),
    ] {
        symbols.insert("/synthetic/libmpi.so", name, TargetAddr(addr), w as u64);
    }
    (mem, symbols)
}

fn req(next: u64, tag: i64, rank: i64) -> Req {
    Req {
        next,
        cc: 1,
        tag,
        rank,
        context: 0,
        count: 10,
        recv_data_sz: 0,
        tmpbuf: 0,
        state: 0,
    }
}

fn decode(
    mem: &SyntheticMemory,
    symbols: &SymbolTable,
    types: &LayoutTable,
    limits: &Limits,
) -> Result<mpiq_core::model::ProcessQueues, DecodeError> {
    let target = TargetParts {
        memory: mem,
        symbols,
        layouts: types,
    };
    let decoder = MpichCh3::new(&target, "4.0.2", "ch3:nemesis")?;
    decoder.read_queues(&target, limits)
}

fn well_formed(abi: TargetAbi) {
    // Posted: from rank 0 tag 11, then MPI_ANY_SOURCE (-2) with MPI_ANY_TAG.
    let posted = [req(REQS + 128, 11, 0), req(0, -1, -2)];
    // Unexpected: 20 bytes of eager data from rank 0, tag 99.
    let unexpected = [Req {
        cc: 0,
        recv_data_sz: 20,
        tmpbuf: 0xda7a,
        state: EAGER,
        ..req(0, 99, 0)
    }];
    let (mem, symbols) = process(abi, &posted, REQS + 256, &unexpected);
    let q = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap();
    assert_eq!(q.global_rank, 1);
    assert_eq!(q.communicators.len(), 1);
    let c = &q.communicators[0];
    assert_eq!((c.name.as_str(), c.size, c.local_rank), ("world", 2, 1));
    assert_eq!((c.context_id, c.recv_context_id), (Some(0), Some(0)));
    assert_eq!(c.group.as_deref(), Some(&[5, 9][..]));
    let r = c.pending_receives.operations();
    assert_eq!(r.len(), 2);
    assert_eq!(
        (
            r[0].desired_local_rank,
            r[0].desired_global_rank,
            r[0].desired_tag
        ),
        (0, 5, 11)
    );
    assert_eq!(
        (r[0].desired_length, r[0].desired_count, r[0].buffer),
        (40, Some(10), 0xb0f0)
    );
    assert_eq!(
        (r[1].desired_local_rank, r[1].desired_global_rank),
        (-1, -1),
        "MPICH's -2 is ANY_SOURCE"
    );
    assert!(r[1].tag_wild);
    let u = c.unexpected_messages.operations();
    assert_eq!(u.len(), 1);
    assert_eq!(
        (u[0].actual_global_rank, u[0].actual_tag, u[0].actual_length),
        (5, 99, 20)
    );
    assert!(u[0].system_buffer);
    assert_eq!(
        (u[0].protocol, u[0].synchronous),
        (Some(Protocol::Eager), Some(false))
    );
    assert!(
        r.iter()
            .all(|r| r.protocol.is_none() && r.synchronous.is_none()),
        "a posted receive has no sender yet"
    );
    let s = c.pending_sends.operations();
    assert_eq!(s.len(), 1);
    assert_eq!(
        (
            s[0].desired_global_rank,
            s[0].desired_tag,
            s[0].desired_length,
            s[0].buffer
        ),
        (5, 44, 12, 0x5e00)
    );
    assert_eq!(
        (s[0].protocol, s[0].synchronous),
        (Some(Protocol::Rendezvous), Some(true))
    );
}

#[test]
fn a_well_formed_process_on_x86_64() {
    well_formed(TargetAbi::X86_64);
}

#[test]
fn a_well_formed_process_on_big_endian_32_bit_powerpc() {
    well_formed(TargetAbi::POWERPC);
}

#[test]
fn a_looping_request_list_is_a_cycle_error() {
    let posted = [req(REQS + 128, 1, 0), req(REQS, 2, 0)];
    let (mem, symbols) = process(TargetAbi::X86_64, &posted, 0, &[]);
    let err = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap_err();
    match err {
        DecodeError::Cycle { addr, len, .. } => assert_eq!((addr, len), (TargetAddr(REQS), 2)),
        other => panic!("{other}"),
    }
}

#[test]
fn a_head_into_unmapped_memory_names_the_address() {
    let (mem, symbols) = process(TargetAbi::X86_64, &[], 0xdead_0000, &[]);
    let err = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap_err();
    assert!(matches!(err, DecodeError::Read(_)), "{err}");
    assert!(err.to_string().contains("0xdead0000"), "{err}");
}

#[test]
fn a_list_longer_than_the_limit_stops_there() {
    let posted: Vec<Req> = (0..5)
        .map(|i| req(if i < 4 { REQS + 128 * (i + 1) } else { 0 }, i as i64, 0))
        .collect();
    let (mem, symbols) = process(TargetAbi::X86_64, &posted, 0, &[]);
    let limits = Limits {
        max_list_len: 3,
        ..Limits::default()
    };
    let err = decode(&mem, &symbols, &layout(), &limits).unwrap_err();
    assert!(
        matches!(err, DecodeError::TooLong { limit: 3, .. }),
        "{err}"
    );
}

#[test]
fn a_missing_member_is_named_and_nothing_is_read() {
    let mut types = layout();
    types.add_offsets(
        "MPIR_Sendq",
        40,
        &[("sreq", 0), ("tag", 8), ("rank", 12), ("next", 24)],
    );
    // Memory that would fault on any read: the decoder must not get there.
    let mem = SyntheticMemory::new(TargetAbi::X86_64);
    let (_, symbols) = process(TargetAbi::X86_64, &[], 0, &[]);
    let err = decode(&mem, &symbols, &types, &Limits::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, DecodeError::Layouts(ref l) if l.len() == 1),
        "{text}"
    );
    assert!(
        text.contains("member `context_id` of `MPIR_Sendq`"),
        "{text}"
    );
}

#[test]
fn without_the_send_queue_symbol_sends_are_no_information() {
    let (mem, symbols) = process(TargetAbi::X86_64, &[], 0, &[]);
    let mut fewer = SymbolTable::new();
    for s in symbols.iter().filter(|s| s.name != "MPIR_Sendq_head") {
        fewer.insert(&s.object, &s.name, s.addr, s.size);
    }
    let q = decode(&mem, &fewer, &layout(), &Limits::default()).unwrap();
    assert_eq!(q.communicators[0].pending_sends, Queue::NoInformation);
}

#[test]
fn the_total_read_budget_stops_the_decoder() {
    let posted = [req(REQS + 128, 11, 0), req(0, -1, -2)];
    let (mem, symbols) = process(TargetAbi::X86_64, &posted, 0, &[]);
    let limits = Limits {
        max_total_bytes: 300,
        ..Limits::default()
    };
    let err = decode(&mem, &symbols, &layout(), &limits).unwrap_err();
    assert!(
        err.to_string().contains("max_total_bytes"),
        "a communicator (256 bytes) and a request exceed 300 bytes: {err}"
    );
}

/// Found by the `mpich_queues` fuzz target: corrupt debug info whose
/// nested member offsets add up past 2^64 panicked (integer overflow)
/// while the decoder resolved its layout. It is now a layout error that
/// names the member path, like a missing member.
#[test]
fn nested_offsets_that_overflow_are_named_as_layout_errors() {
    let mut types = layout();
    types.add_offsets(
        "MPIDI_Message_match_parts_t",
        8,
        &[("tag", u64::MAX - 1), ("rank", 4), ("context_id", 6)],
    );
    let (mem, symbols) = process(TargetAbi::X86_64, &[], 0, &[]);
    let err = decode(&mem, &symbols, &types, &Limits::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, DecodeError::Layouts(ref l) if l.len() == 1),
        "{text}"
    );
    assert!(
        text.contains("member `dev.match.parts.tag` of `MPIR_Request`"),
        "{text}"
    );
    assert!(text.contains("overflows"), "{text}");
}

/// A source that can only copy: the decoder's path for live processes and
/// debugger callbacks, where nothing can be borrowed.
struct CopyOnly<'a>(&'a SyntheticMemory);

impl TargetMemory for CopyOnly<'_> {
    fn abi(&self) -> TargetAbi {
        self.0.abi()
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, mpidd_read::ReadError> {
        self.0.read_into(addr, buf)
    }
}

#[test]
fn borrowed_and_copied_bytes_decode_alike() {
    for abi in [TargetAbi::X86_64, TargetAbi::POWERPC] {
        let posted: Vec<Req> = (0..6)
            .map(|i| req(if i < 5 { REQS + 128 * (i + 1) } else { 0 }, i as i64, 0))
            .collect();
        let (mem, symbols) = process(abi, &posted, 0, &[]);
        let types = layout();
        let borrowed = decode(&mem, &symbols, &types, &Limits::default()).unwrap();
        let copying = CopyOnly(&mem);
        let target = TargetParts {
            memory: &copying,
            symbols: &symbols,
            layouts: &types,
        };
        let copied = MpichCh3::new(&target, "4.0.2", "ch3:nemesis")
            .unwrap()
            .read_queues(&target, &Limits::default())
            .unwrap();
        assert_eq!(borrowed, copied);
        assert_eq!(
            borrowed.communicators[0]
                .pending_receives
                .operations()
                .len(),
            6
        );
    }
}

/// Requests `0..n` chained in order, the last pointing back to `back`
/// (or ending the list).
fn chain(n: u64, back: Option<u64>) -> Vec<Req> {
    (0..n)
        .map(|i| {
            let next = if i + 1 < n {
                REQS + 128 * (i + 1)
            } else {
                back.map_or(0, |b| REQS + 128 * b)
            };
            req(next, i as i64, 0)
        })
        .collect()
}

#[test]
fn a_loop_after_a_tail_names_its_first_repeated_request() {
    // 0 -> 1 -> ... -> 6 -> 2: request 2 is met again after 7 requests.
    let (mem, symbols) = process(TargetAbi::X86_64, &chain(7, Some(2)), 0, &[]);
    let err = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap_err();
    match err {
        DecodeError::Cycle { addr, len, .. } => {
            assert_eq!((addr, len), (TargetAddr(REQS + 2 * 128), 7))
        }
        other => panic!("{other}"),
    }
    // A self-loop at the head.
    let (mem, symbols) = process(TargetAbi::X86_64, &chain(1, Some(0)), 0, &[]);
    let err = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap_err();
    assert!(
        matches!(err, DecodeError::Cycle { addr, len: 1, .. } if addr == TargetAddr(REQS)),
        "{err}"
    );
}

#[test]
fn the_list_limit_is_exact_and_a_loop_beyond_it_is_too_long() {
    let limits = |n| Limits {
        max_list_len: n,
        ..Limits::default()
    };
    let (mem, symbols) = process(TargetAbi::X86_64, &chain(5, None), 0, &[]);
    let q = decode(&mem, &symbols, &layout(), &limits(5)).unwrap();
    assert_eq!(q.communicators[0].pending_receives.operations().len(), 5);
    let err = decode(&mem, &symbols, &layout(), &limits(4)).unwrap_err();
    assert!(
        matches!(err, DecodeError::TooLong { limit: 4, addr, .. } if addr == TargetAddr(REQS + 4 * 128)),
        "{err}"
    );
    // Seven distinct requests in a loop: a limit of 6 stops it first.
    let (mem, symbols) = process(TargetAbi::X86_64, &chain(7, Some(2)), 0, &[]);
    let err = decode(&mem, &symbols, &layout(), &limits(6)).unwrap_err();
    assert!(
        matches!(err, DecodeError::TooLong { limit: 6, .. }),
        "{err}"
    );
    let err = decode(&mem, &symbols, &layout(), &limits(7)).unwrap_err();
    assert!(matches!(err, DecodeError::Cycle { len: 7, .. }), "{err}");
}

/// `MPIDI_REQUEST_EAGER_MSG`, `_RNDV_MSG`, `_SELF_MSG` and
/// `MPIDI_REQUEST_SYNC_SEND_MASK` (MPICH 4.0.2's mpidimpl.h).
const EAGER: u64 = 1;
const RNDV: u64 = 2;
const SELF: u64 = 3;
const SYNC: u64 = 1 << 3;

#[test]
fn unexpected_messages_say_how_they_came() {
    let u = |next, tag, state, recv_data_sz, tmpbuf| Req {
        state,
        recv_data_sz,
        tmpbuf,
        ..req(next, tag, 0)
    };
    let at = |i: u64| REQS + 128 * i;
    let unexpected = [
        u(at(1), 1, EAGER, 20, 0xda7a),
        // 8 MiB announced, no data here yet.
        u(at(2), 2, RNDV, 8 << 20, 0),
        u(at(3), 3, EAGER | SYNC, 12, 0xda7b),
        // A zero-length eager message: no buffer, and still eager.
        u(at(4), 4, EAGER, 0, 0),
        u(at(5), 5, EAGER | SYNC, 0, 0),
        u(at(6), 6, SELF, 0, 0),
        // Not yet given a kind (a request caught while being filled).
        u(0, 7, 0, 0, 0),
    ];
    for abi in [TargetAbi::X86_64, TargetAbi::POWERPC] {
        let (mem, symbols) = process(abi, &[], REQS, &unexpected);
        let q = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap();
        let got: Vec<_> = q.communicators[0]
            .unexpected_messages
            .operations()
            .iter()
            .map(|o| (o.actual_tag, o.protocol, o.synchronous, o.system_buffer))
            .collect();
        assert_eq!(
            got,
            [
                (1, Some(Protocol::Eager), Some(false), true),
                (2, Some(Protocol::Rendezvous), None, false),
                (3, Some(Protocol::Eager), Some(true), true),
                (4, Some(Protocol::Eager), Some(false), false),
                (5, Some(Protocol::Eager), Some(true), false),
                (6, Some(Protocol::SelfSend), None, false),
                (7, None, None, false),
            ],
            "{abi:?}"
        );
    }
}

#[test]
fn the_new_facts_survive_json_and_old_json_still_reads() {
    let (mem, symbols) = process(
        TargetAbi::X86_64,
        &[],
        REQS,
        &[Req {
            state: RNDV,
            ..req(0, 9, 0)
        }],
    );
    let q = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap();
    let json = serde_json::to_value(&q).unwrap();
    let c = &json["communicators"][0];
    assert_eq!(c["context_id"], 0);
    assert_eq!(c["recv_context_id"], 0);
    assert_eq!(
        c["unexpected_messages"]["operations"][0]["protocol"],
        "rendezvous"
    );
    assert!(c["unexpected_messages"]["operations"][0]
        .get("synchronous")
        .is_none());
    let back: mpiq_core::model::ProcessQueues = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, q);
    // JSON from before these fields (or from a vendor library) reads with
    // them absent.
    let mut old = json;
    let c = old["communicators"][0].as_object_mut().unwrap();
    c.remove("context_id");
    c.remove("recv_context_id");
    let op = c["unexpected_messages"]["operations"][0]
        .as_object_mut()
        .unwrap();
    op.remove("protocol");
    let old: mpiq_core::model::ProcessQueues = serde_json::from_value(old).unwrap();
    assert_eq!(old.communicators[0].context_id, None);
    assert_eq!(
        old.communicators[0].unexpected_messages.operations()[0].protocol,
        None
    );
}

#[test]
fn a_missing_state_member_is_a_layout_error_before_any_read() {
    let mut types = layout();
    types.add_offsets(
        "MPIDI_Request",
        64,
        &[
            ("match", 0),
            ("user_buf", 8),
            ("user_count", 16),
            ("datatype", 24),
            ("recv_data_sz", 32),
            ("tmpbuf", 40),
        ],
    );
    let mem = SyntheticMemory::new(TargetAbi::X86_64);
    let (_, symbols) = process(TargetAbi::X86_64, &[], 0, &[]);
    let err = decode(&mem, &symbols, &types, &Limits::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, DecodeError::Layouts(ref l) if l.len() == 1),
        "{text}"
    );
    assert!(text.contains("member `state` of `MPIDI_Request`"), "{text}");
    assert!(MpichCh3::missing(&types, &symbols)
        .iter()
        .any(|m| m.contains("`state`")));
}

const GROUP: u64 = 0x6000;
const PMAP: u64 = 0x6100;

/// Remaps the communicator with `size` members and an optional
/// `local_group`, and the connection table with the pg ranks `vcrt`.
fn reshape(mem: &mut SyntheticMemory, abi: TargetAbi, size: u64, group: u64, vcrt: &[u64]) {
    let w = abi.address_bytes();
    let mut c = Region::new(256, abi);
    c.bytes[..4].copy_from_slice(b"node");
    c.put(128, 0, 2)
        .put(130, 0, 2)
        .put(132, size, 4)
        .put(136, 0, 4)
        .put(140, size, 4)
        .put(144, 0, 4)
        .put(152, group, w)
        .put(160, 0, w)
        .put(168, VCRT, w);
    mem.map(TargetAddr(COMM), c.bytes);
    let mut v = Region::new(8 + 8 * vcrt.len(), abi);
    v.put(0, vcrt.len() as u64, 4);
    let mut vc = Region::new(8 * vcrt.len(), abi);
    for (i, &rank) in vcrt.iter().enumerate() {
        v.put(8 + (i * w) as u64, VCS + 8 * i as u64, w);
        vc.put(8 * i as u64, rank, 4);
    }
    mem.map(TargetAddr(VCRT), v.bytes);
    mem.map(TargetAddr(VCS), vc.bytes);
}

/// The reported bug: MPICH's node communicator on the node of world ranks
/// 0 and 1 shares MPI_COMM_WORLD's 4-entry connection table (its members
/// are the table's first two, in order), and was reported as [0, 1, 2, 3].
#[test]
fn a_communicator_sharing_a_longer_connection_table_gets_its_prefix() {
    for abi in [TargetAbi::X86_64, TargetAbi::POWERPC] {
        let (mut mem, symbols) = process(abi, &[], 0, &[]);
        reshape(&mut mem, abi, 2, 0, &[0, 1, 2, 3]);
        let q = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap();
        let c = &q.communicators[0];
        assert_eq!(c.size, 2);
        assert_eq!(c.group.as_deref(), Some(&[0, 1][..]), "{abi:?}");
        assert!(q.diagnostics.iter().all(|d| !d.contains("world ranks")));
    }
}

#[test]
fn a_connection_table_shorter_than_the_communicator_gives_no_group() {
    let abi = TargetAbi::X86_64;
    let (mut mem, symbols) = process(abi, &[], 0, &[]);
    reshape(&mut mem, abi, 3, 0, &[0, 1]);
    let q = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap();
    assert_eq!(q.communicators[0].group, None);
    let d = q
        .diagnostics
        .iter()
        .find(|d| d.contains("no world ranks"))
        .unwrap_or_else(|| panic!("{:?}", q.diagnostics));
    assert!(d.contains("`node`"), "{d}");
    assert!(d.contains("MPIDI_VCRT at 0x3000 holds 2 processes"), "{d}");
    assert!(d.contains("has 3"), "{d}");
}

#[test]
fn a_group_of_the_wrong_size_is_not_trusted() {
    let abi = TargetAbi::X86_64;
    let w = abi.address_bytes();
    let group = |mem: &mut SyntheticMemory, lpids: &[u64]| {
        let mut g = Region::new(16, abi);
        g.put(0, lpids.len() as u64, 4).put(8, PMAP, w);
        mem.map(TargetAddr(GROUP), g.bytes);
        let mut p = Region::new(16 * lpids.len(), abi);
        for (i, &l) in lpids.iter().enumerate() {
            p.put(16 * i as u64, l, 8);
        }
        mem.map(TargetAddr(PMAP), p.bytes);
    };
    // A right group is used before the table.
    let (mut mem, symbols) = process(abi, &[], 0, &[]);
    reshape(&mut mem, abi, 2, GROUP, &[0, 1, 2, 3]);
    group(&mut mem, &[6, 7]);
    let q = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap();
    assert_eq!(q.communicators[0].group.as_deref(), Some(&[6, 7][..]));
    // A group of 4 for a communicator of 2: the table's prefix answers.
    group(&mut mem, &[6, 7, 8, 9]);
    let q = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap();
    assert_eq!(q.communicators[0].group.as_deref(), Some(&[0, 1][..]));
    // Neither fits: no list, and the group's error is reported.
    reshape(&mut mem, abi, 5, GROUP, &[0, 1, 2, 3]);
    let q = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap();
    assert_eq!(q.communicators[0].group, None);
    assert!(
        q.diagnostics
            .iter()
            .any(|d| d.contains("MPIR_Group at 0x6000 holds 4 processes")),
        "{:?}",
        q.diagnostics
    );
}
