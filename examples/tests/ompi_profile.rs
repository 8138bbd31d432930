//! The layout profile mpidd ships for Debian 12's Open MPI 4.1.4 cannot
//! drift: written again from the reference build's DWARF by the script
//! that made it, it must come out the same, for the same Debian objects.

mod common;

use std::path::Path;
use std::process::Command;

use mpidd_read::{shipped_profiles, LayoutProfile};

use common::ompi_job::ref_ompi;

#[test]
fn the_shipped_open_mpi_profile_equals_the_reference_builds_dwarf() {
    let shipped = shipped_profiles()
        .into_iter()
        .find(|p| p.identity.implementation == "Open MPI" && p.identity.version == "4.1.4")
        .expect("mpidd ships the Open MPI 4.1.4 profile");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ompi-profile-again.json");
    let _ = std::fs::remove_file(&out);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = Command::new("bash")
        .arg(repo.join("scripts/write-ompi-profile.sh"))
        .arg(&out)
        .env("MPIDD", env!("CARGO_BIN_EXE_mpidd"))
        .env("MPIDD_REF_OMPI", ref_ompi())
        .status()
        .expect("run scripts/write-ompi-profile.sh");
    assert!(status.success(), "scripts/write-ompi-profile.sh failed");
    let again = LayoutProfile::load(&out).unwrap();
    let regenerate = "rerun `bash scripts/write-ompi-profile.sh` and review the diff";
    // The decoders' questions and the reference build's answers.
    assert_eq!(
        again.layouts, shipped.layouts,
        "the shipped profile's layouts differ from the reference build's DWARF: {regenerate}"
    );
    // The Debian objects it is chosen for are the ones installed here.
    let ids = |p: &LayoutProfile| -> Vec<(String, Vec<String>)> {
        p.identity
            .objects
            .iter()
            .map(|o| (o.name.clone(), o.build_ids.clone()))
            .collect()
    };
    assert_eq!(
        ids(&again),
        ids(&shipped),
        "the installed Debian Open MPI is another build than the profile's: {regenerate}"
    );
    assert_eq!(again.identity.arch, shipped.identity.arch);
}
