//! The text form of what was read, as `mpidd queues` prints it: one
//! reading as [`ProcessQueues`] displays, or two readings of the same
//! process (the native decoder's and a vendor library's) as their sources
//! and the [`Difference`]s between them, one line each.

use std::fmt;

use crate::compare::{compare, Difference};
use crate::queue_reading::QueueReadings;

/// One line, without a newline: the communicator, the queue and the
/// operation's position when the difference is inside them, the field,
/// and its two values (`left vs right`).
impl fmt::Display for Difference {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(out, "{}", self.communicator)?;
        match (self.queue, self.operation) {
            (Some(q), Some(i)) => write!(out, " {q:?} #{i}")?,
            (Some(q), None) => write!(out, " {q:?}")?,
            _ => {}
        }
        write!(out, ": {}: {} vs {}", self.field, self.left, self.right)
    }
}

/// One reading as its [`ProcessQueues`](crate::model::ProcessQueues)
/// displays; two as `left:` (the native decoder's source), `right:` (the
/// library's), the number of differences, and each
/// [`compare`] finds, one per line.
///
/// ```
/// use mpiq_core::model::ProcessQueues;
/// use mpiq_core::QueueReadings;
///
/// let reading = |source: &str| ProcessQueues {
///     source: source.into(),
///     global_rank: 0,
///     communicators: vec![],
///     truncated: false,
///     diagnostics: vec![],
/// };
/// let two = QueueReadings::Two {
///     native: reading("native"),
///     library: reading("libtvmpich.so"),
/// };
/// assert_eq!(
///     two.to_string(),
///     "left:  native\nright: libtvmpich.so\n0 differences\n"
/// );
/// ```
impl fmt::Display for QueueReadings {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (native, library) = match self {
            QueueReadings::One(queues) => return write!(out, "{queues}"),
            QueueReadings::Two { native, library } => (native, library),
        };
        let differences = compare(native, library);
        writeln!(out, "left:  {}", native.source)?;
        writeln!(out, "right: {}", library.source)?;
        writeln!(out, "{} differences", differences.len())?;
        for d in &differences {
            writeln!(out, "{d}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::compare::Difference;
    use crate::model::{Communicator, ProcessQueues, Queue, QueueKind};
    use crate::queue_reading::QueueReadings;

    fn difference(queue: Option<QueueKind>, operation: Option<usize>) -> Difference {
        Difference {
            communicator: "WORLD (0x44000000)".into(),
            queue,
            operation,
            field: "desired_tag".into(),
            left: "11".into(),
            right: "-1".into(),
        }
    }

    #[test]
    fn a_difference_names_its_place_when_it_has_one() {
        assert_eq!(
            difference(Some(QueueKind::PendingReceives), Some(2)).to_string(),
            "WORLD (0x44000000) PendingReceives #2: desired_tag: 11 vs -1"
        );
        assert_eq!(
            difference(Some(QueueKind::UnexpectedMessages), None).to_string(),
            "WORLD (0x44000000) UnexpectedMessages: desired_tag: 11 vs -1"
        );
        assert_eq!(
            difference(None, None).to_string(),
            "WORLD (0x44000000): desired_tag: 11 vs -1"
        );
    }

    fn reading(source: &str, size: i64, sends: Queue) -> ProcessQueues {
        let empty = Queue::Read {
            operations: vec![],
            truncated: false,
        };
        ProcessQueues {
            source: source.into(),
            global_rank: 1,
            communicators: vec![Communicator {
                name: "w".into(),
                size,
                local_rank: 1,
                unique_id: 0x10,
                context_id: None,
                recv_context_id: None,
                group: None,
                pending_sends: sends,
                pending_receives: empty.clone(),
                unexpected_messages: empty,
            }],
            truncated: false,
            diagnostics: vec![],
        }
    }

    #[test]
    fn two_readings_show_their_sources_and_each_difference() {
        let read = Queue::Read {
            operations: vec![],
            truncated: false,
        };
        let two = QueueReadings::Two {
            native: reading("native", 4, read),
            library: reading("vendor", 2, Queue::NoInformation),
        };
        assert_eq!(
            two.to_string(),
            "left:  native\n\
             right: vendor\n\
             2 differences\n\
             w (0x10): size: 4 vs 2\n\
             w (0x10) PendingSends: state: read vs no_information\n"
        );
    }

    #[test]
    fn one_reading_is_shown_as_its_queues() {
        let one = reading("native", 4, Queue::NoInformation);
        let shown = one.to_string();
        assert_eq!(QueueReadings::One(one).to_string(), shown);
    }
}
