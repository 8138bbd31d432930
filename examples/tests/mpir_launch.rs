//! `mpidd launch`: the MPIR protocol driven over ptrace, end to end.
//!
//! - Open MPI's real `mpirun` (Debian `openmpi-bin`, MPIR symbols in
//!   `libopen-rte.so.40`) with a program whose ranks print their pids;
//! - a small C starter (`tests/mpir_starter/starter.c`) whose ranks wait at
//!   `MPIR_debug_gate` and which reports an abort from a second thread;
//! - Debian's `mpiexec.hydra`, which has no MPIR symbols.
//!
//! `bash scripts/test.sh` installs gcc, Open MPI and mpich.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn compile(compiler: &str, src: &str, out: &str, extra: &[&str]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mpir-launch");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(out);
    let result = Command::new(compiler)
        .args(["-g", "-o"])
        .arg(&exe)
        .arg(repo().join(src))
        .args(extra)
        .output()
        .unwrap_or_else(|e| {
            panic!("{compiler}: {e} (bash scripts/test.sh installs gcc and libopenmpi-dev)")
        });
    assert!(
        result.status.success(),
        "{compiler} {src} failed:\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    exe
}

/// Runs `mpidd launch ARGS -- COMMAND`, bounded so a hang fails the test.
fn launch(args: &[&str], command: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mpidd"))
        .arg("launch")
        .args(args)
        .arg("--")
        .args(command)
        .env("OMPI_MPIR_DO_NOT_WARN", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run mpidd");
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mpidd launch {command:?} did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// mpidd's JSON lines and the other lines (the job's own output).
fn split(out: &Output) -> (Vec<Value>, Vec<String>) {
    let text = String::from_utf8_lossy(&out.stdout);
    let (json, other): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with('{'));
    (
        json.iter()
            .map(|l| serde_json::from_str(l).expect("JSON line"))
            .collect(),
        other.into_iter().map(str::to_string).collect(),
    )
}

/// "KEY R pid P ..." lines as rank -> pid.
fn printed_pids(lines: &[String], key: &str) -> BTreeMap<usize, i64> {
    lines
        .iter()
        .filter_map(|l| {
            let rest = l.strip_prefix(key)?;
            let mut w = rest.split_whitespace();
            let rank = w.next()?.parse().ok()?;
            (w.next()? == "pid").then_some(())?;
            Some((rank, w.next()?.parse().ok()?))
        })
        .collect()
}

fn table_pids(event: &Value) -> BTreeMap<usize, i64> {
    event["proctable"]
        .as_array()
        .expect("proctable")
        .iter()
        .enumerate()
        .map(|(i, e)| {
            assert!(e["host_name"].as_str().is_some_and(|h| !h.is_empty()));
            assert!(e["executable_name"].as_str().is_some());
            (i, e["pid"].as_i64().unwrap())
        })
        .collect()
}

fn assert_gone_or_untraced(pids: impl IntoIterator<Item = i64>) {
    for pid in pids {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue; // ended and reaped: not stopped, not traced
        };
        for line in status.lines() {
            if let Some(v) = line.strip_prefix("TracerPid:") {
                assert_eq!(v.trim(), "0", "{pid} is still traced");
            }
            if let Some(v) = line.strip_prefix("State:") {
                let v = v.trim();
                assert!(!v.starts_with(['t', 'T']), "{pid} was left stopped: {v}");
            }
        }
    }
}

#[test]
fn open_mpi_mpirun_is_launched_read_released_and_runs_to_its_end() {
    let prog = compile(
        "mpicc.openmpi",
        "tests/openmpi/print_rank.c",
        "print_rank",
        &[],
    );
    let prog = prog.to_str().unwrap();
    let out = launch(
        &["--json"],
        &[
            "mpirun.openmpi",
            "--allow-run-as-root",
            "--oversubscribe",
            "-n",
            "4",
            prog,
        ],
    );
    let (events, lines) = split(&out);
    assert!(
        out.status.success(),
        "exit {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let spawned: Vec<&Value> = events.iter().filter(|e| e["event"] == "spawned").collect();
    assert_eq!(spawned.len(), 1, "{events:?}");
    let table = table_pids(spawned[0]);
    assert_eq!(table.len(), 4);
    assert_eq!(table, printed_pids(&lines, "rank "), "{lines:?}");
    assert!(spawned[0]["defined_in"]
        .as_str()
        .unwrap()
        .contains("libopen-rte.so.40"));
    // The job ended normally: the release and the detach worked.
    let last = events.last().unwrap();
    assert_eq!(last["event"], "exited");
    assert_eq!(last["status"], 0);
    let launcher = spawned[0]["launcher_pid"].as_i64().unwrap();
    assert_gone_or_untraced(std::iter::once(launcher).chain(table.values().copied()));
}

#[test]
fn a_starter_reports_spawned_then_aborting_and_its_gates_are_released() {
    let starter = compile(
        "gcc",
        "tests/mpir_starter/starter.c",
        "starter",
        &["-pthread"],
    );
    let out = launch(
        &["--json", "--gate", "--watch"],
        &[starter.to_str().unwrap(), "3", "30000"],
    );
    let (events, lines) = split(&out);
    assert!(
        out.status.success(),
        "the starter fails unless every rank was released: {:?}\n{}\n{lines:?}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["spawned", "aborting", "exited"]);
    let table = table_pids(&events[0]);
    assert_eq!(table, printed_pids(&lines, "spawned rank "));
    assert_eq!(events[0]["gate"]["advice"], "ranks_wait_at_gate");
    let released: Vec<i64> = events[0]["gate"]["released"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_i64().unwrap())
        .collect();
    assert_eq!(released, table.values().copied().collect::<Vec<_>>());
    // The abort came from another thread of the starter: threads are
    // followed, or its breakpoint would have killed the starter.
    assert_eq!(
        events[1]["message"],
        "rank 1 called MPI_Abort (starter test)"
    );
    assert_eq!(events[2]["status"], 0);
    for rank in 0..3 {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("rank {rank} ")) && l.ends_with("gate 1")),
            "{lines:?}"
        );
    }
}

#[test]
fn without_gate_the_ranks_stay_held_and_the_output_says_so() {
    let starter = compile(
        "gcc",
        "tests/mpir_starter/starter.c",
        "starter-nogate",
        &["-pthread"],
    );
    let out = launch(&["--json"], &[starter.to_str().unwrap(), "2", "300"]);
    let (events, lines) = split(&out);
    assert_eq!(events[0]["event"], "spawned");
    assert_eq!(events[0]["gate"]["advice"], "ranks_wait_at_gate");
    assert_eq!(events[0]["gate"]["released"], serde_json::json!([]));
    // Unreleased ranks give up after 300 ms; the starter then exits 1,
    // and mpidd with it.
    assert_eq!(out.status.code(), Some(1), "{lines:?}");
    assert!(lines.iter().all(|l| !l.ends_with("gate 1")), "{lines:?}");
    let text = Command::new(env!("CARGO_BIN_EXE_mpidd"))
        .args(["launch", "--"])
        .arg(&starter)
        .args(["1", "100"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("--gate releases them"), "{stdout}");
}

#[test]
fn mpiexec_hydra_is_refused_naming_the_objects_searched() {
    let hydra = "/usr/bin/mpiexec.hydra";
    assert!(
        Path::new(hydra).exists(),
        "{hydra} is missing: apt-get install mpich (bash scripts/test.sh does)"
    );
    let out = launch(&["--json"], &[hydra, "-n", "1", "true"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no MPIR symbols"), "{err}");
    assert!(err.contains(hydra), "{err}");
    assert!(err.contains("libc.so"), "{err}");
}
