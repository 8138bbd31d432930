//! What `mpidd job` must give on a real hung job, checked the same way for
//! every MPI: the exact cycles, edges, findings and MPI calls, live
//! through the launcher and from `gcore` cores of every rank, with the
//! text and DOT forms. Shared by job_mpich.rs and job_ompi.rs.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

use super::hung_job::{HangMpi, HungJob};
use super::mpich_job::mpidd;

/// Hung jobs busy-poll: one at a time in a test binary.
static SERIAL: Mutex<()> = Mutex::new(());

pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub const MIB8: i64 = 8 << 20;

/// What a program's hang must give.
pub struct Expected {
    pub cycles: Vec<Vec<i64>>,
    /// (from, to, kind), sorted by (from, to) as the report sorts them.
    pub edges: Vec<(i64, i64, &'static str)>,
    /// (kind, ranks), in the report's order.
    pub findings: Vec<(&'static str, Vec<i64>)>,
    /// The MPI call of each rank (`None`: outside MPI).
    pub calls: [Option<&'static str>; 4],
}

impl Expected {
    /// tests/mpich/hang_ring.c, whatever MPI or launcher runs it: each rank
    /// receives from its right neighbour first, one cycle through all four.
    pub fn ring() -> Expected {
        Expected {
            cycles: vec![vec![0, 3, 2, 1]],
            edges: vec![
                (0, 3, "receive"),
                (1, 0, "receive"),
                (2, 1, "receive"),
                (3, 2, "receive"),
            ],
            findings: vec![("deadlock_cycle", vec![0, 3, 2, 1])],
            calls: [Some("MPI_Recv"); 4],
        }
    }

    /// tests/mpich/hang_ssend.c: ranks 0 and 1 `MPI_Ssend` 8 MiB to each
    /// other, a cycle whose edges are of the kind `send` (as the MPI
    /// shows the sends: pending in memory, or inferred from the peer's
    /// unexpected queue), and ranks 2 and 3 receive from 0.
    pub fn head_to_head(send: &'static str) -> Expected {
        Expected {
            cycles: vec![vec![0, 1]],
            edges: vec![
                (0, 1, send),
                (1, 0, send),
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
        }
    }

    /// tests/mpich/hang_chain.c: ranks 1 to 3 each receive from the one
    /// before, and rank 0 computes outside MPI.
    pub fn chain() -> Expected {
        Expected {
            cycles: vec![],
            edges: vec![(1, 0, "receive"), (2, 1, "receive"), (3, 2, "receive")],
            findings: vec![("waits_on_rank_outside_mpi", vec![1, 2, 3, 0])],
            calls: [None, Some("MPI_Recv"), Some("MPI_Recv"), Some("MPI_Recv")],
        }
    }

    /// tests/mpich/hang_comms.c: ranks 0, 1 and 2 receive from each other
    /// in a cycle through three communicators, and rank 3 from rank 0.
    pub fn comms() -> Expected {
        Expected {
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
        }
    }
}

/// Runs `mpidd job ARGS` and returns its standard output; it must exit 0.
pub fn run_job(args: &[&str]) -> String {
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
pub fn job_json(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let out = run_job(&args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("mpidd job {args:?}: {e}\n{out}"))
}

pub fn edges(report: &Value) -> Vec<(i64, i64, String)> {
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

pub fn findings(report: &Value) -> Vec<(String, Vec<i64>)> {
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

pub fn ranks_of(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("a list of ranks")
        .iter()
        .map(|r| r.as_i64().unwrap())
        .collect()
}

pub fn cycles(report: &Value) -> Vec<Vec<i64>> {
    report["cycles"]
        .as_array()
        .expect("cycles")
        .iter()
        .map(ranks_of)
        .collect()
}

/// Everything of the report that must be the same live and from cores.
pub fn check(report: &Value, expected: &Expected, job: &HungJob, what: &str) {
    let context = format!(
        "{what}: verdict {:#}\nedges {:#}\nfindings {:#}",
        report["verdict"], report["edges"], report["findings"]
    );
    assert_eq!(report["schema"], "mpidd-job/2", "{context}");
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
/// `more`: further arguments, as [`check_cores_with`] takes.
pub fn check_text_and_dot(cores: &Path, report: &Value, more: &[&str]) {
    let verdict = report["verdict"][0].as_str().unwrap();
    let dir = cores.to_str().unwrap();
    let text = run_job(&[&["--core-dir", dir], more].concat());
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    assert!(
        first.contains(verdict),
        "the text output starts with the verdict {verdict:?}:\n{text}"
    );
    let dot = run_job(&[&["--core-dir", dir, "--dot"], more].concat());
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
pub fn check_job(program: &str, expected: &Expected) -> (HungJob, Value, Value) {
    check_job_on(HangMpi::ReferenceMpich, program, expected)
}

/// [`check_job`] on `mpi`.
pub fn check_job_on(mpi: HangMpi, program: &str, expected: &Expected) -> (HungJob, Value, Value) {
    let name = format!("job-{}{program}", mpi_prefix(mpi));
    let job = HungJob::start_on(mpi, &name, program);
    let live = check_live(&job, expected);
    let cores = check_cores(&job, expected);
    (job, live, cores)
}

/// `mpidd job --pid LAUNCHER --json` on a running hung job: the report
/// is `expected`, and the ranks run on afterwards.
pub fn check_live(job: &HungJob, expected: &Expected) -> Value {
    let launcher = job.mpiexec_pid().to_string();
    let live = job_json(&["--pid", &launcher]);
    check(&live, expected, job, "live");
    job.assert_running("after mpidd job --pid --json");
    live
}

/// `mpidd job --core-dir` on gcore cores of every rank of a hung job: the
/// report is `expected`, each rank read from its own core, with the text
/// and DOT forms.
pub fn check_cores(job: &HungJob, expected: &Expected) -> Value {
    check_cores_with(job, expected, &[])
}

/// [`check_cores`] with more arguments to `mpidd job` (`--search-path`
/// for a program the ranks ran in a root of their own).
pub fn check_cores_with(job: &HungJob, expected: &Expected, more: &[&str]) -> Value {
    let dir = job.gcore_all("cores");
    job.assert_running("after gcore");
    let mut args = vec!["--core-dir", dir.to_str().unwrap()];
    args.extend_from_slice(more);
    let cores = job_json(&args);
    check(&cores, expected, job, "from cores");
    for (i, rank) in cores["ranks"].as_array().unwrap().iter().enumerate() {
        let target = rank["target"].as_str().unwrap_or("");
        assert!(
            target.contains(&format!("core.{}", job.pid(i as i64))),
            "rank {i} was read from its own core: {target}"
        );
    }
    check_text_and_dot(&dir, &cores, more);
    cores
}

/// A job directory's prefix per MPI, so that jobs of one program on
/// different MPIs do not share a directory.
pub fn mpi_prefix(mpi: HangMpi) -> &'static str {
    match mpi {
        HangMpi::ReferenceMpich => "",
        HangMpi::DebianOpenMpi => "ompi-",
        HangMpi::DebianOpenMpiUcx => "ompi-ucx-",
        HangMpi::DebianMpich => "mpich-",
    }
}

pub fn pending<'a>(report: &'a Value, rank: usize, kind: &str) -> Vec<&'a Value> {
    report["ranks"][rank]["pending"]
        .as_array()
        .expect("pending")
        .iter()
        .filter(|o| o["kind"] == kind)
        .collect()
}

/// tests/mpich/hang_ring.c: each rank's one pending receive is from its
/// right neighbour, tag 0, on the world.
pub fn check_ring_receives(report: &Value) {
    for r in 0..4 {
        let recv = pending(report, r, "receive");
        assert_eq!(recv.len(), 1, "rank {r}: {recv:?}");
        assert_eq!(recv[0]["peer"], (r as i64 + 3) % 4);
        assert_eq!(recv[0]["tag"], 0);
        assert_eq!(recv[0]["communicator"], "MPI_COMM_WORLD");
    }
}

/// tests/mpich/hang_ssend.c: the 8 MiB (tag 5) that `peer` sends waits in
/// rank `r`'s unexpected queue.
pub fn check_unexpected_ssend(report: &Value, r: usize, peer: i64) {
    let unexpected = pending(report, r, "unexpected");
    assert!(
        unexpected
            .iter()
            .any(|o| o["peer"] == peer && o["tag"] == 5 && o["length"] == MIB8),
        "rank {r}'s unexpected 8 MiB from {peer}: {unexpected:?}"
    );
}

/// tests/mpich/hang_tag.c: the collective mismatch (the report's finding
/// number `finding`) names rank 1 in `MPI_Recv`, which waits for tag 2
/// from rank 0 while rank 0's tag 1 sits in its unexpected queue.
pub fn check_tag_mismatch(report: &Value, finding: usize) {
    let mismatch = report["findings"][finding]["summary"].as_str().unwrap();
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

/// tests/mpich/hang_chain.c: where rank 0 computes, as the report says it.
pub fn chain_location(job: &HungJob) -> String {
    let line = job.source_line("/* HANG_LINE */");
    format!("compute at hang_chain.c:{line}")
}

/// tests/mpich/hang_chain.c: rank 0 is at `location` ([`chain_location`]).
pub fn check_chain_location(report: &Value, location: &str) {
    assert_eq!(
        report["ranks"][0]["location"].as_str(),
        Some(location),
        "{:#}",
        report["ranks"][0]["threads"]
    );
}

/// tests/mpich/hang_comms.c: the cycle's summary names its three
/// communicators, and rank 1 receives from its local rank 1 of pair12,
/// world rank 2.
pub fn check_comms(report: &Value) {
    let summary = report["findings"][0]["summary"].as_str().unwrap();
    assert!(
        summary.contains("across 3 communicators (MPI_COMM_WORLD, pair02, pair12)"),
        "{summary}"
    );
    let recv = pending(report, 1, "receive");
    assert!(
        recv.iter()
            .any(|o| o["communicator"] == "pair12" && o["peer"] == 2 && o["peer_local"] == 1),
        "{recv:?}"
    );
}
