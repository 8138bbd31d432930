//! A site's build (Spack's, EasyBuild's): the reference builds' source and
//! configure lines, without DWARF and with build-ids no profile names
//! (`common::site_build`). Open MPI 4.1.4's is read through the 4.1
//! release family, after the check on the process: the queues of
//! tests/openmpi/queues.c as its ranks wrote them down, live and from
//! cores, and the hung ring of tests/mpich/hang_ring.c named as a cycle.
//! MPICH 4.0.2's (CH3) has no family here: it is refused, and the refusal
//! names what is missing and `mpidd identify`, whose report says the same.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::hung_job::HungJob;
use common::job_checks::{check_cores, check_live, check_ring_receives, one_at_a_time, Expected};
use common::mpich_job::{gcore, mpidd, ref_mpich, Job};
use common::ob1_checks::check_rank;
use common::ompi_job::{ranks_run_on, ref_ompi, OmpiJob, DEBIAN_MPIRUN};
use common::site_build::{build_id, site_copy};
use common::supported_builds::Outcome;
use serde_json::Value;

/// The builds as docs/supported-builds.md names them, with where their
/// layouts come from.
const OMPI_SITE: &str = "site build of Open MPI 4.1.4 (x86_64)";
const OMPI_FAMILY: &str = "the family Open MPI 4.1.3 up to 4.2 of the Open MPI 4.1.4 profile";
const MPICH_SITE: &str = "site build of MPICH 4.0.2, ch3:nemesis (x86_64)";
const MPICH_NONE: &str = "none: no DWARF, no profile, no family";

/// The site copy of the reference Open MPI, made once for the binary.
fn site_ompi() -> &'static Path {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| site_copy(&ref_ompi(), "site-ompi-4.1.4"))
}

/// The site copy of the reference MPICH (CH3), made once for the binary.
fn site_mpich() -> &'static Path {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| site_copy(&ref_mpich(), "site-mpich-4.0.2"))
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
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
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

#[test]
fn mpich_site_build_is_refused_naming_what_is_missing() {
    let cores = Outcome::begin(MPICH_SITE, MPICH_NONE, "queues", "core");
    let site = site_mpich();
    let env = [("LD_LIBRARY_PATH", site.join("lib"))];
    let job = Job::start_on(&ref_mpich(), "site-mpich-queues", "queues", &[], &[], &env);
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", job.pid(0))).unwrap();
    let lib = std::fs::canonicalize(site.join("lib/libmpi.so.12")).unwrap();
    assert!(
        maps.contains(lib.to_str().unwrap()),
        "rank 0 is not on the site build"
    );
    let ours = build_id(&lib).expect("a build-id");
    let core = gcore(&job.dir, job.pid(0));
    let (_, err, ok) = run(&["queues", "--core", core.to_str().unwrap(), "--json"]);
    assert!(!ok, "a build with no DWARF, profile or family was read");
    for part in [
        "has no debug info for",
        &format!("build-id {ours}"),
        "none of the",
        "mpidd identify",
    ] {
        assert!(
            err.contains(part),
            "{part:?} missing from the refusal: {err}"
        );
    }
    let (out, err, ok) = run(&["identify", "--core", core.to_str().unwrap()]);
    assert!(ok, "mpidd identify failed: {err}");
    assert!(
        out.contains("states    MPICH 4.0.2, device ch3:nemesis"),
        "{out}"
    );
    assert!(out.contains("layouts   none"), "{out}");
    cores.refused("no debug info, and no profile or release family for its build");
    drop(job);
}
