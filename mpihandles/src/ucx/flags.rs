//! UCX's flag bits, which are anonymous-enum constants in its C source and
//! so in no layout source: named here once, for UCX 1.13 (checked against
//! UCX 1.13.1's `src/ucp/core/ucp_request.h`, Debian 12's libucx0
//! 1.13.1-1). Another UCX version must be checked against its own header
//! before these are trusted for it.

/// `UCP_REQUEST_FLAG_COMPLETED`: the request finished (it waits only for
/// the MPI library to free it).
pub(crate) const REQUEST_COMPLETED: u32 = 1 << 0;
/// `UCP_REQUEST_FLAG_SYNC`: a synchronous send (`ucp_tag_send_sync_nbx`,
/// MPI_Ssend), which completes only when the receiver matched it.
pub(crate) const REQUEST_SYNC: u32 = 1 << 8;

/// `UCP_REQUEST_FLAG_PROTO_SEND`: a send of the new protocols
/// (`ucp_proto_request_send_init`, `src/ucp/proto/proto_common.inl`), the
/// default from UCX 1.16 (`UCX_PROTO_ENABLE=y`): its flags say nothing
/// more, and its operation is in its protocol's selection parameters.
pub(crate) const REQUEST_PROTO_SEND: u32 = 1 << 2;

/// `UCP_OP_ID_TAG_SEND` and `UCP_OP_ID_TAG_SEND_SYNC`
/// (`ucp_operation_id_t`, `src/ucp/core/ucp_types.h`, 1.13 to 1.20).
pub(crate) const OP_ID_TAG_SEND: u8 = 0;
pub(crate) const OP_ID_TAG_SEND_SYNC: u8 = 1;

/// The operation's bits of `ucp_proto_select_param_t.op_id_flags`, below
/// `UCP_PROTO_SELECT_OP_FLAGS_BASE` (bit 4 from 1.15, bit 5 before; every
/// operation id is below 16 in 1.13 to 1.20, so bit 4 is never an id's).
pub(crate) const OP_ID_MASK: u8 = 0x0f;
/// `UCP_REQUEST_FLAG_SEND_TAG`: a tagged send (`ucp_tag_send_nbx`).
pub(crate) const REQUEST_SEND_TAG: u32 = 1 << 14;
/// `UCP_REQUEST_FLAG_RECV_TAG`: a tagged receive (`ucp_tag_recv_nbx`).
pub(crate) const REQUEST_RECV_TAG: u32 = 1 << 17;

/// `UCP_RECV_DESC_FLAG_EAGER`: an eager tagged message (or its first
/// fragment).
pub(crate) const RDESC_EAGER: u16 = 1 << 1;
/// `UCP_RECV_DESC_FLAG_EAGER_ONLY`: the whole eager message is in this
/// descriptor.
pub(crate) const RDESC_EAGER_ONLY: u16 = 1 << 2;
/// `UCP_RECV_DESC_FLAG_EAGER_SYNC`: the sender waits for an acknowledgment
/// of the match.
pub(crate) const RDESC_EAGER_SYNC: u16 = 1 << 3;
/// `UCP_RECV_DESC_FLAG_EAGER_OFFLOAD`: the message came through a
/// transport's tag-matching offload, whose descriptors carry no UCP header.
pub(crate) const RDESC_EAGER_OFFLOAD: u16 = 1 << 4;
/// `UCP_RECV_DESC_FLAG_RNDV`: a rendezvous request (RTS); the data stays
/// with the sender until a receive matches.
pub(crate) const RDESC_RNDV: u16 = 1 << 6;

/// `UCP_RDESC_ALL_LIST`: the index in `ucp_recv_desc_t.tag_list` of the
/// link in the worker's list of every unexpected message
/// (`ucp_tag_match_t.unexpected.all`).
pub(crate) const RDESC_ALL_LIST: u64 = 1;

/// `ucs_roundup_pow2(UCP_TAG_MATCH_HASH_SIZE)`: the number of queues in
/// `ucp_tag_match_t.expected.hash`. `UCP_TAG_MATCH_HASH_SIZE` is 1021
/// (`src/ucp/tag/tag_match.inl`), and `ucp_tag_match_init`
/// (`src/ucp/tag/tag_match.c`) allocates its power-of-two roundup; the hash
/// of a tag (`ucp_tag_match_calc_hash`, two residues XORed) reaches 1023.
pub(crate) const EXPECTED_HASH_QUEUES: u64 = 1024;

/// `UCS_PTR_MAP_KEY_INDIRECT_FLAG` (`src/ucs/datastruct/ptr_map.inl`): set
/// in an id that indexes UCX's table of requests; clear in one that is the
/// request's address.
pub(crate) const PTR_MAP_KEY_INDIRECT: u64 = 1 << 0;
