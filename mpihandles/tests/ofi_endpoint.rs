//! The OFI reader on synthetic memory laid out with the layouts of the
//! profile mpidd ships for Debian 12's libfabric 1.17.0 (facts measured
//! from libfabric's DWARF by scripts/write-ofi-profile.sh): an shm
//! endpoint and an rxm endpoint, member by member, read back in both byte
//! orders; then the same memory corrupted the ways a hostile target can
//! be (a cycle, a pointer to nothing, a NULL link, a list past the limit,
//! records that do not read as libfabric makes them).

use mpidd_read::{LayoutProfile, Layouts, Limits, ReadError, SyntheticMemory};
use mpidd_types::{TargetAbi, TargetAddr};
use mpihandles::{
    ofi_hardware_matching, read_ofi_endpoint, read_ofi_info_provider, OfiError, OfiProtocol,
    OfiProvider,
};

fn profile() -> &'static LayoutProfile {
    static P: std::sync::OnceLock<LayoutProfile> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        mpidd_read::shipped_profiles()
            .into_iter()
            .find(|p| p.identity.implementation == "libfabric")
            .expect("mpidd ships a libfabric profile")
    })
}

fn member(ty: &str, path: &str) -> (u64, u64) {
    let m = profile().layouts.member(ty, path).unwrap();
    (m.offset, m.size)
}

fn size(ty: &str) -> u64 {
    profile().layouts.size_of(ty).unwrap()
}

/// Regions of synthetic memory, written member by member.
#[derive(Default)]
struct Image {
    big: bool,
    regions: Vec<(u64, Vec<u8>)>,
}

impl Image {
    fn region(&mut self, base: u64, len: u64) {
        self.regions.push((base, vec![0; len as usize]));
    }

    fn write(&mut self, addr: u64, len: u64, value: u64) {
        let big = self.big;
        let (base, bytes) = self
            .regions
            .iter_mut()
            .find(|(b, v)| addr >= *b && addr + len <= *b + v.len() as u64)
            .unwrap_or_else(|| panic!("nothing laid out at {addr:#x}"));
        let at = (addr - *base) as usize;
        let n = len as usize;
        if big {
            bytes[at..at + n].copy_from_slice(&value.to_be_bytes()[8 - n..]);
        } else {
            bytes[at..at + n].copy_from_slice(&value.to_le_bytes()[..n]);
        }
    }

    fn bytes(&mut self, addr: u64, data: &[u8]) {
        for (i, b) in data.iter().enumerate() {
            self.write(addr + i as u64, 1, u64::from(*b));
        }
    }

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

const EP: u64 = 0x10_0000;
const DOMAIN: u64 = 0x11_0000;
const PROV: u64 = 0x12_0000;
const NAME: u64 = 0x13_0000;
const SRX: u64 = 0x14_0000;
const ENTRIES: u64 = 0x15_0000;
const CMDS: u64 = 0x16_0000;
const FS: u64 = 0x17_0000;
const AV: u64 = 0x18_0000;
const MAP: u64 = 0x19_0000;
const CONNS: u64 = 0x1a_0000;
const FI_ADDR_UNSPEC: u64 = u64::MAX;
/// The peer index shm's send entry names, and the `fi_addr_t` the map
/// gives it.
const PEER: u64 = 2;
const PEER_FI_ADDR: u64 = 7;
const FS_SIZE: u64 = 4;

/// An endpoint of `provider` whose domain's provider record names it.
fn endpoint(im: &mut Image, provider: &str, ep_type: &str) {
    im.region(EP, size(ep_type));
    im.region(DOMAIN, size("util_domain"));
    im.region(PROV, size("fi_provider"));
    im.region(NAME, 64);
    im.set(EP, "util_ep", "ep_fid.fid.fclass", 3);
    im.set(EP, "util_ep", "domain", DOMAIN);
    im.set(EP, "util_ep", "av", AV);
    im.set(DOMAIN, "util_domain", "prov", PROV);
    im.set(PROV, "fi_provider", "name", NAME);
    let mut name = provider.as_bytes().to_vec();
    name.push(0);
    im.bytes(NAME, &name);
}

/// Links the ring whose head is at `head` through `links`, in order.
fn ring(im: &mut Image, head: u64, links: &[u64]) {
    let mut all = vec![head];
    all.extend_from_slice(links);
    for (i, &l) in all.iter().enumerate() {
        let next = all[(i + 1) % all.len()];
        let prev = all[(i + all.len() - 1) % all.len()];
        im.set(l, "dlist_entry", "next", next);
        im.set(l, "dlist_entry", "prev", prev);
    }
}

fn rx_entry(i: u64) -> u64 {
    ENTRIES + i * size("smr_rx_entry").next_multiple_of(64)
}

fn iov(im: &mut Image, base: u64, ty: &str, path: &str, k: u64, buf: u64, len: u64) {
    let (off, _) = member(ty, path);
    let at = base + off + k * size("iovec");
    im.set(at, "iovec", "iov_base", buf);
    im.set(at, "iovec", "iov_len", len);
}

/// An shm endpoint whose receive context holds:
/// - posted tagged: entry 0 (tag 0x11 from fi_addr 3, two buffers of 10
///   and 20 bytes), entry 1 (tag 0x2200, ignore 0xff, any source);
/// - posted untagged: entry 2 (one buffer of 40 bytes);
/// - unexpected tagged: entry 3 (tag 0x33 from 3, 64 bytes inline),
///   entry 4 (tag 0x44 from 3, 1 MiB by CMA);
/// - its send table: 4 entries, entry 1 a tagged send to peer 2 of 1 MiB,
///   the others free (free list 3, 0, 2).
fn lay_out_shm(big: bool) -> Image {
    let mut im = Image {
        big,
        ..Image::default()
    };
    endpoint(&mut im, "shm", "smr_ep");
    im.region(SRX, size("smr_srx_ctx"));
    im.region(ENTRIES, 8 * size("smr_rx_entry").next_multiple_of(64));
    im.region(CMDS, 4 * size("smr_cmd_ctx"));
    let srx_fid = SRX + member("smr_srx_ctx", "peer_srx.ep_fid.fid.fclass").0;
    im.set(EP, "smr_ep", "srx", srx_fid);
    im.set(SRX, "smr_srx_ctx", "peer_srx.ep_fid.fid.fclass", 6);
    im.set(SRX, "smr_srx_ctx", "peer_srx.ep_fid.fid.context", SRX);
    let link = |i| rx_entry(i) + member("smr_rx_entry", "peer_entry").0;
    let head = |q: &str| SRX + member("smr_srx_ctx", q).0;
    ring(&mut im, head("trecv_queue.list"), &[link(0), link(1)]);
    ring(&mut im, head("recv_queue.list"), &[link(2)]);
    ring(
        &mut im,
        head("unexp_tagged_queue.list"),
        &[link(3), link(4)],
    );
    ring(&mut im, head("unexp_msg_queue.list"), &[]);
    let e = "smr_rx_entry";
    let posted = [
        (0, 0x11, 0, 3, &[(0xa000, 10), (0xa100, 20)][..], 0xc0),
        (1, 0x2200, 0xff, FI_ADDR_UNSPEC, &[(0xb000, 50)][..], 0xc1),
        (2, 0, 0, FI_ADDR_UNSPEC, &[(0xb100, 40)][..], 0xc2),
    ];
    for (i, tag, ignore, addr, bufs, ctx) in posted {
        let r = rx_entry(i);
        im.set(r, e, "peer_entry.tag", tag);
        im.set(r, e, "ignore", ignore);
        im.set(r, e, "peer_entry.addr", addr);
        im.set(r, e, "peer_entry.context", ctx);
        im.set(r, e, "peer_entry.count", bufs.len() as u64);
        for (k, &(buf, len)) in bufs.iter().enumerate() {
            iov(&mut im, r, e, "iov", k as u64, buf, len);
        }
    }
    for (k, (i, tag, len, src)) in [(3, 0x33, 64, 0), (4, 0x44, 1 << 20, 2)]
        .into_iter()
        .enumerate()
    {
        let r = rx_entry(i);
        let cmd = CMDS + k as u64 * size("smr_cmd_ctx");
        im.set(r, e, "peer_entry.tag", tag);
        im.set(r, e, "peer_entry.addr", 3);
        im.set(r, e, "peer_entry.peer_context", cmd);
        im.set(cmd, "smr_cmd_ctx", "cmd.msg.hdr.size", len);
        im.set(cmd, "smr_cmd_ctx", "cmd.msg.hdr.tag", tag);
        im.set(cmd, "smr_cmd_ctx", "cmd.msg.hdr.op", 1);
        im.set(cmd, "smr_cmd_ctx", "cmd.msg.hdr.op_src", src);
    }
    // The send table and the address vector's map.
    let entry = size("smr_pend_fs_entry");
    im.region(FS, size("smr_pend_fs") + FS_SIZE * entry);
    im.set(EP, "smr_ep", "pend_fs", FS);
    im.set(FS, "smr_pend_fs", "size", FS_SIZE);
    let buf = member("smr_pend_fs_entry", "buf").0;
    let slot = |i: u64| FS + size("smr_pend_fs") + i * entry;
    let link_word = |i: u64| slot(i) + buf - 8;
    im.set(FS, "smr_pend_fs", "next", link_word(3));
    im.write(link_word(3), 8, link_word(0));
    im.write(link_word(0), 8, link_word(2));
    im.write(link_word(2), 8, 0);
    let tx = slot(1) + buf;
    let t = "smr_tx_entry";
    im.set(tx, t, "cmd.msg.hdr.op", 1);
    im.set(tx, t, "cmd.msg.hdr.op_src", 2);
    im.set(tx, t, "cmd.msg.hdr.tag", 0x55);
    im.set(tx, t, "cmd.msg.hdr.size", 1 << 20);
    im.set(tx, t, "peer_id", PEER);
    im.set(tx, t, "context", 0xc5);
    im.set(tx, t, "iov_count", 1);
    iov(&mut im, tx, t, "iov", 0, 0xd000, 1 << 20);
    im.region(AV, size("smr_av"));
    im.region(MAP, size("smr_map"));
    im.set(AV, "smr_av", "smr_map", MAP);
    let peer = MAP + member("smr_map", "peers").0 + PEER * size("smr_peer");
    im.set(peer, "smr_peer", "fiaddr", PEER_FI_ADDR);
    im
}

fn read(im: &Image) -> Result<mpihandles::OfiEndpointQueues, OfiError> {
    read_with(im, &Limits::default())
}

fn read_with(im: &Image, limits: &Limits) -> Result<mpihandles::OfiEndpointQueues, OfiError> {
    read_ofi_endpoint(&im.memory(), &profile().layouts, TargetAddr(EP), limits)
}

fn check_shm(big: bool) {
    let q = read(&lay_out_shm(big)).expect("read the shm endpoint");
    assert_eq!(q.provider, OfiProvider::Shm);
    assert!(q.notes.is_empty(), "{:?}", q.notes);
    let posted: Vec<_> = q
        .posted
        .iter()
        .map(|p| {
            (
                p.entry.0,
                p.tagged,
                p.tag,
                p.ignore,
                p.source,
                p.buffer,
                p.length,
                p.context.0,
            )
        })
        .collect();
    assert_eq!(
        posted,
        vec![
            (rx_entry(0), true, 0x11, 0, Some(3), 0xa000, 30, 0xc0),
            (rx_entry(1), true, 0x2200, 0xff, None, 0xb000, 50, 0xc1),
            (rx_entry(2), false, 0, 0, None, 0xb100, 40, 0xc2),
        ]
    );
    let unexpected: Vec<_> = q
        .unexpected
        .iter()
        .map(|u| (u.entry.0, u.tagged, u.tag, u.source, u.length, u.protocol))
        .collect();
    assert_eq!(
        unexpected,
        vec![
            (rx_entry(3), true, 0x33, Some(3), 64, OfiProtocol::Inline),
            (rx_entry(4), true, 0x44, Some(3), 1 << 20, OfiProtocol::Iov),
        ]
    );
    let sends: Vec<_> = q
        .sends
        .iter()
        .map(|s| {
            (
                s.tagged,
                s.tag,
                s.length,
                s.buffer,
                s.context.0,
                s.destination,
                s.protocol,
            )
        })
        .collect();
    assert_eq!(
        sends,
        vec![(
            true,
            0x55,
            1 << 20,
            Some(0xd000),
            0xc5,
            Some(PEER_FI_ADDR),
            OfiProtocol::Iov
        )]
    );
}

#[test]
fn an_shm_endpoint_is_read_whole() {
    check_shm(false);
}

#[test]
fn an_shm_endpoint_of_a_big_endian_target_is_read_whole() {
    check_shm(true);
}

#[test]
fn a_cycle_in_a_queue_is_named() {
    let mut im = lay_out_shm(false);
    // Entry 1's link leads back to entry 0's, never to the head.
    let link = |i| rx_entry(i) + member("smr_rx_entry", "peer_entry").0;
    im.set(link(1), "dlist_entry", "next", link(0));
    match read(&im) {
        Err(OfiError::Read(ReadError::Cycle { what, addr })) => {
            assert_eq!(addr, TargetAddr(link(0)));
            assert!(what.contains("trecv_queue"), "{what}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_link_to_unmapped_memory_is_a_read_error_at_its_address() {
    let mut im = lay_out_shm(false);
    let link = rx_entry(3) + member("smr_rx_entry", "peer_entry").0;
    im.set(link, "dlist_entry", "next", 0xdead_0000);
    match read(&im) {
        Err(OfiError::Read(e)) => assert!(format!("{e}").contains("0xdead0000"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_null_link_is_corrupt() {
    let mut im = lay_out_shm(false);
    let link = rx_entry(2) + member("smr_rx_entry", "peer_entry").0;
    im.set(link, "dlist_entry", "next", 0);
    match read(&im) {
        Err(OfiError::Corrupt {
            record,
            addr,
            reason,
        }) => {
            assert_eq!(record, "smr_srx_ctx");
            assert_eq!(
                addr,
                TargetAddr(SRX + member("smr_srx_ctx", "recv_queue.list").0)
            );
            assert!(reason.contains("NULL"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_queue_longer_than_the_limit_is_refused() {
    let limits = Limits {
        max_list_len: 1,
        ..Limits::default()
    };
    match read_with(&lay_out_shm(false), &limits) {
        Err(OfiError::Read(ReadError::LimitExceeded { limit, max, .. })) => {
            assert_eq!((limit, max), ("max_list_len", 1));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn more_buffers_than_the_entry_holds_are_corrupt() {
    let mut im = lay_out_shm(false);
    im.set(rx_entry(0), "smr_rx_entry", "peer_entry.count", 5);
    match read(&im) {
        Err(OfiError::Corrupt { record, addr, .. }) => {
            assert_eq!((record, addr), ("smr_rx_entry", TargetAddr(rx_entry(0))));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_endpoint_of_another_class_does_not_fit_the_layouts() {
    let mut im = lay_out_shm(false);
    im.set(EP, "util_ep", "ep_fid.fid.fclass", 2);
    assert!(matches!(
        read(&im),
        Err(OfiError::LayoutsDoNotFit { endpoint, .. }) if endpoint == TargetAddr(EP)
    ));
}

#[test]
fn a_receive_context_that_is_not_its_own_does_not_fit() {
    let mut im = lay_out_shm(false);
    im.set(SRX, "smr_srx_ctx", "peer_srx.ep_fid.fid.context", SRX + 8);
    match read(&im) {
        Err(OfiError::LayoutsDoNotFit { reason, .. }) => {
            assert!(reason.contains("fid.context"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    let mut im = lay_out_shm(false);
    im.set(SRX, "smr_srx_ctx", "peer_srx.ep_fid.fid.fclass", 3);
    assert!(matches!(read(&im), Err(OfiError::LayoutsDoNotFit { .. })));
}

#[test]
fn a_looping_free_list_of_sends_is_named() {
    let mut im = lay_out_shm(false);
    let entry = size("smr_pend_fs_entry");
    let buf = member("smr_pend_fs_entry", "buf").0;
    let link_word = |i: u64| FS + size("smr_pend_fs") + i * entry + buf - 8;
    im.write(link_word(2), 8, link_word(3));
    assert!(matches!(
        read(&im),
        Err(OfiError::Read(ReadError::Cycle { .. }))
    ));
    // A free entry that is none of the table's.
    im.write(link_word(2), 8, FS + 3);
    assert!(matches!(
        read(&im),
        Err(OfiError::Corrupt {
            record: "smr_pend_fs",
            ..
        })
    ));
    // A table bigger than the limit is refused before it is read.
    im.write(link_word(2), 8, 0);
    im.set(FS, "smr_pend_fs", "size", 1 << 40);
    assert!(matches!(
        read(&im),
        Err(OfiError::Read(ReadError::LimitExceeded { .. }))
    ));
}

#[test]
fn a_send_to_a_peer_outside_the_map_is_corrupt() {
    let mut im = lay_out_shm(false);
    let entry = size("smr_pend_fs_entry");
    let tx = FS + size("smr_pend_fs") + entry + member("smr_pend_fs_entry", "buf").0;
    im.set(tx, "smr_tx_entry", "peer_id", u64::MAX);
    assert!(matches!(
        read(&im),
        Err(OfiError::Corrupt {
            record: "smr_tx_entry",
            ..
        })
    ));
}

#[test]
fn hardware_matching_and_unknown_providers_are_refused_with_a_statement() {
    for (name, says) in [
        ("cxi", "NIC"),
        ("psm2", "PSM2"),
        ("psm3", "PSM3"),
        ("verbs", "does not read"),
    ] {
        let mut im = Image::default();
        endpoint(&mut im, name, "util_ep");
        match read(&im) {
            Err(OfiError::NotRead {
                provider,
                statement,
                endpoint,
            }) => {
                assert_eq!((provider.as_str(), endpoint), (name, TargetAddr(EP)));
                assert!(statement.contains(says), "{name}: {statement}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

fn recv_entry(i: u64) -> u64 {
    ENTRIES + i * size("rxm_recv_entry").next_multiple_of(64)
}

fn rx_buf(i: u64) -> u64 {
    ENTRIES + 0x8000 + i * size("rxm_rx_buf").next_multiple_of(64)
}

/// An rxm endpoint: one posted tagged receive (tag 0x66 from fi_addr 4,
/// 100 bytes), two unexpected tagged messages (an eager one whose source
/// is its own, a rendezvous request whose source is its connection's
/// peer's), its untagged queue empty.
fn lay_out_rxm(big: bool) -> Image {
    let mut im = Image {
        big,
        ..Image::default()
    };
    endpoint(&mut im, "ofi_rxm", "rxm_ep");
    im.region(ENTRIES, 0x10000);
    im.region(CONNS, 0x1000);
    let q = |name: &str| EP + member("rxm_ep", name).0;
    let rq = "rxm_recv_queue";
    for (name, kind) in [("trecv_queue", 2), ("recv_queue", 1)] {
        im.set(q(name), rq, "rxm_ep", EP);
        im.set(q(name), rq, "type", kind);
        ring(&mut im, q(name) + member(rq, "unexp_msg_list").0, &[]);
        ring(&mut im, q(name) + member(rq, "recv_list").0, &[]);
    }
    let e = "rxm_recv_entry";
    let entry = recv_entry(0);
    ring(
        &mut im,
        q("trecv_queue") + member(rq, "recv_list").0,
        &[entry + member(e, "entry").0],
    );
    im.set(entry, e, "tag", 0x66);
    im.set(entry, e, "ignore", 0);
    im.set(entry, e, "addr", 4);
    im.set(entry, e, "context", 0xc6);
    im.set(entry, e, "rxm_iov.count", 1);
    iov(&mut im, entry, e, "rxm_iov.iov", 0, 0xe000, 100);
    let b = "rxm_rx_buf";
    let link = |i| rx_buf(i) + member(b, "unexp_msg.entry").0;
    ring(
        &mut im,
        q("trecv_queue") + member(rq, "unexp_msg_list").0,
        &[link(0), link(1)],
    );
    im.set(rx_buf(0), b, "unexp_msg.addr", 4);
    im.set(rx_buf(0), b, "unexp_msg.tag", 0x77);
    im.set(rx_buf(0), b, "pkt.ctrl_hdr.type", 0);
    im.set(rx_buf(0), b, "pkt.hdr.size", 16);
    im.set(rx_buf(1), b, "unexp_msg.addr", FI_ADDR_UNSPEC);
    im.set(rx_buf(1), b, "unexp_msg.tag", 0x88);
    im.set(rx_buf(1), b, "pkt.ctrl_hdr.type", 2);
    im.set(rx_buf(1), b, "pkt.hdr.size", 1 << 22);
    im.set(rx_buf(1), b, "conn", CONNS);
    im.set(CONNS, "rxm_conn", "peer", CONNS + 0x100);
    im.set(CONNS + 0x100, "util_peer_addr", "fi_addr", 5);
    im
}

#[test]
fn an_rxm_endpoint_is_read_whole_in_both_byte_orders() {
    for big in [false, true] {
        let q = read(&lay_out_rxm(big)).expect("read the rxm endpoint");
        assert_eq!(q.provider, OfiProvider::Rxm);
        let posted: Vec<_> = q
            .posted
            .iter()
            .map(|p| {
                (
                    p.entry.0,
                    p.tag,
                    p.ignore,
                    p.source,
                    p.buffer,
                    p.length,
                    p.context.0,
                )
            })
            .collect();
        assert_eq!(
            posted,
            vec![(recv_entry(0), 0x66, 0, Some(4), 0xe000, 100, 0xc6)]
        );
        let unexpected: Vec<_> = q
            .unexpected
            .iter()
            .map(|u| (u.entry.0, u.tag, u.source, u.length, u.protocol))
            .collect();
        assert_eq!(
            unexpected,
            vec![
                (rx_buf(0), 0x77, Some(4), 16, OfiProtocol::Eager),
                (rx_buf(1), 0x88, Some(5), 1 << 22, OfiProtocol::Rendezvous),
            ]
        );
    }
}

#[test]
fn an_rxm_queue_that_is_not_the_endpoints_does_not_fit() {
    let mut im = lay_out_rxm(false);
    let q = EP + member("rxm_ep", "recv_queue").0;
    im.set(q, "rxm_recv_queue", "type", 2);
    assert!(matches!(read(&im), Err(OfiError::LayoutsDoNotFit { .. })));
    let mut im = lay_out_rxm(false);
    let q = EP + member("rxm_ep", "trecv_queue").0;
    im.set(q, "rxm_recv_queue", "rxm_ep", EP + 8);
    assert!(matches!(read(&im), Err(OfiError::LayoutsDoNotFit { .. })));
}

#[test]
fn an_rxm_unexpected_ring_that_loops_is_named() {
    let mut im = lay_out_rxm(false);
    let link = |i| rx_buf(i) + member("rxm_rx_buf", "unexp_msg.entry").0;
    im.set(link(1), "dlist_entry", "next", link(1));
    match read(&im) {
        Err(OfiError::Read(ReadError::Cycle { what, addr })) => {
            assert_eq!(addr, TargetAddr(link(1)));
            assert!(what.contains("unexp_msg_list"), "{what}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_shipped_profile_answers_every_question_of_the_reader() {
    assert!(mpihandles::ofi_layouts_missing(&profile().layouts).is_none());
    let (_, unanswered) =
        mpidd_read::LayoutTable::record(&profile().layouts, &mpihandles::ask_ofi_layouts);
    assert!(unanswered.is_empty(), "{unanswered:?}");
}

#[test]
fn an_fi_info_names_a_hardware_provider_whose_statement_says_the_nic() {
    let mut im = Image {
        big: true,
        ..Image::default()
    };
    const INFO: u64 = 0x20_0000;
    const ATTR: u64 = 0x21_0000;
    im.region(INFO, size("fi_info"));
    im.region(ATTR, size("fi_fabric_attr"));
    im.region(NAME, 64);
    im.set(INFO, "fi_info", "fabric_attr", ATTR);
    im.set(ATTR, "fi_fabric_attr", "prov_name", NAME);
    im.bytes(NAME, b"cxi\0");
    let mem = im.memory();
    let read = |im: &SyntheticMemory| {
        read_ofi_info_provider(im, &profile().layouts, TargetAddr(INFO), &Limits::default())
    };
    let name = read(&mem).unwrap();
    assert_eq!(name, "cxi");
    assert!(ofi_hardware_matching(&name).unwrap().contains("in the NIC"));
    // A NULL name is corrupt, named by its record.
    im.set(ATTR, "fi_fabric_attr", "prov_name", 0);
    assert!(matches!(
        read(&im.memory()),
        Err(OfiError::Corrupt { record: "fi_fabric_attr", addr, .. }) if addr == TargetAddr(ATTR)
    ));
}

const POOL: u64 = 0x30_0000;
const REGION: u64 = 0x31_0000;
const TABLE: u64 = 0x32_0000;
const BUFS: u64 = 0x33_0000;
const CHUNK: u64 = 3;

/// The rxm endpoint with a transmit pool of one region of three buffers:
/// buffer 0 a tagged rendezvous request waiting for the receiver
/// (`RXM_RNDV_TX`), buffer 1 free, buffer 2 a credit message (no caller's
/// message).
fn lay_out_rxm_pool() -> (Image, u64) {
    let mut im = lay_out_rxm(false);
    let entry = (size("ofi_bufpool_hdr") + size("rxm_tx_buf")).next_multiple_of(64);
    im.region(POOL, size("ofi_bufpool"));
    im.region(REGION, size("ofi_bufpool_region"));
    im.region(TABLE, 8);
    im.region(BUFS, (CHUNK + 1) * entry);
    im.set(EP, "rxm_ep", "tx_pool", POOL);
    let p = "ofi_bufpool";
    im.set(POOL, p, "entry_size", entry);
    im.set(POOL, p, "entry_cnt", CHUNK);
    im.set(POOL, p, "region_table", TABLE);
    im.set(POOL, p, "region_cnt", 1);
    im.set(POOL, p, "attr.chunk_cnt", CHUNK);
    im.set(POOL, p, "attr.flags", 1 << 2);
    im.write(TABLE, 8, REGION);
    // As ofi_bufpool_grow: the buffers start one entry into the region.
    let mem = BUFS + entry;
    im.set(REGION, "ofi_bufpool_region", "mem_region", mem);
    let buf = |i: u64| mem + i * entry;
    let hdr = |i: u64| buf(i) - size("ofi_bufpool_hdr");
    im.set(POOL, p, "free_list.entries.head", hdr(1));
    im.set(hdr(1), "ofi_bufpool_hdr", "entry.slist.next", 0);
    let t = "rxm_tx_buf";
    im.set(buf(0), t, "hdr.state", 6);
    im.set(buf(0), t, "app_context", 0xc7);
    im.set(buf(0), t, "pkt.ctrl_hdr.type", 2);
    im.set(buf(0), t, "pkt.hdr.op", 1);
    im.set(buf(0), t, "pkt.hdr.tag", 0x99);
    im.set(buf(0), t, "pkt.hdr.size", 1 << 21);
    im.set(buf(2), t, "hdr.state", 5);
    im.set(buf(2), t, "pkt.ctrl_hdr.type", 6);
    (im, mem)
}

#[test]
fn rxm_sends_in_flight_are_its_busy_transmit_buffers() {
    let (im, mem) = lay_out_rxm_pool();
    let q = read(&im).expect("read the rxm endpoint");
    assert!(q.notes.is_empty(), "{:?}", q.notes);
    let sends: Vec<_> = q
        .sends
        .iter()
        .map(|s| {
            (
                s.entry.0,
                s.tag,
                s.length,
                s.buffer,
                s.context.0,
                s.protocol,
            )
        })
        .collect();
    assert_eq!(
        sends,
        vec![(mem, 0x99, 1 << 21, None, 0xc7, OfiProtocol::Rendezvous)]
    );
}

#[test]
fn a_looping_or_stray_free_list_of_transmit_buffers_is_named() {
    let (mut im, mem) = lay_out_rxm_pool();
    let entry = (size("ofi_bufpool_hdr") + size("rxm_tx_buf")).next_multiple_of(64);
    let hdr1 = mem + entry - size("ofi_bufpool_hdr");
    im.set(hdr1, "ofi_bufpool_hdr", "entry.slist.next", hdr1);
    match read(&im) {
        Err(OfiError::Read(ReadError::Cycle { addr, .. })) => assert_eq!(addr, TargetAddr(hdr1)),
        other => panic!("{other:?}"),
    }
    im.set(hdr1, "ofi_bufpool_hdr", "entry.slist.next", 0xbad0);
    assert!(matches!(
        read(&im),
        Err(OfiError::Corrupt { record: "ofi_bufpool", addr, .. }) if addr == TargetAddr(POOL)
    ));
    // A pool whose counts disagree is corrupt before any buffer is read.
    let (mut im, _) = lay_out_rxm_pool();
    im.set(POOL, "ofi_bufpool", "entry_cnt", 4);
    assert!(matches!(
        read(&im),
        Err(OfiError::Corrupt {
            record: "ofi_bufpool",
            ..
        })
    ));
}
