//! `mpidd-embed job PID...`: the tracer stops every rank itself and hands
//! each to the job reader with its own memory, symbols and the registers it
//! holds, then prints the verdict the job layer draws from them.

use std::io::Write;
use std::time::Duration;

use mpidd_job::{CallerRank, JobReader, RankReading, ReadOptions};

use crate::memory::PtraceMemory;
use crate::reading::RankReader;
use crate::registers::{general, thread_registers};
use crate::stop_loop::LoopError;
use crate::tracer::Tracer;

/// One rank held stopped by the tracer, with what the crates read it
/// through.
struct HeldRank {
    tracer: Tracer,
    memory: PtraceMemory,
    reader: RankReader,
}

/// Stops every rank of `pids` (each thread, through the tracer's own
/// ptrace), reads each through the crates, lets them all go, and prints
/// the job's verdict: text, or the job report as JSON.
pub fn run_job(pids: &[i32], json: bool, limit: Duration) -> Result<(), LoopError> {
    let mut held = Vec::new();
    for &pid in pids {
        let memory = PtraceMemory::open(pid)?;
        let reader = RankReader::new(pid)?;
        // Dropping a HeldRank (an error below) lets its rank go.
        let tracer = Tracer::attach(pid, limit)?;
        held.push(HeldRank {
            tracer,
            memory,
            reader,
        });
    }
    // One reader for the job: per build, its layouts and unwind tables are
    // made once for all the ranks.
    let job = JobReader::new(ReadOptions::default());
    let readings: Vec<RankReading> = held.iter().map(|r| read_rank(&job, r)).collect();
    for rank in &mut held {
        rank.tracer.detach(false)?;
    }
    let report = mpidd_job::analyze(&readings);
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut out, &report).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        for line in &report.verdict {
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// One rank as the job layer takes it: a [`CallerRank`] read through the
/// tracer's memory reader, the loaded objects and their types, and the
/// registers the tracer holds for each of its threads. The job reader
/// never attaches to it or lets it go: the tracer does.
fn read_rank(job: &JobReader, rank: &HeldRank) -> RankReading {
    let pid = rank.tracer.pid();
    let mut threads = Vec::new();
    let mut errors = Vec::new();
    for tid in rank.tracer.tids() {
        match general(tid) {
            Ok(regs) => threads.push(thread_registers(tid, &regs)),
            Err(e) => errors.push(format!("stacks: {e}")),
        }
    }
    let target = rank.reader.target(&rank.memory);
    let mut caller = CallerRank::new(format!("pid {pid}"), &target, rank.reader.objects())
        .with_pid(pid)
        .with_threads(&threads);
    if let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) {
        caller = caller.with_executable(exe);
    }
    let mut reading = job.read_caller_rank(&caller);
    reading.errors.extend(errors);
    reading
}
