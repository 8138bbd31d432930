//! `mpidd procs` and `mpidd job` on Open MPI 5 jobs, whose launcher
//! (PRRTE's `prterun`) has no MPIR table: the ranks come from its PMIx
//! server, through the launcher's own libpmix. Jobs of
//! tests/openmpi5/recv_ring.c, 4 ranks each: pip's Open MPI 5.0.11
//! (`MPIDD_PY_OMPI5_VENV`) on the host, and Debian 13's Open MPI 5.0.7
//! inside the Debian 13 root (`MPIDD_DEBIAN13_ROOT`), read from the host.
//! Then what must fail, and how: a process that is no PMIx launcher, a
//! stopped launcher, a pid that is gone.
//!
//! scripts/python-envs.sh makes both environments (scripts/test.sh runs
//! it and exports their paths).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::procs::{kill_job, proc_state};
use common::scratch::{fresh_dir, fresh_dir_any_user, remove_unless_failed};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

/// Open MPI 5 starts slowly on a loaded 2-core machine.
const READY_WITHIN: Duration = Duration::from_secs(180);

/// Where a job runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Env {
    /// pip's Open MPI 5.0.11 wheel in a virtual environment on the host.
    PipOmpi5,
    /// Debian 13's Open MPI 5.0.7 in the Debian 13 root (a chroot in a
    /// mount namespace of its own, host pids).
    Debian13,
    /// pip's Open MPI 5.0.11, copied where user `nobody` can run it (the
    /// cache under /root is not), run as `nobody`.
    PipOmpi5AsNobody,
}

/// The unprivileged user of [`Env::PipOmpi5AsNobody`].
const NOBODY: &str = "65534";

/// `setpriv` running the rest as [`NOBODY`].
fn as_nobody() -> Command {
    let mut c = Command::new("setpriv");
    c.arg(format!("--reuid={NOBODY}"))
        .arg(format!("--regid={NOBODY}"))
        .arg("--clear-groups");
    c
}

fn env_dir(var: &str, name: &str) -> PathBuf {
    let dir = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("HOME"))
            .join(".cache/mpidd")
            .join(match name {
                "ompi5" => "py311-ompi5",
                other => other,
            })
    });
    assert!(
        dir.join(".mpidd-complete").exists(),
        "{} is not made ({var}): run `bash scripts/python-envs.sh {name}` (scripts/test.sh does)",
        dir.display()
    );
    dir
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("examples is in the workspace")
        .to_path_buf()
}

fn in_debian13() -> Command {
    let mut c = Command::new(repo().join("scripts/lib/in-debian13.sh"));
    c.env(
        "MPIDD_DEBIAN13_ROOT",
        env_dir("MPIDD_DEBIAN13_ROOT", "debian13"),
    );
    c
}

/// A rank as it printed itself.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rank {
    rank: i64,
    pid: i32,
    host: String,
    exe: String,
}

/// A running 4-rank job of recv_ring.c whose ranks have all printed
/// READY; killed with everything below it when dropped.
struct Job {
    child: Child,
    /// The ranks' parent: `prterun`, the PMIx server.
    prterun: i32,
    ranks: Vec<Rank>,
    dir: PathBuf,
}

impl Job {
    /// `name` makes the scratch directory its own (tests run at once).
    fn start(name: &str, env: Env, ranks: usize) -> Job {
        // User nobody's job runs where nobody can reach it.
        let dir = if env == Env::PipOmpi5AsNobody {
            fresh_dir_any_user(&format!("pmix-{name}"))
        } else {
            fresh_dir(&format!("pmix-{name}"))
        };
        std::fs::copy(
            repo().join("tests/openmpi5/recv_ring.c"),
            dir.join("recv_ring.c"),
        )
        .expect("copy recv_ring.c");
        let exe = dir.join("recv_ring");
        // Its session directory (rendezvous files, shared memory) in the
        // scratch directory, not in the host's or the root's /tmp.
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let (mut build, mut launch) = match env {
            Env::PipOmpi5 => {
                let venv = env_dir("MPIDD_PY_OMPI5_VENV", "ompi5");
                let mut b = Command::new(venv.join("bin/mpicc"));
                b.arg("-o").arg(&exe).arg(dir.join("recv_ring.c"));
                let mut l = Command::new(venv.join("bin/mpirun"));
                l.env("TMPDIR", &tmp);
                (b, l)
            }
            Env::PipOmpi5AsNobody => {
                let venv = dir.join("venv");
                let copied = Command::new("cp")
                    .arg("-a")
                    .arg(env_dir("MPIDD_PY_OMPI5_VENV", "ompi5"))
                    .arg(&venv)
                    .status()
                    .expect("run cp");
                assert!(copied.success(), "copying the Open MPI 5 venv failed");
                let mut b = Command::new(venv.join("bin/mpicc"));
                b.arg("-o").arg(&exe).arg(dir.join("recv_ring.c"));
                let mut l = as_nobody();
                l.arg("env")
                    .arg(format!("HOME={}", dir.display()))
                    .arg(format!("TMPDIR={}", tmp.display()))
                    .arg(venv.join("bin/mpirun"));
                (b, l)
            }
            Env::Debian13 => {
                let mut b = in_debian13();
                b.arg("--bind").arg(&dir).arg("mpicc.openmpi");
                b.arg("-o").arg(&exe).arg(dir.join("recv_ring.c"));
                let mut l = in_debian13();
                l.arg("--bind").arg(&dir).arg("env");
                l.arg(format!("TMPDIR={}", tmp.display()))
                    .arg("mpirun.openmpi");
                (b, l)
            }
        };
        let out = build.output().expect("run mpicc");
        assert!(
            out.status.success(),
            "{env:?}: building recv_ring.c failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if env == Env::PipOmpi5AsNobody {
            std::fs::copy(env!("CARGO_BIN_EXE_mpidd"), dir.join("mpidd")).expect("copy mpidd");
            // Its own directory, its files and its session directory.
            let chown = Command::new("chown")
                .arg("-R")
                .arg(format!("{NOBODY}:{NOBODY}"))
                .arg(&dir)
                .status()
                .expect("run chown");
            assert!(chown.success(), "chown of {} failed", dir.display());
        }
        launch
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .args(["--oversubscribe", "--mca", "btl", "self,sm", "-n"])
            .arg(ranks.to_string())
            .arg(&exe)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
            .process_group(0);
        let mut child = launch.spawn().expect("start mpirun");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut job = Job {
            child,
            prterun: 0,
            ranks: Vec::new(),
            dir,
        };
        let start = Instant::now();
        while job.ranks.len() < ranks {
            assert!(
                start.elapsed() < READY_WITHIN,
                "{env:?}: {} of {ranks} ranks printed READY within {READY_WITHIN:?}; stderr: {}",
                job.ranks.len(),
                job.stderr()
            );
            if let Ok(Some(status)) = job.child.try_wait() {
                panic!("{env:?}: mpirun ended ({status}); stderr: {}", job.stderr());
            }
            let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) else {
                continue;
            };
            let w: Vec<&str> = line.split_whitespace().collect();
            if let ["READY", rank, pid, host, exe] = w[..] {
                job.ranks.push(Rank {
                    rank: rank.parse().unwrap(),
                    pid: pid.parse().unwrap(),
                    host: host.to_string(),
                    exe: exe.to_string(),
                });
            }
        }
        job.ranks.sort_by_key(|r| r.rank);
        let parents: Vec<i32> = job.ranks.iter().map(|r| parent(r.pid)).collect();
        job.prterun = parents[0];
        assert!(
            parents.iter().all(|&p| p == job.prterun),
            "{env:?}: the ranks have different parents: {parents:?}"
        );
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", job.prterun)).unwrap();
        assert_eq!(comm.trim(), "prterun", "{env:?}: the ranks' parent");
        job
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default()
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // prterun may be stopped by a test: continued, then asked to end
        // the job, then killed with everything left.
        let prterun = Pid::from_raw(self.prterun);
        if self.prterun > 0 {
            let _ = kill(prterun, Signal::SIGCONT);
            let _ = kill(prterun, Signal::SIGTERM);
            let until = Instant::now() + Duration::from_secs(5);
            while Instant::now() < until && proc_state(self.prterun).is_some_and(|s| s != 'Z') {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let pids: Vec<i32> = self.ranks.iter().map(|r| r.pid).collect();
        if self.prterun > 0 {
            kill_job(self.prterun, &pids);
        }
        kill_job(self.child.id() as i32, &pids);
        let _ = self.child.kill();
        let _ = self.child.wait();
        remove_unless_failed(&self.dir);
    }
}

fn parent(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat.rsplit_once(") ")
        .unwrap()
        .1
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

fn mpidd(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mpidd"))
        .args(args)
        .output()
        .expect("run mpidd")
}

/// mpidd as the user the job of `env` runs as: for `nobody`, the copy in
/// the job's directory (the build's own may be where `nobody` cannot go).
fn mpidd_for(env: Env, job: &Job, args: &[&str]) -> std::process::Output {
    if env != Env::PipOmpi5AsNobody {
        return mpidd(args);
    }
    as_nobody()
        .arg(job.dir.join("mpidd"))
        .args(args)
        .output()
        .expect("run mpidd through setpriv")
}

/// `mpidd procs --pid PRTERUN --json` lists exactly the ranks the job
/// printed, in rank order; the text names PRRTE's PMIx server.
fn check_procs(env: Env, job: &Job) {
    let pid = job.prterun.to_string();
    let out = mpidd_for(env, job, &["procs", "--pid", &pid, "--json"]);
    assert!(
        out.status.success(),
        "{env:?}: mpidd procs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("procs --json is JSON");
    assert!(
        v.get("mpir").is_none(),
        "{env:?}: prterun has no MPIR table: {v}"
    );
    let pmix = &v["pmix"];
    assert_eq!(pmix["launcher_pid"], job.prterun, "{env:?}");
    let namespaces = pmix["namespaces"].as_array().expect("namespaces");
    assert_eq!(namespaces.len(), 1, "{env:?}: one job: {pmix}");
    let table = namespaces[0]["proctable"].as_array().expect("proctable");
    let listed: Vec<Rank> = table
        .iter()
        .enumerate()
        .map(|(rank, p)| Rank {
            rank: rank as i64,
            pid: p["pid"].as_i64().unwrap() as i32,
            host: p["host_name"].as_str().unwrap().to_string(),
            exe: std::fs::canonicalize(p["executable_name"].as_str().unwrap())
                .map(|p| p.display().to_string())
                .unwrap_or_else(|e| format!("{}: {e}", p["executable_name"])),
        })
        .collect();
    assert_eq!(
        listed, job.ranks,
        "{env:?}: the table against what the ranks printed"
    );
    for s in namespaces[0]["states"].as_array().unwrap() {
        assert_eq!(
            s, "connected",
            "{env:?}: every rank has connected to its server"
        );
    }
    let text = mpidd_for(env, job, &["procs", "--pid", &pid]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("through PRRTE's PMIx server (prterun, pid {pid})")),
        "{env:?}: {text}"
    );
}

/// `mpidd job --pid PRTERUN` reads every rank, each with its world rank.
fn check_job(env: Env, job: &Job) {
    let pid = job.prterun.to_string();
    let out = mpidd_for(env, job, &["job", "--pid", &pid, "--json", "--no-queues"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{env:?}: mpidd job failed: {stderr}");
    assert!(
        stderr.contains(&format!(
            "4 rank(s) from the process table of launcher {pid}, through its PMIx server"
        )),
        "{env:?}: {stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("job --json is JSON");
    let mut read: Vec<(i64, i32)> = v["ranks"]
        .as_array()
        .expect("ranks")
        .iter()
        .map(|r| {
            (
                r["world_rank"].as_i64().unwrap_or(-1),
                r["pid"].as_i64().unwrap_or(-1) as i32,
            )
        })
        .collect();
    read.sort();
    let printed: Vec<(i64, i32)> = job.ranks.iter().map(|r| (r.rank, r.pid)).collect();
    assert_eq!(read, printed, "{env:?}: (world rank, pid) of every rank");
}

/// `mpidd attach --pid PRTERUN --json`: no MPIR to stop the launcher
/// for, so the PMIx server's table, with the ranks the job printed.
fn check_attach(env: Env, job: &Job) {
    let pid = job.prterun.to_string();
    let out = mpidd_for(env, job, &["attach", "--pid", &pid, "--json"]);
    assert!(
        out.status.success(),
        "{env:?}: mpidd attach failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("attach --json is JSON");
    assert_eq!(v["launcher_pid"], job.prterun, "{env:?}: {v}");
    let jobs = v["namespaces"].as_array().expect("namespaces");
    assert_eq!(jobs.len(), 1, "{env:?}: one job: {v}");
    let pids: Vec<i32> = jobs[0]["proctable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pid"].as_i64().unwrap() as i32)
        .collect();
    let printed: Vec<i32> = job.ranks.iter().map(|r| r.pid).collect();
    assert_eq!(pids, printed, "{env:?}: attach's table against the ranks");
}

#[test]
fn pip_open_mpi_5_table_through_pmix() {
    let job = Job::start("pip-table", Env::PipOmpi5, 4);
    check_procs(Env::PipOmpi5, &job);
    check_job(Env::PipOmpi5, &job);
    check_attach(Env::PipOmpi5, &job);
}

/// As the job's user: no privilege, the launcher in the same root.
#[test]
fn open_mpi_5_table_through_pmix_as_an_unprivileged_user() {
    let job = Job::start("nobody-table", Env::PipOmpi5AsNobody, 4);
    let owner = std::fs::read_to_string(format!("/proc/{}/status", job.prterun))
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Uid:")
                .map(|u| u.split_whitespace().next().unwrap().to_string())
        })
        .unwrap();
    assert_eq!(owner, NOBODY, "prterun runs as nobody");
    check_procs(Env::PipOmpi5AsNobody, &job);
    check_job(Env::PipOmpi5AsNobody, &job);
}

#[test]
fn debian13_open_mpi_5_table_through_pmix_from_the_host() {
    let job = Job::start("debian13-table", Env::Debian13, 4);
    // The launcher's root is not ours: its libpmix is the root's file,
    // which this host's C library is too old to load.
    assert_ne!(
        std::fs::read_link(format!("/proc/{}/root", job.prterun)).unwrap(),
        PathBuf::from("/"),
        "prterun runs in the Debian 13 root"
    );
    check_procs(Env::Debian13, &job);
    check_job(Env::Debian13, &job);
}

/// One line of stderr, naming the pid and the reason; within `within`.
fn assert_fails(args: &[&str], within: Duration, expect: &str) {
    let start = Instant::now();
    let out = mpidd(args);
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "{args:?} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stderr.contains(expect), "{args:?}: {stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: one line: {stderr}"
    );
    assert!(took < within, "{args:?} took {took:?}");
}

#[test]
fn what_is_no_pmix_launcher_is_refused_in_one_line() {
    let mut sleep = Command::new("sleep")
        .arg("600")
        .spawn()
        .expect("start sleep");
    let pid = sleep.id().to_string();
    assert_fails(
        &["procs", "--pid", &pid],
        Duration::from_secs(10),
        &format!("pid {pid} maps no libpmix.so: it is not a PMIx launcher"),
    );
    let _ = sleep.kill();
    let _ = sleep.wait();
    // Gone, and reaped: no process has the pid now.
    assert_fails(
        &["procs", "--pid", &pid],
        Duration::from_secs(10),
        &format!("/proc/{pid}/"),
    );
}

#[test]
fn a_stopped_launcher_is_refused_without_waiting_and_keeps_running() {
    let job = Job::start("stopped", Env::PipOmpi5, 2);
    let pid = job.prterun.to_string();
    kill(Pid::from_raw(job.prterun), Signal::SIGSTOP).unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while proc_state(job.prterun) != Some('T') && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_fails(
        &["procs", "--pid", &pid, "--pmix-timeout-ms", "3000"],
        Duration::from_secs(3),
        &format!("pid {pid} is stopped (state T)"),
    );
    kill(Pid::from_raw(job.prterun), Signal::SIGCONT).unwrap();
    // Continued, the launcher and its server carry on as before.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        proc_state(job.prterun).is_some_and(|s| !matches!(s, 'T' | 'Z' | 'X')),
        "prterun after SIGCONT: {:?}; stderr: {}",
        proc_state(job.prterun),
        job.stderr()
    );
    let out = mpidd(&["procs", "--pid", &pid, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::io::stderr().flush();
}

/// The processes whose command line holds `needle`.
fn pids_with(needle: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) {
            found.push(pid);
        }
    }
    found
}

/// A server that takes the connection and never answers: prterun runs,
/// but the thread of its PMIx server is stopped (ptrace, that thread
/// alone). mpidd gives up at its bound, naming the step; its helper is
/// not killed (OpenPMIx 5.0's server crashes on the connection of a tool
/// that has gone) but finishes once the thread runs again, and the job
/// is none the worse.
#[test]
fn a_server_that_does_not_answer_is_given_up_on_at_the_bound() {
    use nix::sys::ptrace;
    use nix::sys::wait::{waitpid, WaitPidFlag};

    let job = Job::start("no-answer", Env::PipOmpi5, 2);
    let pid = job.prterun.to_string();
    // prterun's threads: the main one, then PMIx's progress thread, which
    // serves the tool connections.
    let mut tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort();
    let server = Pid::from_raw(tids[1]);
    ptrace::seize(server, ptrace::Options::empty()).expect("seize the server's thread");
    ptrace::interrupt(server).expect("stop the server's thread");
    waitpid(server, Some(WaitPidFlag::__WALL)).expect("wait for it to stop");
    assert_eq!(proc_state(job.prterun), Some('S'), "prterun itself runs");

    let helper = format!("pmix-helper --pid {pid} ");
    let start = Instant::now();
    let out = mpidd(&["procs", "--pid", &pid, "--pmix-timeout-ms", "2000"]);
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lingering = pids_with(&helper);
    ptrace::detach(server, None).expect("let the server's thread go");
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr.contains(&format!(
            "the PMIx server of pid {pid} did not answer within 2000 ms (at PMIx_tool_init)"
        )),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(6), "mpidd took {took:?}");
    assert_eq!(lingering.len(), 1, "the helper waits on: {lingering:?}");

    // Answered at last, the helper finishes; the job runs on.
    let until = Instant::now() + Duration::from_secs(20);
    while !pids_with(&helper).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(pids_with(&helper).is_empty(), "the helper is still there");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        proc_state(job.prterun).is_some_and(|s| !matches!(s, 'T' | 'Z' | 'X')),
        "prterun after the late tool: {:?}; stderr: {}",
        proc_state(job.prterun),
        job.stderr()
    );
    let out = mpidd(&["procs", "--pid", &pid, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The library's own way, without a helper: the session runs in this
/// test process, once; a second launcher is refused, saying why.
#[test]
fn the_table_read_in_this_process_and_only_once() {
    use mpidd_read::pmix::{read_pmix_tables, PmixError, PmixOptions};

    let job = Job::start("in-process", Env::PipOmpi5, 2);
    let tables = read_pmix_tables(job.prterun, &PmixOptions::default())
        .unwrap_or_else(|e| panic!("{e}; stderr: {}", job.stderr()));
    assert_eq!(tables.namespaces.len(), 1, "{tables:?}");
    let pids: Vec<i32> = tables.namespaces[0]
        .proctable
        .iter()
        .map(|p| p.pid)
        .collect();
    let printed: Vec<i32> = job.ranks.iter().map(|r| r.pid).collect();
    assert_eq!(pids, printed);
    let again = read_pmix_tables(job.prterun, &PmixOptions::default()).unwrap_err();
    assert_eq!(
        again,
        PmixError::AlreadyUsed {
            pid: job.prterun,
            first_pid: job.prterun
        }
    );
}
