//! One copy of each communicator group for all the readings of a job.
//!
//! Every member of a job's `MPI_COMM_WORLD` reads the same N world ranks
//! for it: kept per rank, N ranks hold N² of them (800 MB at 10,000
//! ranks). The reader hands each reading's groups to a [`SharedGroups`],
//! which gives back the first equal copy it saw.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use mpiq_core::model::ProcessQueues;

/// World ranks kept at most in all the groups: past that the set starts
/// again (readings keep the copies they were given), so a job with very
/// many distinct groups never grows the set without bound.
const MAX_KEPT_RANKS: usize = 64 << 20;

/// The distinct groups seen so far.
#[derive(Debug, Default)]
pub(crate) struct SharedGroups {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    /// Hashed with foldhash: each rank hashes its whole world once, and
    /// SipHash's cost per rank was most of what sharing cost.
    groups: HashSet<Arc<[i64]>, foldhash::fast::RandomState>,
    ranks: usize,
}

impl SharedGroups {
    /// Replaces each group of `queues` by the equal one kept, keeping it
    /// when it is the first of its kind.
    pub(crate) fn share(&self, queues: &mut ProcessQueues) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        for group in queues
            .communicators
            .iter_mut()
            .filter_map(|c| c.group.as_mut())
        {
            if let Some(found) = kept.groups.get(group) {
                *group = found.clone();
                continue;
            }
            if kept.ranks + group.len() > MAX_KEPT_RANKS {
                *kept = Kept::default();
            }
            kept.ranks += group.len();
            kept.groups.insert(group.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpiq_core::model::{Communicator, Queue};

    fn queues(groups: &[&[i64]]) -> ProcessQueues {
        ProcessQueues {
            source: "test".into(),
            global_rank: 0,
            communicators: groups
                .iter()
                .map(|g| Communicator {
                    name: "c".into(),
                    size: g.len() as i64,
                    local_rank: 0,
                    unique_id: 0,
                    context_id: None,
                    recv_context_id: None,
                    group: Some(Arc::from(*g)),
                    pending_sends: Queue::NoInformation,
                    pending_receives: Queue::NoInformation,
                    unexpected_messages: Queue::NoInformation,
                })
                .collect(),
            truncated: false,
            diagnostics: Vec::new(),
        }
    }

    #[test]
    fn equal_groups_become_one_copy_and_others_stay_apart() {
        let shared = SharedGroups::default();
        let mut a = queues(&[&[0, 1, 2], &[1]]);
        let mut b = queues(&[&[0, 1, 2], &[2]]);
        shared.share(&mut a);
        shared.share(&mut b);
        let group = |q: &ProcessQueues, i: usize| q.communicators[i].group.clone().unwrap();
        assert!(Arc::ptr_eq(&group(&a, 0), &group(&b, 0)));
        assert_eq!(&*group(&b, 0), &[0, 1, 2]);
        assert_eq!(&*group(&a, 1), &[1]);
        assert_eq!(&*group(&b, 1), &[2]);
        assert!(!Arc::ptr_eq(&group(&a, 1), &group(&b, 1)));
    }
}
