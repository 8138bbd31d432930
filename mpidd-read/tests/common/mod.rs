//! What several of this crate's integration tests share.

use std::path::Path;
use std::process::Command;

/// Compiles the C program `src` into `exe` with gcc and `flags`, failing
/// the test with gcc's own message, or with how to install gcc when it is
/// missing.
pub fn gcc(src: &Path, exe: &Path, flags: &[&str]) {
    let out = Command::new("gcc")
        .args(flags)
        .arg("-o")
        .arg(exe)
        .arg(src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run gcc ({e}): install the Debian package gcc"));
    assert!(
        out.status.success(),
        "gcc failed on {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
