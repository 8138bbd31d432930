//! The layout profile mpidd ships for Debian 13's Open MPI 5.0.7 cannot
//! drift: written again by the script that made it (from Debian's source,
//! configured as Debian does inside the Debian 13 root), it must come out
//! the same, for the same Debian objects.

use std::path::Path;
use std::process::Command;

use mpidd_read::{shipped_profiles, LayoutProfile};

#[test]
fn the_shipped_open_mpi_5_profile_equals_what_debians_source_gives() {
    let shipped = shipped_profiles()
        .into_iter()
        .find(|p| p.identity.implementation == "Open MPI" && p.identity.version == "5.0.7")
        .expect("mpidd ships the Open MPI 5.0.7 profile");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ompi5-profile-again.json");
    let _ = std::fs::remove_file(&out);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = Command::new("bash")
        .arg(repo.join("scripts/write-ompi5-profile.sh"))
        .arg(&out)
        .env("MPIDD", env!("CARGO_BIN_EXE_mpidd"))
        .status()
        .expect("run scripts/write-ompi5-profile.sh");
    assert!(
        status.success(),
        "scripts/write-ompi5-profile.sh failed (it needs the Debian 13 root that \
         `bash scripts/python-envs.sh debian13` makes, and makes its source tree itself)"
    );
    let again = LayoutProfile::load(&out).unwrap();
    let regenerate = "rerun `bash scripts/write-ompi5-profile.sh` and review the diff";
    assert_eq!(
        again.layouts, shipped.layouts,
        "the shipped profile's layouts differ from Debian's source: {regenerate}"
    );
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
        "the Debian 13 root's Open MPI is another build than the profile's: {regenerate}"
    );
    assert_eq!(again.identity.arch, shipped.identity.arch);
}
