//! `mpidd types` on a program gcc built: its layout must be what the program
//! itself prints with `sizeof` and `offsetof`.
//!
//! A missing gcc is a failure that says how to get it, not a skip.

use std::path::PathBuf;
use std::process::Command;

const PROBE: &str = r#"
#include <stddef.h>
#include <stdio.h>

typedef struct probe {
  char c;
  union {
    double d;
    int pair[2];
  };
  unsigned flag : 3;
  struct probe *next;
} probe_t;

int main(void) {
  probe_t p = {0};
  (void)p;
  printf("%zu %zu %zu %zu %zu\n", sizeof(probe_t), offsetof(probe_t, c),
         offsetof(probe_t, d), offsetof(probe_t, pair),
         offsetof(probe_t, next));
  return 0;
}
"#;

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mpidd-types-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Builds the probe with gcc -g and returns it with what it printed.
fn probe(dir: &std::path::Path) -> (PathBuf, Vec<u64>) {
    let src = dir.join("probe.c");
    let exe = dir.join("probe");
    std::fs::write(&src, PROBE).unwrap();
    let built = Command::new("gcc")
        .args(["-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run gcc: {e}. Install the Debian package gcc (`bash scripts/test.sh` does).")
        });
    assert!(
        built.status.success(),
        "gcc failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = Command::new(&exe).output().unwrap();
    let truth = String::from_utf8(ran.stdout)
        .unwrap()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    (exe, truth)
}

fn mpidd(args: &[&str], object: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mpidd"))
        .arg("types")
        .arg("--object")
        .arg(object)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn types_prints_the_layout_the_compiler_chose() {
    let dir = temp_dir();
    let (exe, truth) = probe(&dir);
    let [size, c, d, pair, next] = truth[..] else {
        panic!("the probe printed {truth:?}");
    };

    let out = mpidd(&["--json", "probe_t"], &exe);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let layout = &json[0];
    assert_eq!(layout["name"], "probe_t");
    assert_eq!(layout["kind"], "Struct");
    assert_eq!(layout["size"], size);
    let members = layout["members"].as_array().unwrap();
    let offset = |m: &serde_json::Value| m["offset"].as_u64().unwrap();
    assert_eq!(members[0]["name"], "c");
    assert_eq!(offset(&members[0]), c);
    // The anonymous union carries its own members.
    assert!(members[1]["name"].is_null());
    let inner = members[1]["members"].as_array().unwrap();
    assert_eq!((offset(&inner[0]), offset(&inner[1])), (d, pair));
    assert_eq!(inner[1]["array_len"], 2);
    assert_eq!(members[2]["bits"]["bit_size"], 3);
    assert_eq!(members[3]["name"], "next");
    assert_eq!(offset(&members[3]), next);

    let text = mpidd(&["struct probe"], &exe);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.starts_with(&format!("struct probe: Struct, {size} bytes")),
        "{text}"
    );
    assert!(text.contains("struct probe * next"), "{text}");

    let missing = mpidd(&["no_such_type"], &exe);
    assert!(!missing.status.success());
    let err = String::from_utf8(missing.stderr).unwrap();
    assert!(err.contains("`no_such_type` not found"), "{err}");
    assert!(err.contains(&exe.display().to_string()), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
