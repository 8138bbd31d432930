//! Why a launcher's process table could not be had through PMIx. Each
//! error names the launcher's pid, and a step or a file where it helps.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Why the PMIx process table of a launcher could not be read.
///
/// It serializes, because the query may run in a helper process that
/// hands its failure back as JSON.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum PmixError {
    /// The process is gone, or its memory map cannot be read.
    #[error("cannot read /proc/{pid}/maps: {reason} (does process {pid} exist, and may this user trace it?)")]
    NoProcess {
        /// The launcher's pid.
        pid: i32,
        /// The OS error.
        reason: String,
    },
    /// The process maps no PMIx library, so it serves no PMIx tools.
    #[error("pid {pid} maps no libpmix.so: it is not a PMIx launcher")]
    NotPmix {
        /// The pid.
        pid: i32,
    },
    /// The launcher is stopped, so its server cannot answer; a tool is
    /// not even started (it would wait until the launcher is continued).
    #[error("pid {pid} is stopped (state {state}): its PMIx server cannot answer until it is continued (kill -CONT {pid})")]
    Stopped {
        /// The launcher's pid.
        pid: i32,
        /// Its state letter in /proc/PID/stat.
        state: char,
    },
    /// The library the launcher maps could not be opened or loaded here.
    #[error("cannot load {path}, the libpmix of pid {pid}: {reason}")]
    Load {
        /// The launcher's pid.
        pid: i32,
        /// The library as this process opened it.
        path: PathBuf,
        /// What the dynamic loader said.
        reason: String,
    },
    /// The library lacks a function the tool calls.
    #[error("{path}, the libpmix of pid {pid}, has no {symbol}")]
    MissingFunction {
        /// The launcher's pid.
        pid: i32,
        /// The library.
        path: PathBuf,
        /// The function.
        symbol: String,
    },
    /// The library is of a version whose struct layouts mpidd was not
    /// written for.
    #[error(
        "the libpmix of pid {pid} is {version}: mpidd knows the structures of OpenPMIx 5.x only"
    )]
    Version {
        /// The launcher's pid.
        pid: i32,
        /// What `PMIx_Get_version` said.
        version: String,
    },
    /// `PMIx_tool_init` failed: the server refused, or could not be found.
    #[error("the PMIx server of pid {pid} refused the tool connection: {status}")]
    Refused {
        /// The launcher's pid.
        pid: i32,
        /// `PMIx_Error_string` of the status.
        status: String,
    },
    /// A query failed.
    #[error("the PMIx server of pid {pid} did not answer {query}: {status}")]
    Query {
        /// The launcher's pid.
        pid: i32,
        /// The query's key (and namespace).
        query: String,
        /// `PMIx_Error_string` of the status.
        status: String,
    },
    /// An answer was not of the shape the standard gives it.
    #[error("the PMIx server of pid {pid} answered {query} with {what}")]
    Answer {
        /// The launcher's pid.
        pid: i32,
        /// The query.
        query: String,
        /// What was wrong with the answer.
        what: String,
    },
    /// No answer within the time allowed.
    #[error("the PMIx server of pid {pid} did not answer within {timeout_ms} ms (at {step}); is the launcher stopped?")]
    Timeout {
        /// The launcher's pid.
        pid: i32,
        /// The step that was under way.
        step: String,
        /// The bound.
        timeout_ms: u64,
    },
    /// PMIx was already used in this process: a tool session is set up
    /// once per process (see the module's docs); a helper process does
    /// each query afresh.
    #[error("PMIx was already used in this process (for pid {first_pid}): run the query for pid {pid} in a helper process")]
    AlreadyUsed {
        /// The launcher asked for now.
        pid: i32,
        /// The launcher the first session was for.
        first_pid: i32,
    },
    /// The helper process could not be started, or ended without an
    /// answer.
    #[error("the PMIx helper for pid {pid} ({program}) failed: {reason}")]
    Helper {
        /// The launcher's pid.
        pid: i32,
        /// The helper's program.
        program: PathBuf,
        /// What went wrong, with the end of its stderr.
        reason: String,
    },
}
