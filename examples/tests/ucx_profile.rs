//! The layout profile mpidd ships for Debian 12's UCX 1.13.1 (libucp,
//! stripped) cannot drift: written again from Debian's UCX source by the
//! script that made it, it must come out the same, for the libucp build
//! installed here.

use std::path::Path;
use std::process::Command;

use mpidd_read::{shipped_profiles, LayoutProfile};

/// The build the profile is for: Debian 12's libucx0 1.13.1-1, amd64.
const DEBIAN_LIBUCP_BUILD_ID: &str = "22f8d37b580aa9aa63c01be332aaaed689ae0529";
const STOCK_UCP: &str = "/usr/lib/x86_64-linux-gnu/libucp.so.0.0.0";

fn shipped() -> LayoutProfile {
    shipped_profiles()
        .into_iter()
        .find(|p| p.identity.implementation == "UCX" && p.identity.version == "1.13.1")
        .expect("mpidd ships the UCX 1.13.1 profile")
}

#[test]
fn the_shipped_ucx_profile_equals_what_debians_ucx_source_gives() {
    let shipped = shipped();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ucx-profile-again.json");
    let _ = std::fs::remove_file(&out);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = Command::new("bash")
        .arg(repo.join("scripts/write-ucx-profile.sh"))
        .arg(&out)
        .env("MPIDD", env!("CARGO_BIN_EXE_mpidd"))
        .status()
        .expect("run scripts/write-ucx-profile.sh");
    assert!(
        status.success(),
        "scripts/write-ucx-profile.sh failed (it needs Debian's libucx0 1.13.1-1 and \
         its source tree, which scripts/debian-ucx-tree.sh makes)"
    );
    let again = LayoutProfile::load(&out).unwrap();
    let regenerate = "rerun `bash scripts/write-ucx-profile.sh` and review the diff";
    assert_eq!(
        again.layouts, shipped.layouts,
        "the shipped UCX profile's layouts differ from Debian's UCX source: {regenerate}"
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
        "the installed libucp is another build than the profile's: {regenerate}"
    );
    assert_eq!(again.identity.arch, shipped.identity.arch);
}

#[test]
fn the_ucx_profile_is_for_the_installed_libucp_and_answers_the_readers() {
    let shipped = shipped();
    assert_eq!(
        ids_of(&shipped),
        vec![(
            "libucp.so.0.0.0".to_string(),
            vec![DEBIAN_LIBUCP_BUILD_ID.to_string()]
        )]
    );
    let installed = mpidd_read::build_id(Path::new(STOCK_UCP))
        .unwrap_or_else(|e| {
            panic!("{STOCK_UCP}: {e} (install Debian's UCX: apt-get install libucx0)")
        })
        .map(|id| mpidd_read::build_id_hex(&id));
    assert_eq!(
        installed.as_deref(),
        Some(DEBIAN_LIBUCP_BUILD_ID),
        "the installed libucp is not Debian 12's libucx0 1.13.1-1 the profile is for"
    );
    assert!(shipped.describes(&hex_bytes(DEBIAN_LIBUCP_BUILD_ID)));
    assert!(mpihandles::ucx_worker_layouts_missing(&shipped.layouts).is_none());
    assert!(mpihandles::ucx_layouts_missing(&shipped.layouts).is_none());
    let (_, unanswered) =
        mpidd_read::LayoutTable::record(&shipped.layouts, &mpihandles::ask_ucx_worker_layouts);
    assert!(unanswered.is_empty(), "{unanswered:?}");
}

fn ids_of(p: &LayoutProfile) -> Vec<(String, Vec<String>)> {
    p.identity
        .objects
        .iter()
        .map(|o| (o.name.clone(), o.build_ids.clone()))
        .collect()
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
