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

/// pip's Open MPI wheel of `version` (one of those `python-envs.sh
/// ompi-wheels` lists), which `python-envs.sh ompi-wheel VERSION` makes:
/// `MPIDD_PY_OMPI_<VERSION, dots as _>_VENV`, else its directory under the
/// cache, with the wheel's `mpicc` and `mpirun`.
pub fn ompi_wheel_venv(version: &str) -> PathBuf {
    let var = format!("MPIDD_PY_OMPI_{}_VENV", version.replace('.', "_"));
    let venv = std::env::var_os(&var)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                .join(".cache/mpidd")
                .join(format!("py311-ompi-{version}"))
        });
    assert!(
        venv.join("bin/mpicc").exists() && venv.join("bin/mpirun").exists(),
        "no pip Open MPI {version} at {} ({var}): run `bash scripts/python-envs.sh ompi-wheel \
         {version}` (scripts/test.sh does)",
        venv.display()
    );
    venv
}
