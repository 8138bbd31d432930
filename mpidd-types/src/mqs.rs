//! The two result records of the message-queue interface.
//!
//! A message-queue library fills these in for the debugger. Their widths
//! follow `mqs_taddr_t` (an unsigned `long`) and `mqs_tword_t` (a signed
//! `long`), which here means the address width of the [`TargetAbi`](crate::TargetAbi)
//! given. They are plain C structs, so packing never applies.

use serde::{Deserialize, Serialize};

use crate::addr::TargetAddr;
use crate::cchar::CChars;
use crate::error::TypesError;
use crate::field_value::{define_record, FieldValue};
use crate::layout::{FieldKind, FieldReader, FieldWriter};

define_record! {
    /// `mqs_communicator`: one communicator as the debugger shows it.
    pub struct MqsCommunicatorRecord = "mqs_communicator", AlwaysNatural {
        /// A tag that tells this communicator apart from the others.
        unique_id: TargetAddr,
        /// This process's rank in it.
        local_rank: i64,
        /// Number of processes in it.
        size: i64,
        /// Its name, or whatever text the library wants shown.
        name: CChars<64>,
    }
}

/// `enum mqs_status`: how far a pending operation has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MqsStatus {
    /// 0 (`mqs_st_pending`): not matched yet.
    Pending,
    /// 1 (`mqs_st_matched`): matched, data not all moved.
    Matched,
    /// 2 (`mqs_st_complete`): complete.
    Complete,
    /// Any other value, kept as found.
    Unknown(i32),
}

impl From<i32> for MqsStatus {
    fn from(v: i32) -> Self {
        match v {
            0 => Self::Pending,
            1 => Self::Matched,
            2 => Self::Complete,
            other => Self::Unknown(other),
        }
    }
}

impl From<MqsStatus> for i32 {
    fn from(s: MqsStatus) -> i32 {
        match s {
            MqsStatus::Pending => 0,
            MqsStatus::Matched => 1,
            MqsStatus::Complete => 2,
            MqsStatus::Unknown(v) => v,
        }
    }
}

impl FieldValue for MqsStatus {
    const KIND: FieldKind = FieldKind::I32;
    const COUNT: usize = 1;
    fn read(r: &mut FieldReader<'_>) -> Self {
        r.i32().into()
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        w.i32((*self).into());
        Ok(())
    }
}

define_record! {
    /// `mqs_pending_operation`: one entry of a send, receive or unexpected
    /// queue.
    ///
    /// Rank and tag fields are signed words: a wildcard source of -1 stays
    /// -1 on every target width.
    pub struct MqsPendingOperationRecord = "mqs_pending_operation", AlwaysNatural {
        /// How far the operation has got.
        status: MqsStatus,
        /// Peer rank in the communicator as asked for (-1 for any).
        desired_local_rank: i64,
        /// The same peer as a rank in `MPI_COMM_WORLD`.
        desired_global_rank: i64,
        /// Non-zero if the tag is a wildcard.
        tag_wild: i32,
        /// Tag asked for (meaningful when `tag_wild` is 0).
        desired_tag: i64,
        /// Length of the user's buffer.
        desired_length: i64,
        /// Non-zero if the data sits in a system buffer.
        system_buffer: i32,
        /// Where the data is.
        buffer: TargetAddr,
        /// Peer rank in the communicator once matched.
        actual_local_rank: i64,
        /// The same peer as a rank in `MPI_COMM_WORLD`.
        actual_global_rank: i64,
        /// Tag once matched.
        actual_tag: i64,
        /// Length once matched.
        actual_length: i64,
        /// Up to five lines of free text; the first empty one ends the list.
        extra_text: [CChars<64>; 5],
    }
}
