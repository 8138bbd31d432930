//! Layout profiles end to end, on a real MPICH job.
//!
//! The reference MPICH (scripts/build-ref-mpich.sh) is the debug build; a
//! copy of its libmpi with the DWARF stripped (symbol table kept, as in a
//! distribution's package) stands for the build a user has. `mpidd profile
//! write` writes a profile from the debug build for the copy's build-id;
//! the native CH3 decoder must then read every rank of tests/mpich/queues.c
//! through the profile, live and from a gcore core, exactly as the program
//! posted them, the profile made for its build winning over the release
//! family of the shipped MPICH 4.0.2 ch3:nemesis profile, which reads it
//! without one; a profile that drifted from the DWARF must be caught by
//! `mpidd profile check`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::mpich_job::{gcore, mpidd, ref_mpich, wait_stopped, Job};
use common::queue_checks::{check_rank_native, queues_with};

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn stripped_copy(dir: &Path) -> PathBuf {
    let lib = dir.join("libmpi.so.12");
    std::fs::copy(ref_mpich().join("lib/libmpi.so.12"), &lib).unwrap();
    let (ok, _, err) = run(Command::new("strip").arg("--strip-debug").arg(&lib));
    assert!(ok, "strip (binutils) failed: {err}");
    lib
}

#[test]
fn a_profile_reads_an_mpich_without_debug_info_live_and_from_a_core() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("profile-mpich");
    let _ = std::fs::remove_dir_all(&dir);
    let libdir = dir.join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    let stripped = stripped_copy(&libdir);
    let debug_lib = ref_mpich().join("lib/libmpi.so.12");
    let profile = dir.join("mpich-ch3.json");

    let (ok, _, err) = run(mpidd()
        .args(["profile", "write", "--object"])
        .arg(&debug_lib)
        .args(["--decoder", "mpich-ch3", "--implementation", "MPICH"])
        .args([
            "--impl-version",
            "4.0.2",
            "--build",
            "reference ch3:nemesis",
        ])
        .arg("--for-build")
        .arg(&stripped)
        .arg("--output")
        .arg(&profile));
    assert!(ok, "profile write: {err}");
    let (ok, out, err) = run(mpidd()
        .args(["profile", "check"])
        .arg(&profile)
        .arg("--object")
        .arg(&debug_lib));
    assert!(ok, "profile check: {out}{err}");

    let job = Job::start_with_env("profile-mpich-job", &[], &[("LD_LIBRARY_PATH", &libdir)]);
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", job.pid(0))).unwrap();
    assert!(
        maps.contains(stripped.to_str().unwrap()),
        "the job runs on the stripped copy"
    );

    // No DWARF, no profile of its build: the 4.0 ch3:nemesis release
    // family of the shipped MPICH profile answers, checked on the process,
    // and says so (a build outside every family is refused with the ways
    // out: examples/tests/debian11.rs).
    let pid0 = job.pid(0).to_string();
    let (ok, _, err) = run(mpidd().args(["queues", "--pid", &pid0, "--json", "--verbose"]));
    assert!(ok, "the family reads the stripped copy: {err}");
    for needle in [
        "the layouts of libmpi come from the family MPICH 4.0 up to 4.0.3 (ch3:nemesis",
        "states version 4.0.2",
        "checked on the process",
    ] {
        assert!(err.contains(needle), "{needle:?} missing from: {err}");
    }
    wait_stopped(job.pid(0));

    // A profile made for the very build wins over the family.
    let profile_arg = profile.to_str().unwrap();
    let (ok, _, err) = run(mpidd().args([
        "queues",
        "--pid",
        &pid0,
        "--profile",
        profile_arg,
        "--json",
        "--verbose",
    ]));
    assert!(ok, "{err}");
    assert!(
        err.contains("come from the profile of MPICH 4.0.2 (reference ch3:nemesis)"),
        "the build's own profile is not the one used: {err}"
    );
    wait_stopped(job.pid(0));
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let q = queues_with(&["--pid", &pid, "--profile", profile_arg], false);
        check_rank_native(rank, &q);
        wait_stopped(job.pid(rank));
    }
    let core = gcore(&job.dir, job.pid(2));
    let q = queues_with(
        &["--core", core.to_str().unwrap(), "--profile", profile_arg],
        false,
    );
    check_rank_native(2, &q);
    assert_eq!(job.finish(), 0, "the job completes once continued");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_profile_that_drifted_from_the_dwarf_is_caught() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("profile-drift");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let debug_lib = ref_mpich().join("lib/libmpi.so.12");
    let profile = dir.join("p.json");
    let (ok, _, err) = run(mpidd()
        .args(["profile", "write", "--object"])
        .arg(&debug_lib)
        .args(["--implementation", "MPICH", "--impl-version", "4.0.2"])
        .arg("--output")
        .arg(&profile));
    assert!(ok, "{err}");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    let rank = &mut json["layouts"]["MPIR_Comm"]["members"]["rank"]["offset"];
    let was = rank.as_u64().expect("the profile holds MPIR_Comm.rank");
    *rank = serde_json::json!(was + 4);
    std::fs::write(&profile, serde_json::to_string(&json).unwrap()).unwrap();
    let (ok, out, err) = run(mpidd()
        .args(["profile", "check"])
        .arg(&profile)
        .arg("--object")
        .arg(&debug_lib));
    assert!(!ok, "a changed offset must fail the check: {out}");
    assert!(err.contains("MPIR_Comm"), "names the type: {err}");
    assert!(err.contains("differs from the DWARF"), "{err}");
}

/// The shipped profile of the 4.0 ch3:nemesis family equals what the
/// reference CH3 build's DWARF says today (scripts/write-mpich-ch3-profile.sh
/// wrote it from that build), and declares the family its tests read.
#[test]
fn the_shipped_ch3_family_profile_equals_the_reference_build() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mpidd-read/profiles/mpich-4.0.2-ch3-nemesis-x86_64.json");
    let (ok, out, err) = run(mpidd()
        .args(["profile", "check"])
        .arg(&shipped)
        .arg("--object")
        .arg(ref_mpich().join("lib/libmpi.so.12")));
    assert!(ok, "the shipped CH3 profile drifted: {out}{err}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&shipped).unwrap()).unwrap();
    let family = &json["family"];
    assert_eq!(family["implementation"], "MPICH");
    assert_eq!(family["from_version"], "4.0");
    assert_eq!(family["below_version"], "4.0.3");
    assert_eq!(family["pml"], "ch3:nemesis");
    assert!(family["configure"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("--enable-debuginfo")));
}
