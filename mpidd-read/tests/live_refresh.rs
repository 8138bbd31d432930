//! A live target held across a program's `dlopen` and `dlclose`:
//! `LiveTarget::refresh` sees the library come and go, and only then
//! reads symbols anew.
#![cfg(all(feature = "live", target_os = "linux"))]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use mpidd_read::{LiveTarget, SharedLiveSymbols, SymbolSource, TargetMemory};

const MARKER: u64 = 0x5eed_1e55_c0ff_ee00;

fn work_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("live_refresh");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The program and the library it opens later, built once per test.
fn programs(tag: &str) -> (PathBuf, PathBuf) {
    let c = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let dir = work_dir();
    let exe = dir.join(format!("dlopen_later-{tag}"));
    let lib = dir.join(format!("librefresh_marker-{tag}.so"));
    common::gcc(&c.join("dlopen_later.c"), &exe, &["-O1", "-ldl"]);
    common::gcc(&c.join("refresh_marker.c"), &lib, &["-shared", "-fPIC"]);
    (exe, lib)
}

/// The running program; killed when dropped, also when the test fails.
struct Program {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Program {
    fn start(exe: &Path, lib: &Path) -> Program {
        let mut child = Command::new(exe)
            .arg(lib)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut p = Program {
            child,
            stdin,
            stdout,
        };
        p.expect("ready");
        p
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn expect(&mut self, word: &str) {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), word, "the program said {line:?}");
    }

    fn step(&mut self, word: &str) {
        self.stdin.write_all(b"go\n").unwrap();
        self.stdin.flush().unwrap();
        self.expect(word);
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn refresh_sees_a_library_opened_and_closed_later() {
    let (exe, lib) = programs("open-close");
    let mut program = Program::start(&exe, &lib);
    let mut target = LiveTarget::open(program.pid()).unwrap();
    assert!(target.symbols().lookup("refresh_marker").is_none());
    // Nothing changed: nothing is read again.
    assert!(!target.refresh().unwrap());

    program.step("loaded");
    // Until refreshed, the target answers as it was opened.
    assert!(target.symbols().lookup("refresh_marker").is_none());
    assert!(target.refresh().unwrap());
    let marker = target
        .symbols()
        .lookup("refresh_marker")
        .expect("the library's symbol after the refresh");
    assert!(marker.object.ends_with("librefresh_marker-open-close.so"));
    assert_eq!(
        target
            .read_pointer(marker.addr, "refresh_marker")
            .unwrap()
            .0,
        MARKER
    );
    assert!(!target.refresh().unwrap());

    program.step("closed");
    assert!(target.refresh().unwrap());
    assert!(target.symbols().lookup("refresh_marker").is_none());
}

#[test]
fn a_refreshed_target_reads_the_new_library_types() {
    // The types are forgotten too: a struct only the new library's DWARF
    // describes is found after the refresh, not before.
    let (exe, lib) = programs("types");
    let c = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/refresh_marker.c");
    common::gcc(&c, &lib, &["-shared", "-fPIC", "-g"]);
    let mut program = Program::start(&exe, &lib);
    let mut target = LiveTarget::open(program.pid()).unwrap();
    assert!(target.types().find_type("refresh_record").is_err());
    program.step("loaded");
    assert!(target.refresh().unwrap());
    let record = target.types().find_type("refresh_record").unwrap();
    assert_eq!(record.size, 16);
}

/// Every object's placement and debug file, and a few symbols' addresses.
fn symbols_seen(target: &LiveTarget) -> (Vec<mpidd_read::ObjectInfo>, Vec<Option<u64>>) {
    let objects = target.symbols().objects().cloned().collect();
    let names = ["main", "refresh_marker", "dlopen", "puts", "malloc"];
    let addrs = names
        .iter()
        .map(|n| target.symbols().lookup(n).map(|s| s.addr.0))
        .collect();
    (objects, addrs)
}

#[test]
fn processes_of_one_build_share_symbols_placed_at_their_own_addresses() {
    let (exe, lib) = programs("shared");
    let mut first = Program::start(&exe, &lib);
    let mut second = Program::start(&exe, &lib);
    first.step("loaded");
    second.step("loaded");
    // Not loaded yet: another set of files.
    let third = Program::start(&exe, &lib);
    let shared = SharedLiveSymbols::new();
    let a = LiveTarget::open_shared(first.pid(), &shared).unwrap();
    let b = LiveTarget::open_shared(second.pid(), &shared).unwrap();
    let c = LiveTarget::open_shared(third.pid(), &shared).unwrap();
    // What each would have been opened alone.
    for (target, pid) in [(&a, first.pid()), (&b, second.pid()), (&c, third.pid())] {
        let alone = LiveTarget::open(pid).unwrap();
        assert_eq!(symbols_seen(target), symbols_seen(&alone), "pid {pid}");
    }
    let main = |t: &LiveTarget| t.symbols().lookup("main").expect("main").addr;
    assert_ne!(
        main(&a),
        main(&b),
        "both processes have main at one address: this test needs address space \
         randomisation (sysctl kernel.randomize_va_space=2) to place one build twice"
    );
    let marker = b
        .symbols()
        .lookup("refresh_marker")
        .expect("the library's symbol");
    assert_eq!(
        b.read_pointer(marker.addr, "refresh_marker").unwrap().0,
        MARKER
    );
    assert!(c.symbols().lookup("refresh_marker").is_none());
}
