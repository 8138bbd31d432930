//! Writes a hung ring of N synthetic MPICH CH3 ranks as real files (one
//! core per rank, with the shared executable, `libmpi.so.12`, `libc.so.6`
//! and the layout profile of that libmpi), for timing whole `mpidd job`
//! commands against gdb on the same cores (scripts/bench-job-scale.sh):
//!
//!     cargo run --release -p mpidd-benches --example write_job_cores -- DIR N
//!
//! Prints the profile's path, for `mpidd job --core-dir DIR --profile FILE`.

use mpidd_job::synthetic_cores::{ring_job, write_hung_job};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(n)) = (args.next(), args.next()) else {
        return Err("usage: write_job_cores DIR N".into());
    };
    let n: i64 = n.parse()?;
    let _ = std::fs::remove_dir_all(&dir);
    let job = write_hung_job(std::path::Path::new(&dir), &ring_job(n))?;
    println!("{}", job.profile.display());
    Ok(())
}
