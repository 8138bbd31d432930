//! What a process's message queues hold: its communicators and, for each,
//! the pending sends, pending receives and unexpected messages.
//!
//! The field names of [`PendingOperation`] and [`Communicator`] are those of
//! the message-queue interface's `mqs_pending_operation` and
//! `mqs_communicator`, so JSON output can be compared with any other tool
//! built on that interface. Values are the interface's, with one repair:
//! ranks and tags are signed even when a vendor library zero-extended them
//! (see [`sign_extend_int`]).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// One of the three queues the interface defines per communicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    /// Sends the application started that have not completed
    /// (`mqs_pending_sends`).
    PendingSends,
    /// Receives posted and not yet matched (`mqs_pending_receives`).
    PendingReceives,
    /// Messages that arrived before a matching receive was posted
    /// (`mqs_unexpected_messages`).
    UnexpectedMessages,
}

impl QueueKind {
    /// All three, in the interface's numbering order.
    pub const ALL: [QueueKind; 3] = [
        QueueKind::PendingSends,
        QueueKind::PendingReceives,
        QueueKind::UnexpectedMessages,
    ];

    /// The interface's `mqs_op_class` value.
    pub const fn op_class(self) -> i32 {
        match self {
            QueueKind::PendingSends => 0,
            QueueKind::PendingReceives => 1,
            QueueKind::UnexpectedMessages => 2,
        }
    }
}

/// How far an operation has progressed (`enum mqs_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationStatus {
    /// Not matched yet.
    Pending,
    /// Matched with its peer; the `actual_*` fields are valid.
    Matched,
    /// Complete, but not yet retired by the application.
    Complete,
    /// A value the interface does not define, kept as given.
    Unknown(i64),
}

impl OperationStatus {
    /// From the interface's integer value.
    pub fn from_raw(raw: i64) -> Self {
        match raw {
            0 => OperationStatus::Pending,
            1 => OperationStatus::Matched,
            2 => OperationStatus::Complete,
            other => OperationStatus::Unknown(other),
        }
    }
}

/// One pending operation, named as in `mqs_pending_operation`.
///
/// Ranks are −1 for "any" (`MPI_ANY_SOURCE`), whatever value the MPI
/// implementation uses internally. `desired_tag` means nothing when
/// `tag_wild` is set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingOperation {
    /// Progress of the operation.
    pub status: OperationStatus,
    /// Peer rank in the communicator asked for; −1 for any source.
    pub desired_local_rank: i64,
    /// The same peer in `MPI_COMM_WORLD`; −1 when unknown or any.
    pub desired_global_rank: i64,
    /// Whether the receive accepts any tag.
    pub tag_wild: bool,
    /// Tag asked for (only meaningful when `tag_wild` is false).
    pub desired_tag: i64,
    /// Length of the user's buffer, as the source reports it (vendor
    /// libraries differ: bytes or elements).
    pub desired_length: i64,
    /// Whether `buffer` is a library-owned buffer rather than the user's.
    pub system_buffer: bool,
    /// Target address of the data.
    pub buffer: u64,
    /// Peer rank in the communicator once matched (or of a send).
    pub actual_local_rank: i64,
    /// The same peer in `MPI_COMM_WORLD`; −1 when unknown.
    pub actual_global_rank: i64,
    /// Tag of the matched message (or of a send).
    pub actual_tag: i64,
    /// Length of the matched message (or of a send).
    pub actual_length: i64,
    /// Extra lines of description from the source, at most five.
    pub extra_text: Vec<String>,
    /// The element count of the user's buffer, when the source gives
    /// lengths in bytes and the count too (native decoders do; the
    /// interface has no such field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_count: Option<i64>,
    /// How the message travels, when the source knows: for an unexpected
    /// message, whether its data came with it (eager) or waits at the
    /// sender until a receive matches (rendezvous). The interface has no
    /// such field; vendor libraries leave it `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// Whether the sender asked for a synchronous send (`MPI_Ssend`,
    /// `MPI_Issend`), whose completion waits for the match, when the
    /// source knows. `None` where the implementation does not record it
    /// (MPICH CH3 sends no such flag with a rendezvous request, whose
    /// sender waits for the match anyway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synchronous: Option<bool>,
}

/// The shapes every decoder builds its operations from, so that the
/// interface's conventions (−1 for any or unknown, a posted receive's
/// `actual_*` fields unset, a message's desired fields its actual ones)
/// are kept in one place.
impl PendingOperation {
    /// An operation of which nothing but its status is known.
    pub(crate) fn unknown(status: OperationStatus) -> Self {
        PendingOperation {
            status,
            desired_local_rank: -1,
            desired_global_rank: -1,
            tag_wild: false,
            desired_tag: -1,
            desired_length: -1,
            system_buffer: false,
            buffer: 0,
            actual_local_rank: -1,
            actual_global_rank: -1,
            actual_tag: -1,
            actual_length: -1,
            extra_text: Vec::new(),
            desired_count: None,
            protocol: None,
            synchronous: None,
        }
    }

    /// A message whose peer (`local` in its communicator, `global` in
    /// `MPI_COMM_WORLD`), tag and length are known: a send, or a message
    /// that arrived before its receive. What is asked for is what there is.
    pub(crate) fn message(
        status: OperationStatus,
        (local, global): (i64, i64),
        tag: i64,
        length: i64,
    ) -> Self {
        PendingOperation {
            desired_local_rank: local,
            desired_global_rank: global,
            desired_tag: tag,
            desired_length: length,
            actual_local_rank: local,
            actual_global_rank: global,
            actual_tag: tag,
            actual_length: length,
            ..PendingOperation::unknown(status)
        }
    }

    /// A posted receive from `source` (local and world rank; `None` for
    /// any source) with `tag` (`None` for any tag) into a buffer of
    /// `length`: nothing has matched it, so it has no sender yet.
    pub(crate) fn receive(
        status: OperationStatus,
        source: Option<(i64, i64)>,
        tag: Option<i64>,
        length: i64,
    ) -> Self {
        let (local, global) = source.unwrap_or((-1, -1));
        PendingOperation {
            desired_local_rank: local,
            desired_global_rank: global,
            tag_wild: tag.is_none(),
            desired_tag: tag.unwrap_or(-1),
            desired_length: length,
            ..PendingOperation::unknown(status)
        }
    }
}

/// How a point-to-point message moves from sender to receiver.
///
/// It tells a hang analyzer where the data is and whether the sender can
/// be finished: after an eager send the sender's buffer is free, while a
/// rendezvous sender (and a send to oneself) still holds its data until a
/// receive matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Protocol {
    /// The data was sent with the envelope and waits at the receiver
    /// (MPICH CH3: `MPIDI_REQUEST_EAGER_MSG`, data in `dev.tmpbuf`, none
    /// for a zero-length message).
    Eager,
    /// Only the envelope (a request to send) came; the data stays with
    /// the sender until a matching receive is posted (MPICH CH3:
    /// `MPIDI_REQUEST_RNDV_MSG`).
    Rendezvous,
    /// A message a process sent to itself: the data stays in the send
    /// buffer of this same process, and the send completes only when a
    /// receive matches (MPICH CH3: `MPIDI_REQUEST_SELF_MSG`).
    SelfSend,
}

/// What is known about one queue of a communicator.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Queue {
    /// The queue was read: its operations in matching order (possibly
    /// none).
    Read {
        /// The operations, in the order MPI would match them.
        operations: Vec<PendingOperation>,
        /// Set when the walk stopped at the caller's limit, so
        /// `operations` is a prefix of the queue.
        truncated: bool,
    },
    /// The source has no information about this queue
    /// (`mqs_no_information`): for example a library built without the
    /// send-queue hooks.
    NoInformation,
    /// Reading the queue failed part way; what was read before is kept.
    Failed {
        /// The operations read before the failure.
        operations: Vec<PendingOperation>,
        /// Why it failed.
        error: String,
    },
}

impl Queue {
    /// The operations read, whatever the queue's state.
    pub fn operations(&self) -> &[PendingOperation] {
        match self {
            Queue::Read { operations, .. } | Queue::Failed { operations, .. } => operations,
            Queue::NoInformation => &[],
        }
    }
}

/// One communicator and its three queues, named as in `mqs_communicator`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Communicator {
    /// Its name (`MPI_Comm_set_name`), or what the source chose to show.
    pub name: String,
    /// Number of processes (`MPI_Comm_size`).
    pub size: i64,
    /// This process's rank in it (`MPI_Comm_rank`); −1 when unknown.
    pub local_rank: i64,
    /// A value that tells communicators apart (an address or context id).
    pub unique_id: u64,
    /// The context id its messages are sent with (MPICH:
    /// `MPIR_Comm.context_id`), the same in every member process, so it
    /// pairs a communicator across the ranks of a job. `None` when the
    /// source does not give it (vendor libraries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<i64>,
    /// The context id messages to this process in it carry (MPICH:
    /// `MPIR_Comm.recvcontext_id`): equal to `context_id` for an
    /// intracommunicator, the other side's for an intercommunicator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recv_context_id: Option<i64>,
    /// The `MPI_COMM_WORLD` rank of each member, when the source gives the
    /// group (`mqs_get_comm_group`). Shared: every member of a job's
    /// `MPI_COMM_WORLD` has the same N ranks, and the readers of a job
    /// keep one copy of each group for all of them (a copy per rank is
    /// N² ranks in all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<Arc<[i64]>>,
    /// Sends this process started that have not completed.
    pub pending_sends: Queue,
    /// Receives this process posted that are not matched.
    pub pending_receives: Queue,
    /// Messages that arrived here before a matching receive.
    pub unexpected_messages: Queue,
}

impl Communicator {
    /// The queue of the given kind.
    pub fn queue(&self, kind: QueueKind) -> &Queue {
        match kind {
            QueueKind::PendingSends => &self.pending_sends,
            QueueKind::PendingReceives => &self.pending_receives,
            QueueKind::UnexpectedMessages => &self.unexpected_messages,
        }
    }
}

/// The message queues of one process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessQueues {
    /// What produced this: a vendor library and its version string, or a
    /// native decoder.
    pub source: String,
    /// The process's rank in `MPI_COMM_WORLD`, as given to the source.
    pub global_rank: i64,
    /// Communicators in the order the source gave them.
    pub communicators: Vec<Communicator>,
    /// Set when the communicator walk stopped at the caller's limit.
    pub truncated: bool,
    /// Messages for the user: what the source said about the image and
    /// process, and what it asked for that the target lacks.
    pub diagnostics: Vec<String>,
}

/// Repairs a value a vendor library read from a 32-bit signed target field
/// and zero-extended into a 64-bit word: 4294967295 becomes −1.
///
/// Only values that fit 32 bits unsigned and have bit 31 set change, and
/// only when the target's `int` is 4 bytes, so genuinely large 64-bit
/// values are kept.
///
/// ```
/// use mpiq_core::model::sign_extend_int;
/// assert_eq!(sign_extend_int(4294967295, 4), -1);
/// assert_eq!(sign_extend_int(4294967294, 4), -2);
/// assert_eq!(sign_extend_int(7, 4), 7);
/// assert_eq!(sign_extend_int(1 << 40, 4), 1 << 40);
/// ```
pub fn sign_extend_int(value: i64, int_size: u32) -> i64 {
    if int_size == 4 && (0x8000_0000..=0xffff_ffff).contains(&value) {
        value - (1 << 32)
    } else {
        value
    }
}
