//! `mpidd procs` reads MPI-2 records of either layout without a flag and
//! says which it used: on a real s390x guest core whose records gcc packed
//! (tests/qemu/make-cores.sh s390x_packed, run under qemu-user), and on the
//! same one compiled natural; `--packed` and `--natural` force a layout.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::mpich_job::mpidd;
use common::scratch::{fresh_dir, remove_unless_failed};
use serde_json::Value;

fn make_cores(dir: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/qemu/make-cores.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(dir)
        .args(["s390x", "s390x_packed"])
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "{} failed (bash scripts/test.sh installs qemu-user and the s390x cross compiler):\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn procs(dir: &Path, arch: &str, extra: &[&str]) -> (bool, String, String) {
    let out = mpidd()
        .arg("procs")
        .arg("--core")
        .arg(dir.join(format!("mpir_target-{arch}.core")))
        .arg("--exe")
        .arg(dir.join(format!("mpir_target-{arch}")))
        .arg("--sysroot")
        .arg(PathBuf::from("/usr/s390x-linux-gnu"))
        .arg("--search-path")
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn packed_and_natural_s390x_cores_need_no_flag() {
    let dir = fresh_dir("mpi2dd-layout");
    make_cores(&dir);
    for (arch, layout) in [("s390x", "natural"), ("s390x_packed", "packed")] {
        let expected =
            std::fs::read_to_string(dir.join(format!("mpir_target-{arch}.expected"))).unwrap();
        assert!(
            expected.contains(&format!("\nmpi2dd_layout={layout}\n")),
            "{arch}: the program says it compiled another layout"
        );
        let pids: Vec<i64> = (0..2)
            .map(|i| {
                let key = format!("MPI2DD_directory[{i}].pid=");
                let line = expected.lines().find_map(|l| l.strip_prefix(&key)).unwrap();
                line.parse().unwrap()
            })
            .collect();

        let (ok, out, err) = procs(&dir, arch, &["--json"]);
        assert!(ok, "{arch}: {err}");
        let json: Value = serde_json::from_str(&out).unwrap();
        let p = &json["mpi2dd"];
        assert_eq!(p["packing"]["packing"], layout, "{arch}: {p:#}");
        assert_eq!(p["packing"]["chosen"], "detected", "{arch}");
        let got: Vec<i64> = p["directory_table"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["pid"].as_i64().unwrap())
            .collect();
        assert_eq!(got, pids, "{arch}");

        let (ok, out, err) = procs(&dir, arch, &[]);
        assert!(ok, "{arch}: {err}");
        assert!(
            out.contains(&format!("records: {layout} layout, detected")),
            "{arch}: {out}"
        );

        // Forced: the right layout reads the same, and says it was asked.
        let (ok, out, err) = procs(&dir, arch, &[&format!("--{layout}")]);
        assert!(ok, "{arch}: {err}");
        assert!(
            out.contains(&format!("records: {layout} layout, as asked")),
            "{arch}: {out}"
        );
        // The wrong one misreads the directory table: an error, or pids
        // that are not the program's.
        let wrong = if layout == "packed" {
            "natural"
        } else {
            "packed"
        };
        let (ok, out, _) = procs(&dir, arch, &[&format!("--{wrong}"), "--json"]);
        if ok {
            let json: Value = serde_json::from_str(&out).unwrap();
            let got: Vec<i64> = json["mpi2dd"]["directory_table"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["pid"].as_i64().unwrap())
                .collect();
            assert_ne!(got, pids, "{arch}: --{wrong} read the right table");
        }
    }
    remove_unless_failed(&dir);
}
