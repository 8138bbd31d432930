//! The layout profiles mpidd ships for Debian 13's Open MPI 5.0.7 and
//! pip's Open MPI 5 wheel cannot drift: written again by the script that
//! made them (from Debian's source, configured as Debian does inside the
//! Debian 13 root), they must come out the same, for the same builds.

use std::path::Path;
use std::process::Command;

use mpidd_read::{shipped_profiles, LayoutProfile};

/// The shipped profile of Open MPI `version`, written again by
/// scripts/write-ompi5-profile.sh with `args`: the same layouts, for the
/// same builds (build-ids, or digests of code).
fn written_again_equals_shipped(version: &str, args: &[&str], out_name: &str) {
    let shipped = shipped_profiles()
        .into_iter()
        .find(|p| p.identity.implementation == "Open MPI" && p.identity.version == version)
        .unwrap_or_else(|| panic!("mpidd ships the Open MPI {version} profile"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(out_name);
    let _ = std::fs::remove_file(&out);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = Command::new("bash")
        .arg(repo.join("scripts/write-ompi5-profile.sh"))
        .args(args)
        .arg(&out)
        .env("MPIDD", env!("CARGO_BIN_EXE_mpidd"))
        .status()
        .expect("run scripts/write-ompi5-profile.sh");
    assert!(
        status.success(),
        "scripts/write-ompi5-profile.sh {args:?} failed (it needs the Debian 13 root that \
         `bash scripts/python-envs.sh debian13` makes, pip's Open MPI for --pip \
         (`bash scripts/python-envs.sh ompi5`), and makes its source tree itself)"
    );
    let again = LayoutProfile::load(&out).unwrap();
    let regenerate = format!(
        "rerun `bash scripts/write-ompi5-profile.sh {}` and review the diff",
        args.join(" ")
    );
    assert_eq!(
        again.layouts, shipped.layouts,
        "the shipped profile's layouts differ from Debian's source: {regenerate}"
    );
    let ids = |p: &LayoutProfile| -> Vec<(String, Vec<String>, Vec<String>)> {
        p.identity
            .objects
            .iter()
            .map(|o| (o.name.clone(), o.build_ids.clone(), o.code_digests.clone()))
            .collect()
    };
    assert_eq!(
        ids(&again),
        ids(&shipped),
        "the installed Open MPI {version} is another build than the profile's: {regenerate}"
    );
    assert_eq!(again.identity.arch, shipped.identity.arch);
}

#[test]
fn the_shipped_open_mpi_5_profile_equals_what_debians_source_gives() {
    written_again_equals_shipped("5.0.7", &[], "ompi5-profile-again.json");
}

#[test]
fn the_shipped_profile_of_pips_open_mpi_equals_what_the_script_gives() {
    written_again_equals_shipped("5.0.11", &["--pip"], "ompi5-pip-profile-again.json");
}
