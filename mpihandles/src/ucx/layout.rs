//! Where UCX keeps what the readers read: every size and offset asked of
//! the layout source (UCX's DWARF or a profile), once per reading, and the
//! list of those questions a profile must answer.

use mpidd_read::{LayoutError, LayoutNeed, Layouts, Member};

pub(crate) const REQUEST: &str = "ucp_request_t";
pub(crate) const WORKER: &str = "ucp_worker_t";
pub(crate) const TAG_MATCH: &str = "ucp_tag_match_t";
pub(crate) const REQUEST_QUEUE: &str = "ucp_request_queue_t";
pub(crate) const QUEUE_HEAD: &str = "ucs_queue_head_t";
pub(crate) const QUEUE_ELEM: &str = "ucs_queue_elem_t";
pub(crate) const LIST_LINK: &str = "ucs_list_link_t";
pub(crate) const RECV_DESC: &str = "ucp_recv_desc_t";
pub(crate) const TAG_HDR: &str = "ucp_tag_hdr_t";
pub(crate) const EAGER_FIRST_HDR: &str = "ucp_eager_first_hdr_t";
pub(crate) const EAGER_SYNC_HDR: &str = "ucp_eager_sync_hdr_t";
pub(crate) const EAGER_SYNC_FIRST_HDR: &str = "ucp_eager_sync_first_hdr_t";
pub(crate) const RNDV_RTS_HDR: &str = "ucp_rndv_rts_hdr_t";
pub(crate) const REQUEST_HDR: &str = "ucp_request_hdr_t";
pub(crate) const MPOOL: &str = "ucs_mpool_t";
pub(crate) const MPOOL_DATA: &str = "ucs_mpool_data_t";
pub(crate) const MPOOL_CHUNK: &str = "ucs_mpool_chunk_t";
pub(crate) const MPOOL_ELEM: &str = "ucs_mpool_elem_t";
pub(crate) const EP_EXT_GEN: &str = "ucp_ep_ext_gen_t";
pub(crate) const PROTO_CONFIG: &str = "ucp_proto_config_t";
/// `ucp_ep_ext_gen_t` as UCX 1.14 and later name it (`src/ucp/core/ucp_ep.h`).
pub(crate) const EP_EXT: &str = "ucp_ep_ext_t";
pub(crate) const HLIST_HEAD: &str = "ucs_hlist_head_t";
pub(crate) const HLIST_LINK: &str = "ucs_hlist_link_t";

const REQUEST_MEMBERS: &[&str] = &[
    "flags",
    "recv.queue",
    "recv.buffer",
    "recv.length",
    "recv.tag.tag",
    "recv.tag.tag_mask",
    "recv.tag.sn",
    "send.ep",
    "send.buffer",
    "send.length",
    "send.msg_proto.tag",
];

/// Every question the worker reader and the request reader ask, for
/// [`LayoutNeed::ask_all`] (a profile records the answers), as UCX 1.13
/// names its members. Where a later UCX moved one, the readers ask its
/// later place only when the first is not there ([`RequestLayout::of`],
/// [`EndpointLayout::of`]), so each build's profile records its own.
pub(crate) const UCX_NEEDS: &[LayoutNeed] = &[
    LayoutNeed::members(REQUEST, REQUEST_MEMBERS),
    LayoutNeed::members(WORKER, &["tm", "req_mp"]),
    LayoutNeed::members(
        TAG_MATCH,
        &[
            "expected.wildcard",
            "expected.hash",
            "expected.sn",
            "unexpected.all",
        ],
    ),
    LayoutNeed::members(REQUEST_QUEUE, &["queue"]),
    LayoutNeed::members(QUEUE_HEAD, &["head", "ptail"]),
    LayoutNeed::members(QUEUE_ELEM, &["next"]),
    LayoutNeed::members(LIST_LINK, &["prev", "next"]),
    LayoutNeed::members(
        RECV_DESC,
        &["tag_list", "length", "payload_offset", "flags"],
    ),
    LayoutNeed::members(TAG_HDR, &["tag"]),
    LayoutNeed::members(EAGER_FIRST_HDR, &["total_len"]),
    LayoutNeed::members(EAGER_SYNC_HDR, &["req"]),
    LayoutNeed::members(EAGER_SYNC_FIRST_HDR, &["super.total_len", "req"]),
    LayoutNeed::members(RNDV_RTS_HDR, &["sreq", "size"]),
    LayoutNeed::members(REQUEST_HDR, &["ep_id", "req_id"]),
    LayoutNeed::members(MPOOL, &["data"]),
    LayoutNeed::members(MPOOL_DATA, &["elem_size", "alignment", "chunks", "name"]),
    LayoutNeed::members(MPOOL_CHUNK, &["next", "elems", "num_elems"]),
    LayoutNeed::members(MPOOL_ELEM, &[]),
    LayoutNeed::members(WORKER, &["all_eps"]),
    LayoutNeed::members(EP_EXT_GEN, &["ep_list", "proto_reqs"]),
    LayoutNeed::members(HLIST_HEAD, &["ptr"]),
    LayoutNeed::members(HLIST_LINK, &["list"]),
    LayoutNeed::members(REQUEST, &["send.list"]),
    LayoutNeed::members(REQUEST, PROTO_SEND_MEMBERS),
];

/// Where a send of the new protocols keeps what the old ones keep in
/// `send.buffer` and `send.length` (`ucp_proto_request_send_op`), and its
/// protocol's configuration, whose selection parameters name the
/// operation.
const PROTO_SEND_MEMBERS: &[&str] = &[
    "send.proto_config",
    "send.state.dt_iter.length",
    "send.state.dt_iter.type.contig.buffer",
];

/// `sizeof` a type; never 0, which would make arrays of it endless and
/// every element of a pool the same address.
fn size(l: &dyn Layouts, type_name: &str) -> Result<u64, LayoutError> {
    match l.size_of(type_name)? {
        0 => Err(LayoutError::new(type_name, None, "its size is 0")),
        n => Ok(n),
    }
}

/// Offsets in `ucp_request_t`: the one description of UCX's request, for
/// the request an MPI library points to and for the worker's queues and
/// pool alike.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RequestLayout {
    /// `sizeof(ucp_request_t)`: the user part starts there.
    pub(crate) size: u64,
    pub(crate) flags: Member,
    /// The expected queue's link (`ucs_queue_elem_t`).
    pub(crate) recv_queue: Member,
    pub(crate) recv_buffer: Member,
    pub(crate) recv_length: Member,
    pub(crate) recv_tag: Member,
    pub(crate) recv_mask: Member,
    /// The tag-matching sequence number given when the receive was posted.
    pub(crate) recv_sn: Member,
    pub(crate) send_ep: Member,
    pub(crate) send_buffer: Member,
    pub(crate) send_length: Member,
    pub(crate) send_tag: Member,
    /// The new protocols' places, when the layouts have them.
    pub(crate) proto: Option<ProtoSendLayout>,
}

/// A send of the new protocols (`UCP_REQUEST_FLAG_PROTO_SEND`): its
/// buffer and length in its datatype iterator, and its operation in its
/// protocol's configuration.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProtoSendLayout {
    /// `ucp_request_t.send.proto_config` (a `ucp_proto_config_t *`).
    pub(crate) proto_config: Member,
    pub(crate) length: Member,
    pub(crate) buffer: Member,
    /// `ucp_proto_config_t.select_param.op_id_flags` (`op_id` in 1.13).
    pub(crate) op_id_flags: Member,
}

impl ProtoSendLayout {
    fn of(l: &dyn Layouts) -> Result<ProtoSendLayout, LayoutError> {
        let m = |path| l.member(REQUEST, path);
        Ok(ProtoSendLayout {
            proto_config: m("send.proto_config")?,
            length: m("send.state.dt_iter.length")?,
            buffer: m("send.state.dt_iter.type.contig.buffer")?,
            // UCX 1.13's `op_id`, else 1.15 and later's `op_id_flags`,
            // whose low bits are the operation (`OP_ID_MASK`).
            op_id_flags: l
                .member(PROTO_CONFIG, "select_param.op_id")
                .or_else(|_| l.member(PROTO_CONFIG, "select_param.op_id_flags"))?,
        })
    }
}

impl RequestLayout {
    pub(crate) fn of(l: &dyn Layouts) -> Result<RequestLayout, LayoutError> {
        let m = |path| l.member(REQUEST, path);
        Ok(RequestLayout {
            size: size(l, REQUEST)?,
            flags: m("flags")?,
            recv_queue: m("recv.queue")?,
            // UCX 1.13 keeps the receive's buffer and length in the
            // request; 1.14 and later in its datatype iterator, where a
            // generic datatype's buffer shares the contiguous one's place.
            recv_buffer: m("recv.buffer").or_else(|_| m("recv.dt_iter.type.contig.buffer"))?,
            recv_length: m("recv.length").or_else(|_| m("recv.dt_iter.length"))?,
            recv_tag: m("recv.tag.tag")?,
            recv_mask: m("recv.tag.tag_mask")?,
            recv_sn: m("recv.tag.sn")?,
            send_ep: m("send.ep")?,
            send_buffer: m("send.buffer")?,
            send_length: m("send.length")?,
            send_tag: m("send.msg_proto.tag")?,
            proto: ProtoSendLayout::of(l).ok(),
        })
    }
}

/// Offsets of the worker's tag matching: the expected queues and the
/// unexpected list, with the records they link.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TagMatchLayout {
    /// `ucp_worker_t.tm`.
    pub(crate) tm: Member,
    pub(crate) wildcard: Member,
    pub(crate) hash: Member,
    pub(crate) sn: Member,
    pub(crate) unexpected_all: Member,
    /// `ucp_request_queue_t.queue`.
    pub(crate) rq_queue: Member,
    pub(crate) rq_size: u64,
    pub(crate) queue_head: Member,
    pub(crate) queue_ptail: Member,
    pub(crate) elem_next: Member,
    pub(crate) link_next: Member,
    pub(crate) link_size: u64,
    /// `ucp_recv_desc_t`.
    pub(crate) rdesc_size: u64,
    pub(crate) rdesc_tag_list: Member,
    pub(crate) rdesc_length: Member,
    pub(crate) rdesc_payload_offset: Member,
    pub(crate) rdesc_flags: Member,
    /// `ucp_tag_hdr_t`, which every tagged message's header starts with.
    pub(crate) tag_hdr_size: u64,
    pub(crate) tag_hdr_tag: Member,
}

impl TagMatchLayout {
    pub(crate) fn of(l: &dyn Layouts) -> Result<TagMatchLayout, LayoutError> {
        let tm = l.member(WORKER, "tm")?;
        let t = |path| l.member(TAG_MATCH, path);
        let d = |path| l.member(RECV_DESC, path);
        Ok(TagMatchLayout {
            tm,
            wildcard: t("expected.wildcard")?,
            hash: t("expected.hash")?,
            sn: t("expected.sn")?,
            unexpected_all: t("unexpected.all")?,
            rq_queue: l.member(REQUEST_QUEUE, "queue")?,
            rq_size: size(l, REQUEST_QUEUE)?,
            queue_head: l.member(QUEUE_HEAD, "head")?,
            queue_ptail: l.member(QUEUE_HEAD, "ptail")?,
            elem_next: l.member(QUEUE_ELEM, "next")?,
            link_next: l.member(LIST_LINK, "next")?,
            link_size: size(l, LIST_LINK)?,
            rdesc_size: size(l, RECV_DESC)?,
            rdesc_tag_list: d("tag_list")?,
            rdesc_length: d("length")?,
            rdesc_payload_offset: d("payload_offset")?,
            rdesc_flags: d("flags")?,
            tag_hdr_size: size(l, TAG_HDR)?,
            tag_hdr_tag: l.member(TAG_HDR, "tag")?,
        })
    }
}

/// Offsets in the headers of unexpected messages (packed structs), for
/// their lengths and senders.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeaderLayout {
    pub(crate) first_size: u64,
    pub(crate) first_total_len: Member,
    pub(crate) sync_size: u64,
    pub(crate) sync_req: Member,
    pub(crate) sync_first_size: u64,
    pub(crate) sync_first_total_len: Member,
    pub(crate) sync_first_req: Member,
    pub(crate) rts_size: u64,
    pub(crate) rts_sreq: Member,
    pub(crate) rts_total: Member,
    pub(crate) req_ep_id: Member,
    pub(crate) req_req_id: Member,
}

impl HeaderLayout {
    pub(crate) fn of(l: &dyn Layouts) -> Result<HeaderLayout, LayoutError> {
        Ok(HeaderLayout {
            first_size: size(l, EAGER_FIRST_HDR)?,
            first_total_len: l.member(EAGER_FIRST_HDR, "total_len")?,
            sync_size: size(l, EAGER_SYNC_HDR)?,
            sync_req: l.member(EAGER_SYNC_HDR, "req")?,
            sync_first_size: size(l, EAGER_SYNC_FIRST_HDR)?,
            sync_first_total_len: l.member(EAGER_SYNC_FIRST_HDR, "super.total_len")?,
            sync_first_req: l.member(EAGER_SYNC_FIRST_HDR, "req")?,
            rts_size: size(l, RNDV_RTS_HDR)?,
            rts_sreq: l.member(RNDV_RTS_HDR, "sreq")?,
            rts_total: l.member(RNDV_RTS_HDR, "size")?,
            req_ep_id: l.member(REQUEST_HDR, "ep_id")?,
            req_req_id: l.member(REQUEST_HDR, "req_id")?,
        })
    }
}

/// Offsets of the worker's request pool (`ucs_mpool_t` and its chunks).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PoolLayout {
    /// `ucp_worker_t.req_mp`.
    pub(crate) req_mp: Member,
    pub(crate) mp_size: u64,
    pub(crate) mp_data: Member,
    pub(crate) data_size: u64,
    pub(crate) elem_size: Member,
    pub(crate) alignment: Member,
    pub(crate) chunks: Member,
    /// `ucs_mpool_data_t.name`: the pool's name, which the worker's
    /// request pool has as `ucp_requests` (`ucp_worker_init_mpools`).
    pub(crate) name: Member,
    pub(crate) chunk_size: u64,
    pub(crate) chunk_next: Member,
    pub(crate) chunk_elems: Member,
    pub(crate) chunk_num_elems: Member,
    /// `sizeof(ucs_mpool_elem_t)`: the header before each object.
    pub(crate) elem_header: u64,
}

impl PoolLayout {
    pub(crate) fn of(l: &dyn Layouts) -> Result<PoolLayout, LayoutError> {
        Ok(PoolLayout {
            req_mp: l.member(WORKER, "req_mp")?,
            mp_size: size(l, MPOOL)?,
            mp_data: l.member(MPOOL, "data")?,
            data_size: size(l, MPOOL_DATA)?,
            elem_size: l.member(MPOOL_DATA, "elem_size")?,
            alignment: l.member(MPOOL_DATA, "alignment")?,
            chunks: l.member(MPOOL_DATA, "chunks")?,
            name: l.member(MPOOL_DATA, "name")?,
            chunk_size: size(l, MPOOL_CHUNK)?,
            chunk_next: l.member(MPOOL_CHUNK, "next")?,
            chunk_elems: l.member(MPOOL_CHUNK, "elems")?,
            chunk_num_elems: l.member(MPOOL_CHUNK, "num_elems")?,
            elem_header: size(l, MPOOL_ELEM)?,
        })
    }
}

/// Offsets of the worker's endpoints and the requests each keeps that
/// wait for an answer from the peer (`ucp_ep_ext_gen_t.proto_reqs`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EndpointLayout {
    /// `ucp_worker_t.all_eps`: a ring through each endpoint's
    /// `ucp_ep_ext_gen_t.ep_list`.
    pub(crate) all_eps: Member,
    pub(crate) ep_list: Member,
    pub(crate) proto_reqs: Member,
    pub(crate) hlist_ptr: Member,
    /// `ucs_hlist_link_t.list`, a `ucs_list_link_t`.
    pub(crate) hlist_list: Member,
    pub(crate) link_next: Member,
    pub(crate) link_size: u64,
    /// `ucp_request_t.send.list`: the request's link in `proto_reqs`.
    pub(crate) send_list: Member,
}

impl EndpointLayout {
    pub(crate) fn of(l: &dyn Layouts) -> Result<EndpointLayout, LayoutError> {
        // UCX 1.13's name, else the later one: the members the reader
        // reads are the same two.
        let ext = if l.member(EP_EXT_GEN, "ep_list").is_ok() {
            EP_EXT_GEN
        } else {
            EP_EXT
        };
        Ok(EndpointLayout {
            all_eps: l.member(WORKER, "all_eps")?,
            ep_list: l.member(ext, "ep_list")?,
            proto_reqs: l.member(ext, "proto_reqs")?,
            hlist_ptr: l.member(HLIST_HEAD, "ptr")?,
            hlist_list: l.member(HLIST_LINK, "list")?,
            link_next: l.member(LIST_LINK, "next")?,
            link_size: size(l, LIST_LINK)?,
            send_list: l.member(REQUEST, "send.list")?,
        })
    }
}
