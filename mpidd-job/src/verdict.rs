//! The verdict: the first lines a person reads. The headline names what
//! was found and, in the same line, what it rests on: how many ranks'
//! queues and stacks were read, and why the other queues were not. It
//! says "no rank waits" only when every rank's queues were read and no
//! rank is blocked in MPI; anything less is said to be less. Ranks of the
//! job that were not read (its ranks say how many it has) are part of
//! what it rests on, and ranks of two jobs are told before anything else.

use crate::job::Job;
use crate::model::{Finding, FindingKind, JobBasis, RankState, StackClass};
use crate::read_ranks::QUEUES_SKIPPED;
use crate::stack_tree::rank_set;
use crate::way_out::short_name;

/// A few sentences, most important first: the headline, the findings,
/// then how the ranks group by where they are (when they differ) and,
/// when some rank is outside MPI and the job may only be slow, the advice
/// to look again.
pub(crate) fn verdict(
    job: &Job,
    cycles: &[Vec<i64>],
    findings: &[Finding],
    basis: &JobBasis,
    classes: &[StackClass],
) -> Vec<String> {
    let has = |k: FindingKind| findings.iter().any(|f| f.kind == k);
    let rests = rests_on(basis);
    let blocked: Vec<i64> = job
        .ranks
        .iter()
        .filter(|r| r.world_rank >= 0 && r.call_class.is_some_and(|c| c.blocks()))
        .map(|r| r.world_rank)
        .collect();
    let missing = &job.completeness;
    // A chain that ends at a rank not read says nothing of that rank.
    let waits_on_read = |k: FindingKind| {
        findings
            .iter()
            .any(|f| f.kind == k && f.ranks.last().is_none_or(|&root| !missing.is_missing(root)))
    };
    let waits_on_missing: Vec<i64> = findings
        .iter()
        .filter(|f| f.kind == FindingKind::WaitsOnRankInMpi)
        .filter_map(|f| f.ranks.last().copied())
        .filter(|&root| missing.is_missing(root))
        .collect();
    let headline = if has(FindingKind::MixedJobs) {
        format!(
            "MIXED JOBS: the ranks read are not of one job, so what they wait on cannot be told \
             ({rests})."
        )
    } else if !cycles.is_empty() {
        format!(
            "DEADLOCK: {} cycle(s) of ranks that wait on each other ({rests}).",
            cycles.len()
        )
    } else if has(FindingKind::WaitsOnLeavingRank) {
        format!("HUNG: {} ({rests}).", leaving_line(job, findings))
    } else if has(FindingKind::GlobalDeadlock) {
        // Without every rank's queues, what is in flight is not known: the
        // claim is only that no rank is left outside MPI to act.
        let why = if basis.queues_read == basis.ranks {
            "nothing in flight can release any of them"
        } else {
            "no rank is left to release the others"
        };
        format!("DEADLOCK: every rank is blocked in MPI, and {why} ({rests}).")
    } else if has(FindingKind::WaitsOnExitedRank) {
        format!("HUNG: ranks wait on a rank that has exited ({rests}).")
    } else if has(FindingKind::WaitsOnRankOutsideMpi)
        || waits_on_read(FindingKind::WaitsOnRankInMpi)
    {
        format!("HUNG OR SLOW: ranks wait on a rank that is not waiting itself ({rests}).")
    } else if !waits_on_missing.is_empty() {
        format!(
            "INCOMPLETE: ranks wait on rank(s) {}, which were not read ({rests}).",
            rank_set(&waits_on_missing)
        )
    } else if has(FindingKind::BlockedWithoutPeer) || !blocked.is_empty() {
        format!(
            "HUNG OR SLOW: rank(s) {} are blocked in MPI, waiting on what could not be read \
             ({rests}).",
            rank_set(&blocked)
        )
    } else if findings.iter().any(|f| !about_the_reading(f.kind)) {
        format!("SUSPECT: no rank waits on another, but something is off ({rests}).")
    } else if !missing.missing.is_empty() {
        format!(
            "INCOMPLETE: no rank read waits on another, but rank(s) {} of the job were not read \
             ({rests}).",
            missing.missing_text()
        )
    } else if basis.queues_read == basis.ranks && basis.ranks > 0 {
        format!("No rank waits on another in its message queues ({rests}).")
    } else {
        format!("NOT KNOWN: no wait could be seen, but not every rank could be read ({rests}).")
    };
    let mut lines = vec![headline];
    for f in findings {
        lines.push(f.summary.clone());
    }
    if classes.len() > 1 {
        lines.push(class_line(classes));
    }
    let outside: Vec<i64> = job
        .ranks
        .iter()
        .filter(|r| r.world_rank >= 0 && r.state == RankState::OutsideMpi)
        // A rank on its way out will not come back to its work.
        .filter(|r| r.way_out.is_none())
        .map(|r| r.world_rank)
        .collect();
    if cycles.is_empty() && !has(FindingKind::GlobalDeadlock) && !outside.is_empty() {
        lines.push(format!(
            "Rank(s) {} run their own code: run mpidd job again in a while. If they are still \
             at the same place, they compute or sleep there and the others wait for them; if \
             they moved, the job is slow, not hung.",
            rank_set(&outside)
        ));
    }
    lines
}

/// Whether a finding is about what was read rather than about the job:
/// ranks unreadable, ranks not given, ranks of two jobs.
fn about_the_reading(kind: FindingKind) -> bool {
    matches!(
        kind,
        FindingKind::UnreadableRanks | FindingKind::MissingRanks | FindingKind::MixedJobs
    )
}

/// Most leaving ranks a headline names; the findings name every one.
const HEADLINE_LEAVING: usize = 4;

/// `rank 0 is in MPI_Finalize while rank(s) 1-3 wait for it`, for each
/// leaving rank that others wait on (at most [`HEADLINE_LEAVING`]), with
/// the exception it raised when one was read.
fn leaving_line(job: &Job, findings: &[Finding]) -> String {
    let leaving: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.kind == FindingKind::WaitsOnLeavingRank)
        .collect();
    let mut parts: Vec<String> = leaving
        .iter()
        .take(HEADLINE_LEAVING)
        .filter_map(|f| {
            let (&root, waiters) = f.ranks.split_last()?;
            let r = job.by_world.get(&root).map(|&i| &job.ranks[i])?;
            let what = r.way_out.map_or("is leaving the job", short_name);
            let raised = r
                .python_exception
                .as_ref()
                .map(|e| format!(" after it raised {}", e.type_name))
                .unwrap_or_default();
            Some(format!(
                "rank {root} {what}{raised} while rank(s) {} wait for it",
                rank_set(waiters)
            ))
        })
        .collect();
    if leaving.len() > HEADLINE_LEAVING {
        parts.push(format!(
            "and {} more leaving rank(s)",
            leaving.len() - HEADLINE_LEAVING
        ));
    }
    parts.join("; ")
}

/// `queues read on 4 of 4 ranks, stacks on 4`, or `from stacks alone:
/// queues unreadable on 4 of 4 ranks (REASON)`, then, when ranks of the
/// job were not read, `; 1 of the job's 4 ranks not read`.
fn rests_on(basis: &JobBasis) -> String {
    let read = read_on(basis);
    match basis.job_size {
        Some(size) if basis.missing_ranks > 0 => format!(
            "{read}; {} of the job's {size} ranks not read",
            basis.missing_ranks
        ),
        _ => read,
    }
}

/// What [`rests_on`] says of the ranks read.
fn read_on(basis: &JobBasis) -> String {
    let n = basis.ranks;
    let unread = n - basis.queues_read;
    let why = match basis.queues_unread.as_slice() {
        [] => String::new(),
        [one] => format!(" ({})", short(one)),
        many => format!(
            " ({}; and {} other reason(s))",
            short(&many[0]),
            many.len() - 1
        ),
    };
    // Queues left unread on purpose are not "unreadable".
    let skipped =
        !basis.queues_unread.is_empty() && basis.queues_unread.iter().all(|w| w == QUEUES_SKIPPED);
    let unreadable = if skipped { "not read" } else { "unreadable" };
    if basis.stacks_alone {
        format!(
            "from stacks alone: queues {unreadable} on {unread} of {n} ranks{why}, stacks read on {}",
            basis.stacks_read
        )
    } else if unread > 0 {
        format!(
            "queues read on {} of {n} ranks, {unreadable} on {unread}{why}; stacks read on {}",
            basis.queues_read, basis.stacks_read
        )
    } else {
        format!(
            "queues read on {} of {n} ranks, stacks on {}",
            basis.queues_read, basis.stacks_read
        )
    }
}

/// A refusal's first clause: the headline names the reason, the rank's
/// entry carries all of it.
fn short(reason: &str) -> String {
    const MAX: usize = 160;
    let reason = reason.strip_prefix("queues: ").unwrap_or(reason);
    let reason = reason
        .strip_prefix("no native message-queue decoder for this target: ")
        .unwrap_or(reason);
    // What was found, without the library's identity and the way out.
    let reason = [" (the library", ". "]
        .iter()
        .filter_map(|cut| reason.find(cut))
        .min()
        .map_or(reason, |at| &reason[..at]);
    if reason.chars().count() <= MAX {
        return reason.to_string();
    }
    let cut: String = reason.chars().take(MAX).collect();
    format!("{cut}…")
}

/// `ranks 0,2-3: in MPI_Barrier, called from main at tag.c:20; odd one
/// out: rank 1: in MPI_Recv, called from main at tag.c:17`.
fn class_line(classes: &[StackClass]) -> String {
    let say = |c: &StackClass| {
        let who = if c.ranks.len() == 1 { "rank" } else { "ranks" };
        let what = match (&c.state, &c.mpi_call, &c.location) {
            (RankState::Exited, _, _) => "exited".to_string(),
            (_, Some(call), Some(l)) => format!("in {call}, called from {l}"),
            (_, Some(call), None) => format!("in {call}"),
            (RankState::OutsideMpi, None, Some(l)) => format!("outside MPI, in {l}"),
            (RankState::OutsideMpi, None, None) => "outside MPI".to_string(),
            (RankState::Unreadable, _, _) => "unreadable".to_string(),
            _ => "where is not known".to_string(),
        };
        format!("{who} {}: {what}", rank_set(&c.ranks))
    };
    let Some((first, rest)) = classes.split_first() else {
        return "Where the ranks are: no rank has a known world rank.".to_string();
    };
    let odd: Vec<String> = rest.iter().map(say).collect();
    let label = if rest.iter().all(|c| c.ranks.len() == 1) && first.ranks.len() > 1 {
        "odd one(s) out"
    } else {
        "then"
    };
    format!(
        "Where the ranks are: {}; {label}: {}.",
        say(first),
        odd.join("; ")
    )
}
