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
    /// Edges arriving at each rank.
    into: BTreeMap<i64, Vec<usize>>,
    edges: Vec<Edge>,
}

impl WaitGraph {
    pub fn new(edges: Vec<Edge>) -> Self {
        let mut out: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        let mut into: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for (i, e) in edges.iter().enumerate() {
            out.entry(e.from).or_default().push(i);
            into.entry(e.to).or_default().push(i);
        }
        WaitGraph { out, into, edges }
    }

    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    pub fn into_edges(self) -> Vec<Edge> {
        self.edges
    }

    /// The edges leaving `rank`.
    pub fn targets(&self, rank: i64) -> impl Iterator<Item = &Edge> {
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
    /// never go on themselves. A rank whose waits are all any-of waits
    /// (receives from `MPI_ANY_SOURCE`, `MPI_Waitany`, a collective whose
    /// members are not known) needs only one of its peers to go on; any
    /// other rank needs every rank it waits on (it may be in `MPI_Waitall`).
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
                    let only_any = edges.iter().all(|e| e.any_of);
                    let needed = edges.iter().filter(|e| only_any || !e.any_of);
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
    ///
    /// As in Johnson's algorithm, the search runs only inside strongly
    /// connected components: a cycle lies in one, and once every cycle
    /// through a component's lowest rank is found, that rank is dropped
    /// and what remains is split again. A ring of a thousand ranks is then
    /// one search, not a thousand that each walk most of the ring.
    pub fn cycles(&self, within: &BTreeSet<i64>) -> Vec<Vec<i64>> {
        let mut found: BTreeSet<Vec<i64>> = BTreeSet::new();
        let mut steps = 0u64;
        let mut work = self.components(within);
        while let Some(mut component) = work.pop() {
            if steps > MAX_CYCLE_STEPS || found.len() >= MAX_CYCLES {
                break;
            }
            let Some(&start) = component.first() else {
                continue;
            };
            self.cycles_through(start, &component, &mut found, &mut steps);
            component.remove(&start);
            work.extend(self.components(&component));
        }
        let mut cycles: Vec<Vec<i64>> = found.into_iter().collect();
        cycles.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        cycles.truncate(MAX_CYCLES);
        cycles
    }

    /// Adds to `found` the cycles through `start` that use only ranks of
    /// `within` above it, so that each cycle is found once, from its
    /// lowest rank; `steps` counts toward [`MAX_CYCLE_STEPS`].
    fn cycles_through(
        &self,
        start: i64,
        within: &BTreeSet<i64>,
        found: &mut BTreeSet<Vec<i64>>,
        steps: &mut u64,
    ) {
        let mut path = vec![start];
        let mut on_path: BTreeSet<i64> = BTreeSet::from([start]);
        let mut stack: Vec<Vec<i64>> = vec![self.next_ranks(start, start, within)];
        while let Some(top) = stack.last_mut() {
            *steps += 1;
            if *steps > MAX_CYCLE_STEPS || found.len() >= MAX_CYCLES {
                return;
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

    /// The strongly connected components of the graph restricted to
    /// `within` that can hold a cycle (two ranks or more, or one that
    /// waits on itself), by Tarjan's algorithm without recursion.
    fn components(&self, within: &BTreeSet<i64>) -> Vec<BTreeSet<i64>> {
        struct Visit {
            index: usize,
            low: usize,
            on_stack: bool,
        }
        let mut visits: BTreeMap<i64, Visit> = BTreeMap::new();
        let mut stack: Vec<i64> = Vec::new();
        let mut out = Vec::new();
        let succ = |r: i64| -> Vec<i64> {
            self.targets(r)
                .map(|e| e.to)
                .filter(|t| within.contains(t))
                .collect()
        };
        for &root in within {
            if visits.contains_key(&root) {
                continue;
            }
            // Each frame: a rank and its successors not yet looked at.
            let mut frames: Vec<(i64, std::vec::IntoIter<i64>)> = Vec::new();
            let open = |r: i64, visits: &mut BTreeMap<i64, Visit>, stack: &mut Vec<i64>| {
                let index = visits.len();
                visits.insert(
                    r,
                    Visit {
                        index,
                        low: index,
                        on_stack: true,
                    },
                );
                stack.push(r);
            };
            open(root, &mut visits, &mut stack);
            frames.push((root, succ(root).into_iter()));
            while let Some((r, next)) = frames.last_mut() {
                let r = *r;
                match next.next() {
                    Some(t) => match visits.get(&t) {
                        None => {
                            open(t, &mut visits, &mut stack);
                            frames.push((t, succ(t).into_iter()));
                        }
                        Some(v) if v.on_stack => {
                            let index = v.index;
                            let rv = visits.get_mut(&r).expect("opened");
                            rv.low = rv.low.min(index);
                        }
                        Some(_) => {}
                    },
                    None => {
                        frames.pop();
                        let (index, low) = {
                            let v = &visits[&r];
                            (v.index, v.low)
                        };
                        if let Some((parent, _)) = frames.last() {
                            let p = visits.get_mut(parent).expect("opened");
                            p.low = p.low.min(low);
                        }
                        if low == index {
                            let mut component = BTreeSet::new();
                            while let Some(m) = stack.pop() {
                                visits.get_mut(&m).expect("opened").on_stack = false;
                                component.insert(m);
                                if m == r {
                                    break;
                                }
                            }
                            let cyclic = component.len() > 1 || succ(r).contains(&r);
                            if cyclic {
                                out.push(component);
                            }
                        }
                    }
                }
            }
        }
        out
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

    /// The ranks at the end of chains of waits: ranks that are waited on
    /// and wait on nothing themselves, outside `skip` (the deadlocked).
    pub fn roots(&self, skip: &BTreeSet<i64>) -> BTreeSet<i64> {
        self.into
            .keys()
            .copied()
            .filter(|r| !self.waits(*r) && !skip.contains(r))
            .collect()
    }

    /// Every rank whose waits lead to one of `targets`, following waits
    /// backwards through ranks outside `skip` (a chain that meets a
    /// deadlocked rank ends there). One pass for all of a root's waiters,
    /// where asking each waiter for its roots would walk the same chain
    /// once per rank on it.
    pub fn waiting_on(
        &self,
        targets: impl IntoIterator<Item = i64>,
        skip: &BTreeSet<i64>,
    ) -> BTreeSet<i64> {
        let mut todo: Vec<i64> = targets.into_iter().collect();
        let mut seen: BTreeSet<i64> = BTreeSet::new();
        while let Some(t) = todo.pop() {
            for &i in self.into.get(&t).into_iter().flatten() {
                let from = self.edges[i].from;
                if !skip.contains(&from) && seen.insert(from) {
                    todo.push(from);
                }
            }
        }
        seen
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
            any_of: any,
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
        assert_eq!(g.roots(&dead), BTreeSet::from([0]));
        assert_eq!(g.waiting_on([0], &dead), BTreeSet::from([1, 2, 3]));
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
    fn a_rank_that_waits_on_itself_is_a_cycle_of_one() {
        let g = WaitGraph::new(vec![edge(0, 0, false), edge(1, 0, false)]);
        let dead = g.deadlocked(&all_in_mpi(2));
        assert_eq!(dead, BTreeSet::from([0, 1]));
        assert_eq!(g.cycles(&dead), vec![vec![0]]);
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
