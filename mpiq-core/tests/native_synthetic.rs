//! The native MPICH CH3 decoder on synthetic targets laid out by hand
//! (not by the decoder's code): a well-formed process on little- and
//! big-endian ABIs, and hostile ones — a request list that loops, a queue
//! head pointing into unmapped memory, a list longer than the limit, and a
//! library whose debug info lacks a member.

use mpidd_read::{Limits, SymbolTable, SyntheticMemory};
use mpidd_types::{ByteOrder, TargetAbi, TargetAddr};
use mpiq_core::model::Queue;
use mpiq_core::{ByteSource, DecodeError, LayoutTable, MpichCh3, NativeTarget, QueueDecoder};

/// Offsets of this synthetic MPICH (deliberately not the real one's).
fn layout() -> LayoutTable {
    let mut t = LayoutTable::default();
    t.insert("MPIR_Comm_list", 16, &[("sequence_number", 0), ("head", 8)]);
    t.insert(
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
    t.insert("MPIDI_CH3I_comm_t", 16, &[("vcrt", 0)]);
    t.insert("MPIDI_VCRT", 24, &[("size", 0), ("vcr_table", 8)]);
    t.insert("MPIDI_VC", 8, &[("pg_rank", 0)]);
    t.insert("MPIR_Group", 16, &[("size", 0), ("lrank_to_lpid", 8)]);
    t.insert("MPII_Group_pmap_t", 16, &[("lpid", 0)]);
    t.insert("MPIR_Request", 128, &[("cc", 0), ("next", 8), ("dev", 16)]);
    t.insert(
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
    t.insert("MPIDI_Message_match", 8, &[("parts", 0)]);
    t.insert(
        "MPIDI_Message_match_parts_t",
        8,
        &[("tag", 0), ("rank", 4), ("context_id", 6)],
    );
    t.insert(
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
        reqs.put(b + 48, q.recv_data_sz, w).put(b + 56, q.tmpbuf, w);
    }
    mem.map(TargetAddr(REQS), reqs.bytes);

    // One pending send of 3 ints to rank 0, tag 44.
    let mut s = Region::new(40 + 128, abi);
    s.put(0, SENDQ + 40, w)
        .put(8, 44, 4)
        .put(12, 0, 4)
        .put(16, 0, 4)
        .put(24, 0, w);
    s.put(40, 1, 4)
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
    }
}

fn decode(
    mem: &SyntheticMemory,
    symbols: &SymbolTable,
    types: &LayoutTable,
    limits: &Limits,
) -> Result<mpiq_core::model::ProcessQueues, DecodeError> {
    let target = NativeTarget {
        memory: mem,
        symbols,
        types,
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
        ..req(0, 99, 0)
    }];
    let (mem, symbols) = process(abi, &posted, REQS + 256, &unexpected);
    let q = decode(&mem, &symbols, &layout(), &Limits::default()).unwrap();
    assert_eq!(q.global_rank, 1);
    assert_eq!(q.communicators.len(), 1);
    let c = &q.communicators[0];
    assert_eq!((c.name.as_str(), c.size, c.local_rank), ("world", 2, 1));
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
    types.insert(
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
    types.insert(
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

impl ByteSource for CopyOnly<'_> {
    fn abi(&self) -> TargetAbi {
        ByteSource::abi(self.0)
    }

    fn read_exact(
        &self,
        addr: TargetAddr,
        buf: &mut [u8],
        what: &'static str,
    ) -> Result<(), mpidd_read::ReadError> {
        ByteSource::read_exact(self.0, addr, buf, what)
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
        let target = NativeTarget {
            memory: &copying,
            symbols: &symbols,
            types: &types,
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
