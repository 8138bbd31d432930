//! `mpidd-embed job PID...`: the tracer stops every rank itself and hands
//! each to the job reader with its own memory, symbols and the registers it
//! holds, then prints the verdict the job layer draws from them.

use std::io::Write;
use std::time::Duration;

use mpidd_job::RankReading;

use crate::memory::PtraceMemory;
use crate::reading::RankReader;
use crate::registers::{general, thread_registers};
use crate::stop_loop::{error_chain, LoopError};
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
    let readings: Vec<RankReading> = held.iter().map(read_rank).collect();
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

/// One rank as the job layer takes it: its queues and world rank read
/// through the tracer's memory, its stacks from the registers the tracer
/// holds.
fn read_rank(rank: &HeldRank) -> RankReading {
    let pid = rank.tracer.pid();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
    let mut reading = RankReading::failed(format!("pid {pid}"), Some(pid), None, String::new());
    reading.errors.clear();
    reading.executable = exe.file_name().map(|n| n.to_string_lossy().into_owned());
    match rank.reader.queues(&rank.memory) {
        Ok(q) => {
            if q.global_rank >= 0 {
                reading.world_rank = Some(q.global_rank);
                reading.world_rank_source = Some(format!("its MPI library ({})", q.source));
            }
            reading.queues = Some(q);
        }
        Err(e) => reading.queues_unread = Some(format!("queues: {}", error_chain(&e))),
    }
    for tid in rank.tracer.tids() {
        match general(tid) {
            Ok(regs) => {
                let regs = thread_registers(tid, &regs);
                reading.threads.push(rank.reader.stack(&rank.memory, &regs));
            }
            Err(e) => reading.errors.push(format!("stacks: {e}")),
        }
    }
    reading
}
