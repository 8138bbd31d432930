//! Synthetic hung jobs written as real files: for each rank an ELF core of
//! an MPICH CH3 process, beside the executable and the libraries it maps,
//! so that [`JobReader`](crate::JobReader) reads them as it reads cores of
//! a real job, from the files alone.
//!
//! Each core holds what the CH3 decoder reads (MPICH's version strings,
//! `MPIR_All_communicators` with every communicator, its group or virtual
//! connection table, the posted and unexpected receive queues, the send
//! queue) and one thread stopped in a chosen call chain, whose registers
//! (NT_PRSTATUS) and stack unwind through the functions of the written
//! objects by their `.eh_frame`. The synthetic `libmpi.so.12` has no DWARF
//! types, so the structs' layouts come with the job as a
//! [`LayoutTable`](mpiq_core::LayoutTable) for [`ReadOptions::layouts`](crate::ReadOptions).
//!
//! The bytes are laid out here from those layouts, field by field, never
//! through the decoder's code: a decoder bug cannot cancel out.
//!
//! All ranks share one executable and one set of libraries, as the ranks of
//! a real job run one build; only the cores are per rank.
//!
//! ```
//! use mpidd_job::synthetic_cores::{write_hung_job, FrameSpec, HungJobSpec, HungRankSpec};
//! use mpidd_job::{analyze, JobReader, RankTarget, ReadOptions};
//!
//! let dir = std::env::temp_dir().join(format!("mpidd-doc-cores-{}", std::process::id()));
//! let spec = HungJobSpec::new(2)
//!     .rank(HungRankSpec::new(0).receive("MPI_COMM_WORLD", Some(1), Some(7), 64)
//!         .stack(FrameSpec::in_mpi("MPI_Recv")))
//!     .rank(HungRankSpec::new(1).receive("MPI_COMM_WORLD", Some(0), Some(7), 64)
//!         .stack(FrameSpec::in_mpi("MPI_Recv")));
//! let job = write_hung_job(&dir, &spec)?;
//! let reader = JobReader::new(ReadOptions { layouts: Some(job.layouts.clone()), ..Default::default() });
//! let targets: Vec<_> = job.cores.iter().map(RankTarget::core).collect();
//! let report = analyze(&reader.read_all(&targets, &|_, _| {}));
//! assert_eq!(report.cycles, vec![vec![0, 1]]);
//! assert_eq!(report.ranks[0].mpi_call.as_deref(), Some("MPI_Recv"));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod layout;
mod rank_core;
mod spec;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mpidd_read::{LayoutProfile, ProfileIdentity, ProfileObject};
use mpidd_types::AddressWidth;
use mpiq_core::Layouts;

pub use layout::layout_table;
use rank_core::{rank_core, Comm, Objects};
pub use spec::{
    demo_job, innermost_first, ring_job, FrameSpec, Hostile, HungCommSpec, HungJobSpec,
    HungRankSpec, Object, ReceiveSpec, SendSpec, UnexpectedSpec,
};

/// The file names written beside the cores.
pub const EXECUTABLE: &str = "app";
/// The synthetic MPI library's file name.
pub const LIBMPI: &str = "libmpi.so.12";
/// The synthetic C library's file name.
pub const LIBC: &str = "libc.so.6";

/// The file name of the layout profile written beside the cores.
const PROFILE: &str = "libmpi-layouts.json";

/// A written job.
#[derive(Clone)]
pub struct SyntheticJobCores {
    /// The directory that holds everything.
    pub dir: PathBuf,
    /// The core of each rank, in the order of [`HungJobSpec::ranks`].
    pub cores: Vec<PathBuf>,
    /// The layouts of the synthetic MPICH's structs, for
    /// [`ReadOptions::layouts`](crate::ReadOptions::layouts).
    pub layouts: Arc<dyn Layouts + Send + Sync>,
    /// The same layouts as a layout profile for the written
    /// `libmpi.so.12` (by its build-id), in the directory: what a user
    /// passes to `mpidd job --core-dir DIR --profile FILE`, as for a
    /// stripped MPI.
    pub profile: PathBuf,
}

impl std::fmt::Debug for SyntheticJobCores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyntheticJobCores")
            .field("dir", &self.dir)
            .field("cores", &self.cores)
            .finish_non_exhaustive()
    }
}

/// Why a job could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyntheticCoresError {
    /// The spec contradicts itself.
    #[error("the job's spec: {0}")]
    Spec(String),
    /// An ELF file could not be laid out or written.
    #[error(transparent)]
    Elf(#[from] mpidd_read::WriteError),
    /// The directory could not be made.
    #[error("cannot make {path}: {cause}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// The OS error: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
}

/// Writes the job into `dir` (made if missing): [`EXECUTABLE`], [`LIBMPI`],
/// [`LIBC`] and one `core.N` per rank (N its world rank, zero-padded).
/// Files of an earlier job there are overwritten.
pub fn write_hung_job(
    dir: &Path,
    spec: &HungJobSpec,
) -> Result<SyntheticJobCores, SyntheticCoresError> {
    if spec.abi.address_width != AddressWidth::W64 {
        return Err(SyntheticCoresError::Spec(
            "only 64-bit targets are laid out (the layout table assumes 8-byte words)".into(),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|cause| SyntheticCoresError::Io {
        path: dir.to_path_buf(),
        cause,
    })?;
    // The cores record absolute paths, as the kernel does.
    let dir = dir
        .canonicalize()
        .map_err(|cause| SyntheticCoresError::Io {
            path: dir.to_path_buf(),
            cause,
        })?;
    let objects = Objects::build(spec)?;
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    objects.exe.write(&dir.join(EXECUTABLE))?;
    objects.libmpi.write(&dir.join(LIBMPI))?;
    if let Some(libc) = &objects.libc {
        libc.write(&dir.join(LIBC))?;
    }
    let mut comms: Vec<Comm<'_>> = vec![Comm {
        name: "MPI_COMM_WORLD",
        members: (0..spec.world_size).collect(),
        context: 0,
    }];
    for (i, c) in spec.communicators.iter().enumerate() {
        if comms.iter().any(|k| k.name == c.name) {
            return Err(SyntheticCoresError::Spec(format!(
                "two communicators named {}",
                c.name
            )));
        }
        // MPICH hands out context ids in steps that leave room for its
        // collective and intercommunicator sub-contexts.
        comms.push(Comm {
            name: &c.name,
            members: c.members.clone(),
            context: 16 * (i as u64 + 1),
        });
    }
    let width = spec.world_size.max(1).to_string().len();
    let mut cores = Vec::with_capacity(spec.ranks.len());
    for rank in &spec.ranks {
        let core = rank_core(spec, rank, &comms, &objects, &path)?;
        let file = dir.join(format!("core.{:0width$}", rank.world_rank));
        core.write(&file)?;
        cores.push(file);
    }
    let profile = dir.join(PROFILE);
    let table = layout_table();
    let written = LayoutProfile::cached(
        ProfileIdentity {
            implementation: "MPICH".into(),
            version: "4.0.2".into(),
            build: "mpidd-job's synthetic cores".into(),
            arch: "x86_64".into(),
            objects: vec![ProfileObject {
                name: LIBMPI.into(),
                source_build_id: None,
                build_ids: objects
                    .libmpi
                    .build_id()
                    .iter()
                    .map(|id| mpidd_read::build_id_hex(id))
                    .collect(),
                code_digests: Vec::new(),
            }],
        },
        table.clone(),
    );
    std::fs::write(&profile, written.to_json()).map_err(|cause| SyntheticCoresError::Io {
        path: profile.clone(),
        cause,
    })?;
    Ok(SyntheticJobCores {
        dir,
        cores,
        layouts: Arc::new(table),
        profile,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpidd_types::TargetAbi;

    #[test]
    fn the_table_has_every_type_the_ch3_decoder_asks_for() {
        let t = layout_table();
        for (ty, member) in [
            ("MPIR_Comm", "dev"),
            ("MPIDI_Request", "tmpbuf"),
            ("MPIR_Sendq", "next"),
        ] {
            assert!(t.member_offset(ty, member).is_ok(), "{ty}.{member}");
        }
    }

    #[test]
    fn a_32_bit_job_is_refused() {
        let spec = HungJobSpec {
            abi: TargetAbi::I686,
            ..HungJobSpec::new(1)
        };
        let dir = std::env::temp_dir().join("mpidd-never-written");
        assert!(matches!(
            write_hung_job(&dir, &spec),
            Err(SyntheticCoresError::Spec(_))
        ));
    }
}
