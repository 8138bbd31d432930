//! The MPI-5 ABI table (`mpihandles/src/mpich/abi_table.rs`) against the
//! headers of pip's MPICH 5 wheel: one program compiled by the wheel's
//! `mpicc_abi` and by its `mpicc` must print the values the table holds
//! (`scripts/write-mpi-abi-table.sh --check`).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_abi_table_is_what_the_wheel_s_two_headers_give() {
    let venv = std::env::var_os("MPIDD_PY_MPICH5_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!(
                "MPIDD_PY_MPICH5_VENV is not set: bash scripts/test.sh sets it, or \
                 MPIDD_PY_MPICH5_VENV=$(bash scripts/python-envs.sh mpich5 | tail -n 1)"
            )
        });
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("bash")
        .arg(root.join("scripts/write-mpi-abi-table.sh"))
        .arg(&venv)
        .arg("--check")
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("102 handles"), "{said}");
}
