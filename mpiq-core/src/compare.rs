//! Differences between two readings of the same process's queues, for
//! example a native decoder against a vendor library.

use serde::Serialize;

use crate::model::{Communicator, PendingOperation, ProcessQueues, Queue, QueueKind};

/// One difference between two readings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The communicator, by name (and unique id when names repeat).
    pub communicator: String,
    /// The queue, when the difference is inside one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueKind>,
    /// The operation's position in its queue, when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<usize>,
    /// The field that differs (or `presence`, `count`, `state`).
    pub field: String,
    /// Its value in the first reading.
    pub left: String,
    /// Its value in the second reading.
    pub right: String,
}

fn label(c: &Communicator) -> String {
    format!("{} ({:#x})", c.name, c.unique_id)
}

fn queue_state(q: &Queue) -> &'static str {
    match q {
        Queue::Read { .. } => "read",
        Queue::NoInformation => "no_information",
        Queue::Failed { .. } => "failed",
    }
}

fn operation_fields(op: &PendingOperation) -> Vec<(&'static str, String)> {
    vec![
        ("status", format!("{:?}", op.status)),
        ("desired_local_rank", op.desired_local_rank.to_string()),
        ("desired_global_rank", op.desired_global_rank.to_string()),
        ("tag_wild", op.tag_wild.to_string()),
        ("desired_tag", op.desired_tag.to_string()),
        ("desired_length", op.desired_length.to_string()),
        ("system_buffer", op.system_buffer.to_string()),
        ("buffer", format!("{:#x}", op.buffer)),
        ("actual_local_rank", op.actual_local_rank.to_string()),
        ("actual_global_rank", op.actual_global_rank.to_string()),
        ("actual_tag", op.actual_tag.to_string()),
        ("actual_length", op.actual_length.to_string()),
        ("extra_text", format!("{:?}", op.extra_text)),
    ]
}

/// The optional facts a source may add over the interface, compared only
/// when both readings give them: a vendor library that has none is not
/// different, just silent.
fn optional_operation_fields(
    a: &PendingOperation,
    b: &PendingOperation,
) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    if let (Some(x), Some(y)) = (a.protocol, b.protocol) {
        out.push(("protocol", format!("{x:?}"), format!("{y:?}")));
    }
    if let (Some(x), Some(y)) = (a.synchronous, b.synchronous) {
        out.push(("synchronous", x.to_string(), y.to_string()));
    }
    out
}

/// Every difference between `left` and `right`. Communicators are paired
/// by unique id, and operations by their position in the queue (both
/// readings list them in matching order).
///
/// ```
/// use mpiq_core::compare::compare;
/// use mpiq_core::model::ProcessQueues;
/// let empty = ProcessQueues {
///     source: "a".into(),
///     global_rank: 0,
///     communicators: vec![],
///     truncated: false,
///     diagnostics: vec![],
/// };
/// assert!(compare(&empty, &empty).is_empty());
/// ```
pub fn compare(left: &ProcessQueues, right: &ProcessQueues) -> Vec<Difference> {
    let mut out = Vec::new();
    for l in &left.communicators {
        let Some(r) = right
            .communicators
            .iter()
            .find(|r| r.unique_id == l.unique_id)
        else {
            out.push(Difference {
                communicator: label(l),
                queue: None,
                operation: None,
                field: "presence".into(),
                left: "present".into(),
                right: "absent".into(),
            });
            continue;
        };
        let mut diff = |queue, operation, field: &str, a: String, b: String| {
            if a != b {
                out.push(Difference {
                    communicator: label(l),
                    queue,
                    operation,
                    field: field.to_string(),
                    left: a,
                    right: b,
                });
            }
        };
        diff(None, None, "name", l.name.clone(), r.name.clone());
        diff(None, None, "size", l.size.to_string(), r.size.to_string());
        diff(
            None,
            None,
            "local_rank",
            l.local_rank.to_string(),
            r.local_rank.to_string(),
        );
        // Context ids only where both readings have them (vendor
        // libraries do not).
        for (field, a, b) in [
            ("context_id", l.context_id, r.context_id),
            ("recv_context_id", l.recv_context_id, r.recv_context_id),
        ] {
            if let (Some(a), Some(b)) = (a, b) {
                diff(None, None, field, a.to_string(), b.to_string());
            }
        }
        for kind in QueueKind::ALL {
            let (lq, rq) = (l.queue(kind), r.queue(kind));
            diff(
                Some(kind),
                None,
                "state",
                queue_state(lq).into(),
                queue_state(rq).into(),
            );
            let (lo, ro) = (lq.operations(), rq.operations());
            diff(
                Some(kind),
                None,
                "count",
                lo.len().to_string(),
                ro.len().to_string(),
            );
            for (i, (a, b)) in lo.iter().zip(ro).enumerate() {
                for ((field, x), (_, y)) in operation_fields(a).into_iter().zip(operation_fields(b))
                {
                    diff(Some(kind), Some(i), field, x, y);
                }
                for (field, x, y) in optional_operation_fields(a, b) {
                    diff(Some(kind), Some(i), field, x, y);
                }
            }
        }
    }
    for r in &right.communicators {
        if !left
            .communicators
            .iter()
            .any(|l| l.unique_id == r.unique_id)
        {
            out.push(Difference {
                communicator: label(r),
                queue: None,
                operation: None,
                field: "presence".into(),
                left: "absent".into(),
                right: "present".into(),
            });
        }
    }
    out
}
