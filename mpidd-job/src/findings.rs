//! The findings of a job: deadlock cycles, chains that end at a rank,
//! unmatchable receives, ranks in different calls, unreceived messages.

use std::collections::{BTreeMap, BTreeSet};

use crate::collective_mismatch::collective_mismatch;
use crate::job::Job;
use crate::model::{
    Finding, FindingKind, Operation, OperationKind, RankOperation, RankReport, RankState,
};
use crate::mpi_call::CallClass;
use crate::operations::matches;
use crate::stack_tree::rank_set;

/// The cycles and findings of a job, most severe first.
pub(crate) fn find(job: &Job) -> (Vec<Vec<i64>>, Vec<Finding>) {
    let dead = job.graph.deadlocked(&job.states);
    let cycles = job.graph.cycles(&dead);
    let mut findings = Vec::new();
    for cycle in &cycles {
        findings.push(deadlock(job, cycle));
    }
    let on_cycle: BTreeSet<i64> = cycles.iter().flatten().copied().collect();
    let global = global_deadlock(job, &dead);
    // The global deadlock already names every blocked rank's call.
    let all_blocked = global.is_some();
    findings.extend(global);
    findings.extend(chains(job, &dead, &on_cycle));
    let unmatchable = unmatchable_receives(job);
    let explained: Vec<(i64, Operation)> = unmatchable
        .iter()
        .flat_map(|f| f.operations.iter())
        .filter(|o| o.operation.kind == OperationKind::Unexpected)
        .map(|o| (o.rank, o.operation.clone()))
        .collect();
    findings.extend(unmatchable);
    findings.extend(collective_mismatch(job));
    findings.extend(unreceived(job, &dead, &explained));
    if !all_blocked {
        findings.extend(blocked_without_peer(job, &dead));
    }
    let unreadable: Vec<i64> = job
        .ranks
        .iter()
        .filter(|r| r.state == RankState::Unreadable)
        .map(|r| r.world_rank)
        .collect();
    let incomplete = job.completeness.findings(&job.ranks);
    if !unreadable.is_empty() {
        let targets: Vec<String> = job
            .ranks
            .iter()
            .filter(|r| r.state == RankState::Unreadable)
            .map(|r| format!("{} ({})", r.target, r.errors.join("; ")))
            .collect();
        findings.push(Finding {
            kind: FindingKind::UnreadableRanks,
            summary: format!(
                "{} rank(s) could not be read, so what they wait for is unknown: {}",
                unreadable.len(),
                targets.join(", ")
            ),
            ranks: unreadable,
            operations: Vec::new(),
        });
    }
    findings.extend(incomplete);
    (cycles, findings)
}

/// How `from` waits on `to`, for a sentence: `rank 0 waits in MPI_Recv
/// from rank 3 (tag 7 on MPI_COMM_WORLD)`.
pub(crate) fn describe_wait(job: &Job, from: i64, to: i64) -> String {
    let call = job
        .by_world
        .get(&from)
        .and_then(|&i| job.ranks[i].mpi_call.clone());
    let Some(e) = job.graph.edge(from, to) else {
        return format!("rank {from} waits on rank {to}");
    };
    if e.kind == OperationKind::Collective {
        let call = call.unwrap_or_else(|| "a collective".to_string());
        let others: Vec<i64> = job
            .graph
            .targets(from)
            .filter(|o| o.kind == OperationKind::Collective)
            .map(|o| o.to)
            .collect();
        return if others.len() > 1 {
            format!(
                "rank {from} in {call} waits for ranks {} of its communicator to enter it",
                rank_set(&others)
            )
        } else {
            format!("rank {from} in {call} waits for rank {to} to enter it")
        };
    }
    let what = match e.kind {
        OperationKind::Receive if e.any_source => "a receive from any source".to_string(),
        OperationKind::Receive => format!("a receive from rank {to}"),
        OperationKind::Send => format!("a send to rank {to}"),
        OperationKind::InferredSend => {
            format!("a send to rank {to} (its message waits there unexpected)")
        }
        OperationKind::Unexpected => format!("a message from rank {to}"),
        // Told above; kept total rather than assumed away.
        OperationKind::Collective => format!("rank {to} to enter its collective"),
    };
    let tag = match e.tag {
        Some(t) => format!("tag {t}"),
        None => "any tag".to_string(),
    };
    let call = call.map(|c| format!(" in {c}")).unwrap_or_default();
    format!(
        "rank {from}{call} waits on {what}, {tag} on {}",
        e.communicator
    )
}

fn edge_operations(job: &Job, pairs: &[(i64, i64)]) -> Vec<RankOperation> {
    let mut out = Vec::new();
    for &(from, to) in pairs {
        let Some(&i) = job.by_world.get(&from) else {
            continue;
        };
        let Some(e) = job.graph.edge(from, to) else {
            continue;
        };
        let op = job.ranks[i].pending.iter().find(|o| {
            o.kind == e.kind
                && o.communicator == e.communicator
                && o.tag == e.tag
                && (o.peer == to || (e.any_source && o.peer < 0))
        });
        if let Some(op) = op {
            out.push(RankOperation {
                rank: from,
                operation: op.clone(),
            });
        }
    }
    out
}

/// Cycles longer than this are summarized in a finding's one line (its
/// first and last ranks and waits); every rank and wait stays in the
/// finding's `ranks` and `operations`. A 64-rank ring spelled out is a
/// line of 6 KB that no one reads.
const SPELLED_OUT: usize = 8;

fn deadlock(job: &Job, cycle: &[i64]) -> Finding {
    let pairs: Vec<(i64, i64)> = cycle
        .iter()
        .zip(cycle.iter().cycle().skip(1))
        .map(|(&a, &b)| (a, b))
        .collect();
    let mut path: Vec<String> = cycle
        .iter()
        .chain(cycle.first())
        .map(i64::to_string)
        .collect();
    let mut waits: Vec<String> = pairs
        .iter()
        .take(SPELLED_OUT.min(pairs.len()))
        .map(|&(a, b)| describe_wait(job, a, b))
        .collect();
    if cycle.len() > SPELLED_OUT {
        // The first four ranks, the last two and the way back.
        let n = path.len();
        path.splice(4..n - 3, ["…".to_string()]);
        let last = path.len() - 1;
        path[last] = format!("{} ({} ranks)", path[last], cycle.len());
        waits.truncate(3);
        waits.push(format!(
            "and the waits of the other {} ranks",
            pairs.len() - waits.len()
        ));
    }
    // A collective's wait from a stack names no communicator of its own.
    let comms: BTreeSet<&str> = pairs
        .iter()
        .filter_map(|&(a, b)| job.graph.edge(a, b))
        .filter(|e| e.kind != OperationKind::Collective)
        .map(|e| e.communicator.as_str())
        .collect();
    let across = if comms.len() > 1 {
        format!(
            " across {} communicators ({})",
            comms.len(),
            comms.into_iter().collect::<Vec<_>>().join(", ")
        )
    } else {
        String::new()
    };
    Finding {
        kind: FindingKind::DeadlockCycle,
        ranks: cycle.to_vec(),
        summary: format!(
            "deadlock: ranks {} wait on each other in a cycle{across}: {}",
            path.join(" → "),
            waits.join("; ")
        ),
        operations: edge_operations(job, &pairs),
    }
}

/// For each rank everyone ends up waiting on, the ranks that wait on it.
///
/// Ranks that can never go on but are on no listed cycle wait on a
/// deadlock: they are reported apart from the cycles.
fn chains(job: &Job, dead: &BTreeSet<i64>, on_cycle: &BTreeSet<i64>) -> Vec<Finding> {
    // The ranks whose chains are reported: waiting, not deadlocked, not
    // running their own code.
    let chained = |r: &i64| {
        !dead.contains(r)
            && job.graph.waits(*r)
            && job.states.get(r) != Some(&RankState::OutsideMpi)
            && job.states.contains_key(r)
    };
    let mut by_root: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
    for root in job.graph.roots(dead) {
        let waiters: BTreeSet<i64> = job
            .graph
            .waiting_on([root], dead)
            .into_iter()
            .filter(chained)
            .collect();
        if !waiters.is_empty() {
            by_root.insert(root, waiters);
        }
    }
    let mut on_deadlock: BTreeSet<i64> = dead.difference(on_cycle).copied().collect();
    on_deadlock.extend(
        job.graph
            .waiting_on(dead.iter().copied(), dead)
            .into_iter()
            .filter(chained),
    );
    let mut out = Vec::new();
    for (root, waiters) in by_root {
        let report = job.by_world.get(&root).map(|&i| &job.ranks[i]);
        if let Some(r) = report.filter(|r| r.way_out.is_some() && r.state != RankState::Exited) {
            out.push(waits_on_leaving(job, r, &waiters));
            continue;
        }
        let state = report.map(|r| r.state.clone());
        let (kind, where_) = match state {
            Some(RankState::OutsideMpi) => (
                FindingKind::WaitsOnRankOutsideMpi,
                format!(
                    "is outside MPI, in {}",
                    report
                        .and_then(|r| r.location.clone())
                        .unwrap_or_else(|| "its own code".to_string())
                ),
            ),
            Some(RankState::Exited) => (
                FindingKind::WaitsOnExitedRank,
                "has exited (returned from main, or was killed)".to_string(),
            ),
            Some(RankState::InMpi) => (
                FindingKind::WaitsOnRankInMpi,
                format!(
                    "is in {} with no pending operation that would release them",
                    report
                        .and_then(|r| r.mpi_call.clone())
                        .unwrap_or_else(|| "MPI".to_string())
                ),
            ),
            None if job.completeness.is_missing(root) => (
                FindingKind::WaitsOnRankInMpi,
                "was not read: no core or process of it was given".to_string(),
            ),
            _ => (
                FindingKind::WaitsOnRankInMpi,
                "could not be read, or its stacks are unknown".to_string(),
            ),
        };
        let ranks: Vec<i64> = waiters.iter().copied().chain([root]).collect();
        let pairs: Vec<(i64, i64)> = job
            .graph
            .edges()
            .iter()
            .filter(|e| waiters.contains(&e.from) && (waiters.contains(&e.to) || e.to == root))
            .map(|e| (e.from, e.to))
            .collect();
        let waits = wait_sentences(job, &pairs);
        let list: Vec<i64> = waiters.iter().copied().collect();
        out.push(Finding {
            kind,
            summary: format!(
                "rank(s) {} wait on rank {root}, which {where_}: {}",
                rank_set(&list),
                waits.join("; ")
            ),
            ranks,
            operations: edge_operations(job, &pairs),
        });
    }
    if !on_deadlock.is_empty() {
        let list: Vec<i64> = on_deadlock.iter().copied().collect();
        let pairs: Vec<(i64, i64)> = job
            .graph
            .edges()
            .iter()
            .filter(|e| on_deadlock.contains(&e.from))
            .map(|e| (e.from, e.to))
            .collect();
        let waits = wait_sentences(job, &pairs);
        out.push(Finding {
            kind: FindingKind::WaitsOnDeadlock,
            summary: format!(
                "rank(s) {} wait on deadlocked ranks: {}",
                rank_set(&list),
                waits.join("; ")
            ),
            ranks: list,
            operations: edge_operations(job, &pairs),
        });
    }
    out
}

/// Ranks that wait, directly or through others, on a rank on its way out:
/// `rank 0 is in MPI_Finalize at fin.c:15 in main(), and will send nothing
/// more; rank 1 waits for it in MPI_Recv (a receive from it, tag 51 on
/// MPI_COMM_WORLD); ranks 2-3 wait on those in turn`. The direct waiters
/// are grouped by their call and how they wait, at most [`SPELLED_OUT`]
/// groups told.
fn waits_on_leaving(job: &Job, leaving: &RankReport, waiters: &BTreeSet<i64>) -> Finding {
    let root = leaving.world_rank;
    let mut groups: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut direct: BTreeSet<i64> = BTreeSet::new();
    let mut pairs: Vec<(i64, i64)> = Vec::new();
    for e in job.graph.edges() {
        if !waiters.contains(&e.from) || !(waiters.contains(&e.to) || e.to == root) {
            continue;
        }
        pairs.push((e.from, e.to));
        if e.to != root || !direct.insert(e.from) {
            continue;
        }
        let waiter = job.by_world.get(&e.from).map(|&i| &job.ranks[i]);
        let call = waiter
            .and_then(|r| r.mpi_call.clone())
            .map(|c| format!(" in {c}"))
            .unwrap_or_default();
        // What a collective posts (Open MPI's barrier receives from any
        // source) is its implementation's business: its call says it.
        let in_collective = waiter
            .and_then(|r| r.call_class)
            .is_some_and(|c| matches!(c, CallClass::Collective | CallClass::Finalize));
        let tag = e.tag.map_or("any tag".to_string(), |t| format!("tag {t}"));
        let how = match e.kind {
            _ if in_collective => String::new(),
            OperationKind::Collective => String::new(),
            OperationKind::Receive if e.any_source => {
                format!(" (a receive from any source, {tag} on {})", e.communicator)
            }
            OperationKind::Receive => {
                format!(" (a receive from it, {tag} on {})", e.communicator)
            }
            OperationKind::Send | OperationKind::InferredSend => {
                format!(" (a send to it, {tag} on {})", e.communicator)
            }
            OperationKind::Unexpected => format!(" ({tag} on {})", e.communicator),
        };
        groups
            .entry(format!("{call}{how}"))
            .or_default()
            .push(e.from);
    }
    let mut parts: Vec<(Vec<i64>, String)> = groups.into_iter().map(|(h, r)| (r, h)).collect();
    parts.sort();
    let mut said: Vec<String> = parts
        .iter()
        .take(SPELLED_OUT)
        .map(|(ranks, how)| {
            let (who, verb) = if ranks.len() == 1 {
                ("rank", "waits")
            } else {
                ("ranks", "wait")
            };
            format!("{who} {} {verb} for it{how}", rank_set(ranks))
        })
        .collect();
    if parts.len() > SPELLED_OUT {
        let more: usize = parts[SPELLED_OUT..].iter().map(|(r, _)| r.len()).sum();
        said.push(format!("and {more} more rank(s) wait for it"));
    }
    let indirect: Vec<i64> = waiters.difference(&direct).copied().collect();
    if !indirect.is_empty() {
        said.push(format!(
            "rank(s) {} wait on those in turn",
            rank_set(&indirect)
        ));
    }
    Finding {
        kind: FindingKind::WaitsOnLeavingRank,
        ranks: waiters.iter().copied().chain([root]).collect(),
        summary: format!(
            "rank {root} {}; {}",
            crate::way_out::describe_leaving(leaving),
            said.join("; ")
        ),
        operations: edge_operations(job, &pairs),
    }
}

/// Receives from one source with one tag, while a message from that
/// source with another tag waits unexpected and none with theirs.
fn unmatchable_receives(job: &Job) -> Vec<Finding> {
    let mut out = Vec::new();
    for (&rank, list) in &job.comms {
        for c in list {
            for recv in &c.receives {
                if recv.peer_local < 0 || recv.tag.is_none() {
                    continue;
                }
                let from_source: Vec<&Operation> = c
                    .unexpected
                    .iter()
                    .filter(|m| m.peer_local == recv.peer_local)
                    .collect();
                if from_source.is_empty() || from_source.iter().any(|m| matches(recv, m)) {
                    continue;
                }
                let tags: Vec<String> = from_source
                    .iter()
                    .filter_map(|m| m.tag.map(|t| t.to_string()))
                    .collect();
                let mut operations = vec![RankOperation {
                    rank,
                    operation: recv.clone(),
                }];
                operations.extend(from_source.iter().map(|m| RankOperation {
                    rank,
                    operation: (*m).clone(),
                }));
                out.push(Finding {
                    kind: FindingKind::UnmatchableReceive,
                    ranks: vec![rank, recv.peer],
                    summary: format!(
                        "likely a tag mismatch: rank {rank} waits for tag {} from rank {} on {}, \
                         but what rank {} sent waits unexpected with tag {}",
                        recv.tag.unwrap_or(-1),
                        recv.peer,
                        c.name,
                        recv.peer,
                        tags.join(", ")
                    ),
                    operations,
                });
            }
        }
    }
    out
}

/// Unexpected messages at a stuck rank that none of its receives matches,
/// other than those that stand for a blocked send or that an unmatchable
/// receive already names.
fn unreceived(job: &Job, dead: &BTreeSet<i64>, explained: &[(i64, Operation)]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (&rank, list) in &job.comms {
        let stuck = dead.contains(&rank) || job.graph.waits(rank);
        if !stuck {
            continue;
        }
        for (ci, c) in list.iter().enumerate() {
            for (mi, msg) in c.unexpected.iter().enumerate() {
                if job.inferred_from.contains(&(rank, ci, mi))
                    || explained.iter().any(|(r, m)| *r == rank && m == msg)
                    || c.receives.iter().any(|r| matches(r, msg))
                {
                    continue;
                }
                out.push(Finding {
                    kind: FindingKind::UnreceivedMessage,
                    ranks: vec![rank, msg.peer],
                    summary: format!(
                        "a message from rank {} (tag {}, {} bytes, on {}) waits unexpected at rank \
                         {rank}, which is stuck and has posted no receive for it",
                        msg.peer,
                        msg.tag.unwrap_or(-1),
                        msg.length,
                        c.name
                    ),
                    operations: vec![RankOperation {
                        rank,
                        operation: msg.clone(),
                    }],
                });
            }
        }
    }
    out
}

/// Every rank is blocked in MPI, or gone, and nothing in flight can
/// release any of them: a deadlock whether or not the graph has a cycle.
/// Reported only where the graph does not already account for every
/// blocked rank (its cycles and the ranks that wait on them), and never
/// when every rank is in one and the same collective: that call completes
/// once all have entered it, unless their communicators or arguments
/// differ, which the stacks cannot show.
fn global_deadlock(job: &Job, dead: &BTreeSet<i64>) -> Option<Finding> {
    let ranks: Vec<&RankReport> = job.ranks.iter().filter(|r| r.world_rank >= 0).collect();
    let blocked =
        |r: &RankReport| r.state == RankState::InMpi && r.call_class.is_some_and(CallClass::blocks);
    let gone = |r: &RankReport| r.state == RankState::Exited;
    // Ranks that wait on a rank on its way out are told by that finding;
    // with ranks of the job not read, "every rank" is not known.
    if ranks.is_empty()
        || !job.completeness.missing.is_empty()
        || !job.leaving.is_empty()
        || !ranks.iter().all(|r| blocked(r) || gone(r))
    {
        return None;
    }
    let in_mpi: Vec<&&RankReport> = ranks.iter().filter(|r| blocked(r)).collect();
    if in_mpi.is_empty() || in_mpi.iter().all(|r| dead.contains(&r.world_rank)) {
        return None;
    }
    let first_call = in_mpi[0].mpi_call.as_deref();
    let one_collective = in_mpi.len() == ranks.len()
        && in_mpi[0].call_class == Some(CallClass::Collective)
        && in_mpi.iter().all(|r| r.mpi_call.as_deref() == first_call);
    if one_collective || something_in_flight(job) {
        return None;
    }
    let mut places: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for r in &ranks {
        places
            .entry(describe_rank_call(r))
            .or_default()
            .push(r.world_rank);
    }
    let mut parts: Vec<(Vec<i64>, String)> = places.into_iter().map(|(p, r)| (r, p)).collect();
    parts.sort();
    let said: Vec<String> = parts
        .iter()
        .map(|(r, p)| {
            let who = if r.len() == 1 { "rank" } else { "ranks" };
            format!("{who} {} {p}", rank_set(r))
        })
        .collect();
    // "Nothing in flight" is a claim about every blocked rank's queues.
    let queues_read = in_mpi.iter().all(|r| r.basis.queues.is_read());
    let nothing = if queues_read {
        "no message in their queues can complete any of their calls"
    } else {
        "their queues were not read, so what is in flight is not known"
    };
    Some(Finding {
        kind: FindingKind::GlobalDeadlock,
        ranks: ranks.iter().map(|r| r.world_rank).collect(),
        summary: format!(
            "every rank is blocked in MPI or gone, and {nothing}: {}",
            said.join("; ")
        ),
        operations: Vec::new(),
    })
}

/// Whether a pending operation of the job could complete as things stand:
/// a posted receive that a message waiting at the same rank matches, or a
/// send to a rank whose posted receives match it.
fn something_in_flight(job: &Job) -> bool {
    for (&rank, list) in &job.comms {
        for c in list {
            if c.receives
                .iter()
                .any(|r| c.unexpected.iter().any(|m| matches(r, m)))
            {
                return true;
            }
            for send in &c.sends {
                let Some(theirs) = job.comms.get(&send.peer) else {
                    continue;
                };
                let me = c
                    .group
                    .as_ref()
                    .and_then(|g| g.iter().position(|&w| w == rank))
                    .map_or(-1, |p| p as i64);
                let as_message = Operation {
                    kind: OperationKind::Unexpected,
                    peer: rank,
                    peer_local: me,
                    ..send.clone()
                };
                if theirs
                    .iter()
                    .filter(|tc| tc.key == c.key)
                    .any(|tc| tc.receives.iter().any(|r| matches(r, &as_message)))
                {
                    return true;
                }
            }
        }
    }
    false
}

/// Ranks blocked in a point-to-point or completion call that wait on no
/// one in the graph: their queues are unread, or the library keeps the
/// operation where no decoder looks (a transport's own queues).
fn blocked_without_peer(job: &Job, dead: &BTreeSet<i64>) -> Option<Finding> {
    let ranks: Vec<i64> = job
        .ranks
        .iter()
        .filter(|r| r.world_rank >= 0 && r.state == RankState::InMpi)
        .filter(|r| {
            matches!(
                r.call_class,
                Some(CallClass::PointToPoint | CallClass::Completion)
            )
        })
        .filter(|r| !job.graph.waits(r.world_rank) && !dead.contains(&r.world_rank))
        .map(|r| r.world_rank)
        .collect();
    if ranks.is_empty() {
        return None;
    }
    let said: Vec<String> = ranks
        .iter()
        .filter_map(|w| job.by_world.get(w).map(|&i| &job.ranks[i]))
        .map(|r| format!("rank {} {}", r.world_rank, describe_rank_call(r)))
        .collect();
    Some(Finding {
        kind: FindingKind::BlockedWithoutPeer,
        summary: format!(
            "rank(s) {} are blocked in MPI, waiting on a peer that neither their queues nor \
             their stacks name: {}",
            rank_set(&ranks),
            said.join("; ")
        ),
        ranks,
        operations: Vec::new(),
    })
}

/// Where a rank is, for a sentence: `in MPI_Recv at ring.c:12`, `has
/// exited`, `outside MPI, in compute at busy.c:4`.
pub(crate) fn describe_rank_call(r: &RankReport) -> String {
    let at = r
        .location
        .as_ref()
        .map(|l| format!(" at {l}"))
        .unwrap_or_default();
    match (&r.state, &r.mpi_call) {
        (RankState::Exited, _) => "has exited".to_string(),
        (_, Some(call)) => format!(
            "in {call}{}",
            r.location
                .as_ref()
                .map(|l| format!(", called from {l}"))
                .unwrap_or_default()
        ),
        (RankState::OutsideMpi, None) => format!("outside MPI{at}"),
        _ => "where is not known".to_string(),
    }
}

/// The waits of `pairs` told in sentences, each once (a rank in a
/// collective waits on several ranks and is told in one sentence), at most
/// [`SPELLED_OUT`] of them and then how many ranks' waits are left untold:
/// a chain of ten thousand ranks is a line no one reads, and telling every
/// wait would cost more than the rest of the analysis. The finding's
/// `ranks` and `operations` keep them all.
fn wait_sentences(job: &Job, pairs: &[(i64, i64)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut told: BTreeSet<i64> = BTreeSet::new();
    let mut waiting: BTreeSet<i64> = BTreeSet::new();
    for &(from, to) in pairs {
        waiting.insert(from);
        if out.len() < SPELLED_OUT {
            let sentence = describe_wait(job, from, to);
            if !out.contains(&sentence) {
                out.push(sentence);
            }
            told.insert(from);
        }
    }
    let untold = waiting.difference(&told).count();
    if untold > 0 {
        out.push(format!("and the waits of {untold} more rank(s)"));
    }
    out
}
