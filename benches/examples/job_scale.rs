//! Job scale: a hung ring of N MPICH CH3 ranks written as real cores (one
//! executable and one `libmpi.so.12` shared by all, as one build is), then
//! read back and analysed by `mpidd-job`, timed in three parts:
//!
//! - (a) `JobReader::read_all` with stacks, then `analyze`;
//! - (b) the same without stacks (queues only);
//! - (c) `analyze` alone, on the readings of (a).
//!
//!     cargo run --release -p mpidd-benches --example job_scale [-- N...]
//!
//! N defaults to 1 10 100 1000. Each part is run three times with a fresh
//! reader (so the per-object setup is in every run) and the best run is
//! printed, as a total and per rank, in wall time and in the CPU time of
//! the whole process (all reader threads; from `/proc/self/stat`, so in
//! steps of 10 ms): on a shared machine wall time also counts the waits
//! for a core. The cores stay under the system's
//! temporary directory (`mpidd-bench-job-N`) and are rewritten each time.

use std::time::{Duration, Instant};

use mpidd_job::synthetic_cores::{ring_job, write_hung_job, SyntheticJobCores};
use mpidd_job::{analyze, JobReader, RankReading, RankTarget, ReadOptions};

const RUNS: usize = 3;

/// CPU time of this process so far (user and system, every thread).
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses and may
    // hold spaces: utime and stime are fields 14 and 15, in clock ticks
    // (100 a second on Linux).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// Best wall time and best CPU time of `RUNS` runs.
struct Timing {
    wall: Duration,
    cpu: Duration,
}

fn read(job: &SyntheticJobCores, stacks: bool) -> (Timing, Vec<RankReading>) {
    let targets: Vec<RankTarget> = job.cores.iter().map(RankTarget::core).collect();
    let mut best = Timing {
        wall: Duration::MAX,
        cpu: Duration::MAX,
    };
    let mut readings = Vec::new();
    for _ in 0..RUNS {
        let reader = JobReader::new(ReadOptions {
            layouts: Some(job.layouts.clone()),
            stacks,
            ..Default::default()
        });
        let (start, cpu_start) = (Instant::now(), cpu());
        readings = reader.read_all(&targets, &|_, _| {});
        let report = analyze(&readings);
        best.wall = best.wall.min(start.elapsed());
        best.cpu = best.cpu.min(cpu() - cpu_start);
        // One rank receiving from itself is no cycle of the graph.
        let cycles = usize::from(job.cores.len() > 1);
        assert_eq!(report.cycles.len(), cycles, "the ring is one cycle");
    }
    (best, readings)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us_per(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e6 / n as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ns: Vec<i64> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let ns = if ns.is_empty() {
        vec![1, 10, 100, 1000]
    } else {
        ns
    };
    let parallel = ReadOptions::default().parallel;
    println!("ranks read {parallel} at a time; best of {RUNS} runs\n");
    println!(
        "{:>5} {:>8} {:>8} | {:>9} {:>8} {:>9} | {:>9} {:>8} {:>9} | {:>9} {:>8} {:>9}",
        "N",
        "write ms",
        "core KiB",
        "(a) wall",
        "cpu ms",
        "us/rank",
        "(b) wall",
        "cpu ms",
        "us/rank",
        "(c) wall",
        "cpu ms",
        "us/rank"
    );
    for n in ns {
        let dir = std::env::temp_dir().join(format!("mpidd-bench-job-{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        let start = Instant::now();
        let job = write_hung_job(&dir, &ring_job(n))?;
        let write = start.elapsed();
        let bytes: u64 = job
            .cores
            .iter()
            .map(|c| std::fs::metadata(c).map_or(0, |m| m.len()))
            .sum();
        let n = job.cores.len();
        let (with_stacks, readings) = read(&job, true);
        let (queues_only, _) = read(&job, false);
        let mut analysis = Timing {
            wall: Duration::MAX,
            cpu: Duration::MAX,
        };
        for _ in 0..RUNS {
            let (start, cpu_start) = (Instant::now(), cpu());
            let report = analyze(&readings);
            analysis.wall = analysis.wall.min(start.elapsed());
            analysis.cpu = analysis.cpu.min(cpu() - cpu_start);
            assert_eq!(report.ranks.len(), n);
        }
        let row = |t: &Timing| {
            format!(
                "{:>9.2} {:>8.0} {:>9.1}",
                ms(t.wall),
                ms(t.cpu),
                us_per(t.wall, n)
            )
        };
        println!(
            "{:>5} {:>8.1} {:>8.1} | {} | {} | {}",
            n,
            ms(write),
            bytes as f64 / 1024.0 / n as f64,
            row(&with_stacks),
            row(&queues_only),
            row(&analysis),
        );
    }
    Ok(())
}
