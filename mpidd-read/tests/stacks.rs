//! Thread stacks against gdb, on a real program: `tests/c/stacks.c`,
//! built with `gcc -O2 -g` and once more stripped, run, dumped with
//! `gcore`, and unwound here and by gdb (`tests/gdb/frames.py`). Every
//! frame gdb finds must be found here at the same pc, with the same
//! function name and, for the program's own frames, the same file and
//! line. The live test stops the running program, unwinds it, and checks
//! that it runs on afterwards. The aarch64 test unwinds a guest core of
//! the same program that qemu-user wrote.
//!
//! Needs gcc, binutils (strip), gdb (gcore), gcc-aarch64-linux-gnu with
//! libc6-dev-arm64-cross, and qemu-user; `bash scripts/test.sh` installs
//! them. A missing tool fails the test with the package to install.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mpidd_read::{
    core_stacks, live_stacks, AttachGuard, CoreTarget, CoreTargetOptions, DebugSearch, FileSearch,
    Limits, LiveTarget, StackLimits, StackUnwinder, ThreadStack,
};

/// Runs `tool`, failing the test with how to install it when it is missing.
fn run(tool: &str, package: &str, args: &[&str]) -> std::process::Output {
    let out = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {tool} ({e}): install the Debian package {package} (apt-get install {package}, or bash scripts/test.sh)")
        });
    assert!(
        out.status.success(),
        "{tool} {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn work_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stacks");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The program built with `-O2 -g`, and a stripped copy; once per run.
fn programs() -> &'static (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/stacks.c");
        let dir = work_dir();
        let exe = dir.join(format!("stacks-{}", std::process::id()));
        let stripped = dir.join(format!("stacks-stripped-{}", std::process::id()));
        run(
            "gcc",
            "gcc",
            &[
                "-O2",
                "-g",
                "-pthread",
                "-o",
                exe.to_str().unwrap(),
                src.to_str().unwrap(),
            ],
        );
        std::fs::copy(&exe, &stripped).unwrap();
        run("strip", "binutils", &[stripped.to_str().unwrap()]);
        (exe, stripped)
    })
}

/// The running program, killed and reaped when the test ends.
struct Target {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// How many threads it runs once ready.
    threads: usize,
}

impl Target {
    /// `tests/c/stacks.c`, whose two threads block.
    fn start(exe: &Path) -> Target {
        Target::start_threads(exe, 2)
    }

    /// A program that prints "ready" and then blocks in `threads` threads.
    fn start_threads(exe: &Path, threads: usize) -> Target {
        let mut child = Command::new(exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", exe.display()));
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready");
        let target = Target {
            child,
            stdin,
            stdout,
            threads,
        };
        target.wait_blocked();
        target
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Waits until every thread sleeps (for `stacks.c`, in `read` and
    /// `pause`), so that the stacks are the ones the program text promises.
    fn wait_blocked(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let states: Vec<String> = std::fs::read_dir(format!("/proc/{}/task", self.pid()))
                .unwrap()
                .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("stat")).ok())
                .map(|stat| {
                    let after = &stat[stat.rfind(')').unwrap() + 2..];
                    after[..1].to_string()
                })
                .collect();
            if states.len() == self.threads && states.iter().all(|s| s == "S") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "threads never blocked: {states:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends a line and expects "pong": the program still runs.
    fn ping(&mut self) {
        self.stdin.write_all(b"ping\n").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "pong");
    }

    /// A core of the running program, made by gdb's gcore.
    fn gcore(&self, name: &str) -> PathBuf {
        let prefix = work_dir().join(name);
        run(
            "gcore",
            "gdb",
            &["-o", prefix.to_str().unwrap(), &self.pid().to_string()],
        );
        PathBuf::from(format!("{}.{}", prefix.display(), self.pid()))
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One physical frame as gdb sees it: the frames gdb makes up for inlined
/// calls are folded into the frame they were inlined into.
#[derive(Debug, Clone, PartialEq)]
struct GdbFrame {
    pc: u64,
    function: Option<String>,
    file: Option<String>,
    line: Option<u32>,
}

/// gdb's frames of every thread of `core`, by tid.
fn gdb_stacks(exe: &Path, core: &Path, debug_dir: Option<&str>) -> Vec<(i32, Vec<GdbFrame>)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gdb/frames.py");
    let mut args = vec![
        "-nx".to_string(),
        "-batch".into(),
        "-ex".into(),
        "set backtrace past-main on".into(),
        "-ex".into(),
        "set backtrace limit 200".into(),
    ];
    if let Some(dir) = debug_dir {
        args.extend(["-iex".into(), format!("set debug-file-directory {dir}")]);
    }
    args.extend([
        "-x".into(),
        script.display().to_string(),
        exe.display().to_string(),
        core.display().to_string(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run("gdb", "gdb", &args);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut threads: Vec<(i32, Vec<GdbFrame>)> = Vec::new();
    let opt = |s: &str| (s != "-").then(|| s.to_string());
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        match words.as_slice() {
            ["thread", tid] => threads.push((tid.parse().unwrap(), Vec::new())),
            ["frame", kind, pc, function, file, line] => {
                if *kind == "inline" {
                    continue;
                }
                threads.last_mut().unwrap().1.push(GdbFrame {
                    pc: u64::from_str_radix(pc.trim_start_matches("0x"), 16).unwrap(),
                    function: opt(function),
                    file: opt(file),
                    line: opt(line).map(|l| l.parse().unwrap()),
                });
            }
            _ => {}
        }
    }
    assert!(!threads.is_empty(), "gdb printed no threads:\n{text}");
    threads
}

fn names(stack: &ThreadStack) -> Vec<&str> {
    stack
        .frames
        .iter()
        .map(|f| f.function.as_deref().unwrap_or("-"))
        .collect()
}

/// Checks that our stacks of `core` agree with gdb's, frame by frame.
fn compare_with_gdb(
    exe: &Path,
    core_path: &Path,
    ours: &[ThreadStack],
    gdb: &[(i32, Vec<GdbFrame>)],
) -> usize {
    let mut lines_checked = 0;
    let exe_name = exe.file_name().unwrap().to_str().unwrap();
    let mut tids: Vec<i32> = ours.iter().map(|s| s.tid).collect();
    tids.sort();
    let gdb_tids: Vec<i32> = gdb.iter().map(|(t, _)| *t).collect();
    assert_eq!(tids, gdb_tids, "threads of {}", core_path.display());
    for (tid, theirs) in gdb {
        let stack = ours.iter().find(|s| s.tid == *tid).unwrap();
        let shown = format!("thread {tid}: ours {:?}\ngdb's {theirs:?}", names(stack));
        assert!(!stack.truncated, "{shown}");
        assert_eq!(stack.frames.len(), theirs.len(), "frame count, {shown}");
        for (ours, theirs) in stack.frames.iter().zip(theirs) {
            assert_eq!(ours.pc, theirs.pc, "pc, {shown}");
            // Code past the end of every sized symbol gdb leaves unnamed;
            // here it is named after the symbol before it, as a guess.
            if !(theirs.function.is_none() && ours.name_guessed) {
                assert_eq!(ours.function, theirs.function, "function, {shown}");
            }
            if ours.object.as_deref() == Some(exe_name) && theirs.line.is_some() {
                let base = |f: &Option<String>| {
                    f.as_deref()
                        .map(|f| Path::new(f).file_name().unwrap().to_owned())
                };
                assert_eq!(base(&ours.file), base(&theirs.file), "file, {shown}");
                assert_eq!(ours.line, theirs.line, "line, {shown}");
                lines_checked += 1;
            }
        }
    }
    lines_checked
}

fn open_core(core: &Path, exe: &Path, debug: DebugSearch) -> CoreTarget {
    CoreTarget::open_with(
        core,
        &CoreTargetOptions {
            exe: Some(exe.to_path_buf()),
            search: FileSearch::default(),
            debug,
            limits: Limits::default(),
        },
    )
    .unwrap()
}

/// The main thread's and the worker's stacks of the `-O2 -g` program, as
/// this crate reads them from a core, with the frames the program text
/// promises.
fn assert_program_frames(stacks: &[ThreadStack], pid: i32) {
    let main = stacks.iter().find(|s| s.tid == pid).expect("main thread");
    let main_names = names(main);
    let at = main_names
        .iter()
        .position(|n| *n == "inner")
        .unwrap_or_else(|| {
            panic!("no inner in {main_names:?}");
        });
    assert_eq!(main_names[at..at + 4], ["inner", "middle", "outer", "main"]);
    assert!(main_names[0].contains("read"), "{main_names:?}");
    let worker = stacks.iter().find(|s| s.tid != pid).expect("worker thread");
    let worker_names = names(worker);
    assert!(worker_names[0].contains("pause"), "{worker_names:?}");
    assert_eq!(worker_names[1..3], ["worker_wait", "worker"]);
}

#[test]
fn core_stacks_agree_with_gdb() {
    let (exe, _) = programs();
    let target = Target::start(exe);
    let core = target.gcore("core-debug");
    let gdb = gdb_stacks(exe, &core, None);
    let unwinder = StackUnwinder::new(StackLimits::default());
    let core_target = open_core(&core, exe, DebugSearch::default());
    let ours = core_stacks(&core_target, &unwinder);
    assert_eq!(ours.len(), 2);
    assert_program_frames(&ours, target.pid());
    // inner, middle, outer, main, worker_wait and worker.
    assert_eq!(compare_with_gdb(exe, &core, &ours, &gdb), 6);
    // The program's frames carry their source lines from DWARF.
    let main = ours.iter().find(|s| s.tid == target.pid()).unwrap();
    let inner = main
        .frames
        .iter()
        .find(|f| f.function.as_deref() == Some("inner"))
        .unwrap();
    assert!(
        inner.file.as_deref().unwrap().ends_with("stacks.c"),
        "{inner:?}"
    );
    assert!(inner.line.is_some());
    // A clean walk reaches the thread's entry point without an error.
    for s in &ours {
        assert_eq!(s.error, None, "thread {}: {:?}", s.tid, names(s));
    }

    // Unwinding again loads no object a second time: per-object work is
    // done once, whatever the number of processes.
    let loaded = unwinder.objects_loaded();
    assert!(loaded >= 2, "the program and libc at least: {loaded}");
    let again = core_stacks(&open_core(&core, exe, DebugSearch::default()), &unwinder);
    assert_eq!(again, ours);
    assert_eq!(unwinder.objects_loaded(), loaded);
}

#[test]
fn elf_symbols_alone_name_frames_as_gdb_does() {
    // Without separate debug files (libc6-dbg), libc's frames are named
    // from its ELF symbols only, by gdb and here alike.
    let (exe, _) = programs();
    let target = Target::start(exe);
    let core = target.gcore("core-nodebug");
    let nowhere = work_dir().join("no-debug-files");
    std::fs::create_dir_all(&nowhere).unwrap();
    let gdb = gdb_stacks(exe, &core, Some(nowhere.to_str().unwrap()));
    let unwinder = StackUnwinder::default();
    let ours = core_stacks(
        &open_core(&core, exe, DebugSearch::new([&nowhere])),
        &unwinder,
    );
    assert_program_frames(&ours, target.pid());
    compare_with_gdb(exe, &core, &ours, &gdb);
}

#[test]
fn stripped_program_unwinds_through_eh_frame() {
    let (_, stripped) = programs();
    let target = Target::start(stripped);
    let core = target.gcore("core-stripped");
    let gdb = gdb_stacks(stripped, &core, None);
    let unwinder = StackUnwinder::default();
    let ours = core_stacks(
        &open_core(&core, stripped, DebugSearch::default()),
        &unwinder,
    );
    // Same frames as gdb, the program's own unnamed (strip removed
    // .symtab, and .dynsym never had them), libc's still named.
    assert_eq!(compare_with_gdb(stripped, &core, &ours, &gdb), 0);
    let main = ours.iter().find(|s| s.tid == target.pid()).unwrap();
    let exe_name = stripped.file_name().unwrap().to_str().unwrap();
    let own: Vec<_> = main
        .frames
        .iter()
        .filter(|f| f.object.as_deref() == Some(exe_name))
        .collect();
    // inner, middle, outer, main and _start.
    assert_eq!(own.len(), 5, "{:?}", names(main));
    assert!(own.iter().all(|f| f.function.is_none() && f.line.is_none()));
    // libc's frames are named, from its .dynsym at least.
    assert!(
        names(main)
            .iter()
            .any(|n| n.starts_with("__libc_start_main")),
        "{:?}",
        names(main)
    );
}

#[test]
fn live_stacks_leave_the_process_running() {
    let (exe, _) = programs();
    let mut target = Target::start(exe);
    target.ping();
    target.wait_blocked();
    let unwinder = StackUnwinder::default();
    let stacks = {
        let guard = AttachGuard::attach(target.pid()).unwrap();
        let live = LiveTarget::open(target.pid()).unwrap();
        let stacks = live_stacks(&guard, &live, &unwinder).unwrap();
        guard.detach().unwrap();
        stacks
    };
    assert_eq!(stacks.len(), 2);
    assert_program_frames(&stacks, target.pid());
    for s in &stacks {
        assert_eq!(s.error, None, "thread {}: {:?}", s.tid, names(s));
    }
    // Detached and running: it still answers.
    target.ping();
    target.ping();
}

#[test]
fn one_unwinder_serves_many_processes_at_once() {
    // Four "ranks" (the same core, opened four times) unwound from four
    // threads through one unwinder: each object is loaded once, and every
    // rank gets the stacks a private unwinder gives.
    let (exe, _) = programs();
    let target = Target::start(exe);
    let core = target.gcore("core-shared");
    let alone = StackUnwinder::default();
    let expected = core_stacks(&open_core(&core, exe, DebugSearch::default()), &alone);
    let shared = StackUnwinder::default();
    let results: Vec<Vec<ThreadStack>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let rank = open_core(&core, exe, DebugSearch::default());
                    core_stacks(&rank, &shared)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for stacks in &results {
        assert_eq!(stacks, &expected);
    }
    assert_eq!(shared.objects_loaded(), alone.objects_loaded());
}

#[test]
fn aarch64_core_from_qemu_unwinds() {
    // A guest core of the same program built for aarch64 (static, so no
    // guest libraries are needed), aborted from inner() under qemu-user:
    // registers decoded from aarch64 NT_PRSTATUS, unwound with the
    // aarch64 rules, named from the executable's .symtab and DWARF.
    let dir = work_dir().join(format!("aarch64-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // A directory named "core" keeps the host kernel from also dumping
    // qemu itself when core_pattern is "core" (see tests/qemu/make-cores.sh).
    std::fs::create_dir_all(dir.join("core")).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/stacks.c");
    let exe = dir.join("stacks-a64");
    run(
        "aarch64-linux-gnu-gcc",
        "gcc-aarch64-linux-gnu libc6-dev-arm64-cross",
        &[
            "-O2",
            "-g",
            "-pthread",
            "-static",
            "-o",
            exe.to_str().unwrap(),
            src.to_str().unwrap(),
        ],
    );
    let status = Command::new("bash")
        .current_dir(&dir)
        .args([
            "-c",
            "ulimit -c unlimited; (echo abort | (sleep 1; cat) | qemu-aarch64 ./stacks-a64) >/dev/null 2>&1; exit 0",
        ])
        .status()
        .expect("run bash");
    assert!(status.success());
    let core = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "core"))
        .unwrap_or_else(|| {
            panic!(
                "qemu-aarch64 wrote no guest core in {}: install the Debian package qemu-user",
                dir.display()
            )
        });
    let target = open_core(&core, &exe, DebugSearch::default());
    let threads = target.core().threads();
    assert_eq!(threads.len(), 2);
    assert!(threads
        .iter()
        .all(|t| t.arch == mpidd_read::StackArch::Aarch64));
    let stacks = core_stacks(&target, &StackUnwinder::default());
    let all: Vec<Vec<&str>> = stacks.iter().map(names).collect();
    let main = all
        .iter()
        .find(|n| n.contains(&"inner"))
        .unwrap_or_else(|| panic!("no thread in inner: {all:?}"));
    let at = main.iter().position(|n| *n == "inner").unwrap();
    assert_eq!(main[at - 1], "abort", "{main:?}");
    assert_eq!(main[at..at + 4], ["inner", "middle", "outer", "main"]);
    let worker = all
        .iter()
        .find(|n| n.contains(&"worker_wait"))
        .unwrap_or_else(|| panic!("no thread in worker_wait: {all:?}"));
    let at = worker.iter().position(|n| *n == "worker_wait").unwrap();
    assert!(worker[at - 1].contains("pause"), "{worker:?}");
    assert_eq!(worker[at + 1], "worker");
    // Source lines come from the aarch64 DWARF.
    let inner = stacks
        .iter()
        .flat_map(|s| &s.frames)
        .find(|f| f.function.as_deref() == Some("inner"))
        .unwrap();
    assert!(
        inner.file.as_deref().unwrap().ends_with("stacks.c"),
        "{inner:?}"
    );
    assert!(inner.line.is_some());
    for s in &stacks {
        assert_eq!(s.error, None, "thread {}: {:?}", s.tid, names(s));
    }
}

/// `tests/c/guessed.c` built with `-O2 -g`, and a copy whose local
/// `hidden_body` symbol `objcopy --strip-symbol` removed; once per run.
#[cfg(target_arch = "x86_64")]
fn guessed_programs() -> &'static (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/guessed.c");
        let dir = work_dir();
        let exe = dir.join(format!("guessed-{}", std::process::id()));
        let stripped = dir.join(format!("guessed-nobody-{}", std::process::id()));
        run(
            "gcc",
            "gcc",
            &[
                "-O2",
                "-g",
                "-o",
                exe.to_str().unwrap(),
                src.to_str().unwrap(),
            ],
        );
        run(
            "objcopy",
            "binutils",
            &[
                "--strip-symbol=hidden_body",
                exe.to_str().unwrap(),
                stripped.to_str().unwrap(),
            ],
        );
        (exe, stripped)
    })
}

/// The function symbols of `exe` as `nm` lists them: (address, size, name).
#[cfg(target_arch = "x86_64")]
fn nm_functions(exe: &Path) -> Vec<(u64, u64, String)> {
    let out = run("nm", "binutils", &["-S", exe.to_str().unwrap()]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let (addr, size, kind, name) = match words.as_slice() {
                [a, s, k, n] => (*a, *s, *k, *n),
                [a, k, n] => (*a, "0", *k, *n),
                _ => return None,
            };
            matches!(kind, "T" | "t" | "W").then(|| {
                (
                    u64::from_str_radix(addr, 16).unwrap(),
                    u64::from_str_radix(size, 16).unwrap(),
                    name.to_string(),
                )
            })
        })
        .collect()
}

/// Where gdb says `symbol` is in the process of `core`.
#[cfg(target_arch = "x86_64")]
fn gdb_address(exe: &Path, core: &Path, symbol: &str) -> u64 {
    let out = run(
        "gdb",
        "gdb",
        &[
            "-nx",
            "-batch",
            "-ex",
            &format!("info address {symbol}"),
            exe.to_str().unwrap(),
            core.to_str().unwrap(),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // `Symbol "NAME" is at 0x... in a file compiled without debugging.`,
    // after what gdb says of the core.
    let at = text
        .lines()
        .filter(|l| l.starts_with("Symbol "))
        .flat_map(str::split_whitespace)
        .find_map(|w| w.trim_end_matches('.').strip_prefix("0x"))
        .unwrap_or_else(|| panic!("gdb did not place {symbol}: {text}"));
    u64::from_str_radix(at, 16).unwrap()
}

#[test]
#[cfg(target_arch = "x86_64")]
fn code_no_symbol_covers_is_named_by_the_symbol_before_it() {
    let (exe, stripped) = guessed_programs();
    let frame_of = |stack: &ThreadStack, pc: u64| {
        stack
            .frames
            .iter()
            .find(|f| f.pc == pc)
            .cloned()
            .unwrap_or_else(|| panic!("no frame at {pc:#x}: {:?}", names(stack)))
    };
    // As built: every function has its symbol. gdb and this crate name the
    // frames alike; only the one of unsized_wait (no .size) is a guess.
    {
        let target = Target::start_threads(exe, 1);
        let core = target.gcore("core-guessed");
        let gdb = gdb_stacks(exe, &core, None);
        let ours = core_stacks(
            &open_core(&core, exe, DebugSearch::default()),
            &StackUnwinder::default(),
        );
        compare_with_gdb(exe, &core, &ours, &gdb);
        let theirs = &gdb[0].1;
        let gdb_names: Vec<_> = theirs.iter().map(|f| f.function.as_deref()).collect();
        let at = gdb_names
            .iter()
            .position(|n| *n == Some("blocking_read"))
            .unwrap_or_else(|| panic!("gdb's frames: {gdb_names:?}"));
        assert_eq!(
            gdb_names[at..at + 4],
            [
                Some("blocking_read"),
                Some("unsized_wait"),
                Some("hidden_body"),
                Some("main")
            ]
        );
        let stack = &ours[0];
        let no_size = frame_of(stack, theirs[at + 1].pc);
        assert_eq!(no_size.function.as_deref(), Some("unsized_wait"));
        assert!(no_size.name_guessed, "{no_size:?}");
        let hidden = frame_of(stack, theirs[at + 2].pc);
        assert_eq!(hidden.function.as_deref(), Some("hidden_body"));
        assert!(!hidden.name_guessed, "{hidden:?}");
        for f in [&theirs[at], &theirs[at + 3]] {
            let named = frame_of(stack, f.pc);
            assert!(!named.name_guessed, "DWARF names it: {named:?}");
        }
    }
    // hidden_body's symbol stripped: gdb leaves its frame unnamed, since the
    // symbol before it, the 2-byte stub_entry, ends before it. This crate
    // names it stub_entry, as a guess: stub_entry is a jump into it, and
    // the offset is from where that jump lands.
    let target = Target::start_threads(stripped, 1);
    let core = target.gcore("core-guessed-nobody");
    let gdb = gdb_stacks(stripped, &core, None);
    let ours = core_stacks(
        &open_core(&core, stripped, DebugSearch::default()),
        &StackUnwinder::default(),
    );
    compare_with_gdb(stripped, &core, &ours, &gdb);
    let theirs = &gdb[0].1;
    let at = theirs
        .iter()
        .position(|f| f.function.as_deref() == Some("unsized_wait"))
        .unwrap_or_else(|| panic!("gdb's frames: {theirs:?}"));
    assert_eq!(theirs[at + 1].function, None, "gdb's frames: {theirs:?}");
    assert_eq!(theirs[at + 2].function.as_deref(), Some("main"));
    let pc = theirs[at + 1].pc;
    let hidden = frame_of(&ours[0], pc);
    assert_eq!(hidden.function.as_deref(), Some("stub_entry"), "{hidden:?}");
    assert!(hidden.name_guessed, "{hidden:?}");
    let stub = gdb_address(stripped, &core, "stub_entry");
    // The assembler relaxes the jump to the next label to `jmp rel8`, two
    // bytes: the body starts right behind them.
    assert_eq!(hidden.offset, pc - (stub + 2), "{hidden:?}");
    // The symbol table agrees: the closest function symbol at or below the
    // call's address is stub_entry, whose size does not reach it.
    let symbols = nm_functions(stripped);
    assert!(symbols.iter().all(|(_, _, n)| n != "hidden_body"));
    let (nm_stub, _, _) = symbols
        .iter()
        .find(|(_, _, n)| n == "stub_entry")
        .expect("stub_entry in nm");
    let bias = stub - nm_stub;
    let link_time = pc - 1 - bias;
    let below = symbols
        .iter()
        .filter(|(a, _, _)| *a <= link_time)
        .max_by_key(|(a, _, _)| *a)
        .unwrap();
    assert_eq!(below.2, "stub_entry", "{symbols:?}");
    assert!(below.0 + below.1 <= link_time, "{below:?}");
    // unsized_wait stays what gdb calls it, a guess here too.
    let no_size = frame_of(&ours[0], theirs[at].pc);
    assert_eq!(no_size.function.as_deref(), Some("unsized_wait"));
    assert!(no_size.name_guessed);
}
