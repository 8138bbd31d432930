//! From the readings of a job's ranks to its report: states, operations
//! matched across ranks, the wait-for graph and the findings.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::findings::find;
use crate::model::{Edge, JobReport, Operation, OperationKind, RankReport, RankState, SCHEMA};
use crate::mpi_call::{mpi_call, own_code_location};
use crate::operations::{rank_operations, sender_blocked, CommOps};
use crate::reading::RankReading;
use crate::stack_tree::StackTree;
use crate::wait_graph::WaitGraph;

/// What the findings are computed from.
pub(crate) struct Job<'a> {
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
    pub readings: &'a [RankReading],
}

/// Analyses a job from the readings of its ranks.
pub fn analyze(readings: &[RankReading]) -> JobReport {
    let mut ranks: Vec<RankReport> = readings.iter().map(rank_report).collect();
    ranks.sort_by_key(|r| (r.world_rank < 0, r.world_rank, r.target.clone()));
    let mut by_world = BTreeMap::new();
    let mut comms = BTreeMap::new();
    let mut states = BTreeMap::new();
    for (i, r) in ranks.iter().enumerate() {
        if r.world_rank >= 0 && by_world.insert(r.world_rank, i).is_some() {
            continue;
        }
        states.insert(r.world_rank, r.state.clone());
    }
    for reading in readings {
        if let (Some(world @ 0..), Some(queues)) = (reading.world_rank, &reading.queues) {
            comms
                .entry(world)
                .or_insert_with(|| rank_operations(queues));
        }
    }
    // Pending operations as the report lists them.
    for (world, list) in &comms {
        // Only ranks with a known, non-negative world rank are indexed; a
        // reading that came from elsewhere may carry anything.
        let Some(&i) = by_world.get(world) else {
            continue;
        };
        let r = &mut ranks[i];
        for c in list {
            r.pending.extend(c.receives.iter().cloned());
            r.pending.extend(c.sends.iter().cloned());
            r.pending.extend(c.unexpected.iter().cloned());
        }
    }
    let (edges, inferred_from, inferred) = edges(&comms, &states);
    for (sender, op) in inferred {
        if let Some(&i) = by_world.get(&sender) {
            ranks[i].pending.push(op);
        }
    }
    let graph = WaitGraph::new(edges);
    let job = Job {
        ranks,
        by_world,
        comms,
        states,
        graph,
        inferred_from,
        readings,
    };
    let (cycles, findings) = find(&job);
    let verdict = crate::verdict::verdict(&job, &cycles, &findings);
    let stack_tree = StackTree::build(
        readings
            .iter()
            .filter_map(|r| Some((r.world_rank?, &r.threads)))
            .flat_map(|(w, threads)| threads.iter().map(move |t| (w, t))),
    );
    JobReport {
        schema: SCHEMA.to_string(),
        verdict,
        ranks: job.ranks,
        edges: job.graph.into_edges(),
        cycles,
        findings,
        stack_tree,
    }
}

fn rank_report(reading: &RankReading) -> RankReport {
    let main = reading
        .threads
        .iter()
        .find(|t| Some(t.tid) == reading.pid)
        .or(reading.threads.first());
    // The main thread's call first: helper threads of the MPI library
    // (progress, async) are not what the program waits in.
    let call = main
        .and_then(mpi_call)
        .or_else(|| reading.threads.iter().find_map(mpi_call));
    let unreadable = reading.queues.is_none() && reading.threads.is_empty();
    let state = if unreadable {
        RankState::Unreadable
    } else if call.is_some() {
        RankState::InMpi
    } else if reading.threads.iter().any(|t| !t.frames.is_empty()) {
        RankState::OutsideMpi
    } else {
        RankState::Unknown
    };
    RankReport {
        world_rank: reading.world_rank.unwrap_or(-1),
        pid: reading.pid,
        host: reading.host.clone(),
        target: reading.target.clone(),
        location: main.and_then(|t| own_code_location(t, reading.executable.as_deref())),
        state,
        mpi_call: call,
        pending: Vec::new(),
        queue_source: reading.queues.as_ref().map(|q| q.source.clone()),
        threads: reading.threads.clone(),
        errors: reading.errors.clone(),
    }
}

type Inferred = (
    Vec<Edge>,
    BTreeSet<(i64, usize, usize)>,
    Vec<(i64, Operation)>,
);

/// The edges of the wait-for graph. A rank that runs its own code waits on
/// nobody, whatever its queues hold: its nonblocking operations are not
/// what stops it.
fn edges(comms: &BTreeMap<i64, Vec<CommOps>>, states: &BTreeMap<i64, RankState>) -> Inferred {
    let may_wait = |r: i64| {
        !matches!(
            states.get(&r),
            Some(RankState::OutsideMpi) | Some(RankState::Unreadable)
        )
    };
    let mut edges: Vec<Edge> = Vec::new();
    let mut seen: HashSet<Edge> = HashSet::new();
    let mut inferred_from = BTreeSet::new();
    let mut inferred = Vec::new();
    let mut push = |e: Edge| {
        if e.from != e.to && seen.insert(e.clone()) {
            edges.push(e);
        }
    };
    for (&rank, list) in comms {
        for (ci, c) in list.iter().enumerate() {
            if may_wait(rank) {
                for op in &c.receives {
                    if op.peer >= 0 {
                        push(edge(rank, op.peer, op, false));
                    } else if op.peer_local < 0 {
                        for &m in c.group.iter().flatten() {
                            push(edge(rank, m, op, true));
                        }
                    }
                }
                for op in &c.sends {
                    if op.peer >= 0 {
                        push(edge(rank, op.peer, op, false));
                    }
                }
            }
            for (mi, msg) in c.unexpected.iter().enumerate() {
                let sender = msg.peer;
                if !sender_blocked(msg) || sender < 0 || !may_wait(sender) {
                    continue;
                }
                // The sender's own send queue may list it already (a
                // nonblocking send): one edge, not two.
                let listed = comms.get(&sender).is_some_and(|theirs| {
                    theirs.iter().any(|tc| {
                        tc.key == c.key
                            && tc.sends.iter().any(|s| s.peer == rank && s.tag == msg.tag)
                    })
                });
                inferred_from.insert((rank, ci, mi));
                if listed {
                    continue;
                }
                let op = Operation {
                    kind: OperationKind::InferredSend,
                    peer: rank,
                    peer_local: -1,
                    ..msg.clone()
                };
                push(edge(sender, rank, &op, false));
                inferred.push((sender, op));
            }
        }
    }
    edges.sort_by_key(|a| (a.from, a.to));
    (edges, inferred_from, inferred)
}

fn edge(from: i64, to: i64, op: &Operation, any_source: bool) -> Edge {
    Edge {
        from,
        to,
        kind: op.kind,
        communicator: op.communicator.clone(),
        tag: op.tag,
        any_source,
    }
}
