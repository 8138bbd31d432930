//! What is read from one rank: the raw input of the analysis. A reading is
//! what a per-node agent would send, so it is serde-ready and holds no
//! handle on the target.

use mpiq_core::model::ProcessQueues;
use serde::{Deserialize, Serialize};

pub use crate::read_timings::ReadTimings;
pub use mpidd_read::{Frame, ThreadStack};

/// One rank of a job as it was read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankReading {
    /// What was read: a core file's path or `pid N`.
    pub target: String,
    /// Its process id, when known.
    pub pid: Option<i32>,
    /// The host it runs on, when known.
    pub host: Option<String>,
    /// Its rank in `MPI_COMM_WORLD`: from its MPI library's memory, else
    /// from its environment, else from the launcher's table.
    pub world_rank: Option<i64>,
    /// Where [`world_rank`](Self::world_rank) was found, for a person.
    #[serde(default)]
    pub world_rank_source: Option<String>,
    /// Its PMIx namespace (the name of its job to its launcher's PMIx
    /// server), when its environment or its PMIx library gives one: ranks
    /// of two jobs differ in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmix_namespace: Option<String>,
    /// Its rank in [`pmix_namespace`](Self::pmix_namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmix_rank: Option<i64>,
    /// How many ranks its job has, as its launcher told it
    /// (`OMPI_COMM_WORLD_SIZE`, `PMI_SIZE`, `SLURM_NTASKS`): what tells
    /// whether every rank of the job was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_size: Option<i64>,
    /// The file name of its executable, to tell its own frames from the
    /// libraries'.
    pub executable: Option<String>,
    /// Its message queues, when they could be read.
    pub queues: Option<ProcessQueues>,
    /// Why [`queues`](Self::queues) is empty: the decoders' refusal, or
    /// that the reader was told not to read queues.
    #[serde(default)]
    pub queues_unread: Option<String>,
    /// What its queues rest on, for a person: the decoder and the builds
    /// it was checked on, the MPI library, and where its layouts came
    /// from (see `mpiq_core::Provenance`). `None` when they were not read
    /// by a native decoder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queues_provenance: Option<String>,
    /// The call stack of each thread (empty when stacks were not read).
    pub threads: Vec<ThreadStack>,
    /// What could not be read, and why.
    pub errors: Vec<String>,
    /// The version of the CPython it runs (`3.11`), when its Python
    /// frames were read into [`threads`](Self::threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// The exception its Python code raises, handles or holds, when its
    /// memory shows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python_exception: Option<mpidd_read::PythonException>,
    /// The mpi4py method its main thread is in (`Comm.recv`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python_call: Option<String>,
    /// The source line of its innermost Python frame of its own code, as
    /// the file reads now (`data = comm.recv(source=left)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python_statement: Option<String>,
    /// Set when its process no longer exists: it returned from `main` or
    /// was killed before it was read.
    #[serde(default)]
    pub exited: bool,
    /// How long each phase of its reading took, when the reader was asked
    /// to time them ([`ReadOptions::timings`](crate::ReadOptions::timings)).
    /// Boxed: a reading travels in an agent's records, most without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<Box<ReadTimings>>,
}

impl RankReading {
    /// A reading of a target that failed as a whole.
    pub fn failed(target: String, pid: Option<i32>, host: Option<String>, error: String) -> Self {
        RankReading {
            target,
            pid,
            host,
            world_rank: None,
            world_rank_source: None,
            pmix_namespace: None,
            pmix_rank: None,
            job_size: None,
            executable: None,
            queues: None,
            queues_unread: None,
            queues_provenance: None,
            threads: Vec::new(),
            errors: vec![error],
            python: None,
            python_exception: None,
            python_statement: None,
            python_call: None,
            exited: false,
            timings: None,
        }
    }

    /// A rank whose process is gone.
    pub fn exited(target: String, pid: Option<i32>, host: Option<String>) -> Self {
        RankReading {
            exited: true,
            ..RankReading::failed(target, pid, host, "its process has exited".to_string())
        }
    }
}
