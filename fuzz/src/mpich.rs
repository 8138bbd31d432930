//! The MPICH layout the queue target starts from and the fuzzer bends.

use mpiq_core::LayoutTable;

use crate::cursor::Cursor;

/// `(type, member, value)`: a member's offset, or with no member the
/// type's size. The values are a synthetic MPICH's (those of
/// mpiq-core's native_synthetic test), not the real one's.
pub const DEFAULT: &[(&str, Option<&str>, u64)] = &[
    ("MPIR_Comm_list", None, 16),
    ("MPIR_Comm_list", Some("sequence_number"), 0),
    ("MPIR_Comm_list", Some("head"), 8),
    ("MPIR_Comm", None, 256),
    ("MPIR_Comm", Some("name"), 0),
    ("MPIR_Comm", Some("context_id"), 128),
    ("MPIR_Comm", Some("recvcontext_id"), 130),
    ("MPIR_Comm", Some("remote_size"), 132),
    ("MPIR_Comm", Some("rank"), 136),
    ("MPIR_Comm", Some("local_size"), 140),
    ("MPIR_Comm", Some("comm_kind"), 144),
    ("MPIR_Comm", Some("local_group"), 152),
    ("MPIR_Comm", Some("comm_next"), 160),
    ("MPIR_Comm", Some("dev"), 168),
    ("MPIDI_CH3I_comm_t", None, 16),
    ("MPIDI_CH3I_comm_t", Some("vcrt"), 0),
    ("MPIDI_VCRT", None, 24),
    ("MPIDI_VCRT", Some("size"), 0),
    ("MPIDI_VCRT", Some("vcr_table"), 8),
    ("MPIDI_VC", None, 8),
    ("MPIDI_VC", Some("pg_rank"), 0),
    ("MPIR_Group", None, 16),
    ("MPIR_Group", Some("size"), 0),
    ("MPIR_Group", Some("lrank_to_lpid"), 8),
    ("MPII_Group_pmap_t", None, 16),
    ("MPII_Group_pmap_t", Some("lpid"), 0),
    ("MPIR_Request", None, 128),
    ("MPIR_Request", Some("cc"), 0),
    ("MPIR_Request", Some("next"), 8),
    ("MPIR_Request", Some("dev"), 16),
    ("MPIDI_Request", None, 64),
    ("MPIDI_Request", Some("match"), 0),
    ("MPIDI_Request", Some("user_buf"), 8),
    ("MPIDI_Request", Some("user_count"), 16),
    ("MPIDI_Request", Some("datatype"), 24),
    ("MPIDI_Request", Some("recv_data_sz"), 32),
    ("MPIDI_Request", Some("tmpbuf"), 40),
    ("MPIDI_Request", Some("state"), 48),
    ("MPIDI_Message_match", None, 8),
    ("MPIDI_Message_match", Some("parts"), 0),
    ("MPIDI_Message_match_parts_t", None, 8),
    ("MPIDI_Message_match_parts_t", Some("tag"), 0),
    ("MPIDI_Message_match_parts_t", Some("rank"), 4),
    ("MPIDI_Message_match_parts_t", Some("context_id"), 6),
    ("MPIR_Sendq", None, 40),
    ("MPIR_Sendq", Some("sreq"), 0),
    ("MPIR_Sendq", Some("tag"), 8),
    ("MPIR_Sendq", Some("rank"), 12),
    ("MPIR_Sendq", Some("context_id"), 16),
    ("MPIR_Sendq", Some("next"), 24),
    ("MPIR_Datatype", None, 32),
    ("MPIR_Datatype", Some("size"), 8),
];

/// Most overrides one input applies.
pub const MAX_OVERRIDES: usize = 64;

/// Reads the overrides and builds the table:
///
/// ```text
/// layout   := n:u8 override{n % 65}
/// override := entry:u8 value:u64
/// ```
///
/// `entry` modulo twice the number of entries: below the number, the
/// entry takes `value`; above, the entry is removed (a type without a
/// size is removed with all its members).
pub fn parse(c: &mut Cursor<'_>) -> LayoutTable {
    let mut values: Vec<Option<u64>> = DEFAULT.iter().map(|e| Some(e.2)).collect();
    for _ in 0..usize::from(c.u8()) % (MAX_OVERRIDES + 1) {
        let entry = usize::from(c.u8()) % (2 * DEFAULT.len());
        let value = c.u64();
        match values.get_mut(entry) {
            Some(v) => *v = Some(value),
            None => values[entry - DEFAULT.len()] = None,
        }
    }
    table(&values)
}

/// The table of `values`, one per entry of [`DEFAULT`].
pub fn table(values: &[Option<u64>]) -> LayoutTable {
    let mut t = LayoutTable::default();
    for (i, &(ty, member, _)) in DEFAULT.iter().enumerate() {
        if member.is_some() {
            continue;
        }
        let Some(size) = values[i] else {
            continue;
        };
        let members: Vec<(&str, u64)> = DEFAULT
            .iter()
            .zip(values)
            .filter(|((t2, m, _), _)| *t2 == ty && m.is_some())
            .filter_map(|((_, m, _), v)| Some(((*m)?, (*v)?)))
            .collect();
        t.add_offsets(ty, size, &members);
    }
    t
}

/// Writes overrides that turn [`DEFAULT`] into `values`, for seeds.
pub fn encode(values: &[Option<u64>], out: &mut Vec<u8>) {
    let changes: Vec<(u8, u64)> = DEFAULT
        .iter()
        .zip(values)
        .enumerate()
        .filter(|(_, (d, v))| **v != Some(d.2))
        .map(|(i, (_, v))| match v {
            Some(v) => (i as u8, *v),
            None => ((i + DEFAULT.len()) as u8, 0),
        })
        .collect();
    assert!(
        changes.len() <= MAX_OVERRIDES,
        "too many layout changes for a seed"
    );
    out.push(changes.len() as u8);
    for (entry, value) in changes {
        out.push(entry);
        out.extend_from_slice(&value.to_le_bytes());
    }
}
