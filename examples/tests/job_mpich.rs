//! `mpidd job` on real hung 4-rank jobs of the reference MPICH
//! (scripts/build-ref-mpich.sh): tests/mpich/hang_*.c, which block for real
//! inside MPI calls. Each job is read live through its `mpiexec.hydra` and
//! from `gcore` cores of its ranks; the cycles, edges and findings expected
//! are worked out from the programs' sources (the same hangs as
//! mpidd-job/tests/scenarios.rs describes on synthetic ranks), not from
//! our output. A live read must leave every rank running and untraced, even
//! when `mpidd job` is interrupted or killed in the middle.
//!
//! The jobs' blocked ranks busy-poll, so the tests of this file run one at
//! a time.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use common::hung_job::HungJob;
use common::mpich_job::{mpidd, wait_timeout};

static SERIAL: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const MIB8: i64 = 8 << 20;

/// What a program's hang must give.
struct Expected {
    cycles: Vec<Vec<i64>>,
    /// (from, to, kind), sorted by (from, to) as the report sorts them.
    edges: Vec<(i64, i64, &'static str)>,
    /// (kind, ranks), in the report's order.
    findings: Vec<(&'static str, Vec<i64>)>,
    /// The MPI call of each rank (`None`: outside MPI).
    calls: [Option<&'static str>; 4],
}

/// Runs `mpidd job ARGS` and returns its standard output; it must exit 0.
fn run_job(args: &[&str]) -> String {
    let out = mpidd()
        .arg("job")
        .args(args)
        .output()
        .expect("run mpidd job");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "mpidd job {args:?} failed:\n{stderr}"
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// `mpidd job ARGS --json`, parsed.
fn job_json(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let out = run_job(&args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("mpidd job {args:?}: {e}\n{out}"))
}

fn edges(report: &Value) -> Vec<(i64, i64, String)> {
    report["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| {
            (
                e["from"].as_i64().unwrap(),
                e["to"].as_i64().unwrap(),
                e["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn findings(report: &Value) -> Vec<(String, Vec<i64>)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                ranks_of(&f["ranks"]),
            )
        })
        .collect()
}

fn ranks_of(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("a list of ranks")
        .iter()
        .map(|r| r.as_i64().unwrap())
        .collect()
}

fn cycles(report: &Value) -> Vec<Vec<i64>> {
    report["cycles"]
        .as_array()
        .expect("cycles")
        .iter()
        .map(ranks_of)
        .collect()
}

/// Everything of the report that must be the same live and from cores.
fn check(report: &Value, expected: &Expected, job: &HungJob, what: &str) {
    let context = format!(
        "{what}: verdict {:#}\nedges {:#}\nfindings {:#}",
        report["verdict"], report["edges"], report["findings"]
    );
    assert_eq!(report["schema"], "mpidd-job/1", "{context}");
    let ranks = report["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 4, "{what}: 4 ranks: {:#}", report["ranks"]);
    for (i, rank) in ranks.iter().enumerate() {
        let r = i as i64;
        assert_eq!(rank["world_rank"], r, "{what}: ranks by world rank");
        let errors = &rank["errors"];
        if let Some(pid) = rank["pid"].as_i64() {
            assert_eq!(
                pid,
                job.pid(r) as i64,
                "{what}: rank {r} is the process that printed READY {r}"
            );
        }
        let expected_call = expected.calls[i];
        assert_eq!(
            rank["mpi_call"].as_str(),
            expected_call,
            "{what}: rank {r}'s MPI call (errors {errors})"
        );
        let state = if expected_call.is_some() {
            "in_mpi"
        } else {
            "outside_mpi"
        };
        assert_eq!(
            rank["state"], state,
            "{what}: rank {r}'s state (errors {errors})"
        );
    }
    assert_eq!(cycles(report), expected.cycles, "{context}");
    let want: Vec<(i64, i64, String)> = expected
        .edges
        .iter()
        .map(|&(f, t, k)| (f, t, k.to_string()))
        .collect();
    assert_eq!(edges(report), want, "{context}");
    let want: Vec<(String, Vec<i64>)> = expected
        .findings
        .iter()
        .map(|(k, r)| (k.to_string(), r.clone()))
        .collect();
    assert_eq!(findings(report), want, "{context}");
    let first = report["verdict"][0].as_str().expect("a verdict");
    assert_eq!(
        first.starts_with("DEADLOCK:"),
        !expected.cycles.is_empty(),
        "{context}"
    );
}

/// The text form starts with the verdict; the DOT form is the wait-for
/// graph, with edges when the report has some. (Read from the cores, which
/// is quicker than reading the busy-polling ranks live again.)
fn check_text_and_dot(cores: &Path, report: &Value) {
    let verdict = report["verdict"][0].as_str().unwrap();
    let dir = cores.to_str().unwrap();
    let text = run_job(&["--core-dir", dir]);
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    assert!(
        first.contains(verdict),
        "the text output starts with the verdict {verdict:?}:\n{text}"
    );
    let dot = run_job(&["--core-dir", dir, "--dot"]);
    assert!(
        dot.trim_start().starts_with("digraph") && dot.trim_end().ends_with('}'),
        "a DOT graph:\n{dot}"
    );
    let has_edges = !report["edges"].as_array().unwrap().is_empty();
    assert_eq!(dot.contains(" -> "), has_edges, "edges drawn:\n{dot}");
}

/// Runs `program`'s job; checks it live (JSON) and from cores (JSON, then
/// text and DOT);
/// returns the job and both reports for the program's own checks.
fn check_job(program: &str, expected: &Expected) -> (HungJob, Value, Value) {
    let job = HungJob::start(&format!("job-{program}"), program);
    let launcher = job.mpiexec_pid().to_string();
    let live = job_json(&["--pid", &launcher]);
    check(&live, expected, &job, "live");
    job.assert_running("after mpidd job --pid --json");

    let dir = job.gcore_all("cores");
    job.assert_running("after gcore");
    let cores = job_json(&["--core-dir", dir.to_str().unwrap()]);
    check(&cores, expected, &job, "from cores");
    for (i, rank) in cores["ranks"].as_array().unwrap().iter().enumerate() {
        let target = rank["target"].as_str().unwrap_or("");
        assert!(
            target.contains(&format!("core.{}", job.pid(i as i64))),
            "rank {i} was read from its own core: {target}"
        );
    }
    check_text_and_dot(&dir, &cores);
    (job, live, cores)
}

fn pending<'a>(report: &'a Value, rank: usize, kind: &str) -> Vec<&'a Value> {
    report["ranks"][rank]["pending"]
        .as_array()
        .expect("pending")
        .iter()
        .filter(|o| o["kind"] == kind)
        .collect()
}

#[test]
fn ring_of_receives_is_one_cycle() {
    let _serial = one_at_a_time();
    let expected = Expected {
        cycles: vec![vec![0, 3, 2, 1]],
        edges: vec![
            (0, 3, "receive"),
            (1, 0, "receive"),
            (2, 1, "receive"),
            (3, 2, "receive"),
        ],
        findings: vec![("deadlock_cycle", vec![0, 3, 2, 1])],
        calls: [Some("MPI_Recv"); 4],
    };
    let (_job, live, cores) = check_job("hang_ring", &expected);
    for report in [&live, &cores] {
        let verdict = report["verdict"].to_string();
        assert!(verdict.contains("0 → 3 → 2 → 1 → 0"), "{verdict}");
        for r in 0..4 {
            let recv = pending(report, r, "receive");
            assert_eq!(recv.len(), 1, "rank {r}: {recv:?}");
            assert_eq!(recv[0]["peer"], (r as i64 + 3) % 4);
            assert_eq!(recv[0]["tag"], 0);
            assert_eq!(recv[0]["communicator"], "MPI_COMM_WORLD");
        }
    }
}

#[test]
fn head_to_head_ssends_are_a_cycle_of_inferred_sends() {
    let _serial = one_at_a_time();
    let expected = Expected {
        cycles: vec![vec![0, 1]],
        edges: vec![
            (0, 1, "inferred_send"),
            (1, 0, "inferred_send"),
            (2, 0, "receive"),
            (3, 0, "receive"),
        ],
        findings: vec![
            ("deadlock_cycle", vec![0, 1]),
            ("waits_on_deadlock", vec![2, 3]),
        ],
        calls: [
            Some("MPI_Ssend"),
            Some("MPI_Ssend"),
            Some("MPI_Recv"),
            Some("MPI_Recv"),
        ],
    };
    let (_job, live, cores) = check_job("hang_ssend", &expected);
    for report in [&live, &cores] {
        for (r, peer) in [(0usize, 1i64), (1, 0)] {
            // Its own send, inferred from the request waiting at the peer,
            // and the peer's, unexpected in its own queue.
            let sends = pending(report, r, "inferred_send");
            assert!(
                sends
                    .iter()
                    .any(|o| o["peer"] == peer && o["tag"] == 5 && o["length"] == MIB8),
                "rank {r}'s inferred send of 8 MiB to {peer}: {sends:?}"
            );
            let unexpected = pending(report, r, "unexpected");
            assert!(
                unexpected
                    .iter()
                    .any(|o| o["peer"] == peer && o["tag"] == 5 && o["length"] == MIB8),
                "rank {r}'s unexpected 8 MiB from {peer}: {unexpected:?}"
            );
        }
        for r in [2usize, 3] {
            let recv = pending(report, r, "receive");
            assert!(
                recv.iter().any(|o| o["peer"] == 0 && o["tag"] == 9),
                "rank {r}: {recv:?}"
            );
        }
    }
}

#[test]
fn tag_mismatch_is_named() {
    let _serial = one_at_a_time();
    let expected = Expected {
        cycles: vec![],
        edges: vec![(1, 0, "receive")],
        findings: vec![
            ("waits_on_rank_in_mpi", vec![1, 0]),
            ("unmatchable_receive", vec![1, 0]),
            ("collective_mismatch", vec![1]),
        ],
        calls: [
            Some("MPI_Barrier"),
            Some("MPI_Recv"),
            Some("MPI_Barrier"),
            Some("MPI_Barrier"),
        ],
    };
    let (_job, live, cores) = check_job("hang_tag", &expected);
    for report in [&live, &cores] {
        let mismatch = report["findings"][2]["summary"].as_str().unwrap();
        assert!(
            mismatch.starts_with(
                "3 of 4 ranks of MPI_COMM_WORLD are in MPI_Barrier; rank 1 is in MPI_Recv"
            ),
            "{mismatch}"
        );
        let recv = pending(report, 1, "receive");
        assert!(
            recv.iter().any(|o| o["peer"] == 0 && o["tag"] == 2),
            "{recv:?}"
        );
        let unexpected = pending(report, 1, "unexpected");
        assert!(
            unexpected
                .iter()
                .any(|o| o["peer"] == 0 && o["tag"] == 1 && o["length"] == 4),
            "{unexpected:?}"
        );
    }
}

#[test]
fn chain_ends_at_the_rank_that_computes() {
    let _serial = one_at_a_time();
    let expected = Expected {
        cycles: vec![],
        edges: vec![(1, 0, "receive"), (2, 1, "receive"), (3, 2, "receive")],
        findings: vec![("waits_on_rank_outside_mpi", vec![1, 2, 3, 0])],
        calls: [None, Some("MPI_Recv"), Some("MPI_Recv"), Some("MPI_Recv")],
    };
    let (job, live, cores) = check_job("hang_chain", &expected);
    let line = job.source_line("/* HANG_LINE */");
    let location = format!("compute at hang_chain.c:{line}");
    for report in [&live, &cores] {
        assert_eq!(
            report["ranks"][0]["location"].as_str(),
            Some(location.as_str()),
            "{:#}",
            report["ranks"][0]["threads"]
        );
        let summary = report["findings"][0]["summary"].as_str().unwrap();
        assert!(
            summary.contains(&format!("rank 0, which is outside MPI, in {location}")),
            "{summary}"
        );
    }
}

#[test]
fn cycle_across_three_communicators() {
    let _serial = one_at_a_time();
    let expected = Expected {
        cycles: vec![vec![0, 1, 2]],
        edges: vec![
            (0, 1, "receive"),
            (1, 2, "receive"),
            (2, 0, "receive"),
            (3, 0, "receive"),
        ],
        findings: vec![
            ("deadlock_cycle", vec![0, 1, 2]),
            ("waits_on_deadlock", vec![3]),
        ],
        calls: [Some("MPI_Recv"); 4],
    };
    let (_job, live, cores) = check_job("hang_comms", &expected);
    for report in [&live, &cores] {
        let summary = report["findings"][0]["summary"].as_str().unwrap();
        assert!(
            summary.contains("across 3 communicators (MPI_COMM_WORLD, pair02, pair12)"),
            "{summary}"
        );
        let by_from: Vec<(i64, String, Value, bool)> = report["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["from"].as_i64().unwrap(),
                    e["communicator"].as_str().unwrap().to_string(),
                    e["tag"].clone(),
                    e["any_source"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            by_from,
            vec![
                (0, "MPI_COMM_WORLD".into(), Value::from(3), false),
                (1, "pair12".into(), Value::from(3), false),
                (2, "pair02".into(), Value::from(3), false),
                (3, "MPI_COMM_WORLD".into(), Value::Null, false),
            ]
        );
        // Rank 1 receives from its local rank 1 of pair12, world rank 2.
        let recv = pending(report, 1, "receive");
        assert!(
            recv.iter()
                .any(|o| o["communicator"] == "pair12" && o["peer"] == 2 && o["peer_local"] == 1),
            "{recv:?}"
        );
    }
}

/// `mpidd job --pid <launcher>`, interrupted (SIGINT) or killed (SIGKILL)
/// at many points of its read, leaves no rank stopped or traced.
#[test]
fn interrupted_or_killed_live_read_lets_every_rank_go() {
    let _serial = one_at_a_time();
    let job = HungJob::start("job-interrupted", "hang_ring");
    let launcher = job.mpiexec_pid().to_string();

    // How long a whole read takes, to interrupt it also in its middle.
    let start = Instant::now();
    let whole = job_json(&["--pid", &launcher]);
    let took = start.elapsed();
    assert_eq!(cycles(&whole), vec![vec![0, 3, 2, 1]]);
    job.assert_running("after a whole read");

    let mut delays: Vec<Duration> = [5, 10, 20, 35, 50]
        .into_iter()
        .map(Duration::from_millis)
        .collect();
    delays.extend([took / 4, took / 2, took * 3 / 4]);
    for delay in delays {
        for signal in [Signal::SIGINT, Signal::SIGKILL] {
            let what = format!("{signal} after {delay:?} (a whole read takes {took:?})");
            let mut child = mpidd()
                .args(["job", "--pid", &launcher, "--json"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start mpidd job");
            std::thread::sleep(delay);
            let _ = kill(Pid::from_raw(child.id() as i32), signal);
            job.assert_running_within(Duration::from_secs(2), &what);
            wait_timeout(&mut child, Duration::from_secs(60));
            job.assert_running(&format!("{what}, once mpidd has ended"));
        }
    }

    // The job is as it was: the same hang, read whole.
    let again = job_json(&["--pid", &launcher]);
    assert_eq!(cycles(&again), vec![vec![0, 3, 2, 1]]);
    assert_eq!(edges(&again), edges(&whole));
    job.assert_running("after the last read");
}
