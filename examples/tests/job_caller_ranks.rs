//! The job reader over ranks the caller already traces, as a debugger
//! holds them: the test itself seizes and stops every rank of a real hung
//! job (it is their tracer, so nothing else can attach), hands each to
//! `JobReader::read_caller_rank` with its target and the registers it
//! took, and the verdict must be the one `mpidd job --pid` gives for the
//! same job once the test has let the ranks go. While the reader works,
//! the ranks stay stopped under the test's own trace: the reader neither
//! attaches nor lets go.

mod common;

use common::hung_job::{proc_state, tracer_pid, HangMpi, HungJob};
use common::job_checks::{check, cycles, edges, findings, job_json, one_at_a_time, Expected};
use mpidd_job::{analyze, CallerRank, JobReader, ReadOptions};
use mpidd_read::{AttachGuard, LiveTarget};
use serde_json::Value;

/// Reads `job`'s ranks as their tracer, then `mpidd job` on the same job;
/// both must give `expected`, and the same report.
fn caller_ranks_give_mpidd_jobs_verdict(mpi: HangMpi, prefix: &str, layouts: &str) {
    let _serial = one_at_a_time();
    let job = HungJob::start_on(mpi, &format!("caller-{prefix}ring"), "hang_ring");
    let pids: Vec<i32> = (0..4).map(|r| job.pid(r)).collect();
    // The tracer is the thread that seized the ranks: this one.
    let me: i32 = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name()?.to_str()?.parse().ok())
        .expect("this thread's id");

    let ours = {
        // The test is the debugger: it stops every rank and holds them.
        let guards: Vec<AttachGuard> = pids
            .iter()
            .map(|&pid| AttachGuard::attach(pid).expect("seize the rank"))
            .collect();
        let targets: Vec<LiveTarget> = pids
            .iter()
            .map(|&pid| LiveTarget::open(pid).expect("open the rank"))
            .collect();
        let registers: Vec<_> = guards
            .iter()
            .map(|g| g.thread_registers().expect("the rank's registers"))
            .collect();
        let reader = JobReader::new(ReadOptions::default());
        let readings: Vec<_> = pids
            .iter()
            .zip(&targets)
            .zip(&registers)
            .map(|((&pid, target), threads)| {
                let rank = CallerRank::new(format!("pid {pid}"), target, target.symbols())
                    .with_pid(pid)
                    .with_threads(threads)
                    .with_executable(std::fs::read_link(format!("/proc/{pid}/exe")).unwrap());
                reader.read_caller_rank(&rank)
            })
            .collect();
        // The reader left the ranks as it found them: stopped, under the
        // test's trace.
        for &pid in &pids {
            assert_eq!(tracer_pid(pid), Some(me), "rank {pid}'s tracer");
            assert_eq!(proc_state(pid), Some('t'), "rank {pid} stays stopped");
        }
        for g in guards {
            g.detach().expect("let the rank go");
        }
        serde_json::to_value(analyze(&readings)).unwrap()
    };
    job.assert_running("after the caller let its ranks go");
    check(&ours, &Expected::ring(), &job, "read as the caller's ranks");
    for r in ours["ranks"].as_array().unwrap() {
        let provenance = &r["basis"]["queues"]["provenance"];
        assert!(
            provenance
                .as_str()
                .is_some_and(|p| p.contains("decoder ") && p.contains(layouts)),
            "each rank says what its queues rest on ({layouts}): {r}"
        );
    }

    let theirs = job_json(&["--pid", &job.mpiexec_pid().to_string()]);
    assert_eq!(verdict(&ours), verdict(&theirs));
    assert_eq!(cycles(&ours), cycles(&theirs));
    assert_eq!(edges(&ours), edges(&theirs));
    assert_eq!(findings(&ours), findings(&theirs));
}

fn verdict(report: &Value) -> Vec<String> {
    report["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn debian_open_mpi_ranks_the_caller_traces() {
    // Stripped: the layouts the target's types gave are the shipped
    // profile's, and the reading says so.
    caller_ranks_give_mpidd_jobs_verdict(
        HangMpi::DebianOpenMpi,
        "ompi-",
        "layouts from the profile of Open MPI 4.1.4",
    );
}

#[test]
fn debian_mpich_ranks_the_caller_traces() {
    caller_ranks_give_mpidd_jobs_verdict(
        HangMpi::DebianMpich,
        "mpich-",
        "layouts from the profile of MPICH 4.0.2",
    );
}

#[test]
fn reference_mpich_ranks_the_caller_traces() {
    caller_ranks_give_mpidd_jobs_verdict(HangMpi::ReferenceMpich, "", "layouts from its DWARF");
}
