//! Debian 11's own Open MPI 4.1.0 and MPICH 3.4.1, as bullseye ships them
//! (stripped, with build-ids no shipped profile names), in the Debian 11
//! root scripts/python-envs.sh makes (`$MPIDD_DEBIAN11_ROOT`). The
//! programs are built with the root's compilers and run by its launchers
//! inside it (scripts/lib/in-debian-root.sh), and read from the host by
//! pid and from gcore cores; the program, which the ranks saw in a
//! directory bound into their own mount namespace, is found in the job's
//! directory by `--search-path`.
//!
//! Neither has layouts here, and both are refused, the refusal naming
//! what is missing and `mpidd identify`, whose report says the same.
//! Open MPI 4.1.0 is below the 4.1 release family that the Debian 12 Open
//! MPI 4.1.4 profile declares (4.1.3 up to 4.2): 4.1.3 added a member to
//! OMPIO's file, which moves the atomic mode a file handle's view reads
//! (`ompio_layout_of_4_1_0_is_not_the_family_s` measures it on the
//! root's own headers), so the family would read it wrong. In a hung ring
//! of tests/mpich/hang_ring.c no queue is read, so no wait or cycle is
//! named: the verdict rests on the stacks alone, and says so. MPICH 3.4.1
//! (ch3:nemesis) has no profile and no family.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::debian_root::{assert_ranks_map, host_path, in_root, root};
use common::hung_job::HungJob;
use common::job_checks::{job_json, one_at_a_time};
use common::mpich_job::{gcore, mpidd};
use common::ompi_job::OmpiJob;
use common::site_build::build_id;
use common::supported_builds::Outcome;
use serde_json::Value;

/// The builds as docs/supported-builds.md names them, with where their
/// layouts come from.
const OMPI: &str = "Debian 11 openmpi 4.1.0-10 (amd64)";
const OMPI_NONE: &str =
    "none: no DWARF, no profile; below the family Open MPI 4.1.3 up to 4.2 of the Open MPI 4.1.4 profile";

/// Why each is refused, as the results say it.
const OMPI_WHY: &str =
    "no debug info, no profile for its build, and 4.1.0 is below the 4.1 family's first version, 4.1.3";
/// What `mpidd job` does with the ring on bullseye's Open MPI.
const OMPI_JOB_WHY: &str =
    "queues not read (4.1.0 is below the 4.1 family); no cycle named, the verdict rests on the stacks alone";

/// Where bullseye's libraries are inside the root.
const LIBMPI: &str = "/usr/lib/x86_64-linux-gnu/libmpi.so.40";

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

/// The refusal of `mpidd queues ARGS` names the library's version and
/// build-id, what is missing, and `mpidd identify`.
fn assert_refused(args: &[&str], version: &str, build: &str) {
    let (out, err, ok) = run(&[&["queues"], args, &["--json"]].concat());
    assert!(
        !ok,
        "a build with no DWARF, profile or family was read: {args:?}: {out}"
    );
    for part in [
        &format!("(version {version})"),
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

/// `mpidd identify ARGS` succeeds and says each of `parts`.
fn assert_identify(args: &[&str], parts: &[&str]) {
    let (out, err, ok) = run(&[&["identify"], args].concat());
    assert!(ok, "mpidd identify {args:?} failed: {err}");
    for part in parts {
        assert!(out.contains(part), "{part:?} missing from identify: {out}");
    }
}

/// What `mpidd identify` says of bullseye's Open MPI: no layouts, and
/// why the 4.1 family does not hold it.
fn ompi_identify_parts(build: &str) -> Vec<String> {
    vec![
        "states    Open MPI 4.1.0".into(),
        format!("build-id  {build}"),
        "its family Open MPI 4.1.3 up to 4.2 (ob1".into(),
        "does not hold it: it states version 4.1.0, below the family's first, 4.1.3".into(),
        "layouts   none".into(),
        "no profile's release family holds Open MPI 4.1.0 on x86_64".into(),
        "check     not run".into(),
    ]
}

/// Bullseye's libmpi, as the host sees it, and its build-id, which no
/// shipped profile names.
fn debian11_libmpi(root: &Path) -> (PathBuf, String) {
    let lib = host_path(root, LIBMPI);
    let ours = build_id(&lib).expect("Debian's libmpi has a build-id");
    assert!(
        !mpidd_read::shipped_profiles().iter().any(|p| p
            .identity
            .objects
            .iter()
            .any(|o| o.build_ids.contains(&ours))),
        "a shipped profile names bullseye's libmpi {ours}"
    );
    (lib, ours)
}

#[test]
fn ompi_4_1_0_queues_are_refused_below_the_4_1_family() {
    let live = Outcome::begin(OMPI, OMPI_NONE, "queues", "live");
    let cores = Outcome::begin(OMPI, OMPI_NONE, "queues", "core");
    let root = debian11();
    let (lib, ours) = debian11_libmpi(&root);
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
    let parts = ompi_identify_parts(&ours);
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        assert_refused(&["--pid", &pid], "4.1.0", &ours);
    }
    assert_identify(&["--pid", &job.pid(0).to_string()], &parts);
    live.refused(OMPI_WHY);
    let search = job.dir.to_str().unwrap().to_string();
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        let args = ["--core", core.to_str().unwrap(), "--search-path", &search];
        assert_refused(&args, "4.1.0", &ours);
        if rank == 0 {
            assert_identify(&args, &parts);
        }
    }
    cores.refused(OMPI_WHY);
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// A `mpidd job` report of the hung ring on bullseye's Open MPI: each
/// rank is found in `MPI_Recv` by its stack, but its queues are not read
/// (the refusal says why), so no wait, edge or cycle is claimed; the
/// verdict rests on the stacks alone (every rank blocked in MPI, none left
/// to release the others), and says so.
fn check_unread_ring(report: &Value, job: &HungJob, build: &str, what: &str) {
    let ranks = report["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 4, "{what}: 4 ranks: {report:#}");
    for (r, rank) in ranks.iter().enumerate() {
        assert_eq!(rank["world_rank"], r as i64, "{what}: ranks by world rank");
        assert_eq!(
            rank["pid"],
            job.pid(r as i64) as i64,
            "{what}: rank {r}'s pid"
        );
        assert_eq!(
            rank["mpi_call"], "MPI_Recv",
            "{what}: rank {r} is in MPI_Recv by its stack: {rank:#}"
        );
        let queues = &rank["basis"]["queues"];
        assert_eq!(queues["status"], "not_read", "{what}: rank {r}: {queues:#}");
        let why = queues["why"].as_str().unwrap_or("");
        for part in [
            "(version 4.1.0)",
            &format!("build-id {build}"),
            "mpidd identify",
        ] {
            assert!(
                why.contains(part),
                "{what}: rank {r}: {part:?} missing from why its queues were not read: {why}"
            );
        }
    }
    for empty in ["cycles", "edges"] {
        assert_eq!(
            report[empty],
            serde_json::json!([]),
            "{what}: no {empty} without queues: {report:#}"
        );
    }
    let verdict = report["verdict"][0].as_str().expect("a verdict");
    for part in [
        "every rank is blocked in MPI",
        "from stacks alone: queues unreadable on 4 of 4 ranks",
        "(version 4.1.0)",
    ] {
        assert!(
            verdict.contains(part),
            "{what}: {part:?} missing from the verdict: {verdict}"
        );
    }
}

#[test]
fn ompi_4_1_0_ring_rests_on_stacks_alone_without_its_queues() {
    let _serial = one_at_a_time();
    let live = Outcome::begin(OMPI, OMPI_NONE, "job", "live");
    let cores = Outcome::begin(OMPI, OMPI_NONE, "job", "core");
    let root = debian11();
    let (lib, ours) = debian11_libmpi(&root);
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
    assert_ranks_map(&job.ranks, &lib);
    let report = job_json(&["--pid", &job.mpiexec_pid().to_string()]);
    check_unread_ring(&report, &job, &ours, "live");
    job.assert_running("after mpidd job --pid");
    live.refused(OMPI_JOB_WHY);
    let cores_dir = job.gcore_all("cores");
    let search = job.dir.to_str().unwrap().to_string();
    let report = job_json(&[
        "--core-dir",
        cores_dir.to_str().unwrap(),
        "--search-path",
        &search,
    ]);
    check_unread_ring(&report, &job, &ours, "from cores");
    cores.refused(OMPI_JOB_WHY);
}

/// OMPIO's file as Debian 11's own Open MPI 4.1.0 headers lay it out
/// (tests/openmpi/ompio_layout.c, compiled in the root against what
/// libopenmpi-dev installs) keeps its atomic mode 8 bytes before where
/// the 4.1 family's profile (4.1.4's layouts) reads it: 4.1.3 added
/// `f_fullfilename` before it. This is why the family starts at 4.1.3;
/// were the two the same, the family could hold 4.1.0 again.
#[test]
fn ompio_layout_of_4_1_0_is_not_the_family_s() {
    let root = debian11();
    let dir = common::scratch::fresh_dir("debian11-ompio-layout");
    let source = repo_source("tests/openmpi/ompio_layout.c");
    std::fs::copy(&source, dir.join("ompio_layout.c")).unwrap();
    let exe = dir.join("ompio_layout");
    let include = "/usr/lib/x86_64-linux-gnu/openmpi/include";
    let out = in_root(&root, &[&dir])
        .args([
            "gcc",
            "-I",
            &format!("{include}/openmpi"),
            "-I",
            include,
            "-o",
        ])
        .arg(&exe)
        .arg(dir.join("ompio_layout.c"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gcc in the Debian 11 root failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = in_root(&root, &[&dir]).arg(&exe).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let measured = String::from_utf8_lossy(&out.stdout).into_owned();
    let value = |name: &str| -> u64 {
        measured
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} missing from {measured}"))
    };
    assert_eq!(value("mca_common_ompio_data_t.size "), 448, "{measured}");
    assert_eq!(
        value("mca_common_ompio_data_t.ompio_fh.f_atomicity "),
        116,
        "{measured}"
    );
    let profile: Value = serde_json::from_str(include_str!(
        "../../mpidd-read/profiles/openmpi-4.1.4-debian12-amd64.json"
    ))
    .unwrap();
    let ompio = &profile["layouts"]["mca_common_ompio_data_t"];
    assert_eq!(ompio["size"], 456, "{ompio:#}");
    assert_eq!(
        ompio["members"]["ompio_fh.f_atomicity"]["offset"], 124,
        "{ompio:#}"
    );
    assert_eq!(profile["family"]["from_version"], "4.1.3");
}
