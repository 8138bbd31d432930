//! The job report: what `mpidd job --json` prints and what a debugger gets
//! from [`analyze`](crate::analyze). Its JSON form is versioned by
//! [`SCHEMA`] and described in `docs/job-json.md`; a change that renames or
//! removes a field bumps the version.

use serde::{Deserialize, Serialize};

use crate::reading::ThreadStack;
use crate::stack_tree::StackTree;

/// The version of the report's JSON form.
pub const SCHEMA: &str = "mpidd-job/1";

/// Everything known about a job: its ranks, who waits for whom, and why
/// it hangs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The verdict in a few sentences, most important first.
    pub verdict: Vec<String>,
    /// One entry per rank read (or that could not be read), by world rank.
    pub ranks: Vec<RankReport>,
    /// The wait-for graph: `from` cannot go on until `to` acts.
    pub edges: Vec<Edge>,
    /// Cycles of the graph among ranks that cannot go on, each as world
    /// ranks in the order they wait on each other, starting at the lowest.
    pub cycles: Vec<Vec<i64>>,
    /// What the analysis concluded, most severe first.
    pub findings: Vec<Finding>,
    /// The call stacks of every thread of every rank, merged from `main`
    /// inwards, with the ranks at each node.
    pub stack_tree: StackTree,
}

/// What a rank was doing when it was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankState {
    /// Inside an MPI call (named in [`RankReport::mpi_call`]).
    InMpi,
    /// Running its own code: it is not waiting on MPI.
    OutsideMpi,
    /// Read, but without stacks, so where it is is not known.
    Unknown,
    /// It could not be read (see [`RankReport::errors`]).
    Unreadable,
}

/// One rank as the report shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankReport {
    /// Its rank in `MPI_COMM_WORLD`; −1 when it could not be found.
    pub world_rank: i64,
    /// Its process id, when known.
    pub pid: Option<i32>,
    /// The host it runs (or ran) on, when known.
    pub host: Option<String>,
    /// What was read: a core file's path or `pid N`.
    pub target: String,
    /// What it was doing.
    pub state: RankState,
    /// The MPI function it is in (for example `MPI_Recv`), when in MPI.
    pub mpi_call: Option<String>,
    /// Where it is in its own code: the innermost frame of the program
    /// itself, as `function at file:line` (or `function` alone without
    /// line information).
    pub location: Option<String>,
    /// Its operations that have not completed, from its message queues.
    pub pending: Vec<Operation>,
    /// What read its queues (a native decoder or a vendor library).
    pub queue_source: Option<String>,
    /// The call stack of each thread.
    pub threads: Vec<ThreadStack>,
    /// Why it, or part of it, could not be read.
    pub errors: Vec<String>,
}

/// The kind of a pending operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationKind {
    /// A receive the rank posted that is not matched.
    Receive,
    /// A send the rank started that has not completed.
    Send,
    /// A message that arrived at the rank before any receive matched it.
    Unexpected,
    /// A send the rank is blocked in that its own queues do not show,
    /// inferred from a rendezvous or synchronous message waiting
    /// unexpected at its destination.
    InferredSend,
}

/// A pending operation of one rank, in world ranks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operation {
    /// What it is.
    pub kind: OperationKind,
    /// The communicator's name.
    pub communicator: String,
    /// The other side in `MPI_COMM_WORLD`: the source of a receive or an
    /// unexpected message, the destination of a send; −1 for
    /// `MPI_ANY_SOURCE` or when unknown.
    pub peer: i64,
    /// The same peer as a rank of the communicator (−1 for any).
    pub peer_local: i64,
    /// The tag; `None` for `MPI_ANY_TAG`.
    pub tag: Option<i64>,
    /// Length in bytes (or elements, when the source gives no bytes).
    pub length: i64,
    /// How the message travels, when the source says: `eager` or
    /// `rendezvous`.
    pub protocol: Option<String>,
    /// Whether the sender waits for the match (`MPI_Ssend`), when known.
    pub synchronous: Option<bool>,
}

/// One edge of the wait-for graph.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Edge {
    /// The world rank that waits.
    pub from: i64,
    /// The world rank it waits for.
    pub to: i64,
    /// The operation that makes `from` wait: `receive`, `send` or
    /// `inferred_send`.
    pub kind: OperationKind,
    /// The communicator's name.
    pub communicator: String,
    /// The tag; `None` for `MPI_ANY_TAG`.
    pub tag: Option<i64>,
    /// Set for a receive from `MPI_ANY_SOURCE`: `from` waits for any one
    /// of the ranks it has such edges to, not for all of them.
    pub any_source: bool,
}

/// The kinds of finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// Ranks wait on each other in a cycle: a deadlock.
    DeadlockCycle,
    /// A chain of waiting ranks ends at a rank that runs its own code.
    WaitsOnRankOutsideMpi,
    /// A chain of waiting ranks ends at a rank that is in MPI without a
    /// point-to-point operation that could release them (in a collective,
    /// say).
    WaitsOnRankInMpi,
    /// Ranks wait on a deadlocked cycle they are not part of.
    WaitsOnDeadlock,
    /// A receive that no message will match while a message from the same
    /// source with another tag waits unexpected: likely a tag mismatch.
    UnmatchableReceive,
    /// The ranks of the job are in different MPI calls while some are in a
    /// collective.
    CollectiveMismatch,
    /// A message waits unexpected at a rank that is stuck elsewhere, and
    /// none of its receives matches it.
    UnreceivedMessage,
    /// Ranks that could not be read, so the verdict may miss something.
    UnreadableRanks,
}

impl FindingKind {
    /// Every kind, most severe first.
    pub const ALL: [FindingKind; 8] = [
        FindingKind::DeadlockCycle,
        FindingKind::WaitsOnRankOutsideMpi,
        FindingKind::WaitsOnRankInMpi,
        FindingKind::WaitsOnDeadlock,
        FindingKind::UnmatchableReceive,
        FindingKind::CollectiveMismatch,
        FindingKind::UnreceivedMessage,
        FindingKind::UnreadableRanks,
    ];
}

/// One conclusion, with the ranks it involves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// What was found.
    pub kind: FindingKind,
    /// The world ranks involved, in the order the summary names them.
    pub ranks: Vec<i64>,
    /// One sentence for a person.
    pub summary: String,
    /// The operations behind it.
    pub operations: Vec<RankOperation>,
}

/// An operation and the world rank it belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankOperation {
    /// The rank whose queue holds it (for an inferred send: the sender).
    pub rank: i64,
    /// The operation.
    pub operation: Operation,
}
