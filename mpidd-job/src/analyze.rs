//! From the readings of a job's ranks to its report: states, operations
//! matched across ranks, the wait-for graph and the findings.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::completeness::Completeness;
use crate::findings::find;
use crate::job::Job;
use crate::model::{
    Edge, Evidence, JobBasis, JobReport, Operation, OperationKind, RankBasis, RankReport,
    RankState, StackClass, WayOut, SCHEMA,
};
use crate::mpi_call::{
    classify, completes_on_any, describe_frame, mpi_call, own_code_location, CallClass,
};
use crate::operations::{rank_operations, sender_blocked, CommOps};
use crate::python_ranks::own_python_frame;
use crate::reading::RankReading;
use crate::stack_tree::StackTree;
use crate::wait_graph::WaitGraph;
use crate::way_out::way_out;
use mpidd_read::ExceptionState;

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
    let calls: BTreeMap<i64, String> = ranks
        .iter()
        .filter(|r| r.world_rank >= 0)
        .filter_map(|r| Some((r.world_rank, r.mpi_call.clone()?)))
        .collect();
    let (mut edges, inferred_from, inferred) = edges(&comms, &states, &calls);
    for (sender, op) in inferred {
        if let Some(&i) = by_world.get(&sender) {
            ranks[i].pending.push(op);
        }
    }
    edges.extend(collective_edges(&ranks));
    let leaving = leaving_waited_on(&ranks, &mut edges);
    edges.sort_by_key(|a| (a.from, a.to));
    let graph = WaitGraph::new(edges);
    let completeness = Completeness::of(&ranks);
    let job = Job {
        ranks,
        by_world,
        comms,
        states,
        graph,
        inferred_from,
        leaving,
        completeness,
    };
    let (cycles, findings) = find(&job);
    let basis = job_basis(&job.ranks, &job.completeness);
    let classes = classes(&job.ranks);
    let verdict = crate::verdict::verdict(&job, &cycles, &findings, &basis, &classes);
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
        basis,
        classes,
    }
}

/// The counts the headline rests on.
fn job_basis(ranks: &[RankReport], completeness: &Completeness) -> JobBasis {
    let queues_read = ranks.iter().filter(|r| r.basis.queues.is_read()).count();
    let stacks_read = ranks.iter().filter(|r| r.basis.stacks.is_read()).count();
    let mut queues_unread: Vec<String> = Vec::new();
    for r in ranks {
        if let Evidence::NotRead { why } = &r.basis.queues {
            if !queues_unread.contains(why) {
                queues_unread.push(why.clone());
            }
        }
    }
    JobBasis {
        ranks: ranks.len(),
        queues_read,
        stacks_read,
        queues_unread,
        stacks_alone: queues_read == 0 && stacks_read > 0,
        job_size: completeness.size,
        missing_ranks: completeness.missing_count,
        namespaces: completeness.namespaces.keys().cloned().collect(),
    }
}

/// The ranks grouped by state, MPI call and place, largest group first.
fn classes(ranks: &[RankReport]) -> Vec<StackClass> {
    let mut out: Vec<StackClass> = Vec::new();
    for r in ranks.iter().filter(|r| r.world_rank >= 0) {
        let same = out
            .iter_mut()
            .find(|c| c.state == r.state && c.mpi_call == r.mpi_call && c.location == r.location);
        match same {
            Some(c) => c.ranks.push(r.world_rank),
            None => out.push(StackClass {
                ranks: vec![r.world_rank],
                mpi_call: r.mpi_call.clone(),
                location: r.location.clone(),
                state: r.state.clone(),
            }),
        }
    }
    // Stable: equal sizes keep the order of their lowest rank.
    out.sort_by_key(|c| std::cmp::Reverse(c.ranks.len()));
    out
}

/// The waits of ranks in a collective, from their stacks: each waits on
/// the ranks that are not in the same call. Which communicator it is on is
/// not read, so every such rank is a candidate and one of them is enough
/// to hold it (an any-of wait): a rank in a collective of a smaller
/// communicator then draws no cycle it is not part of.
///
/// A rank with more than [`MAX_COLLECTIVE_WAITS`] candidates gets no
/// edges: a wait on any one of a thousand ranks tells nothing a graph can
/// show, and drawing it for every rank in the collective would take
/// edges in the square of the job's size. Such ranks are still counted as
/// blocked by the verdict.
fn collective_edges(ranks: &[RankReport]) -> Vec<Edge> {
    let known: Vec<&RankReport> = ranks.iter().filter(|r| r.world_rank >= 0).collect();
    // The ranks not in a call, found once per distinct call rather than
    // once per rank in it: a job of ten thousand ranks is in a few calls.
    let mut not_in: BTreeMap<(&str, bool), Vec<i64>> = BTreeMap::new();
    let mut out = Vec::new();
    for r in &known {
        let (Some(call), Some(class)) = (r.mpi_call.as_deref(), r.call_class) else {
            continue;
        };
        if !matches!(class, CallClass::Collective | CallClass::Finalize) {
            continue;
        }
        let finalize = class == CallClass::Finalize;
        let candidates = not_in.entry((call, finalize)).or_insert_with(|| {
            known
                .iter()
                .filter(|other| {
                    let entered = other.mpi_call.as_deref() == Some(call);
                    // A rank that is gone after MPI_Finalize has passed it;
                    // for any other collective, a rank that is gone never
                    // enters it.
                    let passed = finalize && other.state == RankState::Exited;
                    !entered && !passed
                })
                .map(|other| other.world_rank)
                .collect()
        });
        if candidates.len() > MAX_COLLECTIVE_WAITS {
            continue;
        }
        for &other in candidates.iter() {
            out.push(Edge {
                from: r.world_rank,
                to: other,
                kind: OperationKind::Collective,
                communicator: if finalize {
                    "MPI_COMM_WORLD".to_string()
                } else {
                    COMMUNICATOR_NOT_READ.to_string()
                },
                tag: None,
                any_source: false,
                any_of: true,
            });
        }
    }
    out
}

/// The ranks on their way out (in `MPI_Abort`, `MPI_Finalize`, exiting,
/// in Python's exception handling) that a rank not leaving waits on. Their
/// own waits are dropped: a rank in `MPI_Finalize` does wait for the
/// others to enter it, but it will never send what they wait for, so the
/// chain ends at it rather than going round through it.
fn leaving_waited_on(ranks: &[RankReport], edges: &mut Vec<Edge>) -> BTreeSet<i64> {
    let leaving: BTreeSet<i64> = ranks
        .iter()
        .filter(|r| r.world_rank >= 0 && r.state != RankState::Exited)
        .filter(|r| r.way_out.is_some())
        .map(|r| r.world_rank)
        .collect();
    let waited: BTreeSet<i64> = edges
        .iter()
        .filter(|e| !leaving.contains(&e.from) && leaving.contains(&e.to))
        .map(|e| e.to)
        .collect();
    edges.retain(|e| !waited.contains(&e.from));
    waited
}

/// Most ranks a collective's wait is drawn to. A rank in a collective
/// waits for every rank not in the same call; with more candidates than
/// this it gets no edges (a wait on any one of a thousand ranks tells
/// nothing a graph can show), and the verdict still counts it as blocked.
pub const MAX_COLLECTIVE_WAITS: usize = 64;

/// How an edge from a stack names the communicator it could not read.
pub(crate) const COMMUNICATOR_NOT_READ: &str = "its communicator (not read)";

/// A rank that runs its own code while its Python thread raises or
/// handles an exception (an `except` block that waits, a handler that
/// never returns) is on its way out as much as one in the interpreter's
/// own handling. One in an MPI call inside an `except` block is not: it
/// may be retrying.
fn handling_outside_mpi(reading: &RankReading, call: Option<CallClass>) -> Option<WayOut> {
    let e = reading.python_exception.as_ref()?;
    let active = matches!(e.state, ExceptionState::Raised | ExceptionState::Handled);
    (active && call.is_none()).then_some(WayOut::PythonException)
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
    let call_class = call.as_deref().map(classify);
    let state = if reading.exited {
        RankState::Exited
    } else if unreadable {
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
        pmix_namespace: reading.pmix_namespace.clone(),
        pmix_rank: reading.pmix_rank,
        job_size: reading.job_size,
        location: main.and_then(|t| {
            own_python_frame(&t.frames)
                .map(describe_frame)
                .or_else(|| own_code_location(t, reading.executable.as_deref()))
        }),
        way_out: if reading.exited {
            Some(WayOut::Exited)
        } else {
            way_out(main, call_class)
                .map(|(w, _)| w)
                .or_else(|| handling_outside_mpi(reading, call_class))
        },
        python_exception: reading.python_exception.clone(),
        state,
        call_class,
        mpi_call: call,
        pending: Vec::new(),
        queue_source: reading.queues.as_ref().map(|q| q.source.clone()),
        threads: reading.threads.clone(),
        errors: reading.errors.clone(),
        basis: rank_basis(reading),
        timings: reading.timings.as_deref().cloned(),
        python: reading.python.clone(),
        python_statement: reading.python_statement.clone(),
        python_call: reading.python_call.clone(),
    }
}

fn rank_basis(reading: &RankReading) -> RankBasis {
    let queues = match (&reading.queues, &reading.queues_unread) {
        (Some(q), _) => Evidence::Read {
            by: q.source.clone(),
            provenance: reading.queues_provenance.clone(),
        },
        (None, Some(why)) => Evidence::NotRead { why: why.clone() },
        // A reading from an older agent keeps the reason among its errors.
        (None, None) => Evidence::NotRead {
            why: reading
                .errors
                .iter()
                .find(|e| e.starts_with("queues:"))
                .or(reading.errors.first())
                .cloned()
                .unwrap_or_else(|| "not read".to_string()),
        },
    };
    let stacks = if reading.threads.iter().any(|t| !t.frames.is_empty()) {
        Evidence::Read {
            by: format!("{} thread(s)", reading.threads.len()),
            provenance: None,
        }
    } else {
        Evidence::NotRead {
            why: reading
                .errors
                .iter()
                .find(|e| e.starts_with("stack"))
                .cloned()
                .unwrap_or_else(|| "not taken".to_string()),
        }
    };
    RankBasis {
        queues,
        stacks,
        world_rank: reading.world_rank.filter(|&w| w >= 0).map(|_| {
            reading
                .world_rank_source
                .clone()
                .unwrap_or_else(|| "not said".to_string())
        }),
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
fn edges(
    comms: &BTreeMap<i64, Vec<CommOps>>,
    states: &BTreeMap<i64, RankState>,
    calls: &BTreeMap<i64, String>,
) -> Inferred {
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
    // A rank may wait on itself (a receive from its own rank, a
    // synchronous send to itself): a cycle of one.
    let mut push = |e: Edge| {
        if seen.insert(e.clone()) {
            edges.push(e);
        }
    };
    for (&rank, list) in comms {
        // In MPI_Waitany or MPI_Waitsome one request is enough.
        let any_one = calls.get(&rank).is_some_and(|c| completes_on_any(c));
        for (ci, c) in list.iter().enumerate() {
            if may_wait(rank) {
                for op in &c.receives {
                    if op.peer >= 0 {
                        push(edge(rank, op.peer, op, false, any_one));
                    } else if op.peer_local < 0 {
                        // Not itself: a rank blocked in a receive sends
                        // nothing to itself meanwhile.
                        for &m in c
                            .group
                            .as_deref()
                            .unwrap_or_default()
                            .iter()
                            .filter(|&&m| m != rank)
                        {
                            push(edge(rank, m, op, true, true));
                        }
                    }
                }
                for op in &c.sends {
                    if op.peer >= 0 {
                        push(edge(rank, op.peer, op, false, any_one));
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
                let any_one = calls.get(&sender).is_some_and(|c| completes_on_any(c));
                push(edge(sender, rank, &op, false, any_one));
                inferred.push((sender, op));
            }
        }
    }
    (edges, inferred_from, inferred)
}

fn edge(from: i64, to: i64, op: &Operation, any_source: bool, any_of: bool) -> Edge {
    Edge {
        from,
        to,
        kind: op.kind,
        communicator: op.communicator.clone(),
        tag: op.tag,
        any_source,
        any_of: any_of || any_source,
    }
}
