//! Scratch files, for the readers that only take paths.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// This process's scratch directory, on tmpfs when there is one. The fuzz
/// script points `MPIDD_FUZZ_SCRATCH` at a directory of its own and removes
/// it afterwards; each fuzzing process works in a subdirectory named after
/// its pid, so parallel runs never share files.
pub fn scratch_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let parent = std::env::var_os("MPIDD_FUZZ_SCRATCH")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                let shm = Path::new("/dev/shm");
                if shm.is_dir() {
                    shm.to_path_buf()
                } else {
                    std::env::temp_dir()
                }
            });
        let dir = parent.join(format!("mpidd-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory for the fuzz inputs");
        dir
    })
}

/// Writes `bytes` to the scratch file `name` and returns its path.
pub fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch_dir().join(name);
    std::fs::write(&path, bytes).expect("writing a scratch file");
    path
}
