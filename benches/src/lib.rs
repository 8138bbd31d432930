//! Inputs shared by the benchmarks: a million-entry MPIR core made by the
//! synthetic job builder, and the reference MPICH and Open MPI installs.
//!
//! ```no_run
//! let core = mpidd_benches::million_rank_core();
//! assert!(core.core.exists());
//! ```

use std::path::PathBuf;

use mpidd_read::{SyntheticCoreOptions, SyntheticJob};
use mpidd_types::TargetAbi;

/// Ranks in the P1 table.
pub const RANKS: usize = 1_000_000;
/// Ranks per host: 1,000,000 / 64 = 15,625 distinct hosts.
pub const RANKS_PER_HOST: usize = 64;

/// A core file and the executable it came from.
pub struct CoreFiles {
    /// The core.
    pub core: PathBuf,
    /// The executable.
    pub exe: PathBuf,
}

/// The P1 input: a real x86_64 core whose `MPIR_proctable` has
/// [`RANKS`] entries over 15,625 hosts, written once per machine under the
/// system temporary directory and reused.
pub fn million_rank_core() -> CoreFiles {
    let dir = std::env::temp_dir().join("mpidd-bench-1m");
    let files = CoreFiles {
        core: dir.join("job.core"),
        exe: dir.join("mpirun"),
    };
    if files.core.exists() && files.exe.exists() {
        return files;
    }
    let hosts: Vec<String> = (0..RANKS.div_ceil(RANKS_PER_HOST))
        .map(|h| format!("node{h:05}"))
        .collect();
    let spec: Vec<(&str, &str, i32)> = (0..RANKS)
        .map(|r| {
            (
                hosts[r / RANKS_PER_HOST].as_str(),
                "/opt/app/bin/ring",
                100_000 + r as i32,
            )
        })
        .collect();
    let job = SyntheticJob::builder(TargetAbi::X86_64)
        .mpir_starter(&spec)
        .build();
    std::fs::create_dir_all(&dir).expect("a directory for the benchmark core");
    job.write_files(&files.core, &files.exe, SyntheticCoreOptions::default())
        .expect("writing the benchmark core");
    files
}

/// The reference MPICH install (`$MPIDD_REF_MPICH`, default
/// `~/.cache/mpidd/mpich-4.0.2`), which `scripts/build-ref-mpich.sh` makes.
pub fn reference_mpich() -> PathBuf {
    let prefix = std::env::var_os("MPIDD_REF_MPICH")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/mpidd/mpich-4.0.2")
        });
    assert!(
        prefix.join("lib/libmpi.so").exists(),
        "the reference MPICH is not at {}: run `bash scripts/build-ref-mpich.sh`",
        prefix.display()
    );
    prefix
}

/// The reference Open MPI install (`$MPIDD_REF_OMPI`, default
/// `~/.cache/mpidd/openmpi-4.1.4`), which `scripts/build-ref-ompi.sh` makes.
pub fn reference_ompi() -> PathBuf {
    let prefix = std::env::var_os("MPIDD_REF_OMPI")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/mpidd/openmpi-4.1.4")
        });
    assert!(
        prefix.join("lib/openmpi/libompi_dbg_msgq.so").exists(),
        "the reference Open MPI is not at {}: run `bash scripts/build-ref-ompi.sh`",
        prefix.display()
    );
    prefix
}
