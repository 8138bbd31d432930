//! What the live transport tests share: a C program of `tests/` built
//! once, the running program killed however a test ends, a shipped
//! profile by name, and the hex addresses the programs print.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use mpidd_read::LayoutProfile;

/// A running program, killed when the test ends however it ends.
pub struct Program(pub Child);

impl Drop for Program {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Builds `source` (a path below the repository) into `name` in the
/// tests' scratch directory, linked with `libs`; `package` says which
/// Debian package gives its headers when the build fails.
pub fn build_c_program(source: &str, name: &str, libs: &[&str], package: &str) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let out = Command::new("gcc")
        .args(["-g", "-O0", "-Wall", "-o"])
        .arg(&exe)
        .arg(repo.join(source))
        .args(libs)
        .output()
        .unwrap_or_else(|e| panic!("gcc is needed to build {source}: {e}"));
    assert!(
        out.status.success(),
        "building {source} failed; it needs {package} (apt-get install {package}):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// The shipped profile of `implementation` `version`.
pub fn shipped_profile(implementation: &str, version: &str) -> LayoutProfile {
    mpidd_read::shipped_profiles()
        .into_iter()
        .find(|p| p.identity.implementation == implementation && p.identity.version == version)
        .unwrap_or_else(|| panic!("mpidd ships the {implementation} {version} profile"))
}

/// An address as the programs print it (`0x...`).
pub fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16)
        .unwrap_or_else(|e| panic!("not an address: {s}: {e}"))
}
