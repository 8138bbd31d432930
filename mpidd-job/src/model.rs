//! The job report: what `mpidd job --json` prints and what a debugger gets
//! from [`analyze`](crate::analyze). Its JSON form is versioned by
//! [`SCHEMA`] and described in `docs/job-json.md`; a change that renames or
//! removes a field bumps the version.

use serde::{Deserialize, Serialize};

use crate::mpi_call::CallClass;
use crate::reading::ThreadStack;
use crate::stack_tree::StackTree;

/// The version of the report's JSON form.
pub const SCHEMA: &str = "mpidd-job/2";

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
    /// What the verdict rests on, counted over the ranks.
    pub basis: JobBasis,
    /// The ranks grouped by where they are (MPI call and place in their
    /// own code), largest group first: the odd ones out come last.
    pub classes: Vec<StackClass>,
}

/// What a job's verdict rests on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobBasis {
    /// Ranks in the report.
    pub ranks: usize,
    /// Ranks whose message queues were read.
    pub queues_read: usize,
    /// Ranks whose call stacks were read.
    pub stacks_read: usize,
    /// Why the others' queues were not read, each reason once.
    pub queues_unread: Vec<String>,
    /// Set when no rank's queues were read, so that every wait comes from
    /// the ranks' stacks.
    pub stacks_alone: bool,
    /// How many ranks the job has, as the ranks read say (their
    /// launcher's variables); absent when none says or they disagree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_size: Option<i64>,
    /// How many of the job's ranks (below [`job_size`](Self::job_size))
    /// no reading has: the verdict does not cover them (the
    /// `missing_ranks` finding names them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub missing_ranks: u64,
    /// The PMIx namespaces of the ranks read, each once, in order: more
    /// than one means the ranks come from different jobs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Ranks that are at the same place.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackClass {
    /// Its world ranks, ascending.
    pub ranks: Vec<i64>,
    /// Their MPI call, when in MPI.
    pub mpi_call: Option<String>,
    /// Their place in their own code.
    pub location: Option<String>,
    /// Their state.
    pub state: RankState,
}

/// Whether one kind of evidence about a rank was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Evidence {
    /// It was read.
    Read {
        /// By what (a decoder, a vendor library, the unwinder).
        by: String,
        /// What that reading rests on, for a person, when the reader
        /// says: for a native decoder, the builds it was checked on, the
        /// MPI library it found and where its layouts came from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provenance: Option<String>,
    },
    /// It was not read.
    NotRead {
        /// Why not.
        why: String,
    },
}

impl Evidence {
    /// Whether it was read.
    pub fn is_read(&self) -> bool {
        matches!(self, Evidence::Read { .. })
    }
}

/// What one rank's part of the verdict rests on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankBasis {
    /// Its message queues.
    pub queues: Evidence,
    /// Its call stacks.
    pub stacks: Evidence,
    /// Where its world rank was found (its MPI library's memory, a
    /// variable of its environment, the launcher's table); `None` when it
    /// is not known.
    pub world_rank: Option<String>,
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
    /// Its process is gone: it returned from `main` or was killed.
    Exited,
}

/// How a rank is leaving the job, or has left it, as its process and the
/// main thread's stack show: a rank on its way out answers no receive and
/// enters no collective, so a peer that waits for it waits for ever.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WayOut {
    /// Its process is gone (its [`RankState`] is `Exited`).
    Exited,
    /// In `MPI_Abort`: it is tearing the job down.
    Abort,
    /// In `MPI_Finalize`: it will send nothing more.
    Finalize,
    /// Exiting its process: `exit`, its exit handlers (`atexit`),
    /// `_exit`, or the Python interpreter's own shutdown (`Py_FinalizeEx`,
    /// `Py_Exit`).
    ProcessExit,
    /// In the Python interpreter's handling of an exception that nothing
    /// caught (`PyErr_Print`, `PyErr_Display`, `sys.excepthook`, a
    /// `SystemExit`'s handling): the rank is about to end.
    PythonException,
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
    /// Its PMIx namespace, when known (see
    /// [`RankReading::pmix_namespace`](crate::RankReading::pmix_namespace)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmix_namespace: Option<String>,
    /// Its rank in that namespace, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmix_rank: Option<i64>,
    /// How many ranks its job has, as its launcher told it, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_size: Option<i64>,
    /// What it was doing.
    pub state: RankState,
    /// The MPI function it is in (for example `MPI_Recv`), when in MPI.
    pub mpi_call: Option<String>,
    /// How that call waits, when in MPI.
    pub call_class: Option<CallClass>,
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
    /// What its part of the verdict rests on.
    pub basis: RankBasis,
    /// How long each phase of its reading took, when timed (`mpidd job
    /// --timings`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<crate::reading::ReadTimings>,
    /// The version of the CPython it runs (`3.11`), when its Python
    /// frames were read: its stacks then hold them (`"python": true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// The mpi4py method it is in (`Comm.recv`, `Intracomm.Barrier`): its
    /// MPI call as its Python program makes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python_call: Option<String>,
    /// The source line of its innermost Python frame of its own code
    /// (`data = comm.recv(source=left)`): the MPI call as its Python
    /// program makes it. Read from the file as it is now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python_statement: Option<String>,
    /// How it is leaving the job, or left it, when it is: what its stack
    /// (or its process's absence) shows. Absent for a rank that is not on
    /// its way out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub way_out: Option<WayOut>,
    /// The exception its Python code raises, handles or holds, when its
    /// interpreter's memory shows one (from
    /// [`RankReading::python_exception`](crate::RankReading::python_exception));
    /// absent otherwise. A rank on its way out is told with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python_exception: Option<mpidd_read::PythonException>,
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
    /// A collective the rank is in (from its stack), waiting for a member
    /// that has not entered it. Only edges have this kind.
    Collective,
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
    /// `inferred_send` from the queues, `collective` from the stack.
    pub kind: OperationKind,
    /// The communicator's name.
    pub communicator: String,
    /// The tag; `None` for `MPI_ANY_TAG`.
    pub tag: Option<i64>,
    /// Set for a receive from `MPI_ANY_SOURCE`.
    pub any_source: bool,
    /// Set when `from` waits for any one of the ranks it has such edges
    /// to, not for all of them: a receive from `MPI_ANY_SOURCE`, the
    /// requests of an `MPI_Waitany` or `MPI_Waitsome`, and a collective
    /// whose communicator is not known (every rank that has not entered
    /// it is a candidate, and one of them is enough to hold it).
    pub any_of: bool,
}

/// The kinds of finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// Ranks wait on each other in a cycle: a deadlock.
    DeadlockCycle,
    /// Every rank is blocked in MPI (or gone) and nothing in flight can
    /// release any of them: a deadlock, even where no cycle can be drawn.
    GlobalDeadlock,
    /// A chain of waiting ranks ends at a rank whose process is gone.
    WaitsOnExitedRank,
    /// A chain of waiting ranks ends at a rank that is on its way out of
    /// the job (see [`WayOut`]): in `MPI_Abort`, in `MPI_Finalize`,
    /// exiting its process, or in Python's handling of an exception.
    WaitsOnLeavingRank,
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
    /// collective, or all in one collective on different communicators
    /// (where their queues show the communicators).
    CollectiveMismatch,
    /// A message waits unexpected at a rank that is stuck elsewhere, and
    /// none of its receives matches it.
    UnreceivedMessage,
    /// Ranks blocked in an MPI call whose peer neither their queues nor
    /// their stacks name.
    BlockedWithoutPeer,
    /// Ranks that could not be read, so the verdict may miss something.
    UnreadableRanks,
    /// Ranks of the job that were not read at all: its ranks say it has
    /// more than were given (cores or pids), so the verdict does not cover
    /// them.
    MissingRanks,
    /// The ranks read belong to more than one job: different PMIx
    /// namespaces, or different job sizes.
    MixedJobs,
}

impl FindingKind {
    /// Every kind, most severe first.
    pub const ALL: [FindingKind; 14] = [
        FindingKind::DeadlockCycle,
        FindingKind::GlobalDeadlock,
        FindingKind::WaitsOnExitedRank,
        FindingKind::WaitsOnLeavingRank,
        FindingKind::WaitsOnRankOutsideMpi,
        FindingKind::WaitsOnRankInMpi,
        FindingKind::WaitsOnDeadlock,
        FindingKind::UnmatchableReceive,
        FindingKind::CollectiveMismatch,
        FindingKind::UnreceivedMessage,
        FindingKind::BlockedWithoutPeer,
        FindingKind::UnreadableRanks,
        FindingKind::MissingRanks,
        FindingKind::MixedJobs,
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
