//! The verdict: the first lines a person reads.

use crate::analyze::Job;
use crate::model::{Finding, FindingKind, RankState};

/// A few sentences, most important first: the deadlocks, then what the
/// chains of waiting ranks end at, then the rest. When nothing waits, it
/// says so, and where the ranks are.
pub(crate) fn verdict(job: &Job<'_>, cycles: &[Vec<i64>], findings: &[Finding]) -> Vec<String> {
    let mut lines = Vec::new();
    let read = job
        .ranks
        .iter()
        .filter(|r| r.state != RankState::Unreadable)
        .count();
    let headline = if !cycles.is_empty() {
        format!(
            "DEADLOCK: {} cycle(s) of ranks that wait on each other ({} of {} ranks read).",
            cycles.len(),
            read,
            job.ranks.len()
        )
    } else if findings.iter().any(|f| {
        matches!(
            f.kind,
            FindingKind::WaitsOnRankOutsideMpi | FindingKind::WaitsOnRankInMpi
        )
    }) {
        format!(
            "HUNG OR SLOW: ranks wait on a rank that is not waiting itself ({} of {} ranks read).",
            read,
            job.ranks.len()
        )
    } else if findings
        .iter()
        .any(|f| f.kind != FindingKind::UnreadableRanks)
    {
        format!(
            "SUSPECT: no rank waits on another, but something is off ({} of {} ranks read).",
            read,
            job.ranks.len()
        )
    } else {
        format!(
            "No rank waits on another in its message queues ({} of {} ranks read).",
            read,
            job.ranks.len()
        )
    };
    lines.push(headline);
    let _ = &job.readings;
    for f in findings {
        lines.push(f.summary.clone());
    }
    lines
}
