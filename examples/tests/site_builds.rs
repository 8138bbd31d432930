//! A site's build (Spack's, EasyBuild's): the reference builds' source and
//! configure lines, without DWARF and with build-ids no profile names
//! (`common::site_build`). Open MPI 4.1.4's is read through the 4.1
//! release family, after the check on the process: the queues of
//! tests/openmpi/queues.c as its ranks wrote them down, live and from
//! cores, and the hung ring of tests/mpich/hang_ring.c named as a cycle.
//! MPICH 4.0.2's (ch3:nemesis) is read through the 4.0 ch3:nemesis family
//! of the MPICH profile the same way (tests/mpich/queues.c and the ring);
//! the same source configured without `--enable-debuginfo`, which moves a
//! member of those layouts, is offered the family and refused by the check
//! on the process, which says why.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::hung_job::build;
use common::hung_job::HungJob;
use common::job_checks::{check_cores, check_live, check_ring_receives, one_at_a_time, Expected};
use common::mpich_job::{
    gcore, gcore_each, mpidd, ref_mpich, ref_mpich_ch4, ref_mpich_nodebugger, wait_stopped, Job,
};
use common::ob1_checks::check_rank;
use common::ompi5_reading::{check_handles_from_cores, check_handles_live};
use common::ompi_job::{ranks_run_on, ref_ompi, OmpiJob, DEBIAN_MPIRUN};
use common::queue_checks::check_rank_native;
use common::site_build::{build_id, site_copy, site_mpich, MPICH_FAMILY, MPICH_SITE};
use common::supported_builds::Outcome;
use serde_json::Value;

/// The builds as docs/supported-builds.md names them, with where their
/// layouts come from.
const OMPI_SITE: &str = "site build of Open MPI 4.1.4 (x86_64)";
const OMPI_FAMILY: &str = "the family Open MPI 4.1.3 up to 4.2 of the Open MPI 4.1.4 profile";
const MPICH_SITE_CH4: &str = "site build of MPICH 4.0.2, ch4:ucx (x86_64)";
const MPICH_CH4_NONE: &str = "none: no DWARF, no profile, no family of its device";
const MPICH_SITE_NODEBUGGER: &str =
    "site build of MPICH 4.0.2, ch3:nemesis, without --enable-debuginfo (x86_64)";

/// The site copy of the reference Open MPI, made once for the binary.
fn site_ompi() -> &'static Path {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| site_copy(&ref_ompi(), "site-ompi-4.1.4"))
}

/// `mpidd ARGS`: its standard output, standard error and success.
fn run(args: &[&str]) -> (String, String, bool) {
    let out = mpidd().args(args).output().expect("run mpidd");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// What mpidd says when the layouts of the site's libmpi come from the 4.1
/// family of the Open MPI 4.1.4 profile, checked on the process.
fn assert_family(err: &str) {
    for part in [
        "the layouts of libmpi come from the family",
        "Open MPI 4.1.3 up to 4.2",
        "profile of Open MPI 4.1.4",
        "states version 4.1.4",
        "checked on the process",
    ] {
        assert!(
            err.contains(part),
            "{part:?} missing from what mpidd said: {err}"
        );
    }
}

/// Every handle kind of tests/openmpi/handles.c on the site's Open MPI,
/// through the 4.1 family, live and from cores (the version its handles
/// name is the release's).
#[test]
fn ompi_site_build_handles_through_the_family_live_and_from_cores() {
    let live = Outcome::begin(OMPI_SITE, OMPI_FAMILY, "handle", "live");
    let cores = Outcome::begin(OMPI_SITE, OMPI_FAMILY, "handle", "core");
    let job = OmpiJob::start_on_copy(site_ompi(), "site-ompi-handles", "handles");
    check_handles_live(&job, "4.1.4");
    live.works();
    check_handles_from_cores(&job, "4.1.4", false);
    cores.works();
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn ompi_site_build_queues_through_the_family_live_and_from_cores() {
    let live = Outcome::begin(OMPI_SITE, OMPI_FAMILY, "queues", "live");
    let cores = Outcome::begin(OMPI_SITE, OMPI_FAMILY, "queues", "core");
    let site = site_ompi();
    let ours = build_id(&site.join("lib/libmpi.so.40")).expect("a build-id");
    let reference = build_id(&ref_ompi().join("lib/libmpi.so.40")).expect("a build-id");
    assert_ne!(ours, reference);
    let job = OmpiJob::start_on_copy(site, "site-ompi-queues", "queues");
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let (out, err, ok) = run(&["queues", "--pid", &pid, "--json", "--verbose"]);
        assert!(ok, "mpidd queues --pid {pid} failed: {err}");
        assert_family(&err);
        let q: Value = serde_json::from_str(&out).expect("queues JSON");
        check_rank(rank, &q, &job.posted(rank));
    }
    live.works();
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let (out, err, ok) = run(&[
            "queues",
            "--core",
            core.to_str().unwrap(),
            "--json",
            "--verbose",
        ]);
        assert!(ok, "mpidd queues --core of rank {rank} failed: {err}");
        assert_family(&err);
        let q: Value = serde_json::from_str(&out).expect("queues JSON");
        check_rank(rank, &q, &job.posted(rank));
    }
    cores.works();
    let core = gcore(&job.dir, job.pid(0));
    let (out, err, ok) = run(&["identify", "--core", core.to_str().unwrap()]);
    assert!(ok, "mpidd identify failed: {err}");
    assert!(
        out.contains(&ours),
        "identify does not name the build {ours}: {out}"
    );
    assert!(out.contains("check     passed"), "{out}");
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn ompi_site_build_ring_is_a_cycle_live_and_from_cores() {
    let _serial = one_at_a_time();
    let live = Outcome::begin(OMPI_SITE, OMPI_FAMILY, "job", "live");
    let cores = Outcome::begin(OMPI_SITE, OMPI_FAMILY, "job", "core");
    let site = site_ompi();
    let dir = common::scratch::fresh_dir("site-ompi-ring");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mpich/hang_ring.c");
    let exe = dir.join("hang_ring");
    let cc = Command::new(ref_ompi().join("bin/mpicc"))
        .args(["-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    // The blocked ranks busy-poll: at the lowest priority they leave the
    // CPUs to mpidd (nice execs, so the pid is mpirun's).
    let mut launch = Command::new("nice");
    launch
        .args(["-n", "19", DEBIAN_MPIRUN])
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "--mca",
            "btl",
            "self,vader",
        ])
        .arg("-x")
        .arg(format!("LD_LIBRARY_PATH={}", site.join("lib").display()))
        .arg("-x")
        .arg(format!("OPAL_PREFIX={}", site.display()))
        .args(["-n", "4"])
        .arg(&exe);
    let job = HungJob::run(launch, dir, source, "hang_ring");
    ranks_run_on(&job.ranks, &site.join("lib/libmpi.so.40"));
    let expected = Expected::ring();
    check_ring_receives(&check_live(&job, &expected));
    live.works();
    check_ring_receives(&check_cores(&job, &expected));
    cores.works();
}

/// What mpidd says when the layouts of the site's libmpi come from the
/// 4.0 ch3:nemesis family of the MPICH profile, checked on the process.
fn assert_mpich_family(err: &str) {
    for part in [
        "the layouts of libmpi come from the family",
        "MPICH 4.0 up to 4.0.3 (ch3:nemesis",
        "profile of MPICH 4.0.2",
        "states version 4.0.2",
        "checked on the process",
    ] {
        assert!(
            err.contains(part),
            "{part:?} missing from what mpidd said: {err}"
        );
    }
}

/// A job of tests/mpich/PROGRAM.c, built by the reference mpicc, whose
/// ranks run on the site copy `site` of a reference build
/// (`LD_LIBRARY_PATH`), checked in rank 0's mappings.
fn mpich_job_on(site: &Path, reference: &Path, name: &str) -> Job {
    let env = [("LD_LIBRARY_PATH", site.join("lib"))];
    let job = Job::start_on(reference, name, "queues", &[], &[], &env);
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", job.pid(0))).unwrap();
    let lib = std::fs::canonicalize(site.join("lib/libmpi.so.12")).unwrap();
    assert!(
        maps.contains(lib.to_str().unwrap()),
        "rank 0 is not on the site build {}",
        lib.display()
    );
    job
}

#[test]
fn mpich_site_build_queues_through_the_family_live_and_from_cores() {
    let live = Outcome::begin(MPICH_SITE, MPICH_FAMILY, "queues", "live");
    let cores = Outcome::begin(MPICH_SITE, MPICH_FAMILY, "queues", "core");
    let site = site_mpich();
    let ours = build_id(&site.join("lib/libmpi.so.12")).expect("a build-id");
    let reference = build_id(&ref_mpich().join("lib/libmpi.so.12")).expect("a build-id");
    assert_ne!(ours, reference);
    let job = mpich_job_on(site, &ref_mpich(), "site-mpich-queues");
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let (out, err, ok) = run(&["queues", "--pid", &pid, "--json", "--verbose"]);
        assert!(ok, "mpidd queues --pid {pid} failed: {err}");
        assert_mpich_family(&err);
        let q: Value = serde_json::from_str(&out).expect("queues JSON");
        check_rank_native(rank, &q);
        wait_stopped(job.pid(rank));
    }
    live.works();
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let (out, err, ok) = run(&[
            "queues",
            "--core",
            core.to_str().unwrap(),
            "--json",
            "--verbose",
        ]);
        assert!(ok, "mpidd queues --core of rank {rank} failed: {err}");
        assert_mpich_family(&err);
        let q: Value = serde_json::from_str(&out).expect("queues JSON");
        check_rank_native(rank, &q);
    }
    cores.works();
    let core = gcore(&job.dir, job.pid(0));
    let (out, err, ok) = run(&["identify", "--core", core.to_str().unwrap()]);
    assert!(ok, "mpidd identify failed: {err}");
    assert!(
        out.contains("states    MPICH 4.0.2, device ch3:nemesis"),
        "{out}"
    );
    assert!(
        out.contains(&ours),
        "identify does not name the build {ours}: {out}"
    );
    assert!(out.contains("check     passed"), "{out}");
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn mpich_site_build_ring_is_a_cycle_live_and_from_cores() {
    let _serial = one_at_a_time();
    let live = Outcome::begin(MPICH_SITE, MPICH_FAMILY, "job", "live");
    let cores = Outcome::begin(MPICH_SITE, MPICH_FAMILY, "job", "core");
    let site = site_mpich();
    let reference = ref_mpich();
    let (dir, exe, source) = build(&reference.join("bin/mpicc"), "site-mpich-ring", "hang_ring");
    // The blocked ranks busy-poll: at the lowest priority they leave the
    // CPUs to mpidd (nice execs, so the pid is mpiexec's). Hydra passes
    // the environment on to the ranks.
    let mut launch = Command::new("nice");
    launch
        .args(["-n", "19"])
        .arg(reference.join("bin/mpiexec.hydra"))
        .args(["-n", "4"])
        .arg(&exe)
        .env("LD_LIBRARY_PATH", site.join("lib"));
    let job = HungJob::run(launch, dir, source, "hang_ring");
    let lib = std::fs::canonicalize(site.join("lib/libmpi.so.12")).unwrap();
    for &(rank, pid) in &job.ranks {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
        assert!(
            maps.contains(lib.to_str().unwrap()),
            "rank {rank} is not on the site build"
        );
    }
    let expected = Expected::ring();
    check_ring_receives(&check_live(&job, &expected));
    live.works();
    check_ring_receives(&check_cores(&job, &expected));
    cores.works();
}

/// The same CH3 source built without `--enable-debuginfo`, stripped and
/// with its own build-id: it states 4.0.2 and is offered the family, whose
/// layouts put `MPIR_Request.u.persist.real_request` where this build does
/// not; the check on the process refuses them, naming why, for the queues
/// and the handles alike.
#[test]
fn mpich_site_build_without_debugger_support_is_refused_by_the_check() {
    let offered = format!("offered {MPICH_FAMILY}");
    let queues = Outcome::begin(MPICH_SITE_NODEBUGGER, &offered, "queues", "core");
    let handles = Outcome::begin(MPICH_SITE_NODEBUGGER, &offered, "handle", "core");
    let reference = ref_mpich_nodebugger();
    let site = site_copy(&reference, "site-mpich-4.0.2-nodebugger");
    let job = mpich_job_on(&site, &reference, "site-mpich-nodebugger");
    let core = gcore(&job.dir, job.pid(0));
    let core = core.to_str().unwrap();
    let refusal = |err: &str| {
        for part in [
            "MPICH 4.0 up to 4.0.3 (ch3:nemesis",
            "does not read this process",
            "debugger support",
            "MPIR_Sendq_head: it was built without",
        ] {
            assert!(
                err.contains(part),
                "{part:?} missing from the refusal: {err}"
            );
        }
    };
    let (_, err, ok) = run(&["queues", "--core", core, "--json"]);
    assert!(
        !ok,
        "the family's layouts were believed on a build without debugger support"
    );
    refusal(&err);
    queues.refused("the family's check on the process: built without --enable-debuginfo");
    // MPI_COMM_WORLD's handle, which needs no program's output.
    let (_, err, ok) = run(&[
        "handle",
        "--core",
        core,
        "--kind",
        "comm",
        "--value",
        "0x44000000",
        "--json",
    ]);
    assert!(!ok, "a handle was read through layouts the check refuses");
    refusal(&err);
    handles.refused("the family's check on the process: built without --enable-debuginfo");
    let (out, err, ok) = run(&["identify", "--core", core]);
    assert!(ok, "mpidd identify failed: {err}");
    assert!(out.contains("built without"), "{out}");
    drop(job);
}

/// A site's build of MPICH 4.0.2 on the ch4:ucx device (the reference CH4
/// build, its DWARF stripped, a build-id of its own): no family of its
/// device is shipped, and the ch3:nemesis family of the same release does
/// not hold it, by the device it states. It is refused, and the refusal
/// and `mpidd identify` say so.
#[test]
fn mpich_ch4_site_build_is_refused_naming_its_device() {
    let queues = Outcome::begin(MPICH_SITE_CH4, MPICH_CH4_NONE, "queues", "core");
    let reference = ref_mpich_ch4();
    let site = site_copy(&reference, "site-mpich-4.0.2-ch4");
    let job = mpich_job_on(&site, &reference, "site-mpich-ch4");
    let core = gcore(&job.dir, job.pid(0));
    let core = core.to_str().unwrap();
    let (out, err, ok) = run(&["queues", "--core", core, "--json"]);
    assert!(
        !ok,
        "a ch4:ucx build was read through another device's layouts: {out}"
    );
    for part in ["(version 4.0.2)", "has no debug info", "mpidd identify"] {
        assert!(
            err.contains(part),
            "{part:?} missing from the refusal: {err}"
        );
    }
    assert!(
        !err.contains("does not read this process"),
        "no family should be offered to another device, so none is checked: {err}"
    );
    let (out, err, ok) = run(&["identify", "--core", core]);
    assert!(ok, "mpidd identify failed: {err}");
    for part in [
        "ch4:ucx",
        "it states device ch4:ucx, the family is of ch3:nemesis",
        "layouts   none",
    ] {
        assert!(out.contains(part), "{part:?} missing from identify: {out}");
    }
    queues
        .refused("no debug info, no profile for its build, and no family of its device (ch4:ucx)");
    drop(job);
}
