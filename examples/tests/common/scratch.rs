//! The test jobs' working directories under `CARGO_TARGET_TMPDIR`: each
//! holds a program, its ranks' cores and their outputs, up to 600 MB for
//! an Open MPI job. A passing test removes its directory, so that a run of
//! the suite does not fill the disk (it once did, on CI); a failing one
//! keeps it for a look, as does any test when `MPIDD_KEEP_TEST_FILES` is
//! set.

use std::path::{Path, PathBuf};

/// A fresh, empty directory `NAME` under the tests' scratch root.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("create the scratch directory {}: {e}", dir.display()));
    dir
}

/// A fresh, empty directory `NAME` that every user can reach: under the
/// system's temporary directory, not `CARGO_TARGET_TMPDIR`, whose parents
/// may be private (scripts/test.sh keeps the target directory in root's
/// cache, which user `nobody` cannot enter). Named with this test
/// process's id, so that two runs of the suite do not share it.
pub fn fresh_dir_any_user(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mpidd-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("create the scratch directory {}: {e}", dir.display()));
    dir
}

/// Removes a job's directory once its processes are gone, unless the test
/// is failing (the directory is then what explains the failure) or the
/// caller asked to keep it.
pub fn remove_unless_failed(dir: &Path) {
    if std::thread::panicking() || std::env::var_os("MPIDD_KEEP_TEST_FILES").is_some() {
        return;
    }
    let _ = std::fs::remove_dir_all(dir);
}
