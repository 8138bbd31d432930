//! The synthetic MPICH's layouts: the offsets the cores are laid out
//! with, and the same as the layout table a decoder is given (what the
//! library's DWARF would say).

use mpiq_core::LayoutTable;

/// Offsets of the synthetic MPICH's structs: the "debug info" that the
/// layout table carries. Deliberately not the real MPICH's, so nothing can
/// be right by accident of matching a build.
pub(super) const LIST_SIZE: u64 = 16;
pub(super) const LIST_SEQ: u64 = 0;
pub(super) const LIST_HEAD: u64 = 8;

pub(super) const COMM_SIZE: u64 = 320;
pub(super) const COMM_NAME: u64 = 16;
pub(super) const COMM_CONTEXT: u64 = 144;
pub(super) const COMM_RECVCONTEXT: u64 = 146;
pub(super) const COMM_REMOTE_SIZE: u64 = 148;
pub(super) const COMM_RANK: u64 = 152;
pub(super) const COMM_LOCAL_SIZE: u64 = 156;
pub(super) const COMM_KIND: u64 = 160;
pub(super) const COMM_LOCAL_GROUP: u64 = 168;
pub(super) const COMM_NEXT: u64 = 176;
pub(super) const COMM_DEV: u64 = 184;
pub(super) const CH3_COMM_SIZE: u64 = 16;
pub(super) const CH3_COMM_VCRT: u64 = 0;

pub(super) const VCRT_SIZE_FIELD: u64 = 0;
pub(super) const VCRT_TABLE: u64 = 8;
pub(super) const VC_SIZE: u64 = 16;
pub(super) const VC_PG_RANK: u64 = 4;

pub(super) const GROUP_SIZE: u64 = 32;
pub(super) const GROUP_SIZE_FIELD: u64 = 4;
pub(super) const GROUP_PMAP: u64 = 16;
pub(super) const PMAP_SIZE: u64 = 16;
pub(super) const PMAP_LPID: u64 = 0;

pub(super) const REQ_SIZE: u64 = 160;
pub(super) const REQ_CC: u64 = 4;
pub(super) const REQ_NEXT: u64 = 16;
pub(super) const REQ_DEV: u64 = 32;
pub(super) const DREQ_SIZE: u64 = 96;
pub(super) const DREQ_MATCH: u64 = 0;
pub(super) const DREQ_USER_BUF: u64 = 8;
pub(super) const DREQ_USER_COUNT: u64 = 16;
pub(super) const DREQ_DATATYPE: u64 = 24;
pub(super) const DREQ_RECV_DATA_SZ: u64 = 32;
pub(super) const DREQ_TMPBUF: u64 = 40;
pub(super) const DREQ_STATE: u64 = 48;
pub(super) const MATCH_PARTS: u64 = 0;
pub(super) const PARTS_TAG: u64 = 0;
pub(super) const PARTS_RANK: u64 = 4;
pub(super) const PARTS_CONTEXT: u64 = 6;

pub(super) const SENDQ_SIZE: u64 = 40;
pub(super) const SENDQ_SREQ: u64 = 0;
pub(super) const SENDQ_TAG: u64 = 8;
pub(super) const SENDQ_RANK: u64 = 12;
pub(super) const SENDQ_CONTEXT: u64 = 16;
pub(super) const SENDQ_NEXT: u64 = 24;

/// The layout table of the synthetic MPICH: what its DWARF would say.
pub fn layout_table() -> LayoutTable {
    let mut t = LayoutTable::default();
    t.add_offsets(
        "MPIR_Comm_list",
        LIST_SIZE,
        &[("sequence_number", LIST_SEQ), ("head", LIST_HEAD)],
    );
    t.add_offsets(
        "MPIR_Comm",
        COMM_SIZE,
        &[
            ("name", COMM_NAME),
            ("context_id", COMM_CONTEXT),
            ("recvcontext_id", COMM_RECVCONTEXT),
            ("remote_size", COMM_REMOTE_SIZE),
            ("rank", COMM_RANK),
            ("local_size", COMM_LOCAL_SIZE),
            ("comm_kind", COMM_KIND),
            ("local_group", COMM_LOCAL_GROUP),
            ("comm_next", COMM_NEXT),
            ("dev", COMM_DEV),
        ],
    );
    t.add_offsets(
        "MPIDI_CH3I_comm_t",
        CH3_COMM_SIZE,
        &[("vcrt", CH3_COMM_VCRT)],
    );
    t.add_offsets(
        "MPIDI_VCRT",
        VCRT_TABLE + 8,
        &[("size", VCRT_SIZE_FIELD), ("vcr_table", VCRT_TABLE)],
    );
    t.add_offsets("MPIDI_VC", VC_SIZE, &[("pg_rank", VC_PG_RANK)]);
    t.add_offsets(
        "MPIR_Group",
        GROUP_SIZE,
        &[("size", GROUP_SIZE_FIELD), ("lrank_to_lpid", GROUP_PMAP)],
    );
    t.add_offsets("MPII_Group_pmap_t", PMAP_SIZE, &[("lpid", PMAP_LPID)]);
    t.add_offsets(
        "MPIR_Request",
        REQ_SIZE,
        &[("cc", REQ_CC), ("next", REQ_NEXT), ("dev", REQ_DEV)],
    );
    t.add_offsets(
        "MPIDI_Request",
        DREQ_SIZE,
        &[
            ("match", DREQ_MATCH),
            ("user_buf", DREQ_USER_BUF),
            ("user_count", DREQ_USER_COUNT),
            ("datatype", DREQ_DATATYPE),
            ("recv_data_sz", DREQ_RECV_DATA_SZ),
            ("tmpbuf", DREQ_TMPBUF),
            ("state", DREQ_STATE),
        ],
    );
    t.add_offsets("MPIDI_Message_match", 8, &[("parts", MATCH_PARTS)]);
    t.add_offsets(
        "MPIDI_Message_match_parts_t",
        8,
        &[
            ("tag", PARTS_TAG),
            ("rank", PARTS_RANK),
            ("context_id", PARTS_CONTEXT),
        ],
    );
    t.add_offsets(
        "MPIR_Sendq",
        SENDQ_SIZE,
        &[
            ("sreq", SENDQ_SREQ),
            ("tag", SENDQ_TAG),
            ("rank", SENDQ_RANK),
            ("context_id", SENDQ_CONTEXT),
            ("next", SENDQ_NEXT),
        ],
    );
    t
}
