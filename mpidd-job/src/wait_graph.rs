//! The wait-for graph of a job: its edges, the ranks that can never go on,
//! the cycles among them, and where the chains of waiting ranks end.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Edge, RankState};

/// At most this many cycles are listed: a deadlock of a thousand ranks
/// that receive from `MPI_ANY_SOURCE` has more cycles than anyone reads.
pub const MAX_CYCLES: usize = 64;

/// Steps of the cycle search, so that a dense graph cannot make it run
/// for long.
const MAX_CYCLE_STEPS: u64 = 1_000_000;

/// The graph over world ranks.
pub(crate) struct WaitGraph {
    /// Edges leaving each rank.
    out: BTreeMap<i64, Vec<usize>>,
    edges: Vec<Edge>,
}

impl WaitGraph {
    pub fn new(edges: Vec<Edge>) -> Self {
        let mut out: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for (i, e) in edges.iter().enumerate() {
            out.entry(e.from).or_default().push(i);
        }
        WaitGraph { out, edges }
    }

    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    pub fn into_edges(self) -> Vec<Edge> {
        self.edges
    }

    fn targets(&self, rank: i64) -> impl Iterator<Item = &Edge> {
        self.out
            .get(&rank)
            .into_iter()
            .flatten()
            .map(|&i| &self.edges[i])
    }

    /// Whether a rank waits on anything.
    pub fn waits(&self, rank: i64) -> bool {
        self.out.contains_key(&rank)
    }

    /// The ranks that can never go on: each waits only on ranks that can
    /// never go on themselves. A rank whose waits are all receives from
    /// `MPI_ANY_SOURCE` needs only one of its peers to go on; any other
    /// rank needs every rank it waits on (it may be in `MPI_Waitall`).
    /// Ranks outside the job's readings, and ranks not waiting, are taken
    /// to go on, since nothing proves otherwise.
    pub fn deadlocked(&self, states: &BTreeMap<i64, RankState>) -> BTreeSet<i64> {
        let blocked = |r: i64| {
            self.waits(r)
                && matches!(
                    states.get(&r),
                    Some(RankState::InMpi) | Some(RankState::Unknown)
                )
        };
        let mut stuck: BTreeSet<i64> = self.out.keys().copied().filter(|&r| blocked(r)).collect();
        loop {
            let freed: Vec<i64> = stuck
                .iter()
                .copied()
                .filter(|&r| {
                    let edges: Vec<&Edge> = self.targets(r).collect();
                    let only_any = edges.iter().all(|e| e.any_source);
                    let needed = edges.iter().filter(|e| only_any || !e.any_source);
                    let mut free = needed.map(|e| !stuck.contains(&e.to));
                    if only_any {
                        free.any(|f| f)
                    } else {
                        free.all(|f| f)
                    }
                })
                .collect();
            if freed.is_empty() {
                return stuck;
            }
            for r in freed {
                stuck.remove(&r);
            }
        }
    }

    /// Elementary cycles among `within`, each starting at its lowest rank
    /// and following the waits; at most [`MAX_CYCLES`], shortest first.
    pub fn cycles(&self, within: &BTreeSet<i64>) -> Vec<Vec<i64>> {
        let mut found: BTreeSet<Vec<i64>> = BTreeSet::new();
        let mut steps = 0u64;
        for &start in within {
            // Cycles through `start` that use only ranks above it, so each
            // cycle is found once, from its lowest rank.
            let mut path = vec![start];
            let mut on_path: BTreeSet<i64> = BTreeSet::from([start]);
            let mut stack: Vec<Vec<i64>> = vec![self.next_ranks(start, start, within)];
            while let Some(top) = stack.last_mut() {
                steps += 1;
                if steps > MAX_CYCLE_STEPS || found.len() >= MAX_CYCLES {
                    break;
                }
                match top.pop() {
                    Some(next) if next == start => {
                        found.insert(path.clone());
                    }
                    Some(next) if !on_path.contains(&next) => {
                        path.push(next);
                        on_path.insert(next);
                        stack.push(self.next_ranks(next, start, within));
                    }
                    Some(_) => {}
                    None => {
                        stack.pop();
                        if let Some(r) = path.pop() {
                            on_path.remove(&r);
                        }
                    }
                }
            }
        }
        let mut cycles: Vec<Vec<i64>> = found.into_iter().collect();
        cycles.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        cycles.truncate(MAX_CYCLES);
        cycles
    }

    /// The distinct ranks `rank` waits on that are in `within` and not
    /// below `start`, highest first (they are popped from the end).
    fn next_ranks(&self, rank: i64, start: i64, within: &BTreeSet<i64>) -> Vec<i64> {
        let set: BTreeSet<i64> = self
            .targets(rank)
            .map(|e| e.to)
            .filter(|t| *t >= start && within.contains(t))
            .collect();
        set.into_iter().rev().collect()
    }

    /// The ranks at the end of the waits of `rank`: every rank reachable
    /// from it that waits on nothing itself, with the ranks on the way.
    /// Ranks in `skip` (the deadlocked) are not followed.
    pub fn roots(&self, rank: i64, skip: &BTreeSet<i64>) -> (BTreeSet<i64>, BTreeSet<i64>) {
        let mut roots = BTreeSet::new();
        let mut seen = BTreeSet::from([rank]);
        let mut todo = vec![rank];
        let mut reached_deadlock = BTreeSet::new();
        while let Some(r) = todo.pop() {
            for e in self.targets(r) {
                if skip.contains(&e.to) {
                    reached_deadlock.insert(e.to);
                } else if !self.waits(e.to) {
                    roots.insert(e.to);
                } else if seen.insert(e.to) {
                    todo.push(e.to);
                }
            }
        }
        (roots, reached_deadlock)
    }

    /// The first edge from `from` to `to`, for describing a wait.
    pub fn edge(&self, from: i64, to: i64) -> Option<&Edge> {
        self.targets(from).find(|e| e.to == to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::OperationKind;

    fn edge(from: i64, to: i64, any: bool) -> Edge {
        Edge {
            from,
            to,
            kind: OperationKind::Receive,
            communicator: "MPI_COMM_WORLD".into(),
            tag: Some(0),
            any_source: any,
        }
    }

    fn all_in_mpi(n: i64) -> BTreeMap<i64, RankState> {
        (0..n).map(|r| (r, RankState::InMpi)).collect()
    }

    #[test]
    fn a_ring_is_one_cycle_from_its_lowest_rank() {
        let g = WaitGraph::new((0..4).map(|r| edge(r, (r + 3) % 4, false)).collect());
        let dead = g.deadlocked(&all_in_mpi(4));
        assert_eq!(dead, BTreeSet::from([0, 1, 2, 3]));
        assert_eq!(g.cycles(&dead), vec![vec![0, 3, 2, 1]]);
    }

    #[test]
    fn a_chain_to_a_running_rank_is_no_deadlock() {
        let g = WaitGraph::new(vec![
            edge(3, 2, false),
            edge(2, 1, false),
            edge(1, 0, false),
        ]);
        let mut states = all_in_mpi(4);
        states.insert(0, RankState::OutsideMpi);
        let dead = g.deadlocked(&states);
        assert!(dead.is_empty());
        let (roots, _) = g.roots(3, &dead);
        assert_eq!(roots, BTreeSet::from([0]));
    }

    #[test]
    fn any_source_needs_only_one_peer_to_go_on() {
        // 0 receives from anyone; 1 waits on 0; 2 runs.
        let g = WaitGraph::new(vec![edge(0, 1, true), edge(0, 2, true), edge(1, 0, false)]);
        let mut states = all_in_mpi(3);
        states.insert(2, RankState::OutsideMpi);
        assert!(g.deadlocked(&states).is_empty());
        states.insert(2, RankState::InMpi);
        let g = WaitGraph::new(vec![
            edge(0, 1, true),
            edge(0, 2, true),
            edge(1, 0, false),
            edge(2, 1, false),
        ]);
        let dead = g.deadlocked(&states);
        assert_eq!(dead, BTreeSet::from([0, 1, 2]));
        assert_eq!(g.cycles(&dead), vec![vec![0, 1], vec![0, 2, 1]]);
    }

    #[test]
    fn dense_graphs_stop_at_the_cycle_limit() {
        let n = 40;
        let edges = (0..n)
            .flat_map(|a| {
                (0..n)
                    .filter(move |&b| b != a)
                    .map(move |b| edge(a, b, true))
            })
            .collect();
        let g = WaitGraph::new(edges);
        let dead = g.deadlocked(&all_in_mpi(n));
        assert_eq!(dead.len(), n as usize);
        assert_eq!(g.cycles(&dead).len(), MAX_CYCLES);
    }
}
