//! Debian 11's own Open MPI 4.1.0 and MPICH 3.4.1, as bullseye ships them
//! (stripped, with build-ids no shipped profile names), in the Debian 11
//! root scripts/python-envs.sh makes (`$MPIDD_DEBIAN11_ROOT`). The
//! programs are built with the root's compilers and run by its launchers
//! inside it (scripts/lib/in-debian-root.sh), and read from the host by
//! pid and from gcore cores; the program, which the ranks saw in a
//! directory bound into their own mount namespace, is found in the job's
//! directory by `--search-path`.
//!
//! Open MPI 4.1.0 is read through the 4.1 release family that the Debian
//! 12 Open MPI 4.1.4 profile declares, after the check on each process:
//! the queues of tests/openmpi/queues.c as its ranks wrote them down, and
//! the hung ring of tests/mpich/hang_ring.c named as a cycle. MPICH 3.4.1
//! (ch3:nemesis) has no profile and no family: it is refused, and the
//! refusal names what is missing and `mpidd identify`, whose report says
//! the same.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::debian_root::{assert_ranks_map, host_path, in_root, root};
use common::family_reading::FamilyRead;
use common::hung_job::HungJob;
use common::job_checks::{
    check_cores_with, check_live, check_ring_receives, one_at_a_time, Expected,
};
use common::mpich_job::{gcore, mpidd, Job};
use common::ob1_checks::check_rank;
use common::ompi_job::OmpiJob;
use common::site_build::build_id;
use common::supported_builds::Outcome;
use serde_json::Value;

/// The builds as docs/supported-builds.md names them, with where their
/// layouts come from.
const OMPI: &str = "Debian 11 openmpi 4.1.0-10 (amd64)";
const OMPI_FAMILY: &str = "the family Open MPI 4.1.0 up to 4.2 of the Open MPI 4.1.4 profile";
const MPICH: &str = "Debian 11 mpich 3.4.1-5~deb11u1, ch3:nemesis (amd64)";
const MPICH_NONE: &str = "none: no DWARF, no profile, no family";

/// How mpidd must say the Open MPI 4.1.0 layouts were chosen.
const FAMILY: FamilyRead = FamilyRead {
    family: "Open MPI 4.1.0 up to 4.2",
    profile: "4.1.4",
    stated: "4.1.0",
};

/// Where bullseye's libraries are inside the root.
const LIBMPI: &str = "/usr/lib/x86_64-linux-gnu/libmpi.so.40";
const LIBMPICH: &str = "/usr/lib/x86_64-linux-gnu/libmpich.so.12";

/// The Debian 11 root, with both MPIs' compilers and launchers.
fn debian11() -> PathBuf {
    root(
        "MPIDD_DEBIAN11_ROOT",
        "debian11",
        &[
            "usr/bin/mpicc.openmpi",
            "usr/bin/mpirun.openmpi",
            "usr/bin/mpicc.mpich",
            "usr/bin/mpiexec.mpich",
        ],
    )
}

/// The C source `source` (with the headers beside it that `headers`
/// names) built in the root with `mpicc` (`-g -O0`) into `dir`, which the
/// root sees at the same path: the executable.
fn build_in_root(root: &Path, dir: &Path, mpicc: &str, source: &Path, headers: &[&str]) -> PathBuf {
    for file in std::iter::once(source.file_name().unwrap().to_str().unwrap())
        .chain(headers.iter().copied())
    {
        std::fs::copy(source.with_file_name(file), dir.join(file)).unwrap();
    }
    let exe = dir.join(source.file_stem().unwrap());
    let out = in_root(root, &[dir])
        .args([mpicc, "-g", "-O0", "-o"])
        .arg(&exe)
        .arg(dir.join(source.file_name().unwrap()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{mpicc} in the Debian 11 root failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// A program of the repo's tests/ folder.
fn repo_source(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// mpirun.openmpi's options inside the root: root, more ranks than
/// cores, ob1 over shared memory (`vader`, 4.1's name).
const OMPI_ARGS: [&str; 8] = [
    "--allow-run-as-root",
    "--oversubscribe",
    "--mca",
    "pml",
    "ob1",
    "--mca",
    "btl",
    "self,vader",
];

/// `mpidd ARGS`: its standard output, standard error and success.
fn run(args: &[&str]) -> (String, String, bool) {
    let out = mpidd().args(args).output().expect("run mpidd");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

#[test]
fn ompi_4_1_0_queues_through_the_family_live_and_from_cores() {
    let live = Outcome::begin(OMPI, OMPI_FAMILY, "queues", "live");
    let cores = Outcome::begin(OMPI, OMPI_FAMILY, "queues", "core");
    let root = debian11();
    let lib = host_path(&root, LIBMPI);
    let ours = build_id(&lib).expect("Debian's libmpi has a build-id");
    assert!(
        !mpidd_read::shipped_profiles().iter().any(|p| p
            .identity
            .objects
            .iter()
            .any(|o| o.build_ids.contains(&ours))),
        "a shipped profile names bullseye's libmpi {ours}: this test is of the family"
    );
    let dir = common::scratch::fresh_dir("debian11-ompi-queues");
    let exe = build_in_root(
        &root,
        &dir,
        "mpicc.openmpi",
        &repo_source("tests/openmpi/queues.c"),
        &[],
    );
    let mut mpirun = in_root(&root, &[&dir]);
    mpirun.arg("mpirun.openmpi").args(OMPI_ARGS);
    let job = OmpiJob::launch(mpirun, &exe, dir);
    assert_ranks_map(&job.ranks, &lib);
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let (out, err, ok) = run(&["queues", "--pid", &pid, "--json", "--verbose"]);
        assert!(ok, "mpidd queues --pid {pid} failed: {err}");
        FAMILY.assert_note(&err);
        let q: Value = serde_json::from_str(&out).expect("queues JSON");
        check_rank(rank, &q, &job.posted(rank));
    }
    live.works();
    let search = job.dir.to_str().unwrap().to_string();
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        let (out, err, ok) = run(&[
            "queues",
            "--core",
            core.to_str().unwrap(),
            "--search-path",
            &search,
            "--json",
            "--verbose",
        ]);
        assert!(ok, "mpidd queues --core of rank {rank} failed: {err}");
        FAMILY.assert_note(&err);
        let q: Value = serde_json::from_str(&out).expect("queues JSON");
        check_rank(rank, &q, &job.posted(rank));
    }
    cores.works();
    let core = gcore(&job.dir, job.pid(0));
    let (out, err, ok) = run(&[
        "identify",
        "--core",
        core.to_str().unwrap(),
        "--search-path",
        &search,
    ]);
    assert!(ok, "mpidd identify failed: {err}");
    assert!(
        out.contains(&ours),
        "identify does not name the build {ours}: {out}"
    );
    assert!(out.contains("check     passed"), "{out}");
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn ompi_4_1_0_ring_is_a_cycle_live_and_from_cores() {
    let _serial = one_at_a_time();
    let live = Outcome::begin(OMPI, OMPI_FAMILY, "job", "live");
    let cores = Outcome::begin(OMPI, OMPI_FAMILY, "job", "core");
    let root = debian11();
    let dir = common::scratch::fresh_dir("debian11-ompi-ring");
    let source = repo_source("tests/mpich/hang_ring.c");
    let exe = build_in_root(&root, &dir, "mpicc.openmpi", &source, &["hang_common.h"]);
    // The blocked ranks busy-poll: at the lowest priority they leave the
    // CPUs to mpidd (nice and the root's entry exec, so the pid is
    // mpirun's).
    let mut launch = Command::new("nice");
    launch
        .args(["-n", "19"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/lib/in-debian-root.sh"))
        .arg(&root)
        .arg("--bind")
        .arg(&dir)
        .arg("mpirun.openmpi")
        .args(OMPI_ARGS)
        .args(["-n", "4"])
        .arg(&exe);
    let job = HungJob::run(launch, dir, source, "hang_ring");
    assert_ranks_map(&job.ranks, &host_path(&root, LIBMPI));
    let expected = Expected::ring();
    let report = check_live(&job, &expected);
    check_ring_receives(&report);
    FAMILY.assert_job_rests_on(&report);
    live.works();
    let search = job.dir.to_str().unwrap().to_string();
    let report = check_cores_with(&job, &expected, &["--search-path", &search]);
    check_ring_receives(&report);
    FAMILY.assert_job_rests_on(&report);
    cores.works();
}

/// The refusal of `mpidd queues ARGS` on bullseye's MPICH names the
/// library's version and build-id, what is missing, and `mpidd identify`.
fn assert_mpich_refused(args: &[&str], build: &str) {
    let (_, err, ok) = run(&[&["queues"], args, &["--json"]].concat());
    assert!(
        !ok,
        "a build with no DWARF, profile or family was read: {args:?}"
    );
    for part in [
        "(version 3.4.1)",
        &format!("build-id {build} has no debug info for"),
        "none of the",
        "is for this build",
        "mpidd identify",
    ] {
        assert!(
            err.contains(part),
            "{part:?} missing from the refusal of {args:?}: {err}"
        );
    }
}

#[test]
fn mpich_3_4_1_is_refused_naming_what_is_missing() {
    let live = Outcome::begin(MPICH, MPICH_NONE, "queues", "live");
    let cores = Outcome::begin(MPICH, MPICH_NONE, "queues", "core");
    let root = debian11();
    let lib = host_path(&root, LIBMPICH);
    let ours = build_id(&lib).expect("Debian's libmpich has a build-id");
    let dir = common::scratch::fresh_dir("debian11-mpich-queues");
    let exe = build_in_root(
        &root,
        &dir,
        "mpicc.mpich",
        &repo_source("tests/mpich/queues.c"),
        &[],
    );
    let mut mpiexec = in_root(&root, &[&dir]);
    mpiexec.args(["mpiexec.mpich", "-n", "4"]).arg(&exe);
    let job = Job::launch(mpiexec, 4, dir);
    assert_ranks_map(&job.ranks, &lib);
    const WHY: &str = "no debug info, and no profile or release family for its build";
    assert_mpich_refused(&["--pid", &job.pid(0).to_string()], &ours);
    live.refused(WHY);
    let core = gcore(&job.dir, job.pid(0));
    let search = job.dir.to_str().unwrap().to_string();
    let core_args = ["--core", core.to_str().unwrap(), "--search-path", &search];
    assert_mpich_refused(&core_args, &ours);
    let (out, err, ok) = run(&[&["identify"], &core_args[..]].concat());
    assert!(ok, "mpidd identify failed: {err}");
    for part in [
        "states    MPICH 3.4.1, device ch3:nemesis",
        &format!("build-id  {ours}"),
        "layouts   none",
        "no profile's release family holds MPICH 3.4.1 on x86_64",
        "check     not run",
    ] {
        assert!(out.contains(part), "{part:?} missing from identify: {out}");
    }
    cores.refused(WHY);
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
