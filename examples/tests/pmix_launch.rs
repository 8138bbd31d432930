//! `mpidd launch` and `mpidd attach --gate` on pip's Open MPI 5
//! (`MPIDD_PY_OMPI5_VENV`, made by scripts/python-envs.sh ompi5), whose
//! launcher (PRRTE's `prterun`) has no MPIR: mpidd gives it
//! `--stop-in-init`, so every rank waits in `PMIx_Init` as MPIR's gate
//! would hold it, and `--gate` (at once, or later through `mpidd attach`)
//! sends the job `PMIX_DEBUGGER_RELEASE`.
//!
//! What the ranks print is the evidence: each says `STARTED` before
//! `MPI_Init` and `READY` after it, with its rank and pid; a held rank has
//! said the one and not the other.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::pip_envs::ompi5_venv;
use common::scratch::{fresh_dir, remove_unless_failed};
use serde_json::Value;

/// Open MPI 5 starts slowly on a loaded 2-core machine.
const WITHIN: Duration = Duration::from_secs(180);

/// A rank that says when it has started, and who it is once `MPI_Init`
/// has returned, then ends with its job a few seconds later.
const SHORT_JOB: &str = r#"
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank;
    printf("STARTED %d\n", (int)getpid());
    fflush(stdout);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("READY %d %d\n", rank, (int)getpid());
    fflush(stdout);
    sleep(3);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"#;

/// Builds [`SHORT_JOB`] in `dir` with pip's `mpicc`.
fn build_short(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("short.c"), SHORT_JOB).unwrap();
    let exe = dir.join("short");
    let built = Command::new(ompi5_venv().join("bin/mpicc"))
        .arg("-o")
        .arg(&exe)
        .arg(dir.join("short.c"))
        .output()
        .expect("run mpicc");
    assert!(
        built.status.success(),
        "building the short job failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    exe
}

/// `mpidd launch --json [--gate] -- mpirun -n 4 EXE`, its session
/// directory below `dir`.
fn launch(dir: &Path, exe: &Path, gate: bool) -> Command {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_mpidd"));
    c.arg("launch").arg("--json");
    if gate {
        c.arg("--gate");
    }
    c.arg("--")
        .arg(ompi5_venv().join("bin/mpirun"))
        .args(["--oversubscribe", "--mca", "btl", "self,sm", "-n", "4"])
        .arg(exe)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("TMPDIR", &tmp)
        .current_dir(dir)
        .stdin(Stdio::null());
    c
}

/// What the ranks and mpidd printed, by kind.
#[derive(Default)]
struct Printed {
    started: Vec<i64>,
    ready: Vec<(i64, i64)>,
    events: Vec<Value>,
}

impl Printed {
    fn take(&mut self, line: &str) {
        match line.split_whitespace().collect::<Vec<_>>()[..] {
            ["STARTED", pid] => self.started.push(pid.parse().unwrap()),
            ["READY", rank, pid] => self
                .ready
                .push((rank.parse().unwrap(), pid.parse().unwrap())),
            _ if line.starts_with('{') => self.events.push(serde_json::from_str(line).unwrap()),
            _ => {}
        }
    }

    fn event(&self, name: &str) -> Option<&Value> {
        self.events.iter().find(|e| e["event"] == name)
    }

    /// The job's table as (rank, pid), from the `pmix_table` event.
    fn table(&self) -> Vec<(i64, i64)> {
        let table = self.event("pmix_table").expect("a pmix_table event");
        let jobs = table["pmix"]["namespaces"].as_array().unwrap();
        assert_eq!(jobs.len(), 1, "one job: {table}");
        jobs[0]["proctable"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(rank, p)| (rank as i64, p["pid"].as_i64().unwrap()))
            .collect()
    }

    fn namespace(&self) -> String {
        let table = self.event("pmix_table").expect("a pmix_table event");
        table["pmix"]["namespaces"][0]["nspace"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

/// `mpidd launch --gate`: the table, then the release in the same breath;
/// the ranks run through and the launcher's status is mpidd's.
#[test]
fn launch_gate_shows_open_mpi_5s_ranks_then_releases_them() {
    let dir = fresh_dir("pmix-launch-gate");
    let exe = build_short(&dir);
    let out = launch(&dir, &exe, true).output().expect("run mpidd launch");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "mpidd launch failed ({}): {stdout}\n{stderr}",
        out.status
    );
    let mut printed = Printed::default();
    stdout.lines().for_each(|l| printed.take(l));
    printed.ready.sort();
    assert_eq!(printed.ready.len(), 4, "every rank printed READY: {stdout}");
    assert_eq!(
        printed.table(),
        printed.ready,
        "the table against the ranks"
    );
    let table = printed.event("pmix_table").unwrap();
    assert_eq!(table["held_in_init"], false, "{table}");
    assert_eq!(
        table["pmix"]["released"],
        serde_json::json!([printed.namespace()]),
        "the job was released: {table}"
    );
    let launcher = table["launcher_pid"].as_i64().unwrap();
    let last = printed.events.last().unwrap();
    assert_eq!(last["event"], "exited", "{stdout}");
    assert_eq!(last["status"], 0, "{stdout}");
    assert_eq!(last["launcher_pid"].as_i64(), Some(launcher));
    remove_unless_failed(&dir);
}

/// Kills the launch (and its job) when a test fails before it ends.
struct Launched(Child);

impl Drop for Launched {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let pid = self.0.id() as i32;
            for p in common::procs::descendants(pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(p),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// `mpidd launch` without `--gate`: every rank has started and none has
/// come out of `MPI_Init` while mpidd shows the table and after; `mpidd
/// attach --gate` then releases them, the job ends, and so does mpidd.
#[test]
fn launch_holds_open_mpi_5s_ranks_in_pmix_init_until_attach_gate() {
    let dir = fresh_dir("pmix-launch-hold");
    let exe = build_short(&dir);
    let mut launched = Launched(
        launch(&dir, &exe, false)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run mpidd launch"),
    );
    let (tx, rx) = mpsc::channel();
    let stdout = launched.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut printed = Printed::default();
    let mut all = String::new();
    let start = Instant::now();
    // Until every rank has started and the table is out.
    while printed.event("pmix_table").is_none() || printed.started.len() < 4 {
        let left = WITHIN.saturating_sub(start.elapsed());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no table and 4 STARTED within {WITHIN:?}: {all}"));
        all.push_str(&line);
        all.push('\n');
        printed.take(&line);
    }
    let table = printed.event("pmix_table").unwrap().clone();
    assert_eq!(table["held_in_init"], true, "{table}");
    assert!(table["pmix"].get("released").is_none(), "{table}");
    let mut listed: Vec<i64> = printed.table().iter().map(|&(_, pid)| pid).collect();
    listed.sort();
    printed.started.sort();
    assert_eq!(
        listed, printed.started,
        "the table against the started ranks"
    );
    // Held: nothing comes out of MPI_Init while mpidd waits.
    std::thread::sleep(Duration::from_secs(3));
    while let Ok(line) = rx.try_recv() {
        all.push_str(&line);
        all.push('\n');
        printed.take(&line);
    }
    assert!(printed.ready.is_empty(), "a held rank left MPI_Init: {all}");
    for pid in &printed.started {
        assert!(
            Path::new(&format!("/proc/{pid}")).exists(),
            "rank pid {pid} is gone while held: {all}"
        );
    }
    // The release, from another mpidd.
    let launcher = table["launcher_pid"].as_i64().unwrap();
    let attach = Command::new(env!("CARGO_BIN_EXE_mpidd"))
        .args(["attach", "--gate", "--pid", &launcher.to_string()])
        .env("TMPDIR", dir.join("tmp"))
        .output()
        .expect("run mpidd attach");
    let said = String::from_utf8_lossy(&attach.stdout);
    assert!(
        attach.status.success(),
        "mpidd attach --gate failed: {said}{}",
        String::from_utf8_lossy(&attach.stderr)
    );
    assert!(
        said.contains(&format!(
            "released with PMIX_DEBUGGER_RELEASE: {}",
            printed.namespace()
        )),
        "{said}"
    );
    // Every rank goes on, the launcher ends, and mpidd with its status.
    while printed.events.last().is_none_or(|e| e["event"] != "exited") {
        let left = WITHIN.saturating_sub(start.elapsed());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("the released job did not end within {WITHIN:?}: {all}"));
        all.push_str(&line);
        all.push('\n');
        printed.take(&line);
    }
    printed.ready.sort();
    assert_eq!(printed.table(), printed.ready, "every rank went on: {all}");
    assert_eq!(printed.events.last().unwrap()["status"], 0, "{all}");
    let status = launched.0.wait().expect("wait for mpidd launch");
    assert!(status.success(), "mpidd launch ended {status}: {all}");
    remove_unless_failed(&dir);
}
