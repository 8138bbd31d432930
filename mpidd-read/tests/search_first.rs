//! `TypeOracle::search_first`: the object named is searched before the
//! others, whose order stays, and answers kept from the old order go.
//!
//! Two shared objects compiled with gcc define `struct both` with
//! different sizes. A missing gcc is a failure naming its Debian package.

use std::path::Path;
use std::process::Command;

use mpidd_read::TypeOracle;

mod oracle_fixture;
use oracle_fixture::{run, temp_dir};

fn shared_object(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let source = dir.join(format!("{name}.c"));
    std::fs::write(&source, text).expect("write a C file");
    let out = dir.join(format!("{name}.so"));
    run(
        Command::new("gcc")
            .args(["-shared", "-fPIC", "-g", "-O0"])
            .arg(&source)
            .arg("-o")
            .arg(&out),
        "gcc",
        "gcc",
    );
    out
}

#[test]
fn the_object_named_first_answers_first() {
    let dir = temp_dir("search-first");
    let one = shared_object(
        &dir,
        "one",
        "struct both { int a; } v1; struct only_one { int x; } o1;\n",
    );
    let two = shared_object(&dir, "two", "struct both { long a[4]; } v2;\n");
    let mut oracle = TypeOracle::new();
    oracle.add_object("one", &one, None);
    oracle.add_object("two", &two, None);
    let size = |o: &TypeOracle, n: &str| o.find_type(n).map(|l| (l.size, l.object));
    assert_eq!(size(&oracle, "both").unwrap(), (4, "one".into()));
    assert!(!oracle.search_first("three"), "no such object");
    assert!(oracle.search_first("two"));
    // The answer kept from the old order is not reused.
    assert_eq!(size(&oracle, "both").unwrap(), (32, "two".into()));
    // What the first object lacks is still found in the others.
    assert_eq!(size(&oracle, "only_one").unwrap(), (4, "one".into()));
    let err = oracle.find_type("nowhere").unwrap_err();
    match err {
        mpidd_read::TypeError::NotFound { searched, .. } => {
            let names: Vec<_> = searched.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(names, ["two", "one"], "the search order is reported");
        }
        other => panic!("{other:?}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
