//! One name for one thing: no two public types, traits or aliases of the
//! library crates share a name. A crate may re-export another's type
//! (`pub use`), which is the same thing under the same name; it may not
//! define a second one.
//!
//! The definitions are found in the sources, so the check needs no build
//! of the docs: every `pub struct`, `pub enum`, `pub union`, `pub trait`
//! and `pub type`, including those made by the records' macro
//! (`pub struct Name = "c_name", ...`). Types private to a crate
//! (`pub(crate)`) are not public and may share names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The library crates, by their directory under the workspace root. The
/// `mpidd` binary (examples/) and the test and bench packages are not
/// libraries anyone depends on.
const CRATES: &[&str] = &[
    "mpidd-types",
    "mpidd-read",
    "mpiq-core",
    "mpiq-core/mqs-dll",
    "mpihandles",
    "mpidd-job",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The public type names one line of Rust defines.
fn defined(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix("pub ")?;
    let rest = ["struct ", "enum ", "union ", "trait ", "type "]
        .iter()
        .find_map(|k| rest.strip_prefix(k))?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    // `$name` in a macro's own definition is not a type.
    (!name.is_empty() && !rest.starts_with('$')).then_some(name)
}

/// Every public type name, with where each definition is.
fn definitions() -> BTreeMap<String, Vec<String>> {
    let root = workspace();
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root.join(krate).join("src"), &mut files);
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a source file");
            for (i, line) in text.lines().enumerate() {
                if let Some(name) = defined(line) {
                    let at = file.strip_prefix(&root).unwrap_or(&file);
                    found
                        .entry(name)
                        .or_default()
                        .push(format!("{}:{}", at.display(), i + 1));
                }
            }
        }
    }
    found
}

#[test]
fn no_two_public_types_share_a_name() {
    let found = definitions();
    // The check must see the crates, or it passes on nothing.
    for known in [
        "TargetMemory",
        "Target",
        "Limits",
        "Layouts",
        "QueueDecoder",
        "HandleView",
    ] {
        assert!(
            found.contains_key(known),
            "{known} was not found: the scan is broken"
        );
    }
    let shared: Vec<String> = found
        .iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(name, at)| format!("{name}: {}", at.join(", ")))
        .collect();
    assert!(
        shared.is_empty(),
        "public types defined more than once (rename one, or re-export the other):\n{}",
        shared.join("\n")
    );
}

#[test]
fn the_scan_finds_what_it_looks_for() {
    assert_eq!(
        defined("pub struct CoreTarget {"),
        Some("CoreTarget".into())
    );
    assert_eq!(defined("    pub trait Target {"), Some("Target".into()));
    assert_eq!(
        defined("    pub struct Mpi2ddInfo = \"MPI2DD_INFO\", FromAbi {"),
        Some("Mpi2ddInfo".into())
    );
    assert_eq!(defined("pub(crate) struct Ctx<'a> {"), None);
    assert_eq!(defined("        pub struct $name {"), None);
    assert_eq!(defined("pub use mpidd_read::Limits;"), None);
}
