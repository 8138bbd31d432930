//! `mpidd procs` against a real Open MPI job (Debian `openmpi-bin` 4.1):
//! the live `mpirun`, its `gcore` core file, and a rank.
//!
//! Open MPI keeps its MPIR symbols in `libopen-rte.so.40`, not in the
//! `mpirun` executable, and the table itself in that library's `.bss`, past
//! the end of its file mapping. `tests/openmpi/run-job.sh` starts the job;
//! `bash scripts/test.sh` installs Open MPI and gdb (for gcore).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

struct Job {
    dir: PathBuf,
    env: HashMap<String, String>,
}

impl Job {
    fn start(name: &str) -> Job {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(&dir)
            .output()
            .expect("run bash");
        assert!(
            out.status.success(),
            "starting the Open MPI job failed (bash scripts/test.sh installs openmpi-bin \
             and libopenmpi-dev):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let env = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
            .collect();
        Job { dir, env }
    }

    fn get(&self, key: &str) -> &str {
        &self.env[key]
    }

    fn pid(&self, key: &str) -> i32 {
        self.get(key).parse().unwrap()
    }

    fn rank_pids(&self) -> Vec<i64> {
        self.get("RANK_PIDS")
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect()
    }

    /// Releases the ranks and returns mpirun's exit status.
    fn stop(&self) -> i32 {
        let status = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .status()
            .expect("run bash");
        status.code().unwrap_or(-1)
    }
}

impl Drop for Job {
    // A failed assertion must not leave the job behind.
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .output();
    }
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/openmpi/run-job.sh")
}

fn mpidd(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mpidd"))
        .args(args)
        .output()
        .expect("run mpidd");
    assert!(
        out.status.success(),
        "mpidd {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The process state letter from /proc/PID/stat (R, S, T, ...).
fn state(pid: i32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.chars().next().unwrap()
}

fn parent(pid: i64) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split(' ').nth(1).unwrap().parse().unwrap()
}

fn check_table(job: &Job, mpir: &Value) {
    let table = mpir["proctable"].as_array().expect("proctable list");
    let pids: Vec<i64> = table.iter().map(|e| e["pid"].as_i64().unwrap()).collect();
    assert_eq!(
        pids,
        job.rank_pids(),
        "the table's pids are the ranks' pids, in rank order"
    );
    let exe = std::fs::canonicalize(job.get("EXECUTABLE")).unwrap();
    for e in table {
        assert_eq!(e["host_name"], job.get("HOST"));
        let named = std::fs::canonicalize(e["executable_name"].as_str().unwrap()).unwrap();
        assert_eq!(named, exe);
        let pid = e["pid"].as_i64().unwrap();
        assert_eq!(
            parent(pid),
            job.pid("MPIRUN_PID"),
            "rank {pid} is a child of mpirun"
        );
        assert_eq!(
            std::fs::canonicalize(format!("/proc/{pid}/exe")).unwrap(),
            exe,
            "/proc says rank {pid} runs the executable the table names"
        );
    }
    assert_eq!(mpir["proctable_size"], 4);
    assert_eq!(mpir["debug_state"], "spawned");
    let lib = mpir["defined_in"].as_str().unwrap();
    assert!(
        lib.contains("libopen-rte.so.40"),
        "MPIR symbols come from {lib}"
    );
}

#[test]
fn mpirun_live_and_its_core_give_the_same_table() {
    let job = Job::start("openmpi-live");
    let mpirun = job.pid("MPIRUN_PID");
    let mpirun_s = mpirun.to_string();

    let live = mpidd(&["procs", "--pid", &mpirun_s, "--json"]);
    check_table(&job, &live["mpir"]);
    assert_ne!(state(mpirun), 'T', "reading must not leave mpirun stopped");

    let core_prefix = job.dir.join("mpirun.core");
    let gcore = Command::new("gcore")
        .arg("-o")
        .arg(&core_prefix)
        .arg(&mpirun_s)
        .output()
        .expect("gcore is in Debian's gdb package (bash scripts/test.sh installs it)");
    assert!(
        gcore.status.success(),
        "{}",
        String::from_utf8_lossy(&gcore.stderr)
    );
    let core = format!("{}.{mpirun}", core_prefix.display());
    let offline = mpidd(&["procs", "--core", &core, "--json"]);
    check_table(&job, &offline["mpir"]);
    assert_eq!(offline["mpir"]["proctable"], live["mpir"]["proctable"]);
    // Open MPI copies the host and executable names for every rank: the
    // summary counts them by text, not by address.
    let summary = Command::new(env!("CARGO_BIN_EXE_mpidd"))
        .args(["procs", "--core", &core, "--summary"])
        .output()
        .unwrap();
    assert!(summary.status.success(), "{summary:?}");
    let text = String::from_utf8_lossy(&summary.stdout);
    let host = job.get("HOST");
    let exe = offline["mpir"]["proctable"][0]["executable_name"]
        .as_str()
        .unwrap();
    let expected = format!("4 ranks on 1 hosts ({host}), running 1 executables ({exe})");
    assert!(text.contains(&expected), "{expected:?} in\n{text}");
    let last = job.rank_pids()[3].to_string();
    assert!(
        text.lines()
            .any(|l| l.contains("rank 3 ") && l.contains(&last)),
        "the last rank, pid {last}, in\n{text}"
    );
    std::fs::remove_file(&core).ok();

    // A rank carries the message-queue DLL's name in libmpi.
    let rank0 = job.get("RANK0_PID").to_string();
    let rank = mpidd(&["procs", "--pid", &rank0, "--json"]);
    let dll = rank["mpir"]["dll_name"]
        .as_str()
        .expect("MPIR_dll_name in libmpi");
    assert!(dll.ends_with("libompi_dbg_msgq.so"), "{dll}");
    assert!(Path::new(dll).exists(), "{dll} is installed");
    assert_eq!(
        rank["mpir"]["proctable_size"], 0,
        "a rank is not the starter"
    );

    for pid in [mpirun, job.pid("RANK0_PID")] {
        assert_ne!(state(pid), 'T', "process {pid} was left stopped");
    }
    assert_eq!(job.stop(), 0, "the job runs to its normal end");
}

#[test]
fn a_launcher_without_mpir_symbols_is_reported_as_such() {
    // This test binary itself is such a process: no MPIR symbols anywhere.
    let me = std::process::id().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_mpidd"))
        .args(["procs", "--pid", &me])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no MPIR symbols"), "{err}");
    assert!(err.contains("stripped"), "{err}");
}

fn status_field(pid: i64, key: &str) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

#[test]
fn mpidd_attach_stops_mpirun_briefly_and_leaves_nothing_traced() {
    let job = Job::start("openmpi-attach");
    let mpirun = job.pid("MPIRUN_PID");
    let out = mpidd(&["attach", "--pid", &mpirun.to_string(), "--json"]);
    let table: Vec<i64> = out["proctable"]
        .as_array()
        .expect("proctable")
        .iter()
        .map(|e| e["pid"].as_i64().unwrap())
        .collect();
    let mut ranks = job.rank_pids();
    ranks.sort_unstable();
    let mut sorted = table.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ranks, "the table lists exactly the running ranks");
    assert_eq!(out["event"], "spawned");
    for pid in std::iter::once(i64::from(mpirun)).chain(ranks.iter().copied()) {
        assert_eq!(
            status_field(pid, "TracerPid:"),
            "0",
            "{pid} is still traced"
        );
        let state = status_field(pid, "State:");
        assert!(
            !state.starts_with('t') && !state.starts_with('T'),
            "{pid} was left stopped: {state}"
        );
    }
    assert_eq!(job.stop(), 0, "the job runs to its normal end");
}
