//! Errors as an anyhow user prints them (`{:#}`: the message, then every
//! `source()`): the OS error behind a failure appears exactly once, next to
//! the path it concerns.

use std::path::Path;

use anyhow::Context;
use mpidd_read::{CoreTarget, LayoutCache, LayoutProfile};

/// What the OS itself says about `path`, found without the code under test.
fn os_error(path: &Path) -> String {
    std::fs::read_dir(path)
        .err()
        .or_else(|| std::fs::File::open(path).err())
        .expect("the path must be unusable")
        .to_string()
}

fn assert_once(printed: &str, cause: &str, path: &Path) {
    assert_eq!(
        printed.matches(cause).count(),
        1,
        "the cause {cause:?} should appear exactly once in {printed:?}"
    );
    assert!(
        printed.contains(&path.display().to_string()),
        "the path should be named in {printed:?}"
    );
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

#[test]
fn a_missing_core_names_the_os_error_once() {
    let dir = scratch();
    let core = dir.path().join("core.missing");
    let err = CoreTarget::open(&core, None, None)
        .context("reading rank 0")
        .unwrap_err();
    let printed = format!("{err:#}");
    assert!(printed.starts_with("reading rank 0: "), "{printed}");
    assert_once(&printed, &os_error(&core), &core);
}

#[test]
fn a_missing_profile_names_the_os_error_once() {
    let dir = scratch();
    let profile = dir.path().join("missing.json");
    let err = anyhow::Error::new(LayoutProfile::load(&profile).unwrap_err());
    assert_once(&format!("{err:#}"), &os_error(&profile), &profile);
}

#[test]
fn a_cache_that_is_a_file_names_the_os_error_once() {
    let dir = scratch();
    let not_a_dir = dir.path().join("plain-file");
    std::fs::write(&not_a_dir, b"not a directory").unwrap();
    let cause = os_error(&not_a_dir);
    let err = anyhow::Error::new(LayoutCache::at(&not_a_dir).entries().unwrap_err());
    let printed = format!("{err:#}");
    // The cache's message names the path and the action; the OS error is
    // its source, printed after it.
    assert!(printed.ends_with(&cause), "{printed}");
    assert_once(&printed, &cause, &not_a_dir);
}
