//! The Python frame reader's tables against a C compiler's layout of
//! CPython's own headers: Debian 12's 3.11 (libpython3.11-dev), and the
//! 3.9 and 3.13 headers of Debian 11's and Debian 13's packages that
//! `scripts/python-headers.sh` unpacks (`MPIDD_PYTHON_HEADERS`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use mpidd_read::{python_offsets, PythonVersion};

fn compiled(version: PythonVersion, root: &Path) -> BTreeMap<String, u64> {
    let include = root.join(format!("usr/include/python{version}"));
    assert!(
        include.join("Python.h").exists(),
        "{} is missing: install libpython{version}-dev (3.11) or run scripts/python-headers.sh and set MPIDD_PYTHON_HEADERS to the directory it prints",
        include.display()
    );
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/c/python_offsets.c");
    let out = std::env::temp_dir().join(format!("mpidd-pyoff-{version}-{}", std::process::id()));
    let status = Command::new("gcc")
        .arg(format!("-I{}", root.join("usr/include").display()))
        .arg(format!("-I{}", include.display()))
        .arg(format!("-I{}", include.join("internal").display()))
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("gcc runs (apt-get install gcc)");
    assert!(
        status.success(),
        "gcc failed on {} for {version}",
        src.display()
    );
    let printed = Command::new(&out)
        .output()
        .expect("the offsets program runs");
    let _ = std::fs::remove_file(&out);
    String::from_utf8(printed.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (name, value) = l.rsplit_once(' ').unwrap();
            (name.to_string(), value.parse().unwrap())
        })
        .collect()
}

fn check(version: PythonVersion, root: &Path) {
    let c = compiled(version, root);
    let table: BTreeMap<String, u64> = python_offsets(version)
        .unwrap()
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect();
    let mut wrong = Vec::new();
    for (name, value) in &c {
        match table.get(name) {
            Some(v) if v == value => {}
            other => wrong.push(format!("{name}: compiler {value}, table {other:?}")),
        }
    }
    for name in table.keys().filter(|n| !c.contains_key(*n)) {
        wrong.push(format!("{name}: in the table, not checked by the compiler"));
    }
    assert!(wrong.is_empty(), "CPython {version}:\n{}", wrong.join("\n"));
    // Something was compared: the list is the reader's whole table.
    assert!(c.len() >= 34, "{c:?}");
}

fn headers() -> PathBuf {
    PathBuf::from(std::env::var("MPIDD_PYTHON_HEADERS").unwrap_or_else(|_| {
        panic!("MPIDD_PYTHON_HEADERS is not set: run scripts/python-headers.sh (scripts/test.sh does) and set it to the directory it prints")
    }))
}

#[test]
fn python_3_11_table_is_debian_12s_layout() {
    check(PythonVersion::new(3, 11), Path::new("/"));
}

#[test]
fn python_3_9_table_is_debian_11s_layout() {
    check(PythonVersion::new(3, 9), &headers().join("3.9"));
}

#[test]
fn python_3_13_table_is_debian_13s_layout() {
    check(PythonVersion::new(3, 13), &headers().join("3.13"));
}
