//! Whole MPI jobs at once. Every rank is read (its message queues, its
//! world rank and the call stack of each thread), the pending operations
//! are matched across ranks into a wait-for graph, and the graph gives the
//! verdict: the cycles of ranks that wait on each other, the rank a chain
//! of waiting ranks ends at and where it is, receives that no message will
//! match, ranks in different collectives, messages no one receives.
//!
//! - [`RankReading`]: what is read from one rank; serde-ready, so it can
//!   travel from a per-node agent.
//! - [`JobReader`]: reads ranks ([`RankTarget`]: core files or live
//!   processes) in parallel; [`discover`] finds them from a launcher's pid
//!   or a directory of cores, and [`job_sources`] from all that a user
//!   names at once.
//! - [`analyze`]: from the readings to a [`JobReport`].
//! - [`model`]: the report, whose JSON form is versioned ([`SCHEMA`]).
//! - Across nodes ([`slurm`]): [`agent_stream`] is what a per-node agent
//!   sends, [`bounded_read`] reads a node's ranks with a bound on each,
//!   [`slurm::node_agent`] is the agent's work on its node, [`slurm_step`]
//!   finds a Slurm step's tasks on a node, [`srun_labels`] takes the
//!   agents' records out of `srun --label` output, and
//!   `slurm::fanout` (Unix) starts an agent on every node of a step and
//!   merges what they send.
//!
//! # Example
//!
//! The verdict on a hung job from a directory of its ranks' core files
//! (`gcore` of each rank): [`discover::cores_in`] finds them,
//! [`JobReader`] reads them in parallel and [`analyze`] gives the report.
//! This is `examples/job_verdict.rs`, which `scripts/check-examples.sh`
//! runs on the cores of a ring deadlock of the reference MPICH:
//!
//! ```no_run
#![doc = include_str!("../examples/job_verdict.rs")]
//! ```
//!
//! The analysis alone, on two made-up ranks that each wait to receive from
//! the other:
//!
//! ```
//! use mpidd_job::synthetic::SyntheticRank;
//! use mpidd_job::{analyze, FindingKind};
//!
//! let readings = vec![
//!     SyntheticRank::new(0, 2)
//!         .receive("MPI_COMM_WORLD", 1, Some(7))
//!         .stack(&["main", "MPI_Recv", "poll"])
//!         .reading(),
//!     SyntheticRank::new(1, 2)
//!         .receive("MPI_COMM_WORLD", 0, Some(7))
//!         .stack(&["main", "MPI_Recv", "poll"])
//!         .reading(),
//! ];
//! let report = analyze(&readings);
//! assert_eq!(report.cycles, vec![vec![0, 1]]);
//! assert_eq!(report.findings[0].kind, FindingKind::DeadlockCycle);
//! println!("{}", report.verdict[0]);
//! ```

#![deny(unsafe_code)]

mod analyze;
pub mod bounded_read;
pub mod caller_rank;
mod collective_mismatch;
mod completeness;
pub mod discover;
mod findings;
mod job;
pub mod job_sources;
pub mod model;
pub mod mpi_call;
mod operations;
mod python_ranks;
pub mod read_ranks;
pub mod read_timings;
pub mod reading;
pub mod render_dot;
pub mod render_html;
pub mod render_svg;
pub mod render_text;
mod shared_groups;
pub mod slurm;
pub mod stack_tree;
#[cfg(feature = "synthetic")]
pub mod synthetic;
#[cfg(feature = "synthetic")]
pub mod synthetic_cores;
mod verdict;
mod wait_graph;
pub mod way_out;

// The modules of `slurm` that were public at the crate's root before it
// was gathered into a folder, at their old paths.
pub use slurm::{agent_stream, slurm_step, srun_labels};

pub use analyze::{analyze, MAX_COLLECTIVE_WAITS};
pub use caller_rank::CallerRank;
pub use model::{
    Edge, Finding, FindingKind, JobReport, Operation, OperationKind, RankOperation, RankReport,
    RankState, WayOut, SCHEMA,
};
pub use read_ranks::{JobReader, RankTarget, ReadOptions};
pub use read_timings::ReadTimings;
pub use reading::RankReading;
pub use stack_tree::StackTree;
pub use wait_graph::MAX_CYCLES;
