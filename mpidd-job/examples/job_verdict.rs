//! The verdict on a hung job, from a directory of its ranks' cores.
use mpidd_job::{analyze, discover, JobReader, ReadOptions};
use mpidd_read::CoreTargetOptions;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A directory of rank cores (core.PID, as `gcore` names them).
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: job_verdict CORE_DIR")?;
    let ranks = discover::cores_in(Path::new(&dir), &CoreTargetOptions::default())?;
    let readings = JobReader::new(ReadOptions::default()).read_all(&ranks, &|_, _| {});
    let report = analyze(&readings);
    for cycle in &report.cycles {
        println!("cycle: {cycle:?}");
    }
    for line in &report.verdict {
        println!("{line}");
    }
    Ok(())
}
