//! The stacks of every thread of every rank merged into one tree, from the
//! outermost frame inwards, with the set of ranks at each node (as STAT
//! shows a job): ranks that do the same thing share a branch, and the odd
//! one out stands alone.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::mpi_call::describe_frame;
use crate::reading::ThreadStack;

/// At most this many children per node; the rest are merged into one
/// `(N more)` node, so a job whose ranks all differ stays readable.
pub const MAX_CHILDREN: usize = 32;

/// One node of the merged tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackTree {
    /// The function (or `[unknown]`); the root is `[job]`.
    pub function: String,
    /// The world ranks with a thread through this node.
    pub ranks: Vec<i64>,
    /// The same ranks in short form, such as `0-3,7`.
    pub rank_set: String,
    /// Threads (across all ranks) through this node.
    pub threads: u64,
    /// The frames called from here.
    pub children: Vec<StackTree>,
}

impl StackTree {
    /// An empty tree.
    pub fn new() -> Self {
        StackTree {
            function: "[job]".to_string(),
            ranks: Vec::new(),
            rank_set: String::new(),
            threads: 0,
            children: Vec::new(),
        }
    }

    /// Builds the tree of the given ranks' threads.
    pub fn build<'a>(stacks: impl IntoIterator<Item = (i64, &'a ThreadStack)>) -> Self {
        let mut root = Builder::new("[job]".to_string());
        for (rank, stack) in stacks {
            let mut node = &mut root;
            node.add(rank);
            for frame in stack.frames.iter().rev() {
                let name = if frame.python {
                    // A Python function runs many lines: which one tells
                    // the ranks apart.
                    describe_frame(frame)
                } else {
                    // A name no symbol vouches for (gdb prints `??` there)
                    // is told apart from one that does.
                    match &frame.function {
                        Some(f) if frame.name_guessed => format!("{f} (guessed)"),
                        Some(f) => f.clone(),
                        None => "[unknown]".to_string(),
                    }
                };
                let i = match node.children.iter().position(|c| c.function == name) {
                    Some(i) => i,
                    None => {
                        node.children.push(Builder::new(name));
                        node.children.len() - 1
                    }
                };
                node = &mut node.children[i];
                node.add(rank);
            }
        }
        root.finish()
    }
}

impl Default for StackTree {
    fn default() -> Self {
        Self::new()
    }
}

struct Builder {
    function: String,
    ranks: BTreeSet<i64>,
    threads: u64,
    children: Vec<Builder>,
}

impl Builder {
    fn new(function: String) -> Self {
        Builder {
            function,
            ranks: BTreeSet::new(),
            threads: 0,
            children: Vec::new(),
        }
    }

    fn add(&mut self, rank: i64) {
        self.ranks.insert(rank);
        self.threads += 1;
    }

    fn finish(self) -> StackTree {
        let mut children: Vec<StackTree> = self.children.into_iter().map(Builder::finish).collect();
        // Most ranks first: the common path leads, outliers follow.
        children.sort_by(|a, b| {
            b.ranks
                .len()
                .cmp(&a.ranks.len())
                .then_with(|| a.function.cmp(&b.function))
        });
        if children.len() > MAX_CHILDREN {
            let rest = children.split_off(MAX_CHILDREN - 1);
            let ranks: BTreeSet<i64> = rest.iter().flat_map(|c| c.ranks.iter().copied()).collect();
            let ranks: Vec<i64> = ranks.into_iter().collect();
            children.push(StackTree {
                function: format!("({} more)", rest.len()),
                rank_set: rank_set(&ranks),
                ranks,
                threads: rest.iter().map(|c| c.threads).sum(),
                children: Vec::new(),
            });
        }
        let ranks: Vec<i64> = self.ranks.into_iter().collect();
        StackTree {
            function: self.function,
            rank_set: rank_set(&ranks),
            ranks,
            threads: self.threads,
            children,
        }
    }
}

/// Sorted ranks in short form: `0-3,7,9-10`.
pub fn rank_set(ranks: &[i64]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let start = ranks[i];
        let mut end = start;
        while i + 1 < ranks.len() && ranks[i + 1] == end + 1 {
            i += 1;
            end = ranks[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reading::Frame;

    fn stack(names: &[&str]) -> ThreadStack {
        ThreadStack {
            tid: 1,
            frames: names
                .iter()
                .rev()
                .map(|n| Frame {
                    function: Some(n.to_string()),
                    ..Frame::default()
                })
                .collect(),
            truncated: false,
            error: None,
        }
    }

    #[test]
    fn ranks_that_do_the_same_share_a_branch() {
        let barrier = stack(&["_start", "main", "MPI_Barrier", "poll"]);
        let recv = stack(&["_start", "main", "MPI_Recv", "poll"]);
        let tree = StackTree::build([(0, &barrier), (1, &recv), (2, &barrier), (3, &barrier)]);
        assert_eq!(tree.rank_set, "0-3");
        let main = &tree.children[0].children[0];
        assert_eq!(main.function, "main");
        assert_eq!(main.children[0].function, "MPI_Barrier");
        assert_eq!(main.children[0].rank_set, "0,2-3");
        assert_eq!(main.children[1].function, "MPI_Recv");
        assert_eq!(main.children[1].ranks, vec![1]);
    }

    #[test]
    fn a_guessed_name_is_marked_and_kept_apart_from_a_vouched_one() {
        let mut guessed = stack(&["main", "PMPI_Recv", "MPIR_Wait"]);
        guessed.frames[1].name_guessed = true;
        let named = stack(&["main", "PMPI_Recv", "MPIR_Wait"]);
        let tree = StackTree::build([(0, &guessed), (1, &named)]);
        let main = &tree.children[0];
        let names: Vec<&str> = main.children.iter().map(|c| c.function.as_str()).collect();
        assert_eq!(names, ["PMPI_Recv", "PMPI_Recv (guessed)"]);
    }

    #[test]
    fn rank_sets_are_short() {
        assert_eq!(rank_set(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
        assert_eq!(rank_set(&[]), "");
    }
}
