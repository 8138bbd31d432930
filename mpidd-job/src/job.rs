//! The job as the analysis sees it once its ranks are read and their
//! operations matched: what the findings and the verdict are computed
//! from. [`analyze`](crate::analyze) builds it; `findings` and `verdict`
//! read it.

use std::collections::{BTreeMap, BTreeSet};

use crate::completeness::Completeness;
use crate::model::{RankReport, RankState};
use crate::operations::CommOps;
use crate::wait_graph::WaitGraph;

/// What the findings are computed from.
pub(crate) struct Job {
    pub ranks: Vec<RankReport>,
    /// Index into `ranks` by world rank.
    pub by_world: BTreeMap<i64, usize>,
    /// Each rank's communicators and operations, by world rank.
    pub comms: BTreeMap<i64, Vec<CommOps>>,
    pub states: BTreeMap<i64, RankState>,
    pub graph: WaitGraph,
    /// Unexpected messages that stand for a blocked send: (receiver, index
    /// of the communicator, index of the message).
    pub inferred_from: BTreeSet<(i64, usize, usize)>,
    /// Ranks on their way out of the job that a rank not leaving waits on
    /// (their own waits dropped from the graph).
    pub leaving: BTreeSet<i64>,
    /// Whether the ranks are one whole job.
    pub completeness: Completeness,
}
