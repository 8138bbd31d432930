//! The native ob1 decoder (`mpidd queues`) against a real 4-rank Open MPI
//! job of the reference build (scripts/build-ref-ompi.sh), live and from
//! gcore cores. Each rank of tests/openmpi/queues.c writes down what it
//! posted and what its probes saw arrive; every rank's queues must hold
//! exactly that. Then the same job through Open MPI's own
//! libompi_dbg_msgq.so (`--compare-dll`), with every difference accounted
//! for. Then Debian's own stripped Open MPI, with no debug info anywhere,
//! read through the layout profile mpidd ships, natively and through
//! Debian's libompi_dbg_msgq.so; and the reference job read
//! through that profile, which must equal its reading from DWARF.

mod common;

use serde_json::Value;

use common::mpich_job::{gcore_each, mpidd, wait_stopped};
use std::path::Path;

use common::ob1_checks::{check_dll_comparison, check_rank};
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
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let core = core.to_str().unwrap();
        check_rank(rank, &native(&["--core", core]), &job.posted(rank));
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// `mpidd queues --compare-dll DLL --json` on one target: the native
/// reading, the vendor library's, and their differences.
fn compare(dll: &Path, args: &[&str]) -> Value {
    let out = mpidd()
        .arg("queues")
        .args(args)
        .arg("--compare-dll")
        .arg(dll)
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
    let dll = msgq_dll(&ref_ompi());
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let v = compare(&dll, &["--pid", &pid]);
        check_dll_comparison(rank, &v, &job.posted(rank), "live");
        wait_stopped(job.pid(rank));
    }
    assert_eq!(job.finish(), 0);
}

/// Debian's stripped libmpi.so.40 exports its globals but keeps no types:
/// the layouts come from the profile mpidd ships for exactly this build,
/// and every rank's queues are what the program (built -O2 without -g)
/// posted, live and from cores. Debian's own libompi_dbg_msgq.so, whose
/// type questions mpidd answers from that profile, reads them too.
#[test]
fn ob1_queues_of_stock_debian_open_mpi_through_the_shipped_profile() {
    let job = OmpiJob::start_on(OmpiBuild::Debian, "ompi-queues-stock", "queues");
    let dll = OmpiBuild::Debian.msgq_dll();
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
        // Debian's own libompi_dbg_msgq.so, its type questions answered
        // from the same profile, reads the same queues.
        let v = compare(&dll, &["--pid", &pid]);
        check_dll_comparison(rank, &v, &job.posted(rank), "live");
        wait_stopped(job.pid(rank));
    }
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let core = core.to_str().unwrap();
        let (q, err) = native_with_note(&["--core", core]);
        profile_note(&err);
        check_rank(rank, &q, &job.posted(rank));
        let v = compare(&dll, &["--core", core]);
        check_dll_comparison(rank, &v, &job.posted(rank), "core");
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
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
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
