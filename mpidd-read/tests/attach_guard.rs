//! `AttachGuard` against real processes: every thread is in tracing stop,
//! traced by us, while the guard lives, and running untraced after it is
//! dropped, detached explicitly, or dropped by a panic unwinding.
//!
//! Needs gcc (Debian `gcc`) to build the threaded helper
//! `tests/c/threads.c`; `bash scripts/test.sh` installs it.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use mpidd_read::{AttachError, AttachGuard};

/// A child process killed and reaped when the test ends, however it ends.
struct Killed(Child);

impl Killed {
    fn pid(&self) -> i32 {
        self.0.id() as i32
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sleep_child() -> Killed {
    Killed(
        Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("spawn sleep (Debian package coreutils)"),
    )
}

/// Compiles `tests/c/threads.c` once per test binary run.
fn threads_helper() -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/threads.c");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("attach_guard");
    std::fs::create_dir_all(&dir).unwrap();
    // Per test thread, so parallel tests do not race on one output file.
    let exe =
        dir.join(format!("threads-{:?}", std::thread::current().id()).replace(['(', ')'], ""));
    common::gcc(&src, &exe, &["-O1", "-pthread"]);
    exe
}

fn threaded_child(threads: usize) -> Killed {
    let mut child = Killed(
        Command::new(threads_helper())
            .arg(threads.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the threads helper"),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    child
}

fn tids(pid: i32) -> Vec<i32> {
    let mut t: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_str().unwrap().parse().unwrap())
        .collect();
    t.sort();
    t
}

/// (State line value, TracerPid) of one thread.
fn status(pid: i32, tid: i32) -> (String, i32) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap()
            .trim()
            .to_string()
    };
    (field("State:"), field("TracerPid:").parse().unwrap())
}

fn assert_stopped_by_us(pid: i32, expect_threads: usize) {
    let all = tids(pid);
    assert_eq!(all.len(), expect_threads, "threads of {pid}: {all:?}");
    for tid in all {
        let (state, tracer) = status(pid, tid);
        assert_eq!(state, "t (tracing stop)", "thread {tid} of {pid}");
        // The kernel names the tracing thread, not its process.
        assert_eq!(
            tracer,
            nix::unistd::gettid().as_raw(),
            "tracer of thread {tid}"
        );
    }
}

fn assert_running_untraced(pid: i32) {
    for tid in tids(pid) {
        let (state, tracer) = status(pid, tid);
        assert!(
            !state.starts_with('t') && !state.starts_with('T'),
            "thread {tid} of {pid} is still stopped: {state}"
        );
        assert_eq!(tracer, 0, "thread {tid} of {pid} is still traced");
    }
}

#[test]
fn single_threaded_process_is_stopped_then_released_on_drop() {
    let child = sleep_child();
    let pid = child.pid();
    {
        let guard = AttachGuard::attach(pid).expect("attach to sleep");
        assert_eq!(guard.threads(), vec![pid]);
        assert_stopped_by_us(pid, 1);
    }
    assert_running_untraced(pid);
}

#[test]
fn every_thread_is_stopped_then_released_by_detach() {
    let child = threaded_child(6);
    let pid = child.pid();
    let guard = AttachGuard::attach(pid).expect("attach to the threaded helper");
    assert_eq!(guard.threads(), tids(pid));
    assert_stopped_by_us(pid, 7);
    guard.detach().expect("detach");
    assert_running_untraced(pid);
    // Attaching again works: nothing was left behind.
    let again = AttachGuard::attach(pid).expect("attach again");
    assert_stopped_by_us(pid, 7);
    drop(again);
    assert_running_untraced(pid);
}

#[test]
fn a_panic_while_attached_still_releases_every_thread() {
    let child = threaded_child(3);
    let pid = child.pid();
    let result = std::panic::catch_unwind(|| {
        let _guard = AttachGuard::attach(pid).expect("attach");
        assert_stopped_by_us(pid, 4);
        panic!("reader failed while the target was stopped");
    });
    // Only the deliberate panic, not a failed check before it.
    let payload = result.expect_err("the closure panics");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"reader failed while the target was stopped")
    );
    assert_running_untraced(pid);
}

#[test]
fn a_missing_process_is_a_typed_error() {
    // Reaped, so nothing has this pid until the kernel wraps around.
    let mut child = Command::new("true").spawn().expect("spawn true");
    let pid = child.id() as i32;
    child.wait().unwrap();
    match AttachGuard::attach(pid) {
        Err(AttachError::ListThreads { pid: p, .. }) => assert_eq!(p, pid),
        other => panic!("expected ListThreads for gone pid {pid}, got {other:?}"),
    }
}

#[test]
fn a_second_tracer_is_refused_with_a_hint_and_nothing_is_left_attached() {
    let child = threaded_child(2);
    let pid = child.pid();
    let first = AttachGuard::attach(pid).expect("first attach");
    // Another thread of this process is a different tracer as far as the
    // kernel is concerned, so its seize fails with EPERM.
    let err = std::thread::spawn(move || AttachGuard::attach(pid).map(|_| ()))
        .join()
        .unwrap()
        .expect_err("a thread is already traced");
    let text = err.to_string();
    assert!(
        matches!(
            err,
            AttachError::Ptrace {
                request: "PTRACE_SEIZE",
                errno: nix::errno::Errno::EPERM,
                ..
            }
        ),
        "{text}"
    );
    assert!(
        text.contains("ptrace_scope") && text.contains("CAP_SYS_PTRACE"),
        "{text}"
    );
    assert!(text.contains(&pid.to_string()), "{text}");
    // The refused attempt left the first tracer's stop alone.
    assert_stopped_by_us(pid, 3);
    drop(first);
    assert_running_untraced(pid);
}
