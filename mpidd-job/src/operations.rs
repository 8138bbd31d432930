//! A rank's pending operations in world ranks, taken from its message
//! queues, and the communicators they are on.

use mpiq_core::model::{Communicator, OperationStatus, PendingOperation, ProcessQueues, Protocol};

use crate::model::{Operation, OperationKind};

/// What tells the same communicator apart in every rank: the context id
/// its traffic uses (shared by all its members, but reused by disjoint
/// communicators such as the halves of a split) together with its members'
/// world ranks. Without a context id (a vendor library gives none), the
/// name stands in for it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct CommKey {
    context: Option<i64>,
    name: Option<String>,
    group: Option<std::sync::Arc<[i64]>>,
}

/// One communicator of one rank with its operations.
#[derive(Clone, Debug)]
pub(crate) struct CommOps {
    pub key: CommKey,
    pub name: String,
    /// World ranks of its members, when known.
    pub group: Option<std::sync::Arc<[i64]>>,
    pub receives: Vec<Operation>,
    pub sends: Vec<Operation>,
    pub unexpected: Vec<Operation>,
}

/// The communicators of a rank with their operations.
pub(crate) fn rank_operations(queues: &ProcessQueues) -> Vec<CommOps> {
    queues.communicators.iter().map(comm_operations).collect()
}

fn comm_operations(comm: &Communicator) -> CommOps {
    let key = CommKey {
        context: context_id(comm),
        name: context_id(comm).is_none().then(|| comm.name.clone()),
        group: comm.group.clone(),
    };
    let waiting = |op: &&PendingOperation| op.status != OperationStatus::Complete;
    let receives = comm
        .pending_receives
        .operations()
        .iter()
        .filter(waiting)
        .map(|op| receive(comm, op))
        .collect();
    let sends = comm
        .pending_sends
        .operations()
        .iter()
        .filter(waiting)
        .map(|op| send(comm, op))
        .collect();
    let unexpected = comm
        .unexpected_messages
        .operations()
        .iter()
        .map(|op| unexpected(comm, op))
        .collect();
    CommOps {
        key,
        name: comm.name.clone(),
        group: comm.group.clone(),
        receives,
        sends,
        unexpected,
    }
}

/// The world rank of a communicator rank, from the operation's own field
/// or the communicator's group.
fn world(comm: &Communicator, local: i64, given: i64) -> i64 {
    if local < 0 {
        return -1;
    }
    if given >= 0 {
        return given;
    }
    usize::try_from(local)
        .ok()
        .and_then(|i| comm.group.as_ref()?.get(i).copied())
        .unwrap_or(-1)
}

fn receive(comm: &Communicator, op: &PendingOperation) -> Operation {
    Operation {
        kind: OperationKind::Receive,
        communicator: comm.name.clone(),
        peer: world(comm, op.desired_local_rank, op.desired_global_rank),
        peer_local: op.desired_local_rank.max(-1),
        tag: (!op.tag_wild).then_some(op.desired_tag),
        length: op.desired_length,
        protocol: None,
        synchronous: None,
    }
}

fn send(comm: &Communicator, op: &PendingOperation) -> Operation {
    Operation {
        kind: OperationKind::Send,
        communicator: comm.name.clone(),
        peer: world(comm, op.desired_local_rank, op.desired_global_rank),
        peer_local: op.desired_local_rank.max(-1),
        tag: Some(op.desired_tag),
        length: op.desired_length,
        protocol: None,
        synchronous: None,
    }
}

fn unexpected(comm: &Communicator, op: &PendingOperation) -> Operation {
    let (protocol, synchronous) = arrival(op);
    Operation {
        kind: OperationKind::Unexpected,
        communicator: comm.name.clone(),
        peer: world(comm, op.actual_local_rank, op.actual_global_rank),
        peer_local: op.actual_local_rank.max(-1),
        tag: Some(op.actual_tag),
        length: op.actual_length,
        protocol,
        synchronous,
    }
}

/// How an unexpected message came, and whether its sender waits for the
/// match. The decoder's word is taken when it gives one. Otherwise a
/// message with bytes but no library buffer holding them is a rendezvous
/// request: eager data always waits in a buffer of the library's.
fn arrival(op: &PendingOperation) -> (Option<String>, Option<bool>) {
    let protocol = match decoded_protocol(op) {
        Some(p) => Some(p),
        _ if !op.system_buffer && op.actual_length > 0 => Some("rendezvous".to_string()),
        _ if op.system_buffer => Some("eager".to_string()),
        _ => None,
    };
    (protocol, decoded_synchronous(op))
}

fn context_id(comm: &Communicator) -> Option<i64> {
    comm.context_id
}

fn decoded_protocol(op: &PendingOperation) -> Option<String> {
    match op.protocol? {
        Protocol::Eager => Some("eager".to_string()),
        Protocol::Rendezvous => Some("rendezvous".to_string()),
        // A message to oneself: the sender waits for the match.
        Protocol::SelfSend => Some("self".to_string()),
        _ => None,
    }
}

fn decoded_synchronous(op: &PendingOperation) -> Option<bool> {
    op.synchronous
}

/// Whether the sender of this unexpected message is still blocked in its
/// send: a rendezvous send cannot finish before the receive is posted, and
/// neither can a synchronous one or a send to oneself.
pub(crate) fn sender_blocked(op: &Operation) -> bool {
    matches!(op.protocol.as_deref(), Some("rendezvous" | "self")) || op.synchronous == Some(true)
}

/// Whether a receive would match a message (same communicator assumed).
pub(crate) fn matches(receive: &Operation, message: &Operation) -> bool {
    (receive.peer_local < 0 || receive.peer_local == message.peer_local)
        && receive.tag.is_none_or(|t| Some(t) == message.tag)
}
