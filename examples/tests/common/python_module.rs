//! The Python module `mpidd` (mpidd-python) as a debugger's Python loads
//! it: its wheel built and installed into a directory of its own
//! (scripts/build-python-module.sh), once per test binary, for the
//! debugger's `sys.path`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The directory the module's wheel was installed into.
pub fn module_site() -> &'static Path {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = Command::new("bash")
            .arg("scripts/build-python-module.sh")
            .current_dir(&root)
            .output()
            .expect("run bash");
        assert!(
            out.status.success(),
            "scripts/build-python-module.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        let site = PathBuf::from(stdout.lines().last().expect("the install directory"));
        for module in ["mpidd/gdb.py", "mpidd/lldb.py"] {
            assert!(
                site.join(module).exists(),
                "{}: no {module}",
                site.display()
            );
        }
        site
    })
}

/// The text a debugger printed between `@@BEGIN` and `@@END` lines.
pub fn between_markers<'a>(stdout: &'a str, stderr: &str) -> &'a str {
    let start = stdout
        .find("@@BEGIN\n")
        .unwrap_or_else(|| panic!("no @@BEGIN in the output:\n{stdout}\n{stderr}"))
        + "@@BEGIN\n".len();
    let end = stdout[start..]
        .find("@@END")
        .unwrap_or_else(|| panic!("no @@END in the output:\n{stdout}\n{stderr}"));
    &stdout[start..start + end]
}
