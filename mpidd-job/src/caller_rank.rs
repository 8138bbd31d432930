//! Ranks the caller controls: processes a debugger already traces and has
//! stopped, read through the debugger's own memory, symbols, types and
//! thread registers, with nothing attached, stopped or let go here.

use std::path::PathBuf;

use mpidd_read::{LoadedObjects, Target, ThreadRegisters};

use crate::read_ranks::{JobReader, Types};
use crate::reading::RankReading;

/// One rank as the caller holds it: a process it traces and has stopped
/// (a debugger at a breakpoint), or any [`Target`] it reads. The job
/// reader reads it as it is: it never attaches to it, stops it or lets it
/// go, so a debugger that is already the tracer can put its ranks in the
/// verdict.
///
/// ```no_run
/// use mpidd_job::{analyze, CallerRank, JobReader, ReadOptions};
/// use mpidd_read::{LiveTarget, StackArch, ThreadRegisters};
///
/// // A debugger's ranks: it already traces them and holds their threads'
/// // registers (here made up; a debugger takes them with PTRACE_GETREGS).
/// let reader = JobReader::new(ReadOptions::default());
/// let mut readings = Vec::new();
/// for pid in [1001, 1002] {
///     let rank = LiveTarget::open(pid)?; // or the debugger's own Target
///     let general = vec![0u64; StackArch::X86_64.general_register_count()];
///     let threads = [ThreadRegisters::from_general(pid, StackArch::X86_64, general).unwrap()];
///     let caller = CallerRank::new(format!("pid {pid}"), &rank, rank.symbols())
///         .with_pid(pid)
///         .with_threads(&threads);
///     readings.push(reader.read_caller_rank(&caller));
/// }
/// let report = analyze(&readings);
/// for line in &report.verdict {
///     println!("{line}");
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct CallerRank<'a> {
    label: String,
    target: &'a dyn Target,
    objects: &'a dyn LoadedObjects,
    threads: &'a [ThreadRegisters],
    pid: Option<i32>,
    host: Option<String>,
    world_rank: Option<i64>,
    executable: Option<PathBuf>,
}

impl<'a> CallerRank<'a> {
    /// A rank named `label` in the report, read through `target` (its
    /// memory, symbols, and types: a debugger's own, or one of
    /// `mpidd_read`'s targets), with `objects` its loaded objects (their
    /// unwind tables for the stacks, their builds for the layouts and the
    /// profiles of the libraries beneath the MPI library): a debugger's own
    /// list of [`ObjectInfo`](mpidd_read::ObjectInfo), or the
    /// [`ElfSymbols`](mpidd_read::ElfSymbols) of one of `mpidd_read`'s
    /// targets.
    pub fn new(
        label: impl Into<String>,
        target: &'a dyn Target,
        objects: &'a dyn LoadedObjects,
    ) -> Self {
        CallerRank {
            label: label.into(),
            target,
            objects,
            threads: &[],
            pid: None,
            host: None,
            world_rank: None,
            executable: None,
        }
    }

    /// The registers of its threads, as the caller holds them; their
    /// stacks are unwound from them. Without them the rank has no stacks.
    pub fn with_threads(mut self, threads: &'a [ThreadRegisters]) -> Self {
        self.threads = threads;
        self
    }

    /// Its process id.
    pub fn with_pid(mut self, pid: i32) -> Self {
        self.pid = Some(pid);
        self
    }

    /// The host it runs on.
    pub fn with_host(mut self, host: impl Into<String>) -> Self {
        self.host = Some(host.into());
        self
    }

    /// Its world rank as the launcher gave it, used when neither its MPI
    /// library nor its environment says.
    pub fn with_world_rank(mut self, rank: i64) -> Self {
        self.world_rank = Some(rank);
        self
    }

    /// Its executable, to tell its own frames from the libraries' (and
    /// for a vendor message-queue library, which asks for the image).
    pub fn with_executable(mut self, path: impl Into<PathBuf>) -> Self {
        self.executable = Some(path.into());
        self
    }
}

impl std::fmt::Debug for CallerRank<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallerRank")
            .field("label", &self.label)
            .field("threads", &self.threads.len())
            .field("pid", &self.pid)
            .field("host", &self.host)
            .field("world_rank", &self.world_rank)
            .field("executable", &self.executable)
            .finish_non_exhaustive()
    }
}

impl JobReader {
    /// Reads one rank the caller controls, as [`read_rank`] reads the
    /// ranks it opens itself: its queues (with the caller's types where
    /// they answer, else the profile of its build; per build once for the
    /// reader's lifetime), its world rank, and the stacks of the threads
    /// whose registers the caller gave. The process is read as it is: the
    /// caller keeps it stopped for a consistent reading.
    ///
    /// [`read_rank`]: JobReader::read_rank
    pub fn read_caller_rank(&self, rank: &CallerRank<'_>) -> RankReading {
        let hint = rank.world_rank;
        let executable = rank.executable.clone().unwrap_or_default();
        let mut reading = RankReading {
            world_rank: hint,
            world_rank_source: hint.map(|_| "the caller".to_string()),
            executable: executable
                .file_name()
                .map(|n| n.to_string_lossy().into_owned()),
            errors: Vec::new(),
            ..RankReading::failed(
                rank.label.clone(),
                rank.pid,
                rank.host.clone(),
                String::new(),
            )
        };
        self.read_queues(
            rank.target,
            rank.objects,
            Types::Target,
            &executable,
            &mut reading,
        );
        self.read_world_rank(rank.target, &mut reading);
        self.read_job_identity(rank.target, &mut reading);
        if self.options().stacks {
            if rank.threads.is_empty() {
                reading
                    .errors
                    .push("stacks: the caller gave no thread's registers".to_string());
            } else {
                reading.threads =
                    self.unwinder
                        .unwind_all(rank.target.memory(), rank.objects, rank.threads);
                crate::read_ranks::stack_errors(&reading.threads, &mut reading.errors);
            }
        }
        reading
    }
}
