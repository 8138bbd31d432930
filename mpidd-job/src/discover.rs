//! Finding the ranks of a job: from a launcher's MPIR table, from its
//! PMIx server's process table (Open MPI 5's `prterun`, which has no
//! MPIR), from the descendants of a launcher that has neither (Debian's
//! `mpiexec.hydra`), or from a directory of core files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[cfg(all(feature = "live", target_os = "linux"))]
use mpidd_read::pmix::{read_pmix_tables, PmixError, PmixOptions, PmixTables};
use mpidd_read::{mpir, CoreTargetOptions};
#[cfg(all(feature = "live", target_os = "linux"))]
use mpidd_read::{Limits, LiveTarget, SymbolSource};

use crate::read_ranks::RankTarget;

/// Why the ranks of a job could not be found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoverError {
    /// The process could not be opened.
    #[cfg(all(feature = "live", target_os = "linux"))]
    #[error("cannot open process {pid}: {cause}")]
    Open {
        /// The pid.
        pid: i32,
        /// Why: shown in the message, so not also as `source()`.
        cause: mpidd_read::LiveError,
    },
    /// The launcher's MPIR table could not be read.
    #[cfg(all(feature = "live", target_os = "linux"))]
    #[error("cannot read the MPIR table of launcher {pid}: {cause}")]
    Mpir {
        /// The launcher.
        pid: i32,
        /// Why: shown in the message, so not also as `source()`.
        cause: mpir::MpirError,
    },
    /// The launcher has no MPIR table, its PMIx server gave no table, and
    /// no descendant of it uses MPI.
    #[cfg(all(feature = "live", target_os = "linux"))]
    #[error("process {pid} has no MPIR process table, none of its descendants has an MPI library loaded, and {cause}")]
    Pmix {
        /// The launcher.
        pid: i32,
        /// Why its PMIx server gave no table.
        cause: mpidd_read::pmix::PmixError,
    },
    /// The process is no MPI process, has no MPIR table, and no descendant
    /// of it uses MPI.
    #[error(
        "process {pid} is not an MPI process, has no MPIR process table, and none of its \
         descendants has an MPI library loaded"
    )]
    NoRanks {
        /// The pid.
        pid: i32,
    },
    /// A directory of cores could not be listed, or held none.
    #[error("cannot list the cores in {dir}: {reason}")]
    CoreDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        reason: String,
    },
}

/// How a pid was turned into ranks, for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// The pid is a rank itself.
    Rank,
    /// From the launcher's MPIR process table.
    MpirTable,
    /// From the process table the launcher's PMIx server reported: it has
    /// no MPIR symbols (Open MPI 5's `prterun`).
    PmixTable,
    /// From the launcher's descendants that have an MPI library loaded:
    /// the launcher has no MPIR symbols.
    Descendants,
}

/// The ranks behind `pid`: the process itself when it is an MPI process;
/// else the ranks of its MPIR table (those on this host, when the table
/// names hosts); else those of the process table its PMIx server reports
/// (asked as `pmix` says; those on this host and not ended); else its
/// descendants that have an MPI library loaded. Linux only, with the
/// `live` feature.
#[cfg(all(feature = "live", target_os = "linux"))]
pub fn ranks_of_pid(
    pid: i32,
    limits: &Limits,
    pmix: &PmixOptions,
) -> Result<(Found, Vec<RankTarget>), DiscoverError> {
    if uses_mpi(pid) {
        return Ok((Found::Rank, vec![RankTarget::live(pid)]));
    }
    let launcher = LiveTarget::open(pid).map_err(|cause| DiscoverError::Open { pid, cause })?;
    if launcher.lookup(mpir::names::PROCTABLE).is_some() {
        let state = mpir::read_state(&launcher, limits)
            .map_err(|cause| DiscoverError::Mpir { pid, cause })?;
        if !state.proctable.is_empty() {
            let here = hostname();
            let ranks = state
                .proctable
                .iter()
                .enumerate()
                .filter(|(_, p)| p.pid > 0 && is_this_host(p.host_name, here.as_deref()))
                .map(|(rank, p)| RankTarget::Live {
                    pid: p.pid,
                    host: Some(p.host_name.to_string()),
                    world_rank: Some(rank as i64),
                })
                .collect();
            return Ok((Found::MpirTable, ranks));
        }
    }
    let pmix_failure = match read_pmix_tables(pid, pmix) {
        Ok(tables) => {
            let ranks = pmix_ranks(&tables, hostname().as_deref());
            if !ranks.is_empty() {
                return Ok((Found::PmixTable, ranks));
            }
            None
        }
        Err(PmixError::NotPmix { .. }) => None,
        Err(e) => Some(e),
    };
    let ranks: Vec<RankTarget> = descendants(pid)
        .into_iter()
        .filter(|&p| uses_mpi(p))
        .map(RankTarget::live)
        .collect();
    if ranks.is_empty() {
        return Err(match pmix_failure {
            Some(cause) => DiscoverError::Pmix { pid, cause },
            None => DiscoverError::NoRanks { pid },
        });
    }
    Ok((Found::Descendants, ranks))
}

/// The ranks of a PMIx server's tables that run on this host. A job of
/// one namespace is `MPI_COMM_WORLD`, whose ranks are the PMIx ranks;
/// with several (spawned jobs), a PMIx rank is not a world rank, and none
/// is given.
#[cfg(all(feature = "live", target_os = "linux"))]
fn pmix_ranks(tables: &PmixTables, here: Option<&str>) -> Vec<RankTarget> {
    let one_world = tables.namespaces.len() == 1;
    tables
        .namespaces
        .iter()
        .flat_map(|ns| {
            ns.proctable
                .iter()
                .enumerate()
                .filter(|(rank, p)| {
                    p.pid > 0
                        && is_this_host(p.host_name, here)
                        && !ns.states.get(*rank).is_some_and(|s| s.has_ended())
                })
                .map(|(rank, p)| RankTarget::Live {
                    pid: p.pid,
                    host: Some(p.host_name.to_string()),
                    world_rank: one_world.then_some(rank as i64),
                })
        })
        .collect()
}

/// Whether a process has an MPI library mapped (MPICH's `libmpi`/
/// `libmpich`, or its `libmpi_abi` under a program built against the
/// MPI-5 standard ABI; Open MPI's `libmpi`), by its memory map.
pub fn uses_mpi(pid: i32) -> bool {
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
        return false;
    };
    maps.lines().any(|line| {
        line.rsplit('/').next().is_some_and(|name| {
            name.starts_with("libmpi.so")
                || name.starts_with("libmpich.so")
                || name.starts_with("libmpi_abi.so")
        })
    })
}

/// Every descendant of `pid`, from the parent links in `/proc`, in pid
/// order.
pub fn descendants(pid: i32) -> Vec<i32> {
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(p) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i32>().ok())
            else {
                continue;
            };
            if let Some(parent) = parent_of(p) {
                children.entry(parent).or_default().push(p);
            }
        }
    }
    let mut out = BTreeSet::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).into_iter().flatten() {
            if out.insert(c) {
                todo.push(c);
            }
        }
    }
    out.into_iter().collect()
}

/// The parent pid, from `/proc/PID/stat` (after the command name, which
/// may hold spaces and parentheses).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(all(feature = "live", target_os = "linux"))]
fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
}

/// Whether a table's host name is this machine: the same name, its short
/// form, or a loopback name.
#[cfg(all(feature = "live", target_os = "linux"))]
fn is_this_host(name: &str, here: Option<&str>) -> bool {
    let short = |s: &str| s.split('.').next().unwrap_or(s).to_string();
    matches!(name, "localhost" | "127.0.0.1" | "::1")
        || here.is_some_and(|h| short(h) == short(name))
}

/// The rank cores in `dir`: every regular file whose name starts with
/// `core` (as `gcore` and the kernel name them), in name order.
pub fn cores_in(dir: &Path, options: &CoreTargetOptions) -> Result<Vec<RankTarget>, DiscoverError> {
    let error = |reason: String| DiscoverError::CoreDir {
        dir: dir.to_path_buf(),
        reason,
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| error(e.to_string()))?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.file_name().to_string_lossy().starts_with("core"))
        .map(|e| e.path())
        .collect();
    if paths.is_empty() {
        return Err(error("no file named core* in it".to_string()));
    }
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|path| RankTarget::Core {
            path,
            options: options.clone(),
            host: None,
            world_rank: None,
        })
        .collect())
}

/// One rank of a launcher's MPIR table: its pid, host and world rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchedRank {
    /// Its pid on its host.
    pub pid: i32,
    /// Its host.
    pub host: String,
    /// Its world rank (its index in the table).
    pub world_rank: i64,
}

/// The MPIR table of a launcher's core file.
pub fn launcher_core_table(
    path: &Path,
    options: &CoreTargetOptions,
) -> Result<Vec<LaunchedRank>, String> {
    let core = mpidd_read::CoreTarget::open_with(path, options).map_err(|e| e.to_string())?;
    let state = mpir::read_state(&core, &options.limits).map_err(|e| e.to_string())?;
    Ok(launched_ranks(&state))
}

/// The ranks an MPIR table lists, each at its index as its world rank.
pub fn launched_ranks(state: &mpir::MpirState) -> Vec<LaunchedRank> {
    state
        .proctable
        .iter()
        .enumerate()
        .map(|(rank, p)| LaunchedRank {
            pid: p.pid,
            host: p.host_name.to_string(),
            world_rank: rank as i64,
        })
        .collect()
}

/// Gives readings the host and world rank of the launcher's table entry
/// with their pid, where they lack them.
pub fn apply_launcher_table(readings: &mut [crate::RankReading], table: &[LaunchedRank]) {
    let by_pid: BTreeMap<i32, &LaunchedRank> = table.iter().map(|r| (r.pid, r)).collect();
    for reading in readings {
        if let Some(entry) = reading.pid.and_then(|p| by_pid.get(&p)) {
            reading.host.get_or_insert_with(|| entry.host.clone());
            if reading.world_rank.is_none() {
                reading.world_rank = Some(entry.world_rank);
                reading.world_rank_source = Some("the launcher's process table".to_string());
            }
        }
    }
}
