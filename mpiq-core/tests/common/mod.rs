//! A small MPICH CH3 process laid out by hand, with the layouts of this
//! synthetic build, for the tests that read its queues through backends
//! and sessions of their own, and the layouts of that build for the
//! decoder tests that lay out processes of their own.

// Each test crate uses its own part of this.
#![allow(dead_code)]

use mpidd_read::{ByteOrder, SymbolTable, SyntheticMemory, TargetAbi, TargetAddr};
use mpiq_core::LayoutTable;

/// The object its MPI symbols are defined in.
pub const LIBRARY: &str = "/synthetic/libmpi.so.12";

/// Offsets of this synthetic MPICH (not the real one's).
pub fn layout() -> LayoutTable {
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

pub const LIST: u64 = 0x1000;
pub const POSTED_PTR: u64 = 0x1100;
pub const UNEXPECTED_PTR: u64 = 0x1200;
pub const SENDQ_HEAD: u64 = 0x1300;
pub const COMM: u64 = 0x2000;
pub const VCRT: u64 = 0x3000;
pub const VCS: u64 = 0x3100;
pub const REQS: u64 = 0x4000;
pub const SENDQ: u64 = 0x5000;
pub const VERSION: u64 = 0x9000;
pub const DEVICE: u64 = 0xa000;
/// MPICH's handle of MPI_INT: a builtin datatype of 4 bytes.
pub const MPI_INT: u64 = 0x4c00_0405;

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
pub fn process(abi: TargetAbi) -> (SyntheticMemory, SymbolTable) {
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
        symbols.insert(LIBRARY, name, TargetAddr(addr), w as u64);
    }
    (mem, symbols)
}
