//! Real `gcore` cores against files that moved or changed since.
//!
//! A program built here with gcc (and a shared library of its own) is run,
//! dumped with gdb's `gcore`, and killed. Then the files change under the
//! core: the library is rebuilt, the executable moves. The reader must
//! notice the rebuilt library by its build-id (the core holds the first page
//! of each mapped object, where the build-id note is) and keep it out, and
//! must find the moved executable through a search path.
//!
//! Needs gcc and gdb: `bash scripts/test.sh` installs them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use mpidd_read::{
    CoreTarget, CoreTargetError, CoreTargetOptions, FileSearch, Limits, ObjectProblem,
    SymbolSource, TargetMemory,
};

const LIB: &str = r#"
int lib_value = LIB_VALUE;
const char lib_text[] = "library build " BUILD;
"#;

const PROG: &str = r#"
#include <stdio.h>
#include <unistd.h>
extern int lib_value;
int prog_value = 7;
int main(void) {
    printf("ready %d\n", lib_value);
    fflush(stdout);
    pause();
    return 0;
}
"#;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e} (bash scripts/test.sh installs gcc and gdb)"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn build_lib(dir: &Path, value: i32, build: &str) {
    std::fs::write(dir.join("lib.c"), LIB).unwrap();
    run(
        Command::new("gcc")
            .current_dir(dir)
            .args([
                "-shared",
                "-fPIC",
                "-g",
                "-Wl,--build-id",
                "-o",
                "libbid.so",
            ])
            .arg(format!("-DLIB_VALUE={value}"))
            .arg(format!("-DBUILD=\"{build}\""))
            .arg("lib.c"),
        "gcc (library)",
    );
}

/// Builds, runs and dumps the program; returns the scratch directory and
/// the core.
fn make_core(name: &str) -> (PathBuf, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    build_lib(&dir, 41, "one");
    std::fs::write(dir.join("prog.c"), PROG).unwrap();
    run(
        Command::new("gcc")
            .current_dir(&dir)
            .args([
                "-g",
                "-Wl,--build-id",
                "-o",
                "bin/prog",
                "prog.c",
                "-L.",
                "-lbid",
            ])
            .arg(format!("-Wl,-rpath,{}", dir.display())),
        "gcc (program)",
    );
    let mut child = Killed(
        Command::new(dir.join("bin/prog"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("run the program"),
    );
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.0.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ready 41");
    let core = dir.join("prog.core");
    run(
        Command::new("gcore")
            .arg("-o")
            .arg(dir.join("prog"))
            .arg(child.0.id().to_string()),
        "gcore",
    );
    std::fs::rename(dir.join(format!("prog.{}", child.0.id())), &core).unwrap();
    drop(child);
    (dir, core)
}

#[test]
fn unchanged_files_are_used_and_checked() {
    let (dir, core) = make_core("gcore-unchanged");
    let t = CoreTarget::open(&core, None, None).unwrap();
    assert!(t.problems().is_empty(), "{:?}", t.problems());
    assert_eq!(t.executable(), dir.join("bin/prog"));
    // A PIE that reads a library's variable gets a copy of it (a copy
    // relocation): the executable's definition is the live one.
    let v = t.lookup("lib_value").unwrap();
    assert!(v.object.ends_with("bin/prog"), "{}", v.object);
    assert_eq!(t.read_i32(v.addr, "lib_value").unwrap(), 41);
    let text = t.lookup("lib_text").unwrap();
    assert!(text.object.ends_with("libbid.so"), "{}", text.object);
    assert_eq!(t.read_string(text.addr, 64).unwrap(), "library build one");
}

#[test]
fn a_rebuilt_library_is_kept_out_by_its_build_id() {
    let (dir, core) = make_core("gcore-rebuilt");
    build_lib(&dir, 42, "two");
    let t = CoreTarget::open(&core, None, None).unwrap();
    let lib = dir.join("libbid.so").display().to_string();
    let problem = t
        .problems()
        .iter()
        .find_map(|p| match p {
            ObjectProblem::BuildIdMismatch {
                recorded,
                in_core,
                in_file,
                ..
            } if *recorded == lib => Some((in_core.clone(), in_file.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no build-id problem for {lib}: {:?}", t.problems()));
    assert_ne!(problem.0, problem.1);
    assert_eq!(problem.0.len(), 40, "a GNU build-id is a 20-byte SHA-1");
    // Its symbols would point at the new build's layout: they are not used.
    assert!(t.lookup("lib_text").is_none());
    // The executable is still the right one and still read.
    let p = t.lookup("prog_value").unwrap();
    assert_eq!(t.read_i32(p.addr, "prog_value").unwrap(), 7);
}

#[test]
fn a_moved_executable_is_found_through_the_search_path() {
    let (dir, core) = make_core("gcore-moved");
    std::fs::create_dir_all(dir.join("moved")).unwrap();
    std::fs::rename(dir.join("bin/prog"), dir.join("moved/prog")).unwrap();
    let err = CoreTarget::open(&core, None, None).unwrap_err();
    assert!(err.to_string().contains("bin/prog"), "{err}");
    let t = CoreTarget::open_with(
        &core,
        &CoreTargetOptions {
            exe: None,
            search: FileSearch {
                sysroot: None,
                search_path: vec![dir.join("moved")],
            },
            debug: Default::default(),
            limits: Limits::default(),
        },
    )
    .unwrap();
    assert_eq!(t.executable(), dir.join("moved/prog"));
    let p = t.lookup("prog_value").unwrap();
    assert_eq!(t.read_i32(p.addr, "prog_value").unwrap(), 7);
}

#[test]
fn another_build_given_as_the_executable_is_refused() {
    let (dir, core) = make_core("gcore-wrong-exe");
    std::fs::write(
        dir.join("other.c"),
        "int prog_value = 8;\nint main(void){return 0;}\n",
    )
    .unwrap();
    run(
        Command::new("gcc").current_dir(&dir).args([
            "-g",
            "-Wl,--build-id",
            "-o",
            "other",
            "other.c",
        ]),
        "gcc (other)",
    );
    let err = CoreTarget::open(&core, Some(&dir.join("other")), None).unwrap_err();
    assert!(
        matches!(
            err,
            CoreTargetError::WrongExecutable(ObjectProblem::BuildIdMismatch { .. })
        ),
        "{err}"
    );
}
