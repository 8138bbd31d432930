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
pub fn check_text_and_dot(cores: &Path, report: &Value) {
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
pub fn check_job(program: &str, expected: &Expected) -> (HungJob, Value, Value) {
    check_job_on(HangMpi::ReferenceMpich, program, expected)
}

/// [`check_job`] on `mpi`.
pub fn check_job_on(mpi: HangMpi, program: &str, expected: &Expected) -> (HungJob, Value, Value) {
    let name = format!("job-{}{program}", mpi_prefix(mpi));
    let job = HungJob::start_on(mpi, &name, program);
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
