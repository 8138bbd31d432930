//! Debian 11's own MPICH 3.4.1 (`libmpich12` 3.4.1-5~deb11u1, ch3:nemesis),
//! as bullseye ships it: stripped, configured without debugger support
//! (its `MPII_Version_configure` has no `--enable-debuginfo`), with a
//! build-id no shipped profile names, in the Debian 11 root
//! scripts/python-envs.sh makes (`$MPIDD_DEBIAN11_ROOT`). The programs are
//! built with the root's `mpicc.mpich` and run by its `mpiexec.mpich`
//! inside it (scripts/lib/in-debian-root.sh), and read from the host by pid
//! and from gcore cores; the program, which the ranks saw in a directory
//! bound into their own mount namespace, is found in the job's directory by
//! `--search-path`.
//!
//! It has no layouts here: no DWARF, no profile of its build, and no
//! release family holds 3.4.1 (the shipped ch3:nemesis family is 4.0's,
//! and of `libmpi`, with debugger support). It is refused, the refusal
//! naming what is missing and `mpidd identify`, whose report says the same.

mod common;

use std::path::{Path, PathBuf};

use common::debian_root::{assert_ranks_map, host_path, in_root, root};
use common::mpich_job::{gcore, mpidd, Job};
use common::site_build::build_id;
use common::supported_builds::Outcome;

/// The build as docs/supported-builds.md names it, with where its layouts
/// come from, and why it is refused.
const MPICH: &str = "Debian 11 mpich 3.4.1-5~deb11u1, ch3:nemesis (amd64)";
const MPICH_NONE: &str = "none: no DWARF, no profile, no family";
const MPICH_WHY: &str = "no debug info, and no profile or release family for its build";

/// Where bullseye's library is inside the root.
const LIBMPICH: &str = "/usr/lib/x86_64-linux-gnu/libmpich.so.12";

/// The Debian 11 root, with MPICH's compiler and launcher.
fn debian11() -> PathBuf {
    root(
        "MPIDD_DEBIAN11_ROOT",
        "debian11",
        &["usr/bin/mpicc.mpich", "usr/bin/mpiexec.mpich"],
    )
}

/// tests/mpich/PROGRAM.c built in the root with `mpicc.mpich` (`-g -O0`)
/// into `dir`, which the root sees at the same path: the executable.
fn build_in_root(root: &Path, dir: &Path, program: &str) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/mpich/{program}.c"));
    let copy = dir.join(format!("{program}.c"));
    std::fs::copy(&source, &copy).unwrap();
    let exe = dir.join(program);
    let out = in_root(root, &[dir])
        .args(["mpicc.mpich", "-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&copy)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc.mpich in the Debian 11 root failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
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

/// The refusal of `mpidd queues ARGS` names the library's version and
/// build-id, what is missing, and `mpidd identify`.
fn assert_refused(args: &[&str], build: &str) {
    let (out, err, ok) = run(&[&["queues"], args, &["--json"]].concat());
    assert!(
        !ok,
        "a build with no DWARF, profile or family was read: {args:?}: {out}"
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

/// `mpidd identify ARGS` succeeds and says each of `parts`.
fn assert_identify(args: &[&str], parts: &[&str]) {
    let (out, err, ok) = run(&[&["identify"], args].concat());
    assert!(ok, "mpidd identify {args:?} failed: {err}");
    for part in parts {
        assert!(out.contains(part), "{part:?} missing from identify: {out}");
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
    let exe = build_in_root(&root, &dir, "queues");
    let mut mpiexec = in_root(&root, &[&dir]);
    mpiexec.args(["mpiexec.mpich", "-n", "4"]).arg(&exe);
    let job = Job::launch(mpiexec, 4, dir);
    assert_ranks_map(&job.ranks, &lib);
    let parts = [
        "states    MPICH 3.4.1, device ch3:nemesis",
        &format!("build-id  {ours}"),
        "layouts   none",
        "no profile's release family holds MPICH 3.4.1 on x86_64",
        "check     not run",
    ];
    for rank in 0..4 {
        assert_refused(&["--pid", &job.pid(rank).to_string()], &ours);
    }
    assert_identify(&["--pid", &job.pid(0).to_string()], &parts);
    live.refused(MPICH_WHY);
    let core = gcore(&job.dir, job.pid(0));
    let search = job.dir.to_str().unwrap().to_string();
    let args = ["--core", core.to_str().unwrap(), "--search-path", &search];
    assert_refused(&args, &ours);
    assert_identify(&args, &parts);
    cores.refused(MPICH_WHY);
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
