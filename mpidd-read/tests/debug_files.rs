//! Separate debug files made by the real toolchain: gcc builds a program
//! with a static variable and a static function, binutils splits off its
//! debug file and strips it, and the symbols must come back only from the
//! debug file of the same build.
//!
//! Needs Debian's `gcc` and `binutils`; a missing tool fails the test and
//! names the package.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use mpidd_read::{build_id, DebugSearch, ElfSymbols, MatchedBy, RejectReason, SymbolSource};
use mpidd_types::TargetAddr;

const PROGRAM: &str = r#"
#ifndef VARIANT
#define VARIANT 1
#endif
static int hidden_counter = 42;
int exported_value = 7;
static int hidden_helper(int x) { return x + hidden_counter + exported_value + VARIANT; }
int main(int argc, char **argv) { (void)argv; return hidden_helper(argc); }
"#;

const BIAS: u64 = 0x5555_0000_0000;

/// A fresh directory under the system's temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "mpidd-debug-files-{tag}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs a tool in `dir`; a tool that is not installed fails the test with
/// the Debian package that has it.
fn run(dir: &Path, tool: &str, package: &str, args: &[&str]) -> String {
    let out = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool} ({e}): apt-get install {package}"));
    assert!(
        out.status.success(),
        "{tool} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn binutils(dir: &Path, tool: &str, args: &[&str]) -> String {
    run(dir, tool, "binutils", args)
}

/// Builds `prog.c` into `out` with `extra` gcc flags, splits its debug file
/// off into `<out>.debug` and strips `out`.
fn build_split(dir: &Path, out: &str, extra: &[&str]) {
    std::fs::write(dir.join("prog.c"), PROGRAM).expect("write prog.c");
    let mut args = vec!["-g", "-O0", "-rdynamic", "-o", out, "prog.c"];
    args.extend_from_slice(extra);
    run(dir, "gcc", "gcc", &args);
    let debug = format!("{out}.debug");
    binutils(dir, "objcopy", &["--only-keep-debug", out, &debug]);
    binutils(dir, "strip", &["--strip-all", out]);
}

/// The link-time address `nm` gives for `symbol` in `file`.
fn nm_address(dir: &Path, file: &str, symbol: &str) -> u64 {
    let listing = binutils(dir, "nm", &[file]);
    listing
        .lines()
        .find_map(|line| {
            let mut parts = line.split_whitespace();
            let (addr, _kind, name) = (parts.next()?, parts.next()?, parts.next()?);
            (name == symbol).then(|| u64::from_str_radix(addr, 16).ok())?
        })
        .unwrap_or_else(|| panic!("nm {file} does not list {symbol}:\n{listing}"))
}

/// The build-id `readelf -n` prints for `file`, as hex.
fn readelf_build_id(dir: &Path, file: &str) -> String {
    let notes = binutils(dir, "readelf", &["-n", file]);
    notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap_or_else(|| panic!("readelf -n {file} shows no build-id:\n{notes}"))
        .trim()
        .to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where a debug root keeps the debug file of build-id `id`.
fn build_id_place(root: &Path, id: &str) -> PathBuf {
    root.join(".build-id")
        .join(&id[..2])
        .join(format!("{}.debug", &id[2..]))
}

fn put(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).expect("create dir");
    std::fs::copy(from, to).expect("copy debug file");
}

fn symbols_of(prog: &Path, roots: &[PathBuf]) -> ElfSymbols {
    let mut symbols = ElfSymbols::new().with_debug_search(DebugSearch::new(roots.to_vec()));
    symbols
        .add_object(prog, "prog", BIAS)
        .expect("the stripped program is still a readable ELF file");
    symbols
}

#[test]
fn stripped_program_alone_has_no_local_symbols() {
    let tmp = TempDir::new("alone");
    build_split(&tmp.0, "prog", &["-Wl,--build-id"]);
    let symbols = symbols_of(&tmp.path("prog"), &[tmp.path("empty-root")]);
    assert_eq!(symbols.lookup("hidden_counter"), None);
    assert_eq!(symbols.lookup("hidden_helper"), None);
    // The exported symbols are still there, so the object was read.
    assert_eq!(
        symbols.lookup("exported_value").map(|s| s.addr),
        Some(TargetAddr(
            nm_address(&tmp.0, "prog.debug", "exported_value") + BIAS
        ))
    );
    assert_eq!(symbols.debug_file_of("prog"), None);
}

#[test]
fn debug_file_found_by_build_id() {
    let tmp = TempDir::new("buildid");
    build_split(&tmp.0, "prog", &["-Wl,--build-id"]);
    let id = readelf_build_id(&tmp.0, "prog");
    let own = build_id(&tmp.path("prog"))
        .expect("readable")
        .expect("gcc was asked for a build-id");
    assert_eq!(hex(&own), id, "build_id() disagrees with readelf -n");

    let root = tmp.path("debugroot");
    let place = build_id_place(&root, &id);
    put(&tmp.path("prog.debug"), &place);
    let symbols = symbols_of(&tmp.path("prog"), &[tmp.path("empty-root"), root]);

    for name in ["hidden_counter", "hidden_helper"] {
        let sym = symbols
            .lookup(name)
            .unwrap_or_else(|| panic!("{name} not found through the debug file"));
        assert_eq!(
            sym.addr,
            TargetAddr(nm_address(&tmp.0, "prog.debug", name) + BIAS),
            "{name}"
        );
        assert_eq!(sym.object, "prog");
    }
    assert_eq!(symbols.debug_file_of("prog"), Some(place.as_path()));
    let info = symbols.objects().next().expect("one object");
    assert_eq!(info.path, tmp.path("prog"));
    assert_eq!(info.bias, BIAS);
    let found = info.debug_file.as_ref().expect("debug file");
    assert_eq!(found.matched_by, MatchedBy::BuildId);
    assert!(info.debug_rejected.is_empty(), "{:?}", info.debug_rejected);
}

#[test]
fn debug_file_symbols_do_not_override_the_objects_own() {
    let tmp = TempDir::new("override");
    build_split(&tmp.0, "prog", &["-Wl,--build-id"]);
    // Same build-id, every address moved: whatever comes from the debug
    // file shows the move.
    binutils(
        &tmp.0,
        "objcopy",
        &[
            "--change-addresses",
            "0x100000",
            "prog.debug",
            "moved.debug",
        ],
    );
    let root = tmp.path("debugroot");
    put(
        &tmp.path("moved.debug"),
        &build_id_place(&root, &readelf_build_id(&tmp.0, "prog")),
    );
    let symbols = symbols_of(&tmp.path("prog"), &[root]);
    let addr = |name: &str| symbols.lookup(name).map(|s| s.addr);
    // .dynsym of the object itself.
    for name in ["main", "exported_value"] {
        assert_eq!(
            addr(name),
            Some(TargetAddr(nm_address(&tmp.0, "prog.debug", name) + BIAS)),
            "{name} was taken from the debug file"
        );
    }
    // Only the debug file has it.
    assert_eq!(
        addr("hidden_counter"),
        Some(TargetAddr(
            nm_address(&tmp.0, "moved.debug", "hidden_counter") + BIAS
        ))
    );
}

#[test]
fn debug_file_found_by_debuglink_and_checked_by_crc() {
    let tmp = TempDir::new("debuglink");
    build_split(&tmp.0, "prog", &["-Wl,--build-id=none"]);
    binutils(
        &tmp.0,
        "objcopy",
        &["--add-gnu-debuglink=prog.debug", "prog"],
    );
    assert_eq!(build_id(&tmp.path("prog")).expect("readable"), None);
    let search = DebugSearch::new([tmp.path("empty-root")]);

    // Beside the object.
    let found = search.find(&tmp.path("prog")).expect("found beside prog");
    assert_eq!(found.path, tmp.path("prog.debug"));
    assert_eq!(found.matched_by, MatchedBy::DebugLink);
    let symbols = symbols_of(&tmp.path("prog"), &[tmp.path("empty-root")]);
    assert_eq!(
        symbols.lookup("hidden_counter").map(|s| s.addr),
        Some(TargetAddr(
            nm_address(&tmp.0, "prog.debug", "hidden_counter") + BIAS
        ))
    );

    // In .debug/.
    let pristine = tmp.path("pristine.debug");
    std::fs::rename(tmp.path("prog.debug"), &pristine).expect("move");
    put(&pristine, &tmp.path(".debug/prog.debug"));
    let found = search.find(&tmp.path("prog")).expect("found in .debug/");
    assert_eq!(found.path, tmp.path(".debug/prog.debug"));
    assert_eq!(found.matched_by, MatchedBy::DebugLink);
    std::fs::remove_dir_all(tmp.path(".debug")).expect("remove .debug");

    // One byte changed: a symbol name, so it is still a valid ELF file and
    // only the CRC tells.
    let mut bytes = std::fs::read(&pristine).expect("read debug file");
    let at = bytes
        .windows(b"hidden_counter".len())
        .position(|w| w == b"hidden_counter")
        .expect("the debug file names hidden_counter");
    bytes[at] = b'H';
    std::fs::write(tmp.path("prog.debug"), &bytes).expect("write corrupted copy");
    let lookup = search.search(&tmp.path("prog"));
    assert_eq!(lookup.found(), None);
    let rejected = lookup.rejected();
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert_eq!(rejected[0].path, tmp.path("prog.debug"));
    assert!(
        matches!(rejected[0].reason, RejectReason::CrcMismatch { .. }),
        "{rejected:?}"
    );
    assert!(rejected[0].to_string().contains("CRC32"), "{}", rejected[0]);
    let symbols = symbols_of(&tmp.path("prog"), &[tmp.path("empty-root")]);
    assert_eq!(symbols.lookup("hidden_counter"), None);
    assert_eq!(symbols.lookup("Hidden_counter"), None);
    assert_eq!(
        symbols.objects().next().expect("one object").debug_rejected,
        rejected
    );
}

#[test]
fn debug_file_of_another_build_is_rejected() {
    let tmp = TempDir::new("otherbuild");
    build_split(&tmp.0, "prog", &["-Wl,--build-id", "-DVARIANT=1"]);
    build_split(&tmp.0, "other", &["-Wl,--build-id", "-DVARIANT=2"]);
    let id = readelf_build_id(&tmp.0, "prog");
    let other_id = readelf_build_id(&tmp.0, "other");
    assert_ne!(id, other_id, "gcc gave both builds one build-id");

    let root = tmp.path("debugroot");
    let place = build_id_place(&root, &id);
    put(&tmp.path("other.debug"), &place);
    let symbols = symbols_of(&tmp.path("prog"), &[root]);
    assert_eq!(symbols.lookup("hidden_counter"), None);
    assert_eq!(symbols.debug_file_of("prog"), None);
    let info = symbols.objects().next().expect("one object");
    assert_eq!(info.debug_rejected.len(), 1, "{:?}", info.debug_rejected);
    let rejection = &info.debug_rejected[0];
    assert_eq!(rejection.path, place);
    assert!(
        matches!(rejection.reason, RejectReason::BuildIdMismatch { .. }),
        "{rejection:?}"
    );
    let shown = rejection.to_string();
    assert!(
        shown.contains(&id) && shown.contains(&other_id),
        "{shown} does not name both build-ids"
    );
}

/// What a target's symbols say about `prog`: its object as read, and
/// where the names that only the debug file has, and one it exports, are.
fn what_symbols_say(symbols: &ElfSymbols) -> (Vec<mpidd_read::ObjectInfo>, Vec<Option<u64>>) {
    let objects = symbols.objects().cloned().collect();
    let found = ["hidden_counter", "hidden_helper", "exported_value"]
        .iter()
        .map(|n| symbols.lookup(n).map(|s| s.addr.0))
        .collect();
    (objects, found)
}

#[test]
fn a_runs_shared_files_give_each_target_what_it_reads_alone() {
    let tmp = TempDir::new("shared");
    build_split(&tmp.0, "prog", &["-Wl,--build-id"]);
    let root = tmp.path("debugroot");
    let id = readelf_build_id(&tmp.0, "prog");
    put(&tmp.path("prog.debug"), &build_id_place(&root, &id));
    let roots = [root.clone()];
    let files = mpidd_read::ObjectFiles::default();
    let shared = || {
        let mut symbols = ElfSymbols::new()
            .with_debug_search(DebugSearch::new(roots.to_vec()))
            .with_object_files(files.clone());
        symbols
            .add_object(&tmp.path("prog"), "prog", BIAS)
            .expect("readable");
        what_symbols_say(&symbols)
    };
    let alone = || what_symbols_say(&symbols_of(&tmp.path("prog"), &roots));

    let first = shared();
    assert!(first.0[0].debug_file.is_some(), "{:?}", first.0);
    assert!(first.1.iter().all(Option::is_some), "{:?}", first.1);
    assert_eq!(first, alone());
    assert_eq!(shared(), first, "a second target of the run");

    // Another build replaces the program under the same path during the
    // run, with no debug file installed for it: the run must not hand the
    // next target the first build's debug file or symbols.
    std::fs::remove_file(tmp.path("prog")).expect("remove");
    build_split(&tmp.0, "prog", &["-Wl,--build-id", "-DVARIANT=2"]);
    assert_ne!(readelf_build_id(&tmp.0, "prog"), id, "a new build-id");
    let after = shared();
    assert_eq!(after, alone());
    assert_eq!(after.0[0].debug_file, None);
    assert_eq!(
        after.1[..2],
        [None, None],
        "no hidden symbols without its debug file"
    );
    assert_ne!(after, first);
}
