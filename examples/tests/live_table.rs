//! `mpidd procs --pid` on a live process with a 1000-entry MPIR table
//! (`tests/live/mpir_table.c`): every entry is read right, and the reads
//! are batched, as strace counts them.
//!
//! Needs gcc and strace (Debian packages `gcc` and `strace`); `bash
//! scripts/test.sh` installs them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

const RANKS: usize = 1000;

/// The table program, killed and reaped however the test ends.
struct Table {
    child: Child,
    /// (host, executable, pid) as the program printed them.
    entries: Vec<(String, String, i64)>,
}

impl Drop for Table {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Table {
    fn start(name: &str) -> Table {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/live/mpir_table.c");
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("mpir_table");
        let out = Command::new("gcc")
            .args(["-O1", "-g", "-o"])
            .arg(&exe)
            .arg(&src)
            .output()
            .unwrap_or_else(|e| panic!("cannot run gcc ({e}): install the Debian package gcc"));
        assert!(
            out.status.success(),
            "gcc failed on {}:\n{}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let mut child = Command::new(&exe)
            .arg(RANKS.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start mpir_table");
        let stdout = child.stdout.take().unwrap();
        let mut table = Table {
            child,
            entries: Vec::new(),
        };
        for line in BufReader::new(stdout).lines() {
            let line = line.expect("read mpir_table's output");
            if line == "ready" {
                return table;
            }
            let f: Vec<&str> = line.split(' ').collect();
            assert_eq!(f.len(), 3, "entry line {line:?}");
            table
                .entries
                .push((f[0].to_string(), f[1].to_string(), f[2].parse().unwrap()));
        }
        panic!("mpir_table ended without printing ready");
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }
}

#[test]
fn live_table_of_1000_entries_reads_as_printed() {
    let table = Table::start("live-table-read");
    assert_eq!(table.entries.len(), RANKS);
    let out = Command::new(env!("CARGO_BIN_EXE_mpidd"))
        .args(["procs", "--pid", &table.pid(), "--json"])
        .output()
        .expect("run mpidd");
    assert!(
        out.status.success(),
        "mpidd procs failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let mpir = &report["mpir"];
    assert_eq!(mpir["debug_state"], "spawned");
    assert_eq!(mpir["proctable_size"], RANKS as i64);
    let read: Vec<(String, String, i64)> = mpir["proctable"]
        .as_array()
        .expect("proctable list")
        .iter()
        .map(|e| {
            (
                e["host_name"].as_str().unwrap().to_string(),
                e["executable_name"].as_str().unwrap().to_string(),
                e["pid"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(read, table.entries);
}

#[test]
fn live_table_of_1000_entries_takes_few_process_vm_readv() {
    let table = Table::start("live-table-strace");
    let summary = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("live-table-strace")
        .join("strace.txt");
    let out = Command::new("strace")
        .args([
            "-f",
            "-c",
            "-e",
            "trace=process_vm_readv,pread64,read,openat",
            "-o",
        ])
        .arg(&summary)
        .arg(env!("CARGO_BIN_EXE_mpidd"))
        .args(["procs", "--pid", &table.pid(), "--json"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run strace ({e}): install the Debian package strace"));
    assert!(
        out.status.success(),
        "strace mpidd procs failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The traced run read the whole table too.
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        report["mpir"]["proctable"].as_array().map(Vec::len),
        Some(RANKS)
    );
    let text = std::fs::read_to_string(&summary).expect("strace's summary");
    let calls = |name: &str| -> u64 {
        text.lines()
            .find(|l| l.split_whitespace().last() == Some(name))
            .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
            .unwrap_or(0)
    };
    let readv = calls("process_vm_readv");
    // The table and its 1016 distinct strings: one per string would be
    // over 2000 calls; batched it is a handful.
    assert!(
        (1..=20).contains(&readv),
        "{readv} process_vm_readv calls for {RANKS} entries:\n{text}"
    );
    // Nor did the reads go around the batching through /proc/PID/mem.
    assert!(
        calls("pread64") <= 20,
        "{} pread64 calls:\n{text}",
        calls("pread64")
    );
}
