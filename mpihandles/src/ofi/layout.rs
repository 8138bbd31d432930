//! Where libfabric keeps what the readers read: every size and offset
//! asked of the layout source (libfabric's DWARF or a profile), once per
//! reading, and the list of those questions a profile must answer.
//!
//! The names are libfabric 1.17's (`include/ofi_util.h`,
//! `include/rdma/fi_ext.h`, `prov/shm/src/smr.h`, `include/ofi_shm.h`,
//! `prov/rxm/src/rxm.h`, `include/ofi_proto.h`).

use mpidd_read::{LayoutError, LayoutNeed, Layouts, Member};

pub(crate) const UTIL_EP: &str = "util_ep";
pub(crate) const UTIL_DOMAIN: &str = "util_domain";
pub(crate) const PROVIDER: &str = "fi_provider";
pub(crate) const DLIST: &str = "dlist_entry";
pub(crate) const IOVEC: &str = "iovec";
pub(crate) const SMR_EP: &str = "smr_ep";
pub(crate) const SMR_SRX: &str = "smr_srx_ctx";
pub(crate) const SMR_RX_ENTRY: &str = "smr_rx_entry";
pub(crate) const SMR_CMD_CTX: &str = "smr_cmd_ctx";
pub(crate) const SMR_TX_ENTRY: &str = "smr_tx_entry";
pub(crate) const SMR_PEND_FS: &str = "smr_pend_fs";
pub(crate) const SMR_PEND_FS_ENTRY: &str = "smr_pend_fs_entry";
pub(crate) const SMR_AV: &str = "smr_av";
pub(crate) const SMR_MAP: &str = "smr_map";
pub(crate) const SMR_PEER: &str = "smr_peer";
pub(crate) const RXM_EP: &str = "rxm_ep";
pub(crate) const RXM_RECV_QUEUE: &str = "rxm_recv_queue";
pub(crate) const RXM_RECV_ENTRY: &str = "rxm_recv_entry";
pub(crate) const RXM_RX_BUF: &str = "rxm_rx_buf";
pub(crate) const RXM_CONN: &str = "rxm_conn";
pub(crate) const PEER_ADDR: &str = "util_peer_addr";
pub(crate) const FI_INFO: &str = "fi_info";
pub(crate) const BUFPOOL: &str = "ofi_bufpool";
pub(crate) const BUFPOOL_REGION: &str = "ofi_bufpool_region";
pub(crate) const BUFPOOL_HDR: &str = "ofi_bufpool_hdr";
pub(crate) const RXM_TX_BUF: &str = "rxm_tx_buf";
pub(crate) const FABRIC_ATTR: &str = "fi_fabric_attr";

/// The receive entry `smr_rx_entry` and `fi_peer_rx_entry` share: the
/// members of `fi_peer_rx_entry` (`peer_entry` in shm's entry).
const SMR_RX_MEMBERS: &[&str] = &[
    "peer_entry",
    "peer_entry.next",
    "peer_entry.addr",
    "peer_entry.tag",
    "peer_entry.flags",
    "peer_entry.context",
    "peer_entry.count",
    "peer_entry.peer_context",
    "iov",
    "ignore",
];

/// A command's header, where shm's command context and send entry keep it.
const SMR_HDR: &[&str] = &[
    "cmd.msg.hdr.op",
    "cmd.msg.hdr.op_src",
    "cmd.msg.hdr.size",
    "cmd.msg.hdr.tag",
];

/// Every question the endpoint reader asks, for [`LayoutNeed::ask_all`]
/// (a profile records the answers).
pub(crate) const OFI_NEEDS: &[LayoutNeed] = &[
    LayoutNeed::members(UTIL_EP, &["ep_fid.fid.fclass", "domain", "av"]),
    LayoutNeed::members(UTIL_DOMAIN, &["prov"]),
    LayoutNeed::members(PROVIDER, &["name"]),
    LayoutNeed::members(DLIST, &["next", "prev"]),
    LayoutNeed::members(IOVEC, &["iov_base", "iov_len"]),
    LayoutNeed::members(SMR_EP, &["util_ep", "srx", "pend_fs"]),
    LayoutNeed::members(
        SMR_SRX,
        &[
            "peer_srx.ep_fid.fid.fclass",
            "peer_srx.ep_fid.fid.context",
            "recv_queue.list",
            "trecv_queue.list",
            "unexp_msg_queue.list",
            "unexp_tagged_queue.list",
        ],
    ),
    LayoutNeed::members(SMR_RX_ENTRY, SMR_RX_MEMBERS),
    LayoutNeed::members(SMR_CMD_CTX, SMR_HDR),
    LayoutNeed::members(SMR_TX_ENTRY, SMR_HDR),
    LayoutNeed::members(SMR_TX_ENTRY, &["peer_id", "context", "iov", "iov_count"]),
    LayoutNeed::members(SMR_PEND_FS, &["size", "next"]),
    LayoutNeed::members(SMR_PEND_FS_ENTRY, &["next", "buf"]),
    LayoutNeed::members(SMR_AV, &["smr_map"]),
    LayoutNeed::members(SMR_MAP, &["peers"]),
    LayoutNeed::members(SMR_PEER, &["fiaddr"]),
    LayoutNeed::members(RXM_EP, &["util_ep", "recv_queue", "trecv_queue"]),
    LayoutNeed::members(
        RXM_RECV_QUEUE,
        &["rxm_ep", "type", "recv_list", "unexp_msg_list"],
    ),
    LayoutNeed::members(
        RXM_RECV_ENTRY,
        &[
            "entry",
            "rxm_iov.iov",
            "rxm_iov.count",
            "addr",
            "context",
            "flags",
            "tag",
            "ignore",
        ],
    ),
    LayoutNeed::members(
        RXM_RX_BUF,
        &[
            "conn",
            "unexp_msg.entry",
            "unexp_msg.addr",
            "unexp_msg.tag",
            "pkt.ctrl_hdr.type",
            "pkt.hdr.size",
        ],
    ),
    LayoutNeed::members(RXM_CONN, &["peer"]),
    LayoutNeed::members(FI_INFO, &["fabric_attr"]),
    LayoutNeed::members(RXM_EP, &["tx_pool"]),
    LayoutNeed::members(
        BUFPOOL,
        &[
            "free_list.entries.head",
            "entry_size",
            "entry_cnt",
            "region_table",
            "region_cnt",
            "attr.chunk_cnt",
            "attr.flags",
        ],
    ),
    LayoutNeed::members(BUFPOOL_REGION, &["mem_region"]),
    LayoutNeed::members(BUFPOOL_HDR, &["entry.slist.next"]),
    LayoutNeed::members(
        RXM_TX_BUF,
        &[
            "hdr.state",
            "app_context",
            "pkt.ctrl_hdr.type",
            "pkt.hdr.op",
            "pkt.hdr.tag",
            "pkt.hdr.size",
        ],
    ),
    LayoutNeed::members(FABRIC_ATTR, &["prov_name"]),
    LayoutNeed::members(PEER_ADDR, &["fi_addr"]),
];

/// `sizeof` a type; never 0, which would make arrays of it endless.
pub(crate) fn size(l: &dyn Layouts, type_name: &str) -> Result<u64, LayoutError> {
    match l.size_of(type_name)? {
        0 => Err(LayoutError::new(type_name, None, "its size is 0")),
        n => Ok(n),
    }
}

/// Where an endpoint says what it is: its fid's class, its domain and the
/// domain's provider record, whose name names the provider.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EndpointLayout {
    pub(crate) fclass: Member,
    pub(crate) domain: Member,
    pub(crate) av: Member,
    pub(crate) domain_prov: Member,
    pub(crate) prov_name: Member,
}

impl EndpointLayout {
    pub(crate) fn of(l: &dyn Layouts) -> Result<EndpointLayout, LayoutError> {
        Ok(EndpointLayout {
            fclass: l.member(UTIL_EP, "ep_fid.fid.fclass")?,
            domain: l.member(UTIL_EP, "domain")?,
            av: l.member(UTIL_EP, "av")?,
            domain_prov: l.member(UTIL_DOMAIN, "prov")?,
            prov_name: l.member(PROVIDER, "name")?,
        })
    }
}

/// A ring of `dlist_entry` links and the `iovec`s receives hold.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ListLayout {
    pub(crate) next: Member,
    pub(crate) link_size: u64,
    pub(crate) iov_base: Member,
    pub(crate) iov_len: Member,
    pub(crate) iov_size: u64,
}

impl ListLayout {
    pub(crate) fn of(l: &dyn Layouts) -> Result<ListLayout, LayoutError> {
        Ok(ListLayout {
            next: l.member(DLIST, "next")?,
            link_size: size(l, DLIST)?,
            iov_base: l.member(IOVEC, "iov_base")?,
            iov_len: l.member(IOVEC, "iov_len")?,
            iov_size: size(l, IOVEC)?,
        })
    }
}

/// A command header's members, at their offsets in the record that holds
/// the command (`smr_cmd_ctx`, `smr_tx_entry`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShmHeader {
    pub(crate) op: Member,
    pub(crate) op_src: Member,
    pub(crate) size: Member,
    pub(crate) tag: Member,
}

impl ShmHeader {
    fn of(l: &dyn Layouts, type_name: &str) -> Result<ShmHeader, LayoutError> {
        let m = |path| l.member(type_name, path);
        Ok(ShmHeader {
            op: m("cmd.msg.hdr.op")?,
            op_src: m("cmd.msg.hdr.op_src")?,
            size: m("cmd.msg.hdr.size")?,
            tag: m("cmd.msg.hdr.tag")?,
        })
    }
}

/// The shm provider's endpoint, its receive context and their entries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShmLayout {
    pub(crate) ep_srx: Member,
    pub(crate) srx_fclass: Member,
    pub(crate) srx_context: Member,
    pub(crate) recv_queue: Member,
    pub(crate) trecv_queue: Member,
    pub(crate) unexp_msg_queue: Member,
    pub(crate) unexp_tagged_queue: Member,
    pub(crate) rx_size: u64,
    /// `smr_rx_entry.peer_entry`: its link in the queues (a
    /// `fi_peer_rx_entry` starts with `next` and `prev`, castable to a
    /// `dlist_entry`).
    pub(crate) rx_link: Member,
    pub(crate) rx_addr: Member,
    pub(crate) rx_tag: Member,
    pub(crate) rx_context: Member,
    pub(crate) rx_count: Member,
    pub(crate) rx_peer_context: Member,
    pub(crate) rx_iov: Member,
    pub(crate) rx_ignore: Member,
    pub(crate) cmd_ctx_size: u64,
    pub(crate) cmd_ctx: ShmHeader,
}

impl ShmLayout {
    pub(crate) fn of(l: &dyn Layouts) -> Result<ShmLayout, LayoutError> {
        let s = |path| l.member(SMR_SRX, path);
        let r = |path| l.member(SMR_RX_ENTRY, path);
        Ok(ShmLayout {
            ep_srx: l.member(SMR_EP, "srx")?,
            srx_fclass: s("peer_srx.ep_fid.fid.fclass")?,
            srx_context: s("peer_srx.ep_fid.fid.context")?,
            recv_queue: s("recv_queue.list")?,
            trecv_queue: s("trecv_queue.list")?,
            unexp_msg_queue: s("unexp_msg_queue.list")?,
            unexp_tagged_queue: s("unexp_tagged_queue.list")?,
            rx_size: size(l, SMR_RX_ENTRY)?,
            rx_link: r("peer_entry")?,
            rx_addr: r("peer_entry.addr")?,
            rx_tag: r("peer_entry.tag")?,
            rx_context: r("peer_entry.context")?,
            rx_count: r("peer_entry.count")?,
            rx_peer_context: r("peer_entry.peer_context")?,
            rx_iov: r("iov")?,
            rx_ignore: r("ignore")?,
            cmd_ctx_size: size(l, SMR_CMD_CTX)?,
            cmd_ctx: ShmHeader::of(l, SMR_CMD_CTX)?,
        })
    }
}

/// shm's sends in flight: its free stack of send entries, and the address
/// vector's map from a peer's index to its `fi_addr_t`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShmSendLayout {
    pub(crate) ep_pend_fs: Member,
    pub(crate) fs_size: Member,
    pub(crate) fs_next: Member,
    /// Where the entries start: `sizeof(struct smr_pend_fs)`, as its last
    /// member, the flexible array `entry[]`, starts where the header's two
    /// words end (DWARF gives a flexible array no size, and the profile
    /// tooling records no such member).
    pub(crate) fs_entries: u64,
    pub(crate) entry_size: u64,
    pub(crate) entry_buf: Member,
    pub(crate) tx_size: u64,
    pub(crate) tx: ShmHeader,
    pub(crate) tx_peer_id: Member,
    pub(crate) tx_context: Member,
    pub(crate) tx_iov: Member,
    pub(crate) tx_iov_count: Member,
    pub(crate) av_map: Member,
    pub(crate) map_peers: Member,
    pub(crate) peer_size: u64,
    pub(crate) peer_fiaddr: Member,
}

impl ShmSendLayout {
    pub(crate) fn of(l: &dyn Layouts) -> Result<ShmSendLayout, LayoutError> {
        let t = |path| l.member(SMR_TX_ENTRY, path);
        Ok(ShmSendLayout {
            ep_pend_fs: l.member(SMR_EP, "pend_fs")?,
            fs_size: l.member(SMR_PEND_FS, "size")?,
            fs_next: l.member(SMR_PEND_FS, "next")?,
            fs_entries: size(l, SMR_PEND_FS)?,
            entry_size: size(l, SMR_PEND_FS_ENTRY)?,
            entry_buf: l.member(SMR_PEND_FS_ENTRY, "buf")?,
            tx_size: size(l, SMR_TX_ENTRY)?,
            tx: ShmHeader::of(l, SMR_TX_ENTRY)?,
            tx_peer_id: t("peer_id")?,
            tx_context: t("context")?,
            tx_iov: t("iov")?,
            tx_iov_count: t("iov_count")?,
            av_map: l.member(SMR_AV, "smr_map")?,
            map_peers: l.member(SMR_MAP, "peers")?,
            peer_size: size(l, SMR_PEER)?,
            peer_fiaddr: l.member(SMR_PEER, "fiaddr")?,
        })
    }
}

/// The rxm provider's endpoint: its two receive queues, their receive
/// entries and the receive buffers of unexpected messages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RxmLayout {
    pub(crate) recv_queue: Member,
    pub(crate) trecv_queue: Member,
    pub(crate) q_ep: Member,
    pub(crate) q_type: Member,
    pub(crate) q_recv_list: Member,
    pub(crate) q_unexp_list: Member,
    pub(crate) q_size: u64,
    pub(crate) entry_size: u64,
    pub(crate) entry_link: Member,
    pub(crate) entry_iov: Member,
    pub(crate) entry_iov_count: Member,
    pub(crate) entry_addr: Member,
    pub(crate) entry_context: Member,
    pub(crate) entry_tag: Member,
    pub(crate) entry_ignore: Member,
    pub(crate) buf_size: u64,
    pub(crate) buf_conn: Member,
    pub(crate) buf_link: Member,
    pub(crate) buf_addr: Member,
    pub(crate) buf_tag: Member,
    pub(crate) buf_ctrl_type: Member,
    pub(crate) buf_size_hdr: Member,
    pub(crate) conn_peer: Member,
    pub(crate) peer_fi_addr: Member,
}

impl RxmLayout {
    pub(crate) fn of(l: &dyn Layouts) -> Result<RxmLayout, LayoutError> {
        let q = |path| l.member(RXM_RECV_QUEUE, path);
        let e = |path| l.member(RXM_RECV_ENTRY, path);
        let b = |path| l.member(RXM_RX_BUF, path);
        Ok(RxmLayout {
            recv_queue: l.member(RXM_EP, "recv_queue")?,
            trecv_queue: l.member(RXM_EP, "trecv_queue")?,
            q_ep: q("rxm_ep")?,
            q_type: q("type")?,
            q_recv_list: q("recv_list")?,
            q_unexp_list: q("unexp_msg_list")?,
            q_size: size(l, RXM_RECV_QUEUE)?,
            entry_size: size(l, RXM_RECV_ENTRY)?,
            entry_link: e("entry")?,
            entry_iov: e("rxm_iov.iov")?,
            entry_iov_count: e("rxm_iov.count")?,
            entry_addr: e("addr")?,
            entry_context: e("context")?,
            entry_tag: e("tag")?,
            entry_ignore: e("ignore")?,
            buf_size: size(l, RXM_RX_BUF)?,
            buf_conn: b("conn")?,
            buf_link: b("unexp_msg.entry")?,
            buf_addr: b("unexp_msg.addr")?,
            buf_tag: b("unexp_msg.tag")?,
            buf_ctrl_type: b("pkt.ctrl_hdr.type")?,
            buf_size_hdr: b("pkt.hdr.size")?,
            conn_peer: l.member(RXM_CONN, "peer")?,
            peer_fi_addr: l.member(PEER_ADDR, "fi_addr")?,
        })
    }
}

/// rxm's sends in flight: the endpoint's buffer pool of transmit buffers
/// (`ofi_bufpool`, not indexed: one free list of buffer headers), its
/// regions, and each buffer's state and packet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RxmSendLayout {
    pub(crate) ep_tx_pool: Member,
    pub(crate) pool_free_head: Member,
    pub(crate) pool_entry_size: Member,
    pub(crate) pool_entry_cnt: Member,
    pub(crate) pool_region_table: Member,
    pub(crate) pool_region_cnt: Member,
    pub(crate) pool_chunk_cnt: Member,
    pub(crate) pool_flags: Member,
    pub(crate) region_mem: Member,
    pub(crate) hdr_size: u64,
    pub(crate) hdr_next: Member,
    pub(crate) tx_size: u64,
    pub(crate) tx_state: Member,
    pub(crate) tx_context: Member,
    pub(crate) tx_ctrl_type: Member,
    pub(crate) tx_op: Member,
    pub(crate) tx_tag: Member,
    pub(crate) tx_length: Member,
}

impl RxmSendLayout {
    pub(crate) fn of(l: &dyn Layouts) -> Result<RxmSendLayout, LayoutError> {
        let p = |path| l.member(BUFPOOL, path);
        let t = |path| l.member(RXM_TX_BUF, path);
        Ok(RxmSendLayout {
            ep_tx_pool: l.member(RXM_EP, "tx_pool")?,
            pool_free_head: p("free_list.entries.head")?,
            pool_entry_size: p("entry_size")?,
            pool_entry_cnt: p("entry_cnt")?,
            pool_region_table: p("region_table")?,
            pool_region_cnt: p("region_cnt")?,
            pool_chunk_cnt: p("attr.chunk_cnt")?,
            pool_flags: p("attr.flags")?,
            region_mem: l.member(BUFPOOL_REGION, "mem_region")?,
            hdr_size: size(l, BUFPOOL_HDR)?,
            hdr_next: l.member(BUFPOOL_HDR, "entry.slist.next")?,
            tx_size: size(l, RXM_TX_BUF)?,
            tx_state: t("hdr.state")?,
            tx_context: t("app_context")?,
            tx_ctrl_type: t("pkt.ctrl_hdr.type")?,
            tx_op: t("pkt.hdr.op")?,
            tx_tag: t("pkt.hdr.tag")?,
            tx_length: t("pkt.hdr.size")?,
        })
    }
}
