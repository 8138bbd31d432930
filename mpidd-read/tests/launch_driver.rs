//! The MPIR launch driver (`mpir::launch`) against a real launcher: a small
//! C starter (`tests/c/mpir_launcher.c`) whose ranks wait at their gates
//! and which stops at `MPIR_Breakpoint` from a second thread. The driver
//! must stop it there with its table readable, step over every stop, and
//! let it go with its code restored, so that it ends normally.
//!
//! Needs gcc (Debian `gcc`); `bash scripts/test.sh` installs it. x86_64
//! hosts: elsewhere the driver refuses, which the last test checks.

#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use mpidd_read::mpir::launch::{
    release_local_ranks, LaunchError, LaunchEvent, LaunchOptions, MpirLauncher, StartFailure, Stop,
    Tracee,
};
use mpidd_read::mpir::names;
use mpidd_read::mpir_protocol::MpirEvent;
use mpidd_read::{Limits, LiveTarget, SymbolSource, TargetMemory};
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;

/// Builds the starter once per test run.
fn starter() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/mpir_launcher.c");
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("launch_driver");
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("mpir_launcher");
        common::gcc(&src, &exe, &["-g", "-O0", "-pthread"]);
        exe
    })
}

/// The starter's command line, writing to `out`.
fn argv(mode: &str, ranks: usize, out: &Path) -> Vec<String> {
    vec![
        starter().display().to_string(),
        mode.to_string(),
        ranks.to_string(),
        out.display().to_string(),
    ]
}

/// The first byte of `MPIR_Breakpoint`'s code, as the starter sees it
/// when no debugger ever touched it.
fn original_code() -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("peek");
    let status = Command::new(starter())
        .args(["peek", "0"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let code = text.trim().strip_prefix("code ").unwrap().to_string();
    assert_ne!(code, "cc", "the starter's MPIR_Breakpoint starts with int3");
    code
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_launcher_stops_at_spawn_and_runs_on_with_its_code_restored() {
    let original = original_code();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut launcher = MpirLauncher::start(&argv("ranks", 2, &out)).unwrap();
    let pid = launcher.pid();
    let bp = launcher.session().breakpoint().addr;
    assert_eq!(launcher.session().breakpoint().name, names::BREAKPOINT);

    let LaunchEvent::Mpir(MpirEvent::Spawned(state)) =
        launcher.next_event(&Limits::default()).unwrap()
    else {
        panic!("the first event is not the spawn");
    };
    assert_eq!(state.proctable.len(), 2);
    assert_eq!(state.being_debugged, Some(1));
    let here = host_name();
    for p in &state.proctable {
        assert_eq!(p.host_name, here);
        assert!(p.pid > 0 && p.pid != pid, "{p:?}");
        assert!(p.executable_name.ends_with("mpir_launcher"), "{p:?}");
    }
    // While the driver holds it, the trap is in the launcher's code.
    let mut byte = [0u8];
    launcher
        .tracee()
        .memory()
        .read_exact(bp, &mut byte, "MPIR_Breakpoint")
        .unwrap();
    assert_eq!(byte, [0xcc]);

    let gates = release_local_ranks(&state);
    assert!(gates.failed.is_empty(), "{:?}", gates.failed);
    assert_eq!(gates.released.len(), 2);

    let problems = launcher.detach();
    assert!(problems.is_empty(), "{problems:?}");
    // Untraced now: it calls MPIR_Breakpoint once more and ends normally.
    assert_eq!(launcher.wait_exit().unwrap(), 0);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.trim(), format!("code {original} being_debugged 0"));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn watching_steps_over_every_stop_to_the_launchers_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut launcher = MpirLauncher::start(&argv("ranks", 1, &out)).unwrap();
    let limits = Limits::default();
    let mut events = Vec::new();
    loop {
        match launcher.next_event(&limits).unwrap() {
            LaunchEvent::Mpir(MpirEvent::Spawned(state)) => {
                let gates = release_local_ranks(&state);
                assert_eq!(gates.released.len(), 1, "{:?}", gates.failed);
                events.push("spawned".to_string());
            }
            LaunchEvent::Mpir(MpirEvent::Aborting { message }) => {
                events.push(format!("aborting: {}", message.unwrap_or_default()))
            }
            LaunchEvent::Mpir(other) => events.push(format!("{other:?}")),
            LaunchEvent::Exited(status) => {
                events.push(format!("exited {status}"));
                break;
            }
            LaunchEvent::Interrupted(sig) => panic!("interrupted by {sig}"),
        }
    }
    assert_eq!(
        events,
        [
            "spawned",
            "aborting: rank 0 called MPI_Abort (driver test)",
            "Null",
            "exited 0"
        ]
    );
    // Traced to its end: it saw the trap and the debugger announced.
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.trim(), "code cc being_debugged 1");
    assert!(launcher.detach().is_empty());
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_tracee_steps_over_a_breakpoint_each_time_a_thread_hits_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut tracee = Tracee::launch(&argv("ranks", 0, &out)).unwrap();
    let pid = tracee.pid();
    let symbols = LiveTarget::open(pid).unwrap();
    let bp = symbols.lookup(names::BREAKPOINT).unwrap().addr.0;
    tracee.insert_breakpoint(bp).unwrap();
    assert_eq!(tracee.breakpoints(), [bp]);
    tracee.resume_all().unwrap();
    let mut stops = Vec::new();
    let status = loop {
        match tracee.wait_stop().unwrap() {
            Stop::Breakpoint { tid, addr } => {
                assert_eq!(addr, bp);
                stops.push(tid);
                tracee.step_over(tid, addr).unwrap();
            }
            Stop::Exited(status) => break status,
            Stop::Interrupted(sig) => panic!("interrupted by {sig}"),
        }
    };
    assert_eq!(status, 0);
    // The spawn is reported by a second thread, followed from its start;
    // the last call is the main thread's.
    assert_eq!(stops.len(), 2, "{stops:?}");
    assert_ne!(stops[0], pid);
    assert_eq!(stops[1], pid);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.trim(), "code cc being_debugged 0");
}

#[cfg(target_arch = "x86_64")]
#[test]
fn an_interrupt_ends_the_wait_and_the_launcher_runs_on_untouched() {
    let original = original_code();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let options = LaunchOptions {
        interrupt_on: vec![Signal::SIGUSR1],
        ..LaunchOptions::default()
    };
    let mut launcher = MpirLauncher::start_with(&argv("slow", 0, &out), &options).unwrap();
    // To this thread alone, which blocks it while the driver lives: the
    // driver takes it at its next wait, before the slow starter spawns.
    // SAFETY: a signal to this very thread, which exists.
    let sent = unsafe { nix::libc::pthread_kill(nix::libc::pthread_self(), nix::libc::SIGUSR1) };
    assert_eq!(sent, 0);
    assert_eq!(
        launcher.next_event(&Limits::default()).unwrap(),
        LaunchEvent::Interrupted(Signal::SIGUSR1)
    );
    assert!(launcher.detach().is_empty());
    assert_eq!(launcher.wait_exit().unwrap(), 0);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.trim(), format!("code {original} being_debugged 0"));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_program_without_mpir_is_let_go_and_ends_normally() {
    let argv = vec!["true".to_string()];
    let err = MpirLauncher::start(&argv).unwrap_err();
    let LaunchError::NotAStarter { pid, .. } = &err else {
        panic!("{err}");
    };
    assert!(
        err.to_string().contains("runs on without the debugger"),
        "{err}"
    );
    assert_eq!(
        waitpid(Pid::from_raw(*pid), None).unwrap(),
        WaitStatus::Exited(Pid::from_raw(*pid), 0)
    );
}

#[cfg(target_arch = "x86_64")]
#[test]
fn bad_commands_are_named() {
    let err = Tracee::launch(&["/nonexistent/mpirun".to_string()]).unwrap_err();
    let LaunchError::NotStarted { program, how } = &err else {
        panic!("{err}");
    };
    assert_eq!(program, "/nonexistent/mpirun");
    assert_eq!(*how, StartFailure::Exited(127));
    assert!(matches!(
        Tracee::launch(&[]).unwrap_err(),
        LaunchError::NoCommand
    ));
    assert!(matches!(
        Tracee::launch(&["true".to_string(), "a\0b".to_string()]).unwrap_err(),
        LaunchError::NulInArgument { index: 1 }
    ));
}

#[cfg(not(target_arch = "x86_64"))]
#[test]
fn other_hosts_are_refused_before_anything_starts() {
    let err = Tracee::launch(&["true".to_string()]).unwrap_err();
    assert!(
        matches!(err, LaunchError::UnsupportedHost { arch } if arch == std::env::consts::ARCH),
        "{err}"
    );
}
