//! Walks an MPI-2 job across processes: from any process, through its
//! metadirectory pointer and its directory and metadirectory tables, to
//! every directory and so to every rank.
//!
//! The walker has no process control. A [`Connector`] turns a (host, pid,
//! executable) triple into a readable target: a live process here, a core
//! file, a remote agent. Each process is visited once, so cycles in the
//! tables and a process listed in its own table end the walk instead of
//! looping; depth and the number of processes are capped by [`Limits`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use mpidd_types::Packing;
use serde::Serialize;

use crate::backend::memory::TargetMemory;
use crate::limits::Limits;
use crate::mpi2dd::{self, Mpi2ddError, Mpi2ddPeer, Mpi2ddProcess, Mpi2ddRank};
use crate::symbols::SymbolSource;
use crate::targets::core_target::CoreTarget;

/// Opens the processes the walk reaches.
pub trait Connector {
    /// A readable process.
    type Target: TargetMemory + SymbolSource;

    /// Opens the process `pid` on `host`, running `executable`.
    fn connect(
        &mut self,
        host: &str,
        pid: i32,
        executable: &str,
    ) -> Result<Self::Target, Box<dyn std::error::Error + Send + Sync>>;
}

/// A [`Connector`] over core files: one core per (host, pid), as a job's
/// cores collected after a crash would be.
#[derive(Clone, Debug, Default)]
pub struct CoreFiles {
    cores: HashMap<(String, i32), (PathBuf, Option<PathBuf>)>,
}

impl CoreFiles {
    /// No cores yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The core of process `pid` on `host`, with its executable when the
    /// core does not name it (no NT_FILE).
    pub fn insert(&mut self, host: &str, pid: i32, core: &Path, executable: Option<&Path>) {
        self.cores.insert(
            (host.to_string(), pid),
            (core.to_path_buf(), executable.map(Path::to_path_buf)),
        );
    }
}

impl Connector for CoreFiles {
    type Target = CoreTarget;

    fn connect(
        &mut self,
        host: &str,
        pid: i32,
        _executable: &str,
    ) -> Result<CoreTarget, Box<dyn std::error::Error + Send + Sync>> {
        let (core, exe) = self
            .cores
            .get(&(host.to_string(), pid))
            .ok_or_else(|| format!("no core file was given for process {pid} on {host}"))?;
        Ok(CoreTarget::open(core, exe.as_deref(), None)?)
    }
}

/// A [`Connector`] over the live processes of this host: a peer on
/// another host is refused (it needs a connector that reaches that host),
/// and one here is opened with [`LiveTarget::open`](crate::LiveTarget) and
/// read while it runs. Linux only, with the `live` feature.
#[cfg(all(feature = "live", target_os = "linux"))]
#[derive(Clone, Debug)]
pub struct LocalProcesses {
    host: String,
}

#[cfg(all(feature = "live", target_os = "linux"))]
impl LocalProcesses {
    /// This host, by the name the kernel has for it.
    pub fn new() -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default();
        Self::with_host(host)
    }

    /// This host, by the name the job's tables give it.
    pub fn with_host(host: impl Into<String>) -> Self {
        LocalProcesses { host: host.into() }
    }

    /// The name this host goes by.
    pub fn host(&self) -> &str {
        &self.host
    }
}

#[cfg(all(feature = "live", target_os = "linux"))]
impl Default for LocalProcesses {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(all(feature = "live", target_os = "linux"))]
impl Connector for LocalProcesses {
    type Target = crate::targets::live_target::LiveTarget;

    fn connect(
        &mut self,
        host: &str,
        pid: i32,
        _executable: &str,
    ) -> Result<Self::Target, Box<dyn std::error::Error + Send + Sync>> {
        if host != self.host && host != "localhost" {
            return Err(format!(
                "{host} is not this host ({}): remote processes need a remote connector",
                self.host
            )
            .into());
        }
        Ok(crate::targets::live_target::LiveTarget::open(pid)?)
    }
}

/// A process the walk read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WalkedProcess {
    /// Where it runs and what it runs.
    pub peer: Mpi2ddPeer,
    /// Steps from the starting process.
    pub depth: usize,
    /// What it exposes.
    pub info: Mpi2ddProcess,
}

/// A process the walk could not read; the rest of the walk goes on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WalkFailure {
    /// The process.
    pub peer: Mpi2ddPeer,
    /// Why.
    pub error: String,
}

/// The whole job as far as the walk reached.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct JobTree {
    /// Every process read, in the order visited.
    pub processes: Vec<WalkedProcess>,
    /// Every rank of every proctable, each once, in the order found.
    pub ranks: Vec<Mpi2ddRank>,
    /// Processes that could not be read.
    pub failures: Vec<WalkFailure>,
    /// Set when a limit stopped the walk early; says which.
    pub truncated: Option<String>,
}

/// Why the walk could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WalkError {
    /// The starting process could not be opened.
    #[error("cannot open {host}:{pid} ({executable}): {message}")]
    Connect {
        /// Host.
        host: String,
        /// Pid.
        pid: i32,
        /// Executable.
        executable: String,
        /// What the connector said.
        message: String,
    },
    /// The starting process has no usable `MPI2DD_info`.
    #[error(transparent)]
    Start(#[from] Mpi2ddError),
}

/// Walks the job that `start` belongs to.
///
/// ```
/// use mpidd_read::synthetic::{Mpi2ddSpec, PeerSpec, RankSpec};
/// use mpidd_read::{walk, Connector, Limits, SyntheticJob};
/// use mpidd_types::{Packing, TargetAbi};
///
/// /// Two processes in memory, each naming the other.
/// struct Jobs(Vec<(i32, SyntheticJob)>);
/// impl Connector for Jobs {
///     type Target = SyntheticJob;
///     fn connect(&mut self, _: &str, pid: i32, _: &str)
///         -> Result<SyntheticJob, Box<dyn std::error::Error + Send + Sync>> {
///         self.0.iter().find(|(p, _)| *p == pid).map(|(_, j)| j.clone()).ok_or("no such pid".into())
///     }
/// }
/// let proc_of = |pid, peer| SyntheticJob::builder(TargetAbi::X86_64)
///     .mpi2dd(&Mpi2ddSpec {
///         ranks: &[RankSpec { host: "h", exe: "/a", pid: pid + 100, rank: pid, world: "w", spawn: None }],
///         metadirectories: &[PeerSpec { host: "h", exe: "/m", pid: peer }],
///         ..Mpi2ddSpec::default()
///     })
///     .build();
/// let mut jobs = Jobs(vec![(0, proc_of(0, 1)), (1, proc_of(1, 0))]);
/// let start = mpidd_read::mpi2dd::Mpi2ddPeer { host_name: "h".into(), executable_name: "/m".into(), pid: 0 };
/// let tree = walk::walk(&mut jobs, &start, Packing::Natural, &Limits::default())?;
/// assert_eq!(tree.processes.len(), 2); // the cycle 0 -> 1 -> 0 ends
/// assert_eq!(tree.ranks.len(), 2);
/// # Ok::<(), walk::WalkError>(())
/// ```
pub fn walk<C: Connector>(
    connector: &mut C,
    start: &Mpi2ddPeer,
    packing: impl Into<Option<Packing>>,
    limits: &Limits,
) -> Result<JobTree, WalkError> {
    let packing = packing.into();
    let mut tree = JobTree::default();
    let mut seen: HashSet<(String, i32)> = HashSet::new();
    let mut ranks_seen: HashSet<Mpi2ddRank> = HashSet::new();
    let mut queue: VecDeque<(Mpi2ddPeer, usize)> = VecDeque::new();
    seen.insert((start.host_name.clone(), start.pid));
    queue.push_back((start.clone(), 0));

    while let Some((peer, depth)) = queue.pop_front() {
        if tree.processes.len() + tree.failures.len() >= limits.max_walk_processes {
            tree.truncated = Some(format!(
                "Limits::max_walk_processes ({}) reached",
                limits.max_walk_processes
            ));
            break;
        }
        let target = match connector.connect(&peer.host_name, peer.pid, &peer.executable_name) {
            Ok(t) => t,
            Err(e) if depth == 0 => {
                return Err(WalkError::Connect {
                    host: peer.host_name,
                    pid: peer.pid,
                    executable: peer.executable_name,
                    message: e.to_string(),
                })
            }
            Err(e) => {
                tree.failures.push(WalkFailure {
                    peer,
                    error: e.to_string(),
                });
                continue;
            }
        };
        let info = match mpi2dd::read_process(&target, &target, packing, limits) {
            Ok(info) => info,
            Err(e) if depth == 0 => return Err(WalkError::Start(e)),
            Err(e) => {
                tree.failures.push(WalkFailure {
                    peer,
                    error: e.to_string(),
                });
                continue;
            }
        };
        for r in &info.proctable {
            if ranks_seen.insert(r.clone()) {
                tree.ranks.push(r.clone());
            }
        }
        let meta = match (&info.meta_host_name, &info.meta_executable_name) {
            (Some(host), exe) if info.meta_pid > 0 => Some(Mpi2ddPeer {
                host_name: host.clone(),
                executable_name: exe.clone().unwrap_or_default(),
                pid: info.meta_pid,
            }),
            _ => None,
        };
        let next = meta
            .into_iter()
            .chain(info.metadirectory_table.iter().cloned())
            .chain(info.directory_table.iter().cloned());
        for n in next {
            if !seen.insert((n.host_name.clone(), n.pid)) {
                continue;
            }
            if depth + 1 > limits.max_walk_depth {
                tree.truncated = Some(format!(
                    "Limits::max_walk_depth ({}) reached at {}:{}",
                    limits.max_walk_depth, n.host_name, n.pid
                ));
                continue;
            }
            queue.push_back((n, depth + 1));
        }
        tree.processes.push(WalkedProcess { peer, depth, info });
    }
    Ok(tree)
}
