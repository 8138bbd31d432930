//! The UCX worker reader against UCX 1.13.1's own layouts: Debian's UCX
//! source, configured as Debian builds it (scripts/debian-ucx-tree.sh),
//! compiled here object by object and linked into a stand-in libucp whose
//! DWARF a `TypeOracle` reads. A worker, its expected queues, unexpected
//! descriptors and request pool are laid out in synthetic memory at the
//! offsets that compiler gave, member by member, and read back; then the
//! same memory is corrupted the ways a hostile target can be.
//!
//! The UCX tree is found by running scripts/debian-ucx-tree.sh (which
//! makes it if missing, a few minutes once, and prints its path last).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use mpidd_read::{Layouts, Limits, ReadError, SyntheticMemory, TypeOracle};
use mpidd_types::{TargetAbi, TargetAddr};
use mpihandles::{
    read_ucx_worker, ucx_layouts_missing, ucx_worker_layouts_missing, UcxError, UcxProtocol,
    UcxSender,
};

/// The objects whose DWARF describes every type the reader asks.
const UCP_OBJECTS: &[&str] = &[
    "core/libucp_la-ucp_worker.lo",
    "core/libucp_la-ucp_request.lo",
    "tag/libucp_la-tag_match.lo",
    "tag/libucp_la-eager_rcv.lo",
    "tag/libucp_la-tag_rndv.lo",
];
const UCS_OBJECTS: &[&str] = &["datastruct/libucs_la-mpool.lo"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// UCX 1.13.1's layouts as gcc lays them out with Debian's configuration.
fn oracle() -> &'static TypeOracle {
    static ORACLE: OnceLock<TypeOracle> = OnceLock::new();
    ORACLE.get_or_init(|| {
        let script = repo().join("scripts/debian-ucx-tree.sh");
        let out = Command::new("bash")
            .arg(&script)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(
            out.status.success(),
            "Debian's UCX 1.13.1 source tree is needed: `bash scripts/debian-ucx-tree.sh` \
             makes it (apt-get source ucx, configured as Debian does; needs deb-src and \
             build-essential), and it failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let tree = PathBuf::from(stdout.lines().last().unwrap_or_default().trim());
        let mut objects = Vec::new();
        for (dir, los) in [("src/ucp", UCP_OBJECTS), ("src/ucs", UCS_OBJECTS)] {
            run(
                Command::new("make")
                    .arg("-s")
                    .arg("-C")
                    .arg(tree.join(dir))
                    .args(los),
                "compiling UCX's objects",
            );
            for lo in los {
                let lo = Path::new(lo);
                let o = lo.with_extension("o");
                objects.push(
                    tree.join(dir)
                        .join(lo.parent().unwrap())
                        .join(".libs")
                        .join(o.file_name().unwrap()),
                );
            }
        }
        let dir = std::env::temp_dir().join(format!("mpidd-ucx-worker-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let standin = dir.join("libucp.so.0.0.0");
        run(
            Command::new("gcc")
                .args(["-shared", "-nostdlib", "-o"])
                .arg(&standin)
                .args(&objects)
                .arg("-Wl,--unresolved-symbols=ignore-all"),
            "linking the stand-in libucp",
        );
        let mut oracle = TypeOracle::new();
        oracle.add_object("libucp.so.0.0.0", &standin, None);
        oracle
    })
}

fn member(ty: &str, path: &str) -> (u64, u64) {
    let m = oracle()
        .member(ty, path)
        .unwrap_or_else(|e| panic!("{ty}.{path}: {e}"));
    (m.offset, m.size)
}

fn size(ty: &str) -> u64 {
    oracle().size_of(ty).unwrap_or_else(|e| panic!("{ty}: {e}"))
}

// Bits of UCX 1.13.1's src/ucp/core/ucp_request.h, written here from the
// header, not from the reader.
const REQ_COMPLETED: u64 = 1 << 0;
const REQ_SYNC: u64 = 1 << 8;
const REQ_SEND_TAG: u64 = 1 << 14;
const REQ_RECV_TAG: u64 = 1 << 17;
const RDESC_EAGER: u64 = 1 << 1;
const RDESC_EAGER_ONLY: u64 = 1 << 2;
const RDESC_EAGER_SYNC: u64 = 1 << 3;
const RDESC_RNDV: u64 = 1 << 6;
/// ucs_roundup_pow2(UCP_TAG_MATCH_HASH_SIZE = 1021), tag_match.c.
const HASH_QUEUES: u64 = 1024;

/// 64-bit memory being laid out, region by region, little-endian (x86_64)
/// unless `big` (s390x, the same offsets in the other byte order).
#[derive(Clone, Default)]
struct Image {
    regions: Vec<(u64, Vec<u8>)>,
    big: bool,
}

impl Image {
    fn region(&mut self, base: u64, len: u64) {
        self.regions.push((base, vec![0; len as usize]));
    }

    fn write(&mut self, addr: u64, len: u64, value: u64) {
        let (base, bytes) = self
            .regions
            .iter_mut()
            .find(|(b, v)| addr >= *b && addr + len <= *b + v.len() as u64)
            .unwrap_or_else(|| panic!("nothing laid out at {addr:#x}"));
        let at = (addr - *base) as usize;
        let n = len as usize;
        if self.big {
            bytes[at..at + n].copy_from_slice(&value.to_be_bytes()[8 - n..]);
        } else {
            bytes[at..at + n].copy_from_slice(&value.to_le_bytes()[..n]);
        }
    }

    /// `ty`'s member `path` of the record at `base`.
    fn set(&mut self, base: u64, ty: &str, path: &str, value: u64) {
        let (off, len) = member(ty, path);
        self.write(base + off, len, value);
    }

    fn memory(&self) -> SyntheticMemory {
        let abi = if self.big {
            TargetAbi::S390X
        } else {
            TargetAbi::X86_64
        };
        let mut m = SyntheticMemory::new(abi);
        for (base, bytes) in &self.regions {
            m.map(TargetAddr(*base), bytes.clone());
        }
        m
    }
}

const WORKER: u64 = 0x10_0000;
const HASH: u64 = 0x20_0000;
const POOL_DATA: u64 = 0x30_0000;
const CHUNK1: u64 = 0x40_0000;
const CHUNK2: u64 = 0x50_0000;
const DESCS: u64 = 0x60_0000;
/// The request pool's name, as UCX names it (`ucp_worker_init_mpools`).
const POOL_NAME: u64 = 0x68_0000;
/// What the MPI library asked UCX to keep after each request.
const USER_SIZE: u64 = 40;
const ALIGN: u64 = 64;

/// `ucp_tag_match_calc_hash` (tag_match.inl).
fn bucket(tag: u64) -> u64 {
    ((tag as u32) % 1021) as u64 ^ (((tag >> 32) as u32) % 1021) as u64
}

/// A worker laid out with UCX's layouts, and what it holds.
struct Laid {
    image: Image,
    /// Elements of the pool, chunk by chunk: (element address, request).
    elems: Vec<u64>,
    req_size: u64,
    descs: Vec<u64>,
}

impl Laid {
    fn request(&self, i: usize) -> u64 {
        self.elems[i] + size("ucs_mpool_elem_t")
    }

    fn tm(&self) -> u64 {
        WORKER + member("ucp_worker_t", "tm").0
    }
}

fn stride() -> u64 {
    let elem = size("ucs_mpool_elem_t") + size("ucp_request_t") + USER_SIZE;
    elem.div_ceil(ALIGN) * ALIGN
}

fn queue_link(request: u64) -> u64 {
    request + member("ucp_request_t", "recv.queue").0
}

/// Lays out a worker whose queues and pool hold:
/// - elements 0..4 of chunk 1: receives R0 (wildcard, sn 2), R1 (hash,
///   sn 0), R2 (hash, sn 3), R3 (wildcard, sn 1); element 4 free with a
///   stale send's flags;
/// - chunk 2: R4 matched (not queued), R5 completed, S0 a send, S1 a
///   synchronous send, S2 a completed send, element 5 free.
/// - unexpected: eager-only, eager-sync-only, eager-first,
///   eager-sync-first, rendezvous, in that order.
fn lay_out() -> Laid {
    lay_out_in(false)
}

fn lay_out_in(big: bool) -> Laid {
    let mut im = Image {
        big,
        ..Image::default()
    };
    let req_size = size("ucp_request_t");
    let elem_header = size("ucs_mpool_elem_t");
    let stride = stride();
    im.region(WORKER, size("ucp_worker_t"));
    im.region(HASH, HASH_QUEUES * size("ucp_request_queue_t"));
    im.region(POOL_DATA, size("ucs_mpool_data_t"));
    im.region(CHUNK1, 0x40 + 5 * stride);
    im.region(CHUNK2, 0x40 + 6 * stride);
    im.region(DESCS, 0x1000);

    let tm = WORKER + member("ucp_worker_t", "tm").0;
    let mp = WORKER + member("ucp_worker_t", "req_mp").0;
    let rq_queue = member("ucp_request_queue_t", "queue").0;
    let head_off = member("ucs_queue_head_t", "head").0;
    // Every hash queue empty: ptail at its own head.
    for b in 0..HASH_QUEUES {
        let q = HASH + b * size("ucp_request_queue_t") + rq_queue;
        im.set(q, "ucs_queue_head_t", "ptail", q + head_off);
        im.set(q, "ucs_queue_head_t", "head", 0x5a5a_5a5a);
    }
    im.set(tm, "ucp_tag_match_t", "expected.hash", HASH);
    im.set(tm, "ucp_tag_match_t", "expected.sn", 4);

    // The pool, named as UCX names the worker's request pool.
    im.region(POOL_NAME, 16);
    for (i, b) in b"ucp_requests\0".iter().enumerate() {
        im.write(POOL_NAME + i as u64, 1, u64::from(*b));
    }
    im.set(POOL_DATA, "ucs_mpool_data_t", "name", POOL_NAME);
    im.set(mp, "ucs_mpool_t", "data", POOL_DATA);
    im.set(
        POOL_DATA,
        "ucs_mpool_data_t",
        "elem_size",
        elem_header + req_size + USER_SIZE,
    );
    im.set(POOL_DATA, "ucs_mpool_data_t", "alignment", ALIGN);
    im.set(POOL_DATA, "ucs_mpool_data_t", "chunks", CHUNK1);
    let mut elems = Vec::new();
    for (chunk, next, n) in [(CHUNK1, CHUNK2, 5u64), (CHUNK2, 0, 6)] {
        let first = chunk + 0x40;
        im.set(chunk, "ucs_mpool_chunk_t", "next", next);
        im.set(chunk, "ucs_mpool_chunk_t", "elems", first);
        im.set(chunk, "ucs_mpool_chunk_t", "num_elems", n);
        for i in 0..n {
            elems.push(first + i * stride);
        }
    }
    let mut laid = Laid {
        image: im,
        elems,
        req_size,
        descs: Vec::new(),
    };
    let im = &mut laid.image;
    let in_use = |im: &mut Image, elem: u64| im.write(elem, elem_header, mp);

    // Receives R0..R5 (elements 0..3 of chunk 1, 0..1 of chunk 2).
    let receives: [(usize, u64, u64, u64, u64); 6] = [
        // (element, tag, mask, sn, flags)
        (
            0,
            0x0001_0002_0000_0007,
            0xffff_0000_ffff_ffff,
            2,
            REQ_RECV_TAG,
        ),
        (1, 0x0001_0003_0000_0005, u64::MAX, 0, REQ_RECV_TAG),
        (2, 0x0002_0001_0000_0009, u64::MAX, 3, REQ_RECV_TAG),
        (
            3,
            0x0001_0000_0000_0000,
            0xffff_0000_0000_0000,
            1,
            REQ_RECV_TAG,
        ),
        (5, 0x0003_0000_0000_0001, u64::MAX, 9, REQ_RECV_TAG),
        (
            6,
            0x0003_0000_0000_0002,
            u64::MAX,
            10,
            REQ_RECV_TAG | REQ_COMPLETED,
        ),
    ];
    for &(e, tag, mask, sn, flags) in &receives {
        let elem = laid.elems[e];
        let r = elem + elem_header;
        in_use(im, elem);
        im.set(r, "ucp_request_t", "flags", flags);
        im.set(r, "ucp_request_t", "recv.tag.tag", tag);
        im.set(r, "ucp_request_t", "recv.tag.tag_mask", mask);
        im.set(r, "ucp_request_t", "recv.tag.sn", sn);
        im.set(
            r,
            "ucp_request_t",
            "recv.buffer",
            0x7f00_0000 + e as u64 * 0x1000,
        );
        im.set(r, "ucp_request_t", "recv.length", 100 + e as u64);
    }
    // The wildcard queue: R0 then R3; the hash: R1 and R2 in their buckets.
    let wildcard = tm + member("ucp_tag_match_t", "expected.wildcard").0 + rq_queue;
    let r = |e: usize| laid.elems[e] + elem_header;
    let next = member("ucs_queue_elem_t", "next").0;
    im.set(wildcard, "ucs_queue_head_t", "head", queue_link(r(0)));
    im.set(
        queue_link(r(0)) + next,
        "ucs_queue_elem_t",
        "next",
        queue_link(r(3)),
    );
    // The last element's `next` is stale: the walk must stop at ptail.
    im.set(
        queue_link(r(3)) + next,
        "ucs_queue_elem_t",
        "next",
        0xdead_beef,
    );
    im.set(
        wildcard,
        "ucs_queue_head_t",
        "ptail",
        queue_link(r(3)) + next,
    );
    for e in [1usize, 2] {
        let tag = receives[e].1;
        let q = HASH + bucket(tag) * size("ucp_request_queue_t") + rq_queue;
        im.set(q, "ucs_queue_head_t", "head", queue_link(r(e)));
        im.set(q, "ucs_queue_head_t", "ptail", queue_link(r(e)) + next);
        im.set(queue_link(r(e)) + next, "ucs_queue_elem_t", "next", 0);
    }
    // Element 4: free, holding a stale send.
    im.write(laid.elems[4], elem_header, laid.elems[10]);
    im.set(r(4), "ucp_request_t", "flags", REQ_SEND_TAG);
    // Sends S0..S2 (elements 7..9), element 10 free (the free list's end).
    for (e, flags) in [
        (7usize, REQ_SEND_TAG),
        (8, REQ_SEND_TAG | REQ_SYNC),
        (9, REQ_SEND_TAG | REQ_COMPLETED),
    ] {
        in_use(im, laid.elems[e]);
        let s = r(e);
        im.set(s, "ucp_request_t", "flags", flags);
        im.set(
            s,
            "ucp_request_t",
            "send.msg_proto.tag",
            0x0001_0000_0000_0040 + e as u64,
        );
        im.set(s, "ucp_request_t", "send.buffer", 0x7e00_0000 + e as u64);
        im.set(s, "ucp_request_t", "send.length", 1 << (e + 4));
        im.set(s, "ucp_request_t", "send.ep", 0x6000_0000 + e as u64);
    }
    im.write(laid.elems[10], elem_header, 0);
    im.set(mp, "ucs_mpool_t", "freelist", laid.elems[4]);

    lay_out_unexpected(&mut laid);
    lay_out_endpoints(&mut laid);
    laid
}

const EPS: u64 = 0x70_0000;
const STACK: u64 = 0x80_0000;
/// A send request the MPI library allocated itself (on its stack): in no
/// pool, found only through its endpoint.
const STACK_REQUEST: u64 = STACK + 0x40;

/// The link `send.list` of the request at `r`.
fn send_link(r: u64) -> u64 {
    r + member("ucp_request_t", "send.list").0 + member("ucs_hlist_link_t", "list").0
}

/// Three endpoints in the worker's ring: the first keeps S1 then S0 (a
/// synchronous and a rendezvous send of the pool) awaiting an answer, the
/// second the stack request, the third nothing.
fn lay_out_endpoints(laid: &mut Laid) {
    let s0 = laid.request(7);
    let s1 = laid.request(8);
    let im = &mut laid.image;
    im.region(EPS, 0x1000);
    im.region(STACK, 0x400);
    let head = WORKER + member("ucp_worker_t", "all_eps").0;
    let ep_list = member("ucp_ep_ext_gen_t", "ep_list").0;
    let proto_reqs = member("ucp_ep_ext_gen_t", "proto_reqs").0;
    let exts = [EPS, EPS + 0x100, EPS + 0x200];
    let mut prev = head;
    for ext in exts {
        im.set(prev, "ucs_list_link_t", "next", ext + ep_list);
        im.set(ext + ep_list, "ucs_list_link_t", "prev", prev);
        prev = ext + ep_list;
    }
    im.set(prev, "ucs_list_link_t", "next", head);
    im.set(head, "ucs_list_link_t", "prev", prev);
    // The first endpoint: S1 -> S0 -> S1.
    im.set(
        exts[0] + proto_reqs,
        "ucs_hlist_head_t",
        "ptr",
        send_link(s1),
    );
    im.set(send_link(s1), "ucs_list_link_t", "next", send_link(s0));
    im.set(send_link(s0), "ucs_list_link_t", "next", send_link(s1));
    // The second: the stack request, a ring of one.
    let r = STACK_REQUEST;
    im.set(
        exts[1] + proto_reqs,
        "ucs_hlist_head_t",
        "ptr",
        send_link(r),
    );
    im.set(send_link(r), "ucs_list_link_t", "next", send_link(r));
    im.set(r, "ucp_request_t", "flags", REQ_SEND_TAG);
    im.set(
        r,
        "ucp_request_t",
        "send.msg_proto.tag",
        0x0001_0000_0000_0099,
    );
    im.set(r, "ucp_request_t", "send.buffer", 0x7d00_0000);
    im.set(r, "ucp_request_t", "send.length", 1 << 22);
    im.set(r, "ucp_request_t", "send.ep", 0x6100_0000);
}

/// Unexpected messages: (flags, header type, payload bytes, total or
/// size, sender).
struct Desc {
    flags: u64,
    tag: u64,
    header: &'static str,
    payload: u64,
    total: u64,
    sender: Option<(u64, u64)>,
}

fn descs() -> Vec<Desc> {
    vec![
        Desc {
            flags: RDESC_EAGER | RDESC_EAGER_ONLY,
            tag: 0x0001_0001_0000_0003,
            header: "ucp_tag_hdr_t",
            payload: 64,
            total: 0,
            sender: None,
        },
        Desc {
            flags: RDESC_EAGER | RDESC_EAGER_ONLY | RDESC_EAGER_SYNC,
            tag: 0x0001_0002_0000_0004,
            header: "ucp_eager_sync_hdr_t",
            payload: 8,
            total: 0,
            sender: Some((0x11, 0x22)),
        },
        Desc {
            flags: RDESC_EAGER,
            tag: 0x0001_0003_0000_0005,
            header: "ucp_eager_first_hdr_t",
            payload: 1000,
            total: 70_000,
            sender: None,
        },
        Desc {
            flags: RDESC_EAGER | RDESC_EAGER_SYNC,
            tag: 0x0001_0003_0000_0006,
            header: "ucp_eager_sync_first_hdr_t",
            payload: 1000,
            total: 90_000,
            sender: Some((0x33, 0x44)),
        },
        Desc {
            flags: RDESC_RNDV,
            tag: 0x0002_0000_0000_0007,
            header: "ucp_rndv_rts_hdr_t",
            payload: 0,
            total: 1 << 20,
            sender: Some((0x55, 0x66)),
        },
    ]
}

/// The link `tag_list[UCP_RDESC_ALL_LIST]` of the descriptor at `d`.
fn all_link(d: u64) -> u64 {
    let (off, len) = member("ucp_recv_desc_t", "tag_list");
    d + off + len / 2
}

fn lay_out_unexpected(laid: &mut Laid) {
    let im = &mut laid.image;
    let head =
        WORKER + member("ucp_worker_t", "tm").0 + member("ucp_tag_match_t", "unexpected.all").0;
    let rdesc = size("ucp_recv_desc_t");
    let mut prev = head;
    for (i, d) in descs().iter().enumerate() {
        let at = DESCS + i as u64 * 0x200;
        let hdr = at + rdesc;
        let hdr_len = size(d.header);
        im.set(at, "ucp_recv_desc_t", "flags", d.flags);
        im.set(at, "ucp_recv_desc_t", "payload_offset", hdr_len);
        im.set(at, "ucp_recv_desc_t", "length", hdr_len + d.payload);
        // The hash list's link, which the reader must not follow.
        let hash_link = at + member("ucp_recv_desc_t", "tag_list").0;
        im.set(hash_link, "ucs_list_link_t", "next", 0x4141_4141);
        im.set(hdr, "ucp_tag_hdr_t", "tag", d.tag);
        match d.header {
            "ucp_eager_first_hdr_t" => im.set(hdr, d.header, "total_len", d.total),
            "ucp_eager_sync_first_hdr_t" => im.set(hdr, d.header, "super.total_len", d.total),
            "ucp_rndv_rts_hdr_t" => im.set(hdr, d.header, "size", d.total),
            _ => {}
        }
        if let Some((ep, req)) = d.sender {
            let path = if d.header == "ucp_rndv_rts_hdr_t" {
                "sreq"
            } else {
                "req"
            };
            let base = hdr + member(d.header, path).0;
            im.set(base, "ucp_request_hdr_t", "ep_id", ep);
            im.set(base, "ucp_request_hdr_t", "req_id", req);
        }
        let link = all_link(at);
        im.set(prev, "ucs_list_link_t", "next", link);
        im.set(link, "ucs_list_link_t", "prev", prev);
        prev = link;
        laid.descs.push(at);
    }
    im.set(prev, "ucs_list_link_t", "next", head);
    im.set(head, "ucs_list_link_t", "prev", prev);
}

fn read(image: &Image, limits: &Limits) -> Result<mpihandles::UcxWorkerQueues, UcxError> {
    read_ucx_worker(&image.memory(), oracle(), TargetAddr(WORKER), limits)
}

#[test]
fn ucx_1_13_layouts_answer_every_question() {
    assert!(ucx_worker_layouts_missing(oracle()).is_none());
    assert!(ucx_layouts_missing(oracle()).is_none());
    // Every question a profile records is answered by UCX's own DWARF.
    let (_, unanswered) =
        mpidd_read::LayoutTable::record(oracle(), &mpihandles::ask_ucx_worker_layouts);
    assert!(unanswered.is_empty(), "{unanswered:?}");
}

#[test]
fn posted_receives_come_in_posting_order_from_every_queue() {
    let laid = lay_out();
    let q = read(&laid.image, &Limits::default()).unwrap();
    assert_eq!(q.worker, TargetAddr(WORKER));
    assert!(q.notes.is_empty(), "{:?}", q.notes);
    // sn 0: R1, 1: R3, 2: R0, 3: R2.
    let order: Vec<u64> = q.posted.iter().map(|p| p.request.0).collect();
    assert_eq!(
        order,
        vec![
            laid.request(1),
            laid.request(3),
            laid.request(0),
            laid.request(2)
        ]
    );
    let r0 = q
        .posted
        .iter()
        .find(|p| p.request.0 == laid.request(0))
        .unwrap();
    assert_eq!(r0.user.0, laid.request(0) + laid.req_size);
    assert_eq!(r0.tag, 0x0001_0002_0000_0007);
    assert_eq!(r0.tag_mask, 0xffff_0000_ffff_ffff);
    assert_eq!(r0.buffer, 0x7f00_0000);
    assert_eq!(r0.length, 100);
    assert_eq!(r0.sequence, 2);
    let r2 = q
        .posted
        .iter()
        .find(|p| p.request.0 == laid.request(2))
        .unwrap();
    assert_eq!((r2.tag, r2.tag_mask), (0x0002_0001_0000_0009, u64::MAX));
    assert_eq!((r2.buffer, r2.length, r2.sequence), (0x7f00_2000, 102, 3));
}

#[test]
fn unexpected_messages_carry_protocol_length_and_sender() {
    let laid = lay_out();
    let q = read(&laid.image, &Limits::default()).unwrap();
    let expected = descs();
    assert_eq!(q.unexpected.len(), expected.len());
    for ((u, d), at) in q.unexpected.iter().zip(&expected).zip(&laid.descs) {
        assert_eq!(u.descriptor.0, *at);
        assert_eq!(u.tag, d.tag);
        assert_eq!(u.flags as u64, d.flags);
        assert_eq!(
            u.sender,
            d.sender.map(|(ep_id, req_id)| UcxSender { ep_id, req_id })
        );
    }
    let p: Vec<(UcxProtocol, bool, Option<u64>)> = q
        .unexpected
        .iter()
        .map(|u| (u.protocol, u.first_of_several, u.length))
        .collect();
    assert_eq!(
        p,
        vec![
            (UcxProtocol::Eager, false, Some(64)),
            (UcxProtocol::EagerSync, false, Some(8)),
            (UcxProtocol::Eager, true, Some(70_000)),
            (UcxProtocol::EagerSync, true, Some(90_000)),
            (UcxProtocol::Rendezvous, false, Some(1 << 20)),
        ]
    );
}

#[test]
fn the_pool_gives_sends_and_receives_in_progress() {
    let laid = lay_out();
    let q = read(&laid.image, &Limits::default()).unwrap();
    // S0 and S1; not S2 (completed), not element 4 (free, stale flags);
    // then the stack request, which only its endpoint lists.
    assert_eq!(q.sends.len(), 3, "{:?}", q.sends);
    for (s, e, sync) in [(&q.sends[0], 7usize, false), (&q.sends[1], 8, true)] {
        assert_eq!(s.request.0, laid.request(e));
        assert_eq!(s.user.0, laid.request(e) + laid.req_size);
        assert_eq!(s.tag, 0x0001_0000_0000_0040 + e as u64);
        assert_eq!(s.buffer, 0x7e00_0000 + e as u64);
        assert_eq!(s.length, 1 << (e + 4));
        assert_eq!(s.endpoint, 0x6000_0000 + e as u64);
        assert_eq!(s.synchronous, sync);
    }
    // S0 awaits an answer without being synchronous: a rendezvous send.
    assert_eq!(q.sends[0].protocol, UcxProtocol::Rendezvous);
    assert!(
        matches!(q.sends[1].protocol, UcxProtocol::Unknown(f) if f as u64 == REQ_SEND_TAG | REQ_SYNC)
    );
    let stack = &q.sends[2];
    assert_eq!(stack.request.0, STACK_REQUEST);
    assert_eq!(stack.user.0, STACK_REQUEST + laid.req_size);
    assert_eq!(
        (
            stack.tag,
            stack.buffer,
            stack.length,
            stack.endpoint,
            stack.synchronous
        ),
        (
            0x0001_0000_0000_0099,
            0x7d00_0000,
            1 << 22,
            0x6100_0000,
            false
        )
    );
    assert_eq!(stack.protocol, UcxProtocol::Rendezvous);
    // R0..R3 posted, R4 matched; R5 completed.
    let rs: Vec<(u64, bool)> = q.receives.iter().map(|r| (r.request.0, r.posted)).collect();
    assert_eq!(
        rs,
        vec![
            (laid.request(0), true),
            (laid.request(1), true),
            (laid.request(2), true),
            (laid.request(3), true),
            (laid.request(5), false),
        ]
    );
    let r4 = &q.receives[4];
    assert_eq!(
        (r4.tag, r4.tag_mask, r4.buffer, r4.length),
        (0x0003_0000_0000_0001, u64::MAX, 0x7f00_5000, 105)
    );
}

#[test]
fn without_the_pool_layouts_the_rest_is_read_and_the_pool_is_a_note() {
    let laid = lay_out();
    let table = mpidd_read::LayoutTable::record(oracle(), &mpihandles::ask_ucx_worker_layouts).0;
    let q = read_ucx_worker(
        &laid.image.memory(),
        &NoPool(&table),
        TargetAddr(WORKER),
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(q.posted.len(), 4);
    assert_eq!(q.unexpected.len(), 5);
    // The sends awaiting an answer still come from the endpoints.
    assert!(q.receives.is_empty());
    let sends: Vec<u64> = q.sends.iter().map(|s| s.request.0).collect();
    assert_eq!(sends, vec![laid.request(8), laid.request(7), STACK_REQUEST]);
    assert_eq!(q.notes.len(), 1, "{:?}", q.notes);
    assert!(q.notes[0].contains("ucs_mpool_data_t"), "{:?}", q.notes);
}

/// Layouts that know nothing of `ucs_mpool_data_t`.
struct NoPool<'a>(&'a mpidd_read::LayoutTable);

impl Layouts for NoPool<'_> {
    fn size_of(&self, t: &str) -> Result<u64, mpidd_read::LayoutError> {
        self.check(t)?;
        self.0.size_of(t)
    }
    fn member(&self, t: &str, p: &str) -> Result<mpidd_read::Member, mpidd_read::LayoutError> {
        self.check(t)?;
        self.0.member(t, p)
    }
    fn enumerators(&self, t: &str) -> Result<Vec<(String, i128)>, mpidd_read::LayoutError> {
        self.0.enumerators(t)
    }
    fn member_enumerators(
        &self,
        t: &str,
        p: &str,
    ) -> Result<Vec<(String, i128)>, mpidd_read::LayoutError> {
        self.0.member_enumerators(t, p)
    }
    fn member_fields(
        &self,
        t: &str,
        p: &str,
    ) -> Result<Vec<(String, mpidd_read::Member)>, mpidd_read::LayoutError> {
        self.0.member_fields(t, p)
    }
}

impl NoPool<'_> {
    fn check(&self, t: &str) -> Result<(), mpidd_read::LayoutError> {
        if t == "ucs_mpool_data_t" {
            return Err(mpidd_read::LayoutError::new(
                t,
                None,
                "not in this layout source",
            ));
        }
        Ok(())
    }
}

fn expect_read_error(e: UcxError) -> ReadError {
    match e {
        UcxError::Read(r) => r,
        other => panic!("not a read error: {other}"),
    }
}

#[test]
fn a_cycle_in_the_unexpected_list_is_named() {
    let mut laid = lay_out();
    // The third descriptor leads back to the second.
    let third = all_link(laid.descs[2]);
    laid.image
        .set(third, "ucs_list_link_t", "next", all_link(laid.descs[1]));
    let e = read(&laid.image, &Limits::default()).unwrap_err();
    let text = e.to_string();
    match expect_read_error(e) {
        ReadError::Cycle { addr, .. } => assert_eq!(addr.0, all_link(laid.descs[1])),
        other => panic!("{other}"),
    }
    assert!(text.contains("ucp_recv_desc_t"), "{text}");
}

#[test]
fn a_looping_expected_queue_is_named() {
    let mut laid = lay_out();
    let next = member("ucs_queue_elem_t", "next").0;
    let r3 = laid.request(3);
    let r0 = laid.request(0);
    // R3 leads back to R0, and the tail is nowhere on the chain.
    laid.image.set(
        queue_link(r3) + next,
        "ucs_queue_elem_t",
        "next",
        queue_link(r0),
    );
    let wildcard = laid.tm()
        + member("ucp_tag_match_t", "expected.wildcard").0
        + member("ucp_request_queue_t", "queue").0;
    laid.image
        .set(wildcard, "ucs_queue_head_t", "ptail", 0x7777_0000);
    match expect_read_error(read(&laid.image, &Limits::default()).unwrap_err()) {
        ReadError::Cycle { addr, what } => {
            assert_eq!(addr.0, queue_link(r0));
            assert!(what.contains("recv.queue"), "{what}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_queue_ending_in_null_before_its_tail_is_corrupt() {
    let mut laid = lay_out();
    let next = member("ucs_queue_elem_t", "next").0;
    let r0 = laid.request(0);
    laid.image
        .set(queue_link(r0) + next, "ucs_queue_elem_t", "next", 0);
    match read(&laid.image, &Limits::default()).unwrap_err() {
        UcxError::Corrupt { record, .. } => assert_eq!(record, "ucs_queue_head_t"),
        other => panic!("{other}"),
    }
}

#[test]
fn lists_longer_than_the_limit_are_refused() {
    let laid = lay_out();
    let limits = Limits {
        max_list_len: 3,
        ..Limits::default()
    };
    // Four posted receives in all queues together.
    match expect_read_error(read(&laid.image, &limits).unwrap_err()) {
        ReadError::LimitExceeded { limit, max, .. } => {
            assert_eq!((limit, max), ("max_list_len", 3))
        }
        other => panic!("{other}"),
    }
    let limits = Limits {
        max_list_len: 4,
        ..Limits::default()
    };
    // Five unexpected messages.
    match expect_read_error(read(&laid.image, &limits).unwrap_err()) {
        ReadError::LimitExceeded { what, addr, .. } => {
            assert!(what.contains("unexpected"), "{what}");
            assert_eq!(
                addr.0,
                laid.tm() + member("ucp_tag_match_t", "unexpected.all").0
            );
        }
        other => panic!("{other}"),
    }
}

#[test]
fn huge_lengths_are_reported_as_they_are_and_short_descriptors_refused() {
    let mut laid = lay_out();
    let rts = laid.descs[4] + size("ucp_recv_desc_t");
    laid.image.set(rts, "ucp_rndv_rts_hdr_t", "size", 1 << 40);
    let first = laid.descs[2] + size("ucp_recv_desc_t");
    laid.image
        .set(first, "ucp_eager_first_hdr_t", "total_len", u64::MAX);
    let q = read(&laid.image, &Limits::default()).unwrap();
    assert_eq!(q.unexpected[4].length, Some(1 << 40));
    assert_eq!(q.unexpected[2].length, Some(u64::MAX));
    // A length shorter than its header: no payload length can be made.
    laid.image
        .set(laid.descs[0], "ucp_recv_desc_t", "length", 2);
    match read(&laid.image, &Limits::default()).unwrap_err() {
        UcxError::Corrupt { record, addr, .. } => {
            assert_eq!((record, addr.0), ("ucp_recv_desc_t", laid.descs[0]))
        }
        other => panic!("{other}"),
    }
}

#[test]
fn an_unmapped_descriptor_is_named_with_its_address() {
    let mut laid = lay_out();
    let head = laid.tm() + member("ucp_tag_match_t", "unexpected.all").0;
    let wild = 0x0bad_0000_0000u64;
    laid.image.set(head, "ucs_list_link_t", "next", wild);
    let e = read(&laid.image, &Limits::default()).unwrap_err();
    let text = e.to_string();
    match expect_read_error(e) {
        ReadError::ShortRead { what, addr, .. } => {
            assert_eq!(what, "ucp_recv_desc_t");
            assert_eq!(addr.0, wild - (all_link(0)));
        }
        other => panic!("{other}"),
    }
    assert!(text.contains("ucp_recv_desc_t"), "{text}");
}

#[test]
fn a_chunk_of_2_pow_31_elements_is_refused_before_reading() {
    let mut laid = lay_out();
    laid.image
        .set(CHUNK2, "ucs_mpool_chunk_t", "num_elems", 1 << 31);
    match expect_read_error(read(&laid.image, &Limits::default()).unwrap_err()) {
        ReadError::LimitExceeded {
            addr, count, limit, ..
        } => {
            assert_eq!(addr.0, CHUNK2);
            assert_eq!(limit, "max_table_entries");
            assert_eq!(count, 5 + (1 << 31));
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_pool_of_zero_sized_or_misaligned_elements_is_corrupt() {
    for (path, value) in [
        ("elem_size", 0u64),
        ("alignment", 48),
        ("alignment", 0),
        ("elem_size", 16),
    ] {
        let mut laid = lay_out();
        laid.image.set(POOL_DATA, "ucs_mpool_data_t", path, value);
        match read(&laid.image, &Limits::default()).unwrap_err() {
            UcxError::Corrupt {
                record,
                addr,
                reason,
            } => {
                assert_eq!(
                    (record, addr.0),
                    ("ucs_mpool_data_t", POOL_DATA),
                    "{reason}"
                )
            }
            other => panic!("{path} {value}: {other}"),
        }
    }
}

/// Layouts that read another pool than UCX's request pool (here, the
/// worker's request pool moved by 16 bytes, as a build with other
/// configure choices moves it, or its name another pool's) are refused
/// before anything is read through them.
#[test]
fn layouts_that_do_not_read_the_request_pool_are_refused() {
    let laid = lay_out();
    let mut other_name = lay_out();
    for (i, b) in b"ucp_rkeys\0".iter().enumerate() {
        other_name
            .image
            .write(POOL_NAME + i as u64, 1, u64::from(*b));
    }
    let mut no_name = lay_out();
    no_name.image.set(POOL_DATA, "ucs_mpool_data_t", "name", 0);
    for (image, why) in [
        (
            &other_name.image,
            "reads \"ucp_rkeys\", not \"ucp_requests\"",
        ),
        (&no_name.image, "reads nothing"),
    ] {
        match read(image, &Limits::default()).unwrap_err() {
            UcxError::LayoutsDoNotFit { worker, reason } => {
                assert_eq!(worker.0, WORKER);
                assert!(reason.contains(why), "{reason}");
            }
            other => panic!("{other}"),
        }
    }
    // The request pool 16 bytes further than the layouts say.
    let mut moved = mpidd_read::LayoutTable::default();
    moved.fill_from(
        &mpidd_read::LayoutTable::record(oracle(), &mpihandles::ask_ucx_worker_layouts).0,
    );
    let req_mp = oracle().member("ucp_worker_t", "req_mp").unwrap();
    moved.add_member("ucp_worker_t", "req_mp", req_mp.offset + 16, req_mp.size);
    let mem = laid.image.memory();
    match read_ucx_worker(&mem, &moved, TargetAddr(WORKER), &Limits::default()).unwrap_err() {
        UcxError::LayoutsDoNotFit { reason, .. } => {
            assert!(reason.contains("request pool"), "{reason}")
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_cycle_in_the_pools_chunks_is_named() {
    let mut laid = lay_out();
    laid.image.set(CHUNK2, "ucs_mpool_chunk_t", "next", CHUNK1);
    match expect_read_error(read(&laid.image, &Limits::default()).unwrap_err()) {
        ReadError::Cycle { addr, what } => {
            assert_eq!(addr.0, CHUNK1);
            assert_eq!(what, "ucs_mpool_chunk_t.next");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn the_shipped_profile_reads_the_worker_as_ucxs_dwarf_does() {
    let profile = mpidd_read::shipped_profiles()
        .into_iter()
        .find(|p| p.identity.implementation == "UCX" && p.identity.version == "1.13.1")
        .expect("mpidd ships the UCX 1.13.1 profile");
    let laid = lay_out();
    let memory = laid.image.memory();
    let by_dwarf = read_ucx_worker(&memory, oracle(), TargetAddr(WORKER), &Limits::default());
    let by_profile = read_ucx_worker(
        &memory,
        &profile.layouts,
        TargetAddr(WORKER),
        &Limits::default(),
    );
    assert_eq!(by_profile.unwrap(), by_dwarf.unwrap());
}

#[test]
fn a_big_endian_worker_reads_as_the_little_endian_one() {
    let little = read(&lay_out().image, &Limits::default()).unwrap();
    let big = read(&lay_out_in(true).image, &Limits::default()).unwrap();
    assert_eq!(big, little);
    assert_eq!(big.posted.len(), 4);
    assert_eq!(big.unexpected[4].length, Some(1 << 20));
}

#[test]
fn loops_in_the_endpoints_and_their_requests_are_named() {
    let ep_list = member("ucp_ep_ext_gen_t", "ep_list").0;
    // The third endpoint leads back to the second.
    let mut laid = lay_out();
    laid.image.set(
        EPS + 0x200 + ep_list,
        "ucs_list_link_t",
        "next",
        EPS + 0x100 + ep_list,
    );
    match expect_read_error(read(&laid.image, &Limits::default()).unwrap_err()) {
        ReadError::Cycle { addr, what } => {
            assert_eq!(addr.0, EPS + 0x100 + ep_list);
            assert!(what.contains("ep_list"), "{what}");
        }
        other => panic!("{other}"),
    }
    // S0 leads to itself, never back to S1, the first.
    let mut laid = lay_out();
    let s0 = laid.request(7);
    laid.image
        .set(send_link(s0), "ucs_list_link_t", "next", send_link(s0));
    match expect_read_error(read(&laid.image, &Limits::default()).unwrap_err()) {
        ReadError::Cycle { addr, what } => {
            assert_eq!(addr.0, send_link(s0));
            assert!(what.contains("send.list"), "{what}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_senders_ids_are_addresses_unless_indirect() {
    let direct = UcxSender {
        ep_id: 0x7f00_0000_1000,
        req_id: 0x5600_0000_2040,
    };
    assert_eq!(direct.endpoint(), Some(TargetAddr(0x7f00_0000_1000)));
    assert_eq!(direct.request(), Some(TargetAddr(0x5600_0000_2040)));
    let indirect = UcxSender {
        ep_id: 0x3,
        req_id: 0x11,
    };
    assert_eq!((indirect.endpoint(), indirect.request()), (None, None));
    let none = UcxSender {
        ep_id: 0,
        req_id: 0,
    };
    assert_eq!((none.endpoint(), none.request()), (None, None));
}
