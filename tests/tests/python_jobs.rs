//! The hung mpi4py jobs of tests/python/ in each Python MPI environment of
//! scripts/python-envs.sh (host CPython 3.11 with pip's MPICH, host CPython
//! 3.11 with Debian's Open MPI, a Debian 13 root with CPython 3.13): every
//! rank reaches its hang line and stays there, runs the environment's
//! CPython, can be dumped by gcore from the host, and is found by `mpidd
//! job --pid LAUNCHER`. Then what mpidd says of each job, live and from
//! the cores, is checked against the program's own facts
//! (common/python_expect.rs): each rank's Python frames, file, function and
//! line, its mpi4py call, the exception rank 1 raised, and the verdict.
//!
//! Needs the environments (`bash scripts/python-envs.sh mpich|ompi|debian13`,
//! which scripts/test.sh runs), gdb, Debian's Open MPI, and the mpidd
//! binary (`cargo build -p mpidd`).

mod common;

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::python_expect::check_report;
use common::python_job::{mpidd, PyEnv, PyJob};

/// Every program, with its arguments.
const PROGRAMS: [(&str, &[&str]); 5] = [
    ("ring_recv", &[]),
    ("raise_barrier", &["hold"]),
    ("raise_barrier", &["uncaught"]),
    ("bcast_reduce", &[]),
    ("python_loop", &[]),
];

const RANKS: usize = 4;

/// One job at a time: 4 ranks that busy-poll already fill the 2 CPUs.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn host_mpich_jobs_hang_where_they_say() {
    check_env(PyEnv::HostMpich);
}

#[test]
fn host_open_mpi_jobs_hang_where_they_say() {
    check_env(PyEnv::HostOpenMpi);
}

#[test]
fn debian13_jobs_hang_where_they_say() {
    check_env(PyEnv::Debian13);
}

fn check_env(env: PyEnv) {
    let _serial = one_at_a_time();
    for (program, args) in PROGRAMS {
        let what = format!("{program} {args:?} in {}", env.name());
        let job = PyJob::start(env, program, args, RANKS);
        job.assert_running(&format!("{what}, once READY"));
        for &(rank, pid) in &job.ranks {
            check_python(env, rank, pid, &what);
        }
        // Every program marks a line of code as a hang line.
        job.source_line("# hang:");
        if program == "raise_barrier" {
            wait_for_stderr(&job, "ValueError: bad input on rank 1", &what);
        }
        let cores = job.gcore_all("cores");
        assert_eq!(cores.len(), RANKS, "{what}: a core per rank");
        job.assert_running(&format!("{what}, after gcore"));
        let live = check_mpidd_finds_ranks(&job, &what);
        job.assert_running(&format!("{what}, after mpidd job"));
        check_report(&job, program, args, &live, &format!("{what}, live"));
        let mut from_cores = mpidd();
        from_cores.args(["job", "--json"]);
        for (_, core) in &cores {
            from_cores.arg("--core").arg(core);
        }
        let out = from_cores.output().expect("run mpidd");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{what}: mpidd job --core's JSON: {e}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        check_report(&job, program, args, &report, &format!("{what}, from cores"));
    }
}

/// The rank runs the environment's CPython (the root's own, for the
/// Debian 13 root) with its MPI library loaded.
fn check_python(env: PyEnv, rank: i64, pid: i32, what: &str) {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
        .unwrap_or_else(|e| panic!("{what}: rank {rank}'s /proc/{pid}/exe: {e}"));
    let want = format!("python{}", env.python_version());
    assert_eq!(
        exe.file_name().and_then(|n| n.to_str()),
        Some(want.as_str()),
        "{what}: rank {rank} runs {}",
        exe.display()
    );
    if env == PyEnv::Debian13 {
        assert!(
            exe.starts_with(env.dir()),
            "{what}: rank {rank} runs {}, not the Debian 13 root's Python",
            exe.display()
        );
    }
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .unwrap_or_else(|e| panic!("{what}: rank {rank}'s /proc/{pid}/maps: {e}"));
    let library = match env {
        PyEnv::HostOpenMpi => "/libmpi.so.40",
        PyEnv::HostMpich | PyEnv::Debian13 => "/libmpi.so.12",
    };
    assert!(
        maps.contains(library),
        "{what}: rank {rank} has no {library} mapped"
    );
}

/// The raising rank's traceback reaches the launcher's stderr.
fn wait_for_stderr(job: &PyJob, text: &str, what: &str) {
    let start = Instant::now();
    while !job.stderr().contains(text) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{what}: no {text:?} on stderr within 30 s:\n{}",
            job.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `mpidd job --pid LAUNCHER --json` lists every rank, by its host pid
/// and by its world rank (the one it printed); in the Debian 13 root too,
/// whose ranks' files the readers open by the host's path.
fn check_mpidd_finds_ranks(job: &PyJob, what: &str) -> serde_json::Value {
    let out = mpidd()
        .args(["job", "--pid", &job.launcher_pid().to_string(), "--json"])
        .output()
        .expect("run mpidd");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what}: mpidd job --pid {} failed ({}):\n{stderr}",
        job.launcher_pid(),
        out.status
    );
    let report: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{what}: mpidd job's JSON: {e}\n{stdout}\n{stderr}"));
    let ranks = report["ranks"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no ranks in {report:#}"));
    let mut found: Vec<(i64, i64)> = ranks
        .iter()
        .map(|r| {
            let pid = r["pid"]
                .as_i64()
                .unwrap_or_else(|| panic!("{what}: a rank without a pid: {r:#}"));
            (pid, r["world_rank"].as_i64().unwrap_or(-1))
        })
        .collect();
    found.sort();
    let mut expected: Vec<(i64, i64)> = job.ranks.iter().map(|&(r, p)| (i64::from(p), r)).collect();
    expected.sort();
    assert_eq!(
        found, expected,
        "{what}: (pid, world rank) of each rank\n{stderr}"
    );
    report
}
