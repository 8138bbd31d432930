//! Collectives that cannot complete: ranks in different collective calls,
//! or all in one collective on different communicators.

use std::collections::{BTreeMap, BTreeSet};

use crate::job::Job;
use crate::model::{Finding, FindingKind, OperationKind, RankReport, RankState};
use crate::mpi_call::is_collective;
use crate::stack_tree::rank_set;

/// Most groups of ranks (by call and place) a collective mismatch names;
/// the others are counted. A job of ten thousand ranks in three places is
/// three groups, one whose ranks all differ is a line no one reads.
const MISMATCH_GROUPS: usize = 4;

/// The communicator a rank's collective runs on, as its queues show it:
/// the one communicator of its pending sends and receives with a negative
/// tag, which is an MPI library's own collective traffic (Open MPI's
/// barrier is `-16`; a program's tags are never negative). `None` when
/// its queues show none, or several.
fn collective_communicator(r: &RankReport) -> Option<&str> {
    let mut comms = r
        .pending
        .iter()
        .filter(|op| matches!(op.kind, OperationKind::Receive | OperationKind::Send))
        .filter(|op| op.tag.is_some_and(|t| t < 0))
        .map(|op| op.communicator.as_str());
    let first = comms.next()?;
    comms.all(|c| c == first).then_some(first)
}

/// What a group of ranks shares: a key of what they do, and their place
/// in their own code.
type Place<'a> = (Option<&'a str>, Option<&'a str>);

/// Ranks grouped by `what` and their place, in the order the ranks come.
fn group_ranks<'a>(
    read: &[&'a RankReport],
    what: impl Fn(&'a RankReport) -> Option<&'a str>,
) -> Vec<(Place<'a>, Vec<i64>)> {
    let mut groups: Vec<(Place, Vec<i64>)> = Vec::new();
    for r in read {
        let key = (what(r), r.location.as_deref());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, ranks)) => ranks.push(r.world_rank),
            None => groups.push((key, vec![r.world_rank])),
        }
    }
    groups
}

/// One phrase per group, at most [`MISMATCH_GROUPS`], then a count of the
/// rest. `say(who, what, alone)` words a group (`who` is `ranks 0,2`,
/// `what` its key, `alone` whether it is one rank); its line follows.
fn say_groups(
    groups: &[(Place, Vec<i64>)],
    say: impl Fn(&str, Option<&str>, bool) -> String,
) -> Vec<String> {
    let mut said: Vec<String> = groups
        .iter()
        .take(MISMATCH_GROUPS)
        .map(|((what, location), ranks)| {
            let one = ranks.len() == 1;
            let who = format!("{} {}", if one { "rank" } else { "ranks" }, rank_set(ranks));
            let at = location
                .map(|l| format!(" {}", crate::way_out::place(l)))
                .unwrap_or_default();
            format!("{}{at}", say(&who, *what, one))
        })
        .collect();
    if groups.len() > MISMATCH_GROUPS {
        let rest = &groups[MISMATCH_GROUPS..];
        let ranks: usize = rest.iter().map(|(_, r)| r.len()).sum();
        said.push(format!(
            "and {ranks} more rank(s) at {} other place(s)",
            rest.len()
        ));
    }
    said
}

/// Every rank read is in the same collective, but their queues show it
/// running on different communicators: no instance of it can complete.
fn communicator_mismatch(call: &str, read: &[&RankReport]) -> Option<Finding> {
    let mut groups = group_ranks(read, collective_communicator);
    let comms: BTreeSet<&str> = groups.iter().filter_map(|((c, _), _)| *c).collect();
    if comms.len() < 2 {
        return None;
    }
    groups.sort_by_key(|((c, _), ranks)| (c.is_none(), ranks[0]));
    let said = say_groups(&groups, |who, comm, _| match comm {
        Some(c) => format!("{who} on {c}"),
        None => format!("{who} on a communicator its queues do not show"),
    });
    Some(Finding {
        kind: FindingKind::CollectiveMismatch,
        summary: format!(
            "every rank read is in {call}, but on {} different communicators ({}): {}",
            comms.len(),
            comms.iter().copied().collect::<Vec<_>>().join(", "),
            said.join("; ")
        ),
        ranks: read.iter().map(|r| r.world_rank).collect(),
        operations: Vec::new(),
    })
}

/// Ranks in different MPI calls while some are in a collective: `3 of 4
/// ranks of MPI_COMM_WORLD are in MPI_Bcast; rank 1 is in MPI_Reduce at
/// bcast.c:16 in main(); ranks 0,2-3 are in MPI_Bcast at bcast.c:14 in
/// main()`. The ranks are grouped by call and place in their own code, the
/// odd ones out first. When every rank is in the same collective, the
/// communicators their queues show it on are compared instead
/// ([`communicator_mismatch`]).
pub(crate) fn collective_mismatch(job: &Job) -> Option<Finding> {
    let read: Vec<&crate::model::RankReport> = job
        .ranks
        .iter()
        .filter(|r| {
            r.world_rank >= 0 && matches!(r.state, RankState::InMpi | RankState::OutsideMpi)
        })
        .collect();
    let mut by_call: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for r in &read {
        if let Some(call) = r.mpi_call.as_deref().filter(|c| is_collective(c)) {
            by_call.entry(call).or_default().push(r.world_rank);
        }
    }
    let (call, in_it) = by_call
        .iter()
        .max_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| b.0.cmp(a.0)))?;
    if in_it.len() == read.len() {
        return communicator_mismatch(call, &read);
    }
    let mut groups = group_ranks(&read, |r| r.mpi_call.as_deref());
    // The odd ones out first, then the call most ranks are in.
    groups.sort_by_key(|((c, _), ranks)| (*c == Some(*call), ranks[0]));
    let said = say_groups(&groups, |who, c, one| {
        let verb = if one { "is" } else { "are" };
        let what = c.map_or("outside MPI".to_string(), |c| format!("in {c}"));
        format!("{who} {verb} {what}")
    });
    let world = job
        .comms
        .values()
        .flatten()
        .find(|c| c.name == "MPI_COMM_WORLD")
        .and_then(|c| c.group.as_ref().map(|g| g.len()));
    let of = match world {
        Some(n) if n == read.len() => "of MPI_COMM_WORLD".to_string(),
        _ => "read".to_string(),
    };
    let ranks: Vec<i64> = read
        .iter()
        .filter(|r| r.mpi_call.as_deref() != Some(*call))
        .map(|r| r.world_rank)
        .collect();
    Some(Finding {
        kind: FindingKind::CollectiveMismatch,
        summary: format!(
            "{} of {} ranks {of} are in {call}; {}",
            in_it.len(),
            read.len(),
            said.join("; ")
        ),
        ranks,
        operations: Vec::new(),
    })
}
