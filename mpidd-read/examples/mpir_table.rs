//! The MPIR process table of a launcher's core.
use mpidd_read::{mpir, CoreTarget, Limits};
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A core of the launcher (mpiexec, mpirun, srun), e.g. from `gcore PID`.
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: mpir_table LAUNCHER_CORE")?;
    let launcher = CoreTarget::open(Path::new(&path), None, None)?;
    let state = mpir::read_state(&launcher, &Limits::default())?;
    for (rank, p) in state.proctable.iter().enumerate() {
        println!(
            "rank {rank}: pid {} on {}: {}",
            p.pid, p.host_name, p.executable_name
        );
    }
    Ok(())
}
