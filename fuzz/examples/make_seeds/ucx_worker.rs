//! The `ucx_worker` seeds: a UCP worker laid out, member by member with
//! the generator's own code, at the offsets of UCX 1.13.1's real layouts
//! (the shipped profile of Debian's libucp, x86_64): receives in the
//! wildcard queue and in hashed queues, the five kinds of unexpected
//! message, a request pool of two chunks mixing free and allocated
//! elements, an endpoint keeping a rendezvous send awaiting an answer;
//! and the same worker empty, and with its unexpected list looping.

use std::path::Path;

use mpidd_fuzz::ucx::{layouts, UCX_SYMBOLS, WORKER_SYMBOL};
use mpidd_fuzz::{limits, Process, OBJECT};
use mpidd_read::{Layouts, SymbolTable, SyntheticMemory};
use mpidd_types::{TargetAbi, TargetAddr};
use mpihandles::{read_ucx_worker, UcxProtocol};

use crate::common::{check, encoded, write, Result};
use crate::objects::Heap;

const WORKER: u64 = 0x10_0000;
const HASH: u64 = 0x20_0000;
const POOL: u64 = 0x30_0000;
const DESCS: u64 = 0x60_0000;
const EPS: u64 = 0x70_0000;
const CHUNKS: [(u64, u64); 2] = [(POOL + 0x1000, 5), (POOL + 0x4000, 6)];
const USER_SIZE: u64 = 40;
const ALIGN: u64 = 64;
/// `ucs_roundup_pow2(UCP_TAG_MATCH_HASH_SIZE)` (UCX 1.13.1, tag_match.c).
const HASH_QUEUES: u64 = 1024;
// Flag bits of UCX 1.13.1's src/ucp/core/ucp_request.h.
const REQ_COMPLETED: u64 = 1;
const REQ_SEND_TAG: u64 = 1 << 14;
const REQ_RECV_TAG: u64 = 1 << 17;
const EAGER: u64 = 1 << 1;
const EAGER_ONLY: u64 = 1 << 2;
const EAGER_SYNC: u64 = 1 << 3;
const RNDV: u64 = 1 << 6;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scenario {
    Full,
    Empty,
    LoopingUnexpected,
}

fn m(ty: &str, path: &str) -> (u64, usize) {
    let x = layouts()
        .member(ty, path)
        .unwrap_or_else(|e| panic!("{ty}.{path}: {e}"));
    (x.offset, x.size as usize)
}

fn size(ty: &str) -> u64 {
    layouts()
        .size_of(ty)
        .unwrap_or_else(|e| panic!("{ty}: {e}"))
}

/// The regions of one worker, each a heap at its base.
struct Regions(Vec<Heap>);

impl Regions {
    fn set(&mut self, obj: u64, ty: &str, path: &str, value: u64) {
        let (off, width) = m(ty, path);
        self.put(obj + off, value, width);
    }

    fn put(&mut self, at: u64, value: u64, width: usize) {
        let h = self
            .0
            .iter_mut()
            .find(|h| at >= h.base && at + width as u64 <= h.base + h.bytes.len() as u64)
            .unwrap_or_else(|| panic!("nothing laid out at {at:#x}"));
        h.put(at, value, width);
    }
}

fn seed(s: Scenario) -> (Process, usize, usize, usize) {
    let abi = TargetAbi::X86_64;
    let elem_header = size("ucs_mpool_elem_t");
    let req = size("ucp_request_t");
    let stride = (elem_header + req + USER_SIZE).div_ceil(ALIGN) * ALIGN;
    let tm_off = m("ucp_worker_t", "tm").0;
    let region = |base: u64, len: u64| {
        let mut h = Heap::new(abi, base);
        h.alloc(len);
        h
    };
    let mut r = Regions(vec![
        region(WORKER, tm_off + size("ucp_tag_match_t")),
        region(HASH, HASH_QUEUES * size("ucp_request_queue_t")),
        region(POOL, 0x4000 + 0x40 + 6 * stride),
        region(DESCS, 0x1000),
        region(EPS, 0x100),
    ]);
    let tm = WORKER + tm_off;
    let mp = WORKER + m("ucp_worker_t", "req_mp").0;
    let rq = size("ucp_request_queue_t");
    let q_off = m("ucp_request_queue_t", "queue").0;
    let head_off = m("ucs_queue_head_t", "head").0;
    let next_off = m("ucs_queue_elem_t", "next").0;
    let link = |request: u64| request + m("ucp_request_t", "recv.queue").0;
    for b in 0..HASH_QUEUES {
        let q = HASH + b * rq + q_off;
        r.set(q, "ucs_queue_head_t", "ptail", q + head_off);
    }
    let wildcard = tm + m("ucp_tag_match_t", "expected.wildcard").0 + q_off;
    r.set(wildcard, "ucs_queue_head_t", "ptail", wildcard + head_off);
    r.set(tm, "ucp_tag_match_t", "expected.hash", HASH);
    let all = tm + m("ucp_tag_match_t", "unexpected.all").0;
    r.set(all, "ucs_list_link_t", "next", all);
    r.set(all, "ucs_list_link_t", "prev", all);
    // No endpoint: the ring of all endpoints is empty.
    let all_eps = WORKER + m("ucp_worker_t", "all_eps").0;
    r.set(all_eps, "ucs_list_link_t", "next", all_eps);
    r.set(all_eps, "ucs_list_link_t", "prev", all_eps);
    // Named as UCX names the worker's request pool, which the reader
    // checks before anything else (`ucp_worker_init_mpools`).
    let name = r.0[3].text("ucp_requests");
    r.set(POOL, "ucs_mpool_data_t", "name", name);
    r.set(mp, "ucs_mpool_t", "data", POOL);
    r.set(
        POOL,
        "ucs_mpool_data_t",
        "elem_size",
        elem_header + req + USER_SIZE,
    );
    r.set(POOL, "ucs_mpool_data_t", "alignment", ALIGN);
    r.set(POOL, "ucs_mpool_data_t", "chunks", CHUNKS[0].0);
    let mut elems = Vec::new();
    for (i, &(chunk, n)) in CHUNKS.iter().enumerate() {
        let next = CHUNKS.get(i + 1).map_or(0, |c| c.0);
        r.set(chunk, "ucs_mpool_chunk_t", "next", next);
        r.set(chunk, "ucs_mpool_chunk_t", "elems", chunk + 0x40);
        r.set(chunk, "ucs_mpool_chunk_t", "num_elems", n);
        elems.extend((0..n).map(|e| chunk + 0x40 + e * stride));
    }
    // Every element free, chained.
    for w in elems.windows(2) {
        r.put(w[0], w[1], elem_header as usize);
    }
    r.set(mp, "ucs_mpool_t", "freelist", elems[0]);
    let mut counts = (0, 0, 0);
    if s != Scenario::Empty {
        let request = |e: usize| elems[e] + elem_header;
        // Receives: 0 and 1 in the wildcard queue, 2 and 3 hashed, 4
        // matched; 5 completed; sends 6 and 7, 8 completed.
        let recvs = [
            (
                0usize,
                0x1_0000_0007u64,
                0xffff_0000_ffff_ffffu64,
                1u64,
                REQ_RECV_TAG,
            ),
            (1, 0x2_0000_0000, 0xffff_0000_0000_0000, 3, REQ_RECV_TAG),
            (2, 0x1_0002_0000_0005, u64::MAX, 0, REQ_RECV_TAG),
            (3, 0x1_0003_0000_0009, u64::MAX, 2, REQ_RECV_TAG),
            (4, 0x3_0000_0001, u64::MAX, 7, REQ_RECV_TAG),
            (5, 0x3_0000_0002, u64::MAX, 8, REQ_RECV_TAG | REQ_COMPLETED),
        ];
        for &(e, tag, mask, sn, flags) in &recvs {
            r.put(elems[e], mp, elem_header as usize);
            let q = request(e);
            r.set(q, "ucp_request_t", "flags", flags);
            r.set(q, "ucp_request_t", "recv.tag.tag", tag);
            r.set(q, "ucp_request_t", "recv.tag.tag_mask", mask);
            r.set(q, "ucp_request_t", "recv.tag.sn", sn);
            r.set(
                q,
                "ucp_request_t",
                "recv.buffer",
                0x7f00_0000 + e as u64 * 0x100,
            );
            r.set(q, "ucp_request_t", "recv.length", 64 << e);
        }
        r.set(wildcard, "ucs_queue_head_t", "head", link(request(0)));
        r.set(
            link(request(0)) + next_off,
            "ucs_queue_elem_t",
            "next",
            link(request(1)),
        );
        r.set(
            wildcard,
            "ucs_queue_head_t",
            "ptail",
            link(request(1)) + next_off,
        );
        for e in [2usize, 3] {
            let tag = recvs[e].1;
            let bucket = u64::from(((tag as u32) % 1021) ^ (((tag >> 32) as u32) % 1021));
            let q = HASH + bucket * rq + q_off;
            r.set(q, "ucs_queue_head_t", "head", link(request(e)));
            r.set(q, "ucs_queue_head_t", "ptail", link(request(e)) + next_off);
        }
        for (e, flags) in [
            (6usize, REQ_SEND_TAG),
            (7, REQ_SEND_TAG | (1 << 8)),
            (8, REQ_SEND_TAG | REQ_COMPLETED),
        ] {
            r.put(elems[e], mp, elem_header as usize);
            let q = request(e);
            r.set(q, "ucp_request_t", "flags", flags);
            r.set(
                q,
                "ucp_request_t",
                "send.msg_proto.tag",
                0x1_0000_0000_0040 + e as u64,
            );
            r.set(q, "ucp_request_t", "send.buffer", 0x7e00_0000);
            r.set(q, "ucp_request_t", "send.length", 1 << 20);
            r.set(q, "ucp_request_t", "send.ep", 0x6000_0000 + e as u64);
        }
        // One endpoint, keeping the rendezvous send 6 awaiting an answer.
        let ext_list = EPS + m("ucp_ep_ext_gen_t", "ep_list").0;
        r.set(all_eps, "ucs_list_link_t", "next", ext_list);
        r.set(all_eps, "ucs_list_link_t", "prev", ext_list);
        r.set(ext_list, "ucs_list_link_t", "next", all_eps);
        r.set(ext_list, "ucs_list_link_t", "prev", all_eps);
        let send_link =
            request(6) + m("ucp_request_t", "send.list").0 + m("ucs_hlist_link_t", "list").0;
        let proto_reqs = EPS + m("ucp_ep_ext_gen_t", "proto_reqs").0;
        r.set(proto_reqs, "ucs_hlist_head_t", "ptr", send_link);
        r.set(send_link, "ucs_list_link_t", "next", send_link);
        r.set(send_link, "ucs_list_link_t", "prev", send_link);
        // The free list: 9 then 10.
        r.set(mp, "ucs_mpool_t", "freelist", elems[9]);
        // Unexpected messages, one of each kind.
        let rdesc = size("ucp_recv_desc_t");
        let (tl_off, tl_size) = m("ucp_recv_desc_t", "tag_list");
        let all_link = |d: u64| d + tl_off + tl_size as u64 / 2;
        let kinds: [(u64, &str, u64); 5] = [
            (EAGER | EAGER_ONLY, "ucp_tag_hdr_t", 0),
            (EAGER | EAGER_ONLY | EAGER_SYNC, "ucp_eager_sync_hdr_t", 0),
            (EAGER, "ucp_eager_first_hdr_t", 70_000),
            (EAGER | EAGER_SYNC, "ucp_eager_sync_first_hdr_t", 90_000),
            (RNDV, "ucp_rndv_rts_hdr_t", 1 << 20),
        ];
        let mut prev = all;
        for (i, &(flags, header, total)) in kinds.iter().enumerate() {
            let d = DESCS + i as u64 * 0x200;
            let hdr = d + rdesc;
            r.set(d, "ucp_recv_desc_t", "flags", flags);
            r.set(d, "ucp_recv_desc_t", "payload_offset", size(header));
            r.set(d, "ucp_recv_desc_t", "length", size(header) + 32);
            r.set(hdr, "ucp_tag_hdr_t", "tag", 0x1_0001_0000_0000 + i as u64);
            match header {
                "ucp_eager_first_hdr_t" => r.set(hdr, header, "total_len", total),
                "ucp_eager_sync_first_hdr_t" => r.set(hdr, header, "super.total_len", total),
                "ucp_rndv_rts_hdr_t" => r.set(hdr, header, "size", total),
                _ => {}
            }
            let sender = match header {
                "ucp_rndv_rts_hdr_t" => Some("sreq"),
                "ucp_eager_sync_hdr_t" | "ucp_eager_sync_first_hdr_t" => Some("req"),
                _ => None,
            };
            if let Some(path) = sender {
                let at = hdr + m(header, path).0;
                r.set(at, "ucp_request_hdr_t", "ep_id", 0x10 + i as u64);
                r.set(at, "ucp_request_hdr_t", "req_id", 0x20 + i as u64);
            }
            r.set(prev, "ucs_list_link_t", "next", all_link(d));
            r.set(all_link(d), "ucs_list_link_t", "prev", prev);
            prev = all_link(d);
        }
        let last_next = if s == Scenario::LoopingUnexpected {
            all_link(DESCS + 0x200)
        } else {
            all
        };
        r.set(prev, "ucs_list_link_t", "next", last_next);
        r.set(all, "ucs_list_link_t", "prev", prev);
        counts = (4, 5, 2);
    }
    let mut memory = SyntheticMemory::new(abi);
    for h in r.0 {
        memory.map(TargetAddr(h.base), h.bytes);
    }
    let mut symbols = SymbolTable::new();
    symbols.add_object(OBJECT);
    symbols.insert(OBJECT, WORKER_SYMBOL, TargetAddr(WORKER), 0);
    (Process { memory, symbols }, counts.0, counts.1, counts.2)
}

/// Every `ucx_worker` seed, each checked to read as intended.
pub fn ucx_worker(out: &Path) -> Result<()> {
    for (label, s) in [
        ("full", Scenario::Full),
        ("empty", Scenario::Empty),
        ("looping-unexpected", Scenario::LoopingUnexpected),
    ] {
        let (process, posted, unexpected, sends) = seed(s);
        let read = read_ucx_worker(&process, layouts(), TargetAddr(WORKER), &limits());
        match (s, read) {
            (Scenario::LoopingUnexpected, r) => check(r.is_err(), "the looping list is refused")?,
            (_, Ok(q)) => {
                check(q.posted.len() == posted, "every posted receive")?;
                check(q.unexpected.len() == unexpected, "every unexpected message")?;
                check(q.sends.len() == sends, "every send in progress")?;
                check(
                    s == Scenario::Empty || q.sends[0].protocol == UcxProtocol::Rendezvous,
                    "the endpoint's send told a rendezvous one",
                )?;
                check(
                    q.unexpected
                        .iter()
                        .all(|u| !matches!(u.protocol, UcxProtocol::Unknown(_))),
                    "every protocol told",
                )?;
            }
            (_, Err(e)) => return Err(format!("the {label} worker does not read: {e}").into()),
        }
        let mut bytes = encoded(&process, UCX_SYMBOLS);
        bytes.extend_from_slice(&WORKER.to_le_bytes());
        write(out, "ucx_worker", label, &bytes)?;
    }
    Ok(())
}
