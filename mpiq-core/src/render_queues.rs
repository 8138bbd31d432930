//! The text form of one process's queues, as `mpidd queues` prints it:
//! what a debugger shows when it has no view of its own.
//!
//! [`ProcessQueues`] displays as: its source and world rank, a `note:`
//! line per diagnostic, then per communicator its name, size, rank and
//! unique id, its group when known, and each of its three queues with
//! its state and one line per operation. A [`PendingOperation`] displays
//! as that one line: every field of `mqs_pending_operation` as
//! `name=value`, then its extra text.
//!
//! Every value is printed as read, so a `-1` rank means "any" or
//! "unknown" just as in the model; the fields the interface lacks
//! (`desired_count`, `protocol`, `synchronous`, context ids) are left to
//! the JSON form.

use std::fmt;

use crate::model::{PendingOperation, ProcessQueues, Queue, QueueKind};

impl QueueKind {
    /// The queue's name in the text form: `pending sends`, `pending
    /// receives` or `unexpected messages`.
    pub const fn label(self) -> &'static str {
        match self {
            QueueKind::PendingSends => "pending sends",
            QueueKind::PendingReceives => "pending receives",
            QueueKind::UnexpectedMessages => "unexpected messages",
        }
    }
}

/// The text form of a process's queues, one line per fact, each ending in
/// a newline.
///
/// ```
/// use mpiq_core::model::{Communicator, ProcessQueues, Queue};
///
/// let queues = ProcessQueues {
///     source: "a native decoder".into(),
///     global_rank: 3,
///     communicators: vec![Communicator {
///         name: "MPI_COMM_WORLD".into(),
///         size: 4,
///         local_rank: 3,
///         unique_id: 0x44000000,
///         context_id: None,
///         recv_context_id: None,
///         group: None,
///         pending_sends: Queue::Read { operations: vec![], truncated: false },
///         pending_receives: Queue::Read { operations: vec![], truncated: false },
///         unexpected_messages: Queue::NoInformation,
///     }],
///     truncated: false,
///     diagnostics: vec![],
/// };
/// assert_eq!(
///     queues.to_string(),
///     "source: a native decoder\n\
///      global rank: 3\n\
///      communicator \"MPI_COMM_WORLD\": size 4, local_rank 3, unique_id 0x44000000\n\
///      \x20 pending sends: 0\n\
///      \x20 pending receives: 0\n\
///      \x20 unexpected messages: no information\n"
/// );
/// ```
impl fmt::Display for ProcessQueues {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(out, "source: {}", self.source)?;
        writeln!(out, "global rank: {}", self.global_rank)?;
        for line in &self.diagnostics {
            writeln!(out, "note: {line}")?;
        }
        for comm in &self.communicators {
            writeln!(
                out,
                "communicator {:?}: size {}, local_rank {}, unique_id {:#x}",
                comm.name, comm.size, comm.local_rank, comm.unique_id
            )?;
            if let Some(group) = &comm.group {
                writeln!(out, "  group (world ranks): {group:?}")?;
            }
            for kind in QueueKind::ALL {
                let label = kind.label();
                match comm.queue(kind) {
                    Queue::NoInformation => writeln!(out, "  {label}: no information")?,
                    Queue::Read {
                        operations,
                        truncated,
                    } => {
                        let more = if *truncated {
                            " (truncated at the limit)"
                        } else {
                            ""
                        };
                        writeln!(out, "  {label}: {}{more}", operations.len())?;
                        write_operations(out, operations)?;
                    }
                    Queue::Failed { operations, error } => {
                        writeln!(
                            out,
                            "  {label}: {} read, then failed: {error}",
                            operations.len()
                        )?;
                        write_operations(out, operations)?;
                    }
                }
            }
        }
        if self.truncated {
            writeln!(out, "(communicators truncated at the limit)")?;
        }
        Ok(())
    }
}

fn write_operations(out: &mut fmt::Formatter<'_>, operations: &[PendingOperation]) -> fmt::Result {
    for op in operations {
        writeln!(out, "    {op}")?;
    }
    Ok(())
}

/// One line, without a newline: the interface's fields as `name=value`
/// (the buffer in hex), then `extra_text="..."` per line of extra text.
impl fmt::Display for PendingOperation {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            out,
            "status={:?} desired_local_rank={} desired_global_rank={} tag_wild={} desired_tag={} \
             desired_length={} system_buffer={} buffer={:#x} actual_local_rank={} \
             actual_global_rank={} actual_tag={} actual_length={}",
            self.status,
            self.desired_local_rank,
            self.desired_global_rank,
            self.tag_wild,
            self.desired_tag,
            self.desired_length,
            self.system_buffer,
            self.buffer,
            self.actual_local_rank,
            self.actual_global_rank,
            self.actual_tag,
            self.actual_length
        )?;
        for line in &self.extra_text {
            write!(out, " extra_text={line:?}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{Communicator, OperationStatus, PendingOperation, ProcessQueues, Queue};

    fn receive() -> PendingOperation {
        PendingOperation {
            status: OperationStatus::Pending,
            desired_local_rank: -1,
            desired_global_rank: -1,
            tag_wild: false,
            desired_tag: 22,
            desired_length: 80,
            system_buffer: false,
            buffer: 0x7ffc_0010,
            actual_local_rank: -1,
            actual_global_rank: -1,
            actual_tag: -1,
            actual_length: -1,
            extra_text: vec!["posted \"first\"".into(), "second".into()],
            desired_count: Some(20),
            protocol: None,
            synchronous: None,
        }
    }

    fn message() -> PendingOperation {
        PendingOperation {
            status: OperationStatus::Unknown(7),
            desired_local_rank: 1,
            desired_global_rank: 2,
            tag_wild: true,
            desired_tag: 99,
            desired_length: 20,
            system_buffer: true,
            buffer: 0,
            actual_local_rank: 1,
            actual_global_rank: 2,
            actual_tag: 99,
            actual_length: 20,
            extra_text: vec![],
            desired_count: None,
            protocol: Some(crate::model::Protocol::Rendezvous),
            synchronous: Some(true),
        }
    }

    #[test]
    fn an_operation_is_one_line_of_its_interface_fields() {
        assert_eq!(
            receive().to_string(),
            "status=Pending desired_local_rank=-1 desired_global_rank=-1 tag_wild=false \
             desired_tag=22 desired_length=80 system_buffer=false buffer=0x7ffc0010 \
             actual_local_rank=-1 actual_global_rank=-1 actual_tag=-1 actual_length=-1 \
             extra_text=\"posted \\\"first\\\"\" extra_text=\"second\""
        );
        assert_eq!(
            message().to_string(),
            "status=Unknown(7) desired_local_rank=1 desired_global_rank=2 tag_wild=true \
             desired_tag=99 desired_length=20 system_buffer=true buffer=0x0 \
             actual_local_rank=1 actual_global_rank=2 actual_tag=99 actual_length=20"
        );
    }

    #[test]
    fn every_queue_state_notes_and_truncation_are_shown() {
        let queues = ProcessQueues {
            source: "MPICH 4.0.2 (native)".into(),
            global_rank: 0,
            communicators: vec![
                Communicator {
                    name: "mpidd_dup".into(),
                    size: 4,
                    local_rank: 0,
                    unique_id: 255,
                    context_id: Some(3),
                    recv_context_id: Some(3),
                    group: Some(vec![0, 2, -1].into()),
                    pending_sends: Queue::NoInformation,
                    pending_receives: Queue::Read {
                        operations: vec![receive()],
                        truncated: true,
                    },
                    unexpected_messages: Queue::Failed {
                        operations: vec![message()],
                        error: "cannot read 8 bytes at 0x10".into(),
                    },
                },
                Communicator {
                    name: String::new(),
                    size: 1,
                    local_rank: -1,
                    unique_id: 0,
                    context_id: None,
                    recv_context_id: None,
                    group: None,
                    pending_sends: Queue::Failed {
                        operations: vec![],
                        error: "gone".into(),
                    },
                    pending_receives: Queue::NoInformation,
                    unexpected_messages: Queue::NoInformation,
                },
            ],
            truncated: true,
            diagnostics: vec!["no send queue".into(), "rank from the environment".into()],
        };
        let expected = [
            "source: MPICH 4.0.2 (native)".to_string(),
            "global rank: 0".into(),
            "note: no send queue".into(),
            "note: rank from the environment".into(),
            "communicator \"mpidd_dup\": size 4, local_rank 0, unique_id 0xff".into(),
            "  group (world ranks): [0, 2, -1]".into(),
            "  pending sends: no information".into(),
            "  pending receives: 1 (truncated at the limit)".into(),
            format!("    {}", receive()),
            "  unexpected messages: 1 read, then failed: cannot read 8 bytes at 0x10".into(),
            format!("    {}", message()),
            "communicator \"\": size 1, local_rank -1, unique_id 0x0".into(),
            "  pending sends: 0 read, then failed: gone".into(),
            "  pending receives: no information".into(),
            "  unexpected messages: no information".into(),
            "(communicators truncated at the limit)".into(),
        ];
        assert_eq!(queues.to_string(), expected.join("\n") + "\n");
    }
}
