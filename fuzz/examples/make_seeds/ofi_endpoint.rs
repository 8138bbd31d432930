//! The `ofi_endpoint` seeds: libfabric endpoints laid out, member by
//! member with the generator's own code, at the offsets of libfabric
//! 1.17.0's real layouts (the shipped profile of Debian's libfabric,
//! x86_64): an shm endpoint with posted and unexpected tagged messages and
//! a send in its table, an rxm endpoint with a posted receive and an
//! unexpected message, and the shm one with its unexpected ring looping.

use std::path::Path;

use mpidd_fuzz::ofi::{layouts, ENDPOINT_SYMBOL, OFI_SYMBOLS};
use mpidd_fuzz::{limits, Process, OBJECT};
use mpidd_read::{Layouts, SymbolTable, SyntheticMemory};
use mpidd_types::{TargetAbi, TargetAddr};
use mpihandles::read_ofi_endpoint;

use crate::common::{check, encoded, write, Result};
use crate::objects::Heap;

const BASE: u64 = 0x10_0000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scenario {
    Shm,
    Rxm,
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

struct Image(Heap);

impl Image {
    fn set(&mut self, obj: u64, ty: &str, path: &str, value: u64) {
        let (off, width) = m(ty, path);
        self.0.put(obj + off, value, width);
    }

    /// Links the ring whose head is at `head` through `links`, in order
    /// (back to `links[loop_to]` instead of the head, when given).
    fn ring(&mut self, head: u64, links: &[u64], loop_to: Option<usize>) {
        let mut all = vec![head];
        all.extend_from_slice(links);
        for (i, &l) in all.iter().enumerate() {
            let next = match (i + 1 == all.len(), loop_to) {
                (true, Some(k)) => links[k],
                _ => all[(i + 1) % all.len()],
            };
            self.set(l, "dlist_entry", "next", next);
            self.set(
                l,
                "dlist_entry",
                "prev",
                all[(i + all.len() - 1) % all.len()],
            );
        }
    }

    fn iov(&mut self, obj: u64, ty: &str, path: &str, buf: u64, len: u64) {
        let at = obj + m(ty, path).0;
        self.set(at, "iovec", "iov_base", buf);
        self.set(at, "iovec", "iov_len", len);
    }
}

/// The endpoint's address and the image, with (posted, unexpected,
/// sends) the reading must find.
fn seed(s: Scenario) -> (Process, u64, (usize, usize, usize)) {
    let abi = TargetAbi::X86_64;
    let mut im = Image(Heap::new(abi, BASE));
    let ep_type = if s == Scenario::Rxm {
        "rxm_ep"
    } else {
        "smr_ep"
    };
    let ep = im.0.alloc(size(ep_type));
    let domain = im.0.alloc(size("util_domain"));
    let prov = im.0.alloc(size("fi_provider"));
    let name = im.0.alloc(16);
    im.set(ep, "util_ep", "ep_fid.fid.fclass", 3);
    im.set(ep, "util_ep", "domain", domain);
    im.set(domain, "util_domain", "prov", prov);
    im.set(prov, "fi_provider", "name", name);
    let text: &[u8] = if s == Scenario::Rxm {
        b"ofi_rxm\0"
    } else {
        b"shm\0"
    };
    for (i, b) in text.iter().enumerate() {
        im.0.put(name + i as u64, u64::from(*b), 1);
    }
    let counts = if s == Scenario::Rxm {
        let rq = "rxm_recv_queue";
        for (q, kind) in [("trecv_queue", 2), ("recv_queue", 1)] {
            let queue = ep + m("rxm_ep", q).0;
            im.set(queue, rq, "rxm_ep", ep);
            im.set(queue, rq, "type", kind);
            im.ring(queue + m(rq, "recv_list").0, &[], None);
            im.ring(queue + m(rq, "unexp_msg_list").0, &[], None);
        }
        let t = ep + m("rxm_ep", "trecv_queue").0;
        let entry = im.0.alloc(size("rxm_recv_entry"));
        im.ring(
            t + m(rq, "recv_list").0,
            &[entry + m("rxm_recv_entry", "entry").0],
            None,
        );
        im.set(entry, "rxm_recv_entry", "tag", 0x66);
        im.set(entry, "rxm_recv_entry", "addr", u64::MAX);
        im.set(entry, "rxm_recv_entry", "rxm_iov.count", 1);
        im.iov(entry, "rxm_recv_entry", "rxm_iov.iov", 0x9000, 100);
        let buf = im.0.alloc(size("rxm_rx_buf"));
        im.ring(
            t + m(rq, "unexp_msg_list").0,
            &[buf + m("rxm_rx_buf", "unexp_msg.entry").0],
            None,
        );
        im.set(buf, "rxm_rx_buf", "unexp_msg.tag", 0x77);
        im.set(buf, "rxm_rx_buf", "unexp_msg.addr", 1);
        im.set(buf, "rxm_rx_buf", "pkt.hdr.size", 64);
        (1, 1, 0)
    } else {
        let srx = im.0.alloc(size("smr_srx_ctx"));
        im.set(
            ep,
            "smr_ep",
            "srx",
            srx + m("smr_srx_ctx", "peer_srx.ep_fid.fid.fclass").0,
        );
        im.set(srx, "smr_srx_ctx", "peer_srx.ep_fid.fid.fclass", 6);
        im.set(srx, "smr_srx_ctx", "peer_srx.ep_fid.fid.context", srx);
        let link = m("smr_rx_entry", "peer_entry").0;
        let mut entries = Vec::new();
        for _ in 0..4 {
            entries.push(im.0.alloc(size("smr_rx_entry")));
        }
        let q = |name: &str| srx + m("smr_srx_ctx", name).0;
        im.ring(
            q("trecv_queue.list"),
            &[entries[0] + link, entries[1] + link],
            None,
        );
        im.ring(q("recv_queue.list"), &[], None);
        im.ring(q("unexp_msg_queue.list"), &[], None);
        let looping = (s == Scenario::LoopingUnexpected).then_some(0);
        im.ring(
            q("unexp_tagged_queue.list"),
            &[entries[2] + link, entries[3] + link],
            looping,
        );
        for (i, &e) in entries.iter().enumerate() {
            im.set(e, "smr_rx_entry", "peer_entry.tag", 0x10 + i as u64);
            im.set(e, "smr_rx_entry", "peer_entry.addr", 1);
            im.set(e, "smr_rx_entry", "peer_entry.count", 1);
            im.iov(e, "smr_rx_entry", "iov", 0x8000 + 0x100 * i as u64, 32);
            if i >= 2 {
                let cmd = im.0.alloc(size("smr_cmd_ctx"));
                im.set(e, "smr_rx_entry", "peer_entry.peer_context", cmd);
                im.set(cmd, "smr_cmd_ctx", "cmd.msg.hdr.size", 64);
                im.set(cmd, "smr_cmd_ctx", "cmd.msg.hdr.op", 1);
            }
        }
        // A table of two sends: entry 0 in flight, entry 1 free.
        let fs =
            im.0.alloc(size("smr_pend_fs") + 2 * size("smr_pend_fs_entry"));
        im.set(ep, "smr_ep", "pend_fs", fs);
        im.set(fs, "smr_pend_fs", "size", 2);
        let buf = m("smr_pend_fs_entry", "buf").0;
        let slot1 = fs + size("smr_pend_fs") + size("smr_pend_fs_entry");
        im.set(fs, "smr_pend_fs", "next", slot1 + buf - 8);
        let tx = fs + size("smr_pend_fs") + buf;
        im.set(tx, "smr_tx_entry", "cmd.msg.hdr.op", 1);
        im.set(tx, "smr_tx_entry", "cmd.msg.hdr.tag", 0x99);
        im.set(tx, "smr_tx_entry", "iov_count", 1);
        im.iov(tx, "smr_tx_entry", "iov", 0xa000, 1 << 20);
        (2, 2, 1)
    };
    let mut memory = SyntheticMemory::new(abi);
    memory.map(TargetAddr(im.0.base), im.0.bytes);
    let mut symbols = SymbolTable::new();
    symbols.add_object(OBJECT);
    symbols.insert(OBJECT, ENDPOINT_SYMBOL, TargetAddr(ep), 0);
    (Process { memory, symbols }, ep, counts)
}

/// Every `ofi_endpoint` seed, each checked to read as intended.
pub fn ofi_endpoint(out: &Path) -> Result<()> {
    for (label, s) in [
        ("shm", Scenario::Shm),
        ("rxm", Scenario::Rxm),
        ("looping-unexpected", Scenario::LoopingUnexpected),
    ] {
        let (process, ep, (posted, unexpected, sends)) = seed(s);
        let read = read_ofi_endpoint(&process, layouts(), TargetAddr(ep), &limits());
        match (s, read) {
            (Scenario::LoopingUnexpected, r) => check(r.is_err(), "the looping ring is refused")?,
            (_, Ok(q)) => {
                check(q.posted.len() == posted, "every posted receive")?;
                check(q.unexpected.len() == unexpected, "every unexpected message")?;
                check(q.sends.len() == sends, "every send in flight")?;
            }
            (_, Err(e)) => return Err(format!("the {label} endpoint does not read: {e}").into()),
        }
        let mut bytes = encoded(&process, OFI_SYMBOLS);
        bytes.extend_from_slice(&ep.to_le_bytes());
        write(out, "ofi_endpoint", label, &bytes)?;
    }
    Ok(())
}
