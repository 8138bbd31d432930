//! Reading through Debian's `gdbserver` on loopback gives what reading the
//! process directly gives: the MPIR table of the reference MPICH's
//! launcher (`mpiexec.hydra`, which exports it), and the message queues of
//! a rank of a real 4-rank job (tests/mpich/queues.c). Each process is
//! attached with `gdbserver --attach 127.0.0.1:0 PID`, which stops it;
//! after the read the process must be let go: no tracer, not in a
//! tracing stop, and the launcher running.
//!
//! A `--multi` server, attached by pid through the library, reads the same.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::mpich_job::{mpidd, Job};
use common::queue_checks::queues_with;
use mpidd_read::{mpir, GdbRemoteOptions, GdbRemoteTarget, Limits};
use serde_json::Value;

/// A gdbserver on a free loopback port, killed if the test fails first.
struct Gdbserver {
    child: Child,
    addr: String,
}

impl Gdbserver {
    /// `gdbserver ARGS` with `127.0.0.1:0` for the port, which it picks
    /// and prints.
    fn start(args: &[&str]) -> Gdbserver {
        let mut child = Command::new("gdbserver")
            .args(
                args.iter()
                    .map(|a| if *a == "PORT" { "127.0.0.1:0" } else { a }),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run gdbserver (Debian package gdbserver; bash scripts/test.sh installs it)");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut said = Vec::new();
        let port = loop {
            let line = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("gdbserver did not listen within 30 s: {said:?}"));
            if let Some(port) = line.strip_prefix("Listening on port ") {
                break port.trim().to_string();
            }
            said.push(line);
        };
        Gdbserver {
            child,
            addr: format!("127.0.0.1:{port}"),
        }
    }

    fn attach(pid: i32) -> Gdbserver {
        Self::start(&["--attach", "PORT", &pid.to_string()])
    }

    /// After the detach, `gdbserver --attach` exits by itself.
    fn wait_exit(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "gdbserver did not exit after the detach"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Gdbserver {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The one-letter state and the tracer of a process, from /proc.
fn state(pid: i32) -> (char, i32) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap()
            .trim()
            .to_string()
    };
    (
        field("State:").chars().next().unwrap(),
        field("TracerPid:").parse().unwrap(),
    )
}

fn mpidd_json(args: &[&str]) -> Value {
    let out = mpidd().args(args).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "mpidd {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn the_launcher_table_and_a_rank_queues_read_through_gdbserver_equal_the_local_read() {
    let job = Job::start("gdbserver", &[]);

    // The launcher: its MPIR table.
    let hydra = job.mpiexec.id() as i32;
    let local = mpidd_json(&["procs", "--pid", &hydra.to_string()]);
    assert_eq!(
        local["mpir"]["proctable"].as_array().map(Vec::len),
        Some(4),
        "the reference mpiexec.hydra lists the 4 ranks: {local:#}"
    );
    let mut server = Gdbserver::attach(hydra);
    assert_eq!(state(hydra).0, 't', "gdbserver --attach stops the launcher");
    let remote = mpidd_json(&["procs", "--gdbserver", &server.addr]);
    assert_eq!(remote, local);
    server.wait_exit();
    let (s, tracer) = state(hydra);
    assert_eq!(tracer, 0, "the launcher is still traced");
    assert!(
        matches!(s, 'S' | 'R'),
        "the launcher is not running after the detach: state {s}"
    );

    // A rank, stopped by itself: its queues, natively and through
    // libtvmpich.so.
    for rank in [0, 3] {
        let pid = job.pid(rank);
        let pid_arg = pid.to_string();
        assert_eq!(state(pid).0, 'T', "rank {rank} stopped itself");
        for dll in [false, true] {
            let local = queues_with(&["--pid", &pid_arg], dll);
            let mut server = Gdbserver::attach(pid);
            let remote = queues_with(&["--gdbserver", &server.addr], dll);
            server.wait_exit();
            assert_eq!(remote, local, "rank {rank}, through the library: {dll}");
            assert!(
                !local["communicators"].as_array().unwrap().is_empty(),
                "rank {rank}: no communicators were read"
            );
            let (s, tracer) = state(pid);
            assert_eq!(tracer, 0, "rank {rank} is still traced");
            assert_ne!(s, 't', "rank {rank} was left in a tracing stop");
        }
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn a_multi_server_attaches_by_pid_and_lets_the_process_go() {
    let job = Job::start("gdbserver-multi", &[]);
    let hydra = job.mpiexec.id() as i32;
    let local = mpir::read_state(
        &mpidd_read::LiveTarget::open(hydra).unwrap(),
        &Limits::default(),
    )
    .unwrap();
    let server = Gdbserver::start(&["--multi", "PORT"]);
    let t = GdbRemoteTarget::connect(
        &server.addr,
        &GdbRemoteOptions {
            attach_pid: Some(hydra),
            ..GdbRemoteOptions::default()
        },
    )
    .unwrap();
    assert_eq!(t.remote().pid(), hydra);
    assert_eq!(state(hydra).0, 't', "vAttach stops the launcher");
    let remote = mpir::read_state(&t, &Limits::default()).unwrap();
    assert_eq!(remote, local);
    t.detach().unwrap();
    // The --multi server stays up; the process is let go at once.
    let (s, tracer) = state(hydra);
    assert_eq!(tracer, 0, "the launcher is still traced");
    assert!(
        matches!(s, 'S' | 'R'),
        "launcher state {s} after the detach"
    );
    drop(server);
    assert_eq!(job.finish(), 0);
}
