//! The native ob1 decoder (`mpidd queues`) against a real 4-rank Open MPI
//! job of the reference build (scripts/build-ref-ompi.sh), live and from
//! gcore cores. Each rank of tests/openmpi/queues.c writes down what it
//! posted and what its probes saw arrive; every rank's queues must hold
//! exactly that. Then the same job through Open MPI's own
//! libompi_dbg_msgq.so (`--compare-dll`), with every difference accounted
//! for. Then Debian's own stripped Open MPI, with no debug info anywhere,
//! read through the layout profile mpidd ships; and the reference job read
//! through that profile, which must equal its reading from DWARF.

mod common;

use serde_json::Value;

use common::mpich_job::{gcore, mpidd, wait_stopped};
use common::ob1_checks::{check_rank, msgq_dll_difference as why};
use common::ompi_job::{
    msgq_dll, ref_ompi, shipped_profile_with_reference_build_ids, OmpiBuild, OmpiJob,
};

/// `mpidd queues ARGS --json` with the native decoder.
fn native(args: &[&str]) -> Value {
    native_with_note(args).0
}

/// [`native`], with what mpidd said on standard error.
fn native_with_note(args: &[&str]) -> (Value, String) {
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

#[test]
fn ob1_queues_live_and_from_gcore_cores() {
    let job = OmpiJob::start("ompi-queues", "queues");
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        check_rank(rank, &native(&["--pid", &pid]), &job.posted(rank));
        wait_stopped(job.pid(rank));
    }
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        let core = core.to_str().unwrap();
        check_rank(rank, &native(&["--core", core]), &job.posted(rank));
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// `mpidd queues --compare-dll libompi_dbg_msgq.so --json` on one target:
/// the native reading, the vendor library's, and their differences.
fn compare(args: &[&str]) -> Value {
    let out = mpidd()
        .arg("queues")
        .args(args)
        .arg("--compare-dll")
        .arg(msgq_dll(&ref_ompi()))
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpidd queues {args:?} --compare-dll failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn compared_with_libompi_dbg_msgq() {
    let job = OmpiJob::start("ompi-queues-compare", "queues");
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let v = compare(&["--pid", &pid]);
        // Our side of the comparison is the reading checked above.
        check_rank(rank, &v["native"], &job.posted(rank));
        let diffs = v["differences"].as_array().unwrap();
        for d in diffs {
            assert!(
                why(d).is_some(),
                "rank {rank}: an unexplained difference: {d:#}"
            );
        }
        let shown = |comm: &str, queue: &str, field: &str| {
            diffs.iter().any(|d| {
                d["communicator"].as_str().unwrap().starts_with(comm)
                    && d["queue"] == queue
                    && d["field"] == field
            })
        };
        // Where the program left unexpected messages, the library shows
        // none; ours shows them (checked by check_rank).
        for line in job
            .posted(rank)
            .lines()
            .filter(|l| l.starts_with("unexpected"))
        {
            let comm = line.split_whitespace().nth(1).unwrap();
            assert!(
                shown(comm, "unexpected_messages", "state"),
                "rank {rank}: {line}: {diffs:#?}"
            );
        }
        wait_stopped(job.pid(rank));
    }
    assert_eq!(job.finish(), 0);
}

/// Debian's stripped libmpi.so.40 exports its globals but keeps no types:
/// the layouts come from the profile mpidd ships for exactly this build,
/// and every rank's queues are what the program (built -O2 without -g)
/// posted, live and from cores.
#[test]
fn ob1_queues_of_stock_debian_open_mpi_through_the_shipped_profile() {
    let job = OmpiJob::start_on(OmpiBuild::Debian, "ompi-queues-stock", "queues");
    let profile_note = |err: &str| {
        assert!(
            err.contains("profile of Open MPI 4.1.4") && err.contains("libmpi.so.40"),
            "mpidd should say where the layouts came from: {err}"
        );
    };
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let (q, err) = native_with_note(&["--pid", &pid]);
        profile_note(&err);
        check_rank(rank, &q, &job.posted(rank));
        wait_stopped(job.pid(rank));
    }
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        let (q, err) = native_with_note(&["--core", core.to_str().unwrap()]);
        profile_note(&err);
        check_rank(rank, &q, &job.posted(rank));
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// The shipped profile, made to also accept the reference build's
/// build-ids, reads the reference job exactly as its DWARF does.
#[test]
fn the_shipped_profile_reads_the_reference_build_as_its_dwarf_does() {
    let profile = shipped_profile_with_reference_build_ids();
    let job = OmpiJob::start("ompi-queues-profile", "queues");
    let file = job.dir.join("profile.json");
    std::fs::write(&file, profile.to_json()).unwrap();
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        let core = core.to_str().unwrap();
        let (dwarf, note) = native_with_note(&["--core", core]);
        assert!(!note.contains("profile"), "{note}");
        let (profiled, note) = native_with_note(&[
            "--core",
            core,
            "--prefer-profile",
            "--profile",
            file.to_str().unwrap(),
        ]);
        assert!(note.contains("profile of Open MPI 4.1.4"), "{note}");
        check_rank(rank, &dwarf, &job.posted(rank));
        assert_eq!(dwarf, profiled, "rank {rank}: DWARF and profile disagree");
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
