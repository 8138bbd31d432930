//! A site's build, as Spack or EasyBuild make one: the same source and
//! configure line as a reference build, compiled without `-g`, so no DWARF
//! anywhere, each object with a build-id of its own that no profile names.
//! Made here from a reference install: a copy of its libraries, each ELF
//! object's debug sections stripped (`objcopy --strip-debug`, which keeps
//! `.symtab`, as those builds do) and its build-id changed (every byte of
//! the `.note.gnu.build-id` descriptor inverted with `objcopy
//! --update-section`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The site build of the reference MPICH (ch3:nemesis), as
/// docs/supported-builds.md names it.
pub const MPICH_SITE: &str = "site build of MPICH 4.0.2, ch3:nemesis (x86_64)";

/// Where its layouts come from: the release family of the shipped
/// MPICH 4.0.2 ch3:nemesis profile.
pub const MPICH_FAMILY: &str =
    "the family MPICH 4.0 up to 4.0.3 (ch3:nemesis, --enable-debuginfo) of the MPICH 4.0.2 ch3:nemesis profile";

/// The site copy of the reference MPICH (CH3), made once for the test
/// binary.
pub fn site_mpich() -> &'static Path {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| site_copy(&super::mpich_job::ref_mpich(), "site-mpich-4.0.2"))
}

/// The copy of the install at `prefix` (its `lib`, `share` and `etc`, the
/// directories that exist) in a fresh directory `name`, stripped and
/// given new build-ids as the module docs say.
pub fn site_copy(prefix: &Path, name: &str) -> PathBuf {
    let site = super::scratch::fresh_dir(name);
    for part in ["lib", "share", "etc"] {
        if prefix.join(part).exists() {
            run(Command::new("cp")
                .arg("-a")
                .arg(prefix.join(part))
                .arg(&site));
        }
    }
    let mut objects = Vec::new();
    elf_files(&site.join("lib"), &mut objects);
    assert!(
        !objects.is_empty(),
        "no ELF object under {}",
        site.display()
    );
    for object in &objects {
        let before = build_id(object);
        run(Command::new("objcopy").arg("--strip-debug").arg(object));
        if let Some(before) = before {
            new_build_id(object);
            let after = build_id(object).expect("the build-id note stays");
            assert_ne!(before, after, "{}", object.display());
        }
        assert!(
            !sections(object).contains(".debug_info"),
            "{} kept its DWARF",
            object.display()
        );
    }
    site
}

/// The build-id of `object`, as binutils' readelf reads it.
pub fn build_id(object: &Path) -> Option<String> {
    let out = Command::new("readelf")
        .arg("-n")
        .arg(object)
        .output()
        .expect("run readelf (binutils)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: ").map(str::to_string))
}

fn sections(object: &Path) -> String {
    let out = Command::new("readelf")
        .arg("-S")
        .arg("-W")
        .arg(object)
        .output()
        .expect("run readelf (binutils)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every regular file under `dir` that starts with ELF's magic (symbolic
/// links are left alone: they lead to one of these).
fn elf_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let path = entry.path();
        if kind.is_dir() {
            elf_files(&path, out);
        } else if kind.is_file() {
            let mut magic = [0u8; 4];
            let is_elf = std::fs::File::open(&path)
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
                .is_ok()
                && magic == *b"\x7fELF";
            if is_elf {
                out.push(path);
            }
        }
    }
}

/// Inverts every byte of `object`'s build-id (the descriptor after the
/// note's 16-byte header and its "GNU\0" name).
fn new_build_id(object: &Path) {
    let note = object.with_extension("build-id-note");
    run(Command::new("objcopy")
        .arg(format!(
            "--dump-section=.note.gnu.build-id={}",
            note.display()
        ))
        .arg(object));
    let mut bytes = std::fs::read(&note).unwrap();
    assert!(
        bytes.len() > 16 && &bytes[12..16] == b"GNU\0",
        "{}",
        object.display()
    );
    for b in &mut bytes[16..] {
        *b = !*b;
    }
    std::fs::write(&note, &bytes).unwrap();
    run(Command::new("objcopy")
        .arg(format!(
            "--update-section=.note.gnu.build-id={}",
            note.display()
        ))
        .arg(object));
    std::fs::remove_file(&note).unwrap();
}

fn run(command: &mut Command) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("run {command:?}: {e} (binutils: apt-get install binutils)"));
    assert!(
        out.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
