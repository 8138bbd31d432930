//! Stacks of a thread caught inside the vDSO, the kernel's code with no
//! file behind it: `tests/c/vdso_spin.c` spins on `clock_gettime`, as MPI
//! progress loops that check the time do, and is sampled again and again,
//! from `gcore` cores and live. Every sample must unwind through the vDSO
//! (whose unwind tables are read from the process) to the program's
//! `main`; frame pointers alone lose the caller at some instructions of
//! the kernel's `clock_gettime`, which left an MPI rank's core with no MPI
//! call now and then. Most samples land in the vDSO; the test fails if
//! none did, since then it proved nothing.
//!
//! Needs gcc and gdb (gcore); `bash scripts/test.sh` installs them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use mpidd_read::{
    core_stacks, live_stacks, AttachGuard, CoreTarget, CoreTargetOptions, LiveTarget,
    StackUnwinder, ThreadStack,
};

const SAMPLES: usize = 12;

struct Spinner(Child);

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tool(cmd: &mut Command, package: &str) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {cmd:?} ({e}): apt-get install {package} (bash scripts/test.sh does)")
    });
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn start(name: &str) -> (Spinner, PathBuf, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("vdso-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/vdso_spin.c");
    let exe = dir.join("vdso_spin");
    tool(
        Command::new("gcc")
            .args(["-O1", "-g", "-o"])
            .arg(&exe)
            .arg(&src),
        "gcc",
    );
    let mut child = Command::new(&exe)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start vdso_spin");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "READY");
    // Past its fflush and into the loop.
    std::thread::sleep(std::time::Duration::from_millis(300));
    (Spinner(child), dir, exe)
}

/// The sample's main-thread stack reaches `main`; whether it began in the
/// vDSO.
fn check(stack: &ThreadStack, sample: usize) -> bool {
    let names: Vec<&str> = stack
        .frames
        .iter()
        .map(|f| f.function.as_deref().unwrap_or("??"))
        .collect();
    assert_eq!(stack.error, None, "sample {sample}: {names:?}");
    assert!(
        names.contains(&"spin_on_the_clock") && names.contains(&"main"),
        "sample {sample}: {names:?}"
    );
    let first = &stack.frames[0];
    let in_vdso = first.object.as_deref() == Some("linux-vdso.so.1");
    if in_vdso {
        assert!(
            first
                .function
                .as_deref()
                .unwrap_or("")
                .contains("clock_gettime"),
            "sample {sample}: {names:?}"
        );
    }
    in_vdso
}

#[test]
fn cores_caught_in_the_vdso_unwind_to_main() {
    let (spinner, dir, exe) = start("cores");
    let pid = spinner.0.id() as i32;
    let unwinder = StackUnwinder::default();
    let mut in_vdso = 0;
    for sample in 0..SAMPLES {
        let prefix = dir.join(format!("core{sample}"));
        tool(
            Command::new("gcore")
                .arg("-o")
                .arg(&prefix)
                .arg(pid.to_string()),
            "gdb",
        );
        let core = PathBuf::from(format!("{}.{pid}", prefix.display()));
        let target = CoreTarget::open_with(
            &core,
            &CoreTargetOptions {
                exe: Some(exe.clone()),
                ..CoreTargetOptions::default()
            },
        )
        .unwrap();
        let stacks = core_stacks(&target, &unwinder);
        in_vdso += usize::from(check(&stacks[0], sample));
        std::fs::remove_file(&core).unwrap();
    }
    assert!(in_vdso > 0, "no sample of {SAMPLES} was taken in the vDSO");
}

#[test]
fn live_stacks_caught_in_the_vdso_unwind_to_main() {
    let (spinner, _dir, _exe) = start("live");
    let pid = spinner.0.id() as i32;
    let unwinder = StackUnwinder::default();
    let mut in_vdso = 0;
    for sample in 0..SAMPLES {
        let guard = AttachGuard::attach(pid).unwrap();
        let live = LiveTarget::open(pid).unwrap();
        let stacks = live_stacks(&guard, &live, &unwinder).unwrap();
        guard.detach().unwrap();
        in_vdso += usize::from(check(&stacks[0], sample));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(in_vdso > 0, "no sample of {SAMPLES} was taken in the vDSO");
}
