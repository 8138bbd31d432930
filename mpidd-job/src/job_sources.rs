//! Where a job's ranks are, as a user names them (what `mpidd job` is
//! pointed at): processes (ranks, or launchers whose ranks are found),
//! core files, a directory of cores, and the launcher's core, whose MPIR
//! table gives the cores their hosts and world ranks.
//!
//! ```no_run
//! use mpidd_job::job_sources::JobSources;
//! use mpidd_job::{analyze, JobReader, ReadOptions};
//! use mpidd_read::Limits;
//!
//! let sources = JobSources {
//!     core_dir: Some("/tmp/cores".into()),
//!     launcher_core: Some("/tmp/cores/mpirun.core".into()),
//!     ..JobSources::default()
//! };
//! let found = sources.targets(&Limits::default())?;
//! let reader = JobReader::new(ReadOptions::default());
//! let mut readings = reader.read_all(&found.targets, &|_, _| {});
//! sources.apply_launcher_core(&mut readings)?;
//! println!("{}", analyze(&readings).verdict[0]);
//! # Ok::<(), mpidd_job::job_sources::SourceError>(())
//! ```

use std::path::PathBuf;

use mpidd_read::pmix::PmixOptions;
use mpidd_read::{CoreTargetOptions, Limits};

use crate::discover::{apply_launcher_table, cores_in, launcher_core_table, DiscoverError, Found};
use crate::read_ranks::RankTarget;
use crate::reading::RankReading;

/// The places a job's ranks are read from.
#[derive(Clone, Debug, Default)]
pub struct JobSources {
    /// Ranks, or launchers whose ranks are read: one with an MPIR process
    /// table (Open MPI's `mpirun`, `srun`), whose ranks on this host are
    /// read; one whose PMIx server reports them (Open MPI 5's `prterun`);
    /// or one with neither (Debian's `mpiexec.hydra`), whose descendants
    /// that have an MPI library loaded are the ranks. Needs the `live`
    /// feature, on Linux.
    pub pids: Vec<i32>,
    /// Core files of ranks.
    pub cores: Vec<PathBuf>,
    /// A directory of rank cores: every file in it named `core*`.
    pub core_dir: Option<PathBuf>,
    /// The launcher's core file, whose MPIR table gives the cores' hosts
    /// and world ranks.
    pub launcher_core: Option<PathBuf>,
    /// How the cores are opened (where the files they name are).
    pub core_options: CoreTargetOptions,
    /// How a launcher's PMIx server is asked for its table, when it has
    /// no MPIR table.
    pub pmix: PmixOptions,
}

/// How one of [`JobSources::pids`] was turned into ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PidRanks {
    /// The pid given.
    pub pid: i32,
    /// What it is: a rank, or a launcher whose ranks were found one way or
    /// the other.
    pub found: Found,
    /// How many ranks it gave.
    pub ranks: usize,
}

/// The ranks to read.
#[derive(Clone, Debug, Default)]
pub struct FoundTargets {
    /// Every rank, in the order the sources were given.
    pub targets: Vec<RankTarget>,
    /// How each pid was turned into ranks, in the order given.
    pub pids: Vec<PidRanks>,
}

/// Why the ranks of a job could not be found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// No rank was named.
    #[error("name the ranks: --pid (a rank or its launcher), --core or --core-dir")]
    NoTargets,
    /// The ranks behind a pid or a directory could not be found.
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    /// A pid was given, but live processes are not read by this build.
    #[error("process {pid}: reading live processes needs mpidd-job's `live` feature, on Linux")]
    LiveUnavailable {
        /// The pid.
        pid: i32,
    },
    /// The launcher's core could not be read.
    #[error("cannot read the MPIR table of the launcher core {path}: {reason}")]
    LauncherCore {
        /// The core.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl JobSources {
    /// The ranks the sources name, the pids' first (each pid's ranks found
    /// with `limits` on its MPIR table), then the cores, then the
    /// directory's. Fails when there is none.
    pub fn targets(&self, limits: &Limits) -> Result<FoundTargets, SourceError> {
        let mut found = FoundTargets::default();
        for &pid in &self.pids {
            let (how, ranks) = ranks_of_pid(pid, limits, &self.pmix)?;
            found.pids.push(PidRanks {
                pid,
                found: how,
                ranks: ranks.len(),
            });
            found.targets.extend(ranks);
        }
        for path in &self.cores {
            found.targets.push(RankTarget::Core {
                path: path.clone(),
                options: self.core_options.clone(),
                host: None,
                world_rank: None,
            });
        }
        if let Some(dir) = &self.core_dir {
            found.targets.extend(cores_in(dir, &self.core_options)?);
        }
        if found.targets.is_empty() {
            return Err(SourceError::NoTargets);
        }
        Ok(found)
    }

    /// Gives the readings the host and world rank that the launcher
    /// core's MPIR table lists for their pid, where they lack them. Does
    /// nothing without [`launcher_core`](Self::launcher_core).
    pub fn apply_launcher_core(&self, readings: &mut [RankReading]) -> Result<(), SourceError> {
        let Some(path) = &self.launcher_core else {
            return Ok(());
        };
        let table = launcher_core_table(path, &self.core_options).map_err(|reason| {
            SourceError::LauncherCore {
                path: path.clone(),
                reason,
            }
        })?;
        apply_launcher_table(readings, &table);
        Ok(())
    }
}

#[cfg(all(feature = "live", target_os = "linux"))]
fn ranks_of_pid(
    pid: i32,
    limits: &Limits,
    pmix: &PmixOptions,
) -> Result<(Found, Vec<RankTarget>), SourceError> {
    Ok(crate::discover::ranks_of_pid(pid, limits, pmix)?)
}

#[cfg(not(all(feature = "live", target_os = "linux")))]
fn ranks_of_pid(
    pid: i32,
    _limits: &Limits,
    _pmix: &PmixOptions,
) -> Result<(Found, Vec<RankTarget>), SourceError> {
    Err(SourceError::LiveUnavailable { pid })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_give_their_ranks_in_order_and_none_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["core.1", "core.0", "notes.txt"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let sources = JobSources {
            cores: vec!["/x/first.core".into()],
            core_dir: Some(dir.path().to_path_buf()),
            ..JobSources::default()
        };
        let found = sources.targets(&Limits::default()).unwrap();
        let labels: Vec<String> = found.targets.iter().map(RankTarget::label).collect();
        assert_eq!(labels.len(), 3);
        assert_eq!(labels[0], "/x/first.core");
        assert!(labels[1].ends_with("core.0") && labels[2].ends_with("core.1"));
        assert!(found.pids.is_empty());
        assert!(matches!(
            JobSources::default().targets(&Limits::default()),
            Err(SourceError::NoTargets)
        ));
        let mut readings = Vec::new();
        sources.apply_launcher_core(&mut readings).unwrap();
        let missing = JobSources {
            launcher_core: Some("/nonexistent/mpirun.core".into()),
            ..JobSources::default()
        };
        let err = missing.apply_launcher_core(&mut readings).unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/mpirun.core"),
            "{err}"
        );
    }
}
