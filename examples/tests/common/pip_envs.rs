//! The Python environments of pip's MPIs that scripts/python-envs.sh makes
//! (scripts/test.sh runs it and exports their paths), checked before use.

use std::path::PathBuf;

/// pip's Open MPI 5 (`MPIDD_PY_OMPI5_VENV`, else where python-envs.sh
/// puts it), with its `mpicc` and `mpirun`.
pub fn ompi5_venv() -> PathBuf {
    let venv = std::env::var_os("MPIDD_PY_OMPI5_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/mpidd/py311-ompi5")
        });
    assert!(
        venv.join("bin/mpicc").exists() && venv.join("bin/mpirun").exists(),
        "no pip Open MPI at {} (MPIDD_PY_OMPI5_VENV): run `bash scripts/python-envs.sh ompi5` \
         (scripts/test.sh does)",
        venv.display()
    );
    venv
}

/// pip's Open MPI wheel of `version` that python-envs.sh `target` makes,
/// from `var`, else its default directory `default` under the cache.
fn ompi_wheel_venv(var: &str, default: &str, target: &str) -> PathBuf {
    let venv = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("HOME"))
            .join(".cache/mpidd")
            .join(default)
    });
    assert!(
        venv.join("bin/mpicc").exists() && venv.join("bin/mpirun").exists(),
        "no pip Open MPI at {} ({var}): run `bash scripts/python-envs.sh {target}` \
         (scripts/test.sh does)",
        venv.display()
    );
    venv
}

/// pip's Open MPI 5.0.9 wheel (`MPIDD_PY_OMPI509_VENV`).
#[allow(dead_code)]
pub fn ompi509_venv() -> PathBuf {
    ompi_wheel_venv("MPIDD_PY_OMPI509_VENV", "py311-ompi509", "ompi509")
}

/// pip's Open MPI 4.1.8 wheel (`MPIDD_PY_OMPI418_VENV`).
#[allow(dead_code)]
pub fn ompi418_venv() -> PathBuf {
    ompi_wheel_venv("MPIDD_PY_OMPI418_VENV", "py311-ompi418", "ompi418")
}
