//! The Debian roots scripts/python-envs.sh makes (debian11, debian13) and
//! commands run inside one through scripts/lib/in-debian-root.sh, which
//! keeps their pids: the host's mpidd and gdb reach the processes by the
//! pids they print.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The root `$VAR` (default `~/.cache/mpidd/NAME`, as python-envs.sh
/// makes it), which must hold each of `needs` (paths inside it).
pub fn root(var: &str, name: &str, needs: &[&str]) -> PathBuf {
    let root = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("HOME"))
            .join(".cache/mpidd")
            .join(name)
    });
    for need in needs {
        assert!(
            root.join(need).exists(),
            "no {need} in the {name} root at {}: run `bash scripts/python-envs.sh {name}` \
             (scripts/test.sh does)",
            root.display()
        );
    }
    root
}

/// scripts/lib/in-debian-root.sh of this checkout for `root`, with each of
/// `binds` seen at the same path inside; the command to run follows.
pub fn in_root(root: &Path, binds: &[&Path]) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/lib/in-debian-root.sh");
    let mut c = Command::new(script);
    c.arg(root);
    for dir in binds {
        c.arg("--bind").arg(dir);
    }
    c
}

/// `root`'s own file at `path` (a path inside it), as the host sees it,
/// every link followed inside the root: what a rank that maps it shows in
/// its /proc/PID/maps read from the host.
pub fn host_path(root: &Path, path: &str) -> PathBuf {
    let out = in_root(root, &[])
        .args(["readlink", "-e", path])
        .output()
        .expect("run in-debian-root.sh");
    assert!(
        out.status.success(),
        "{path} is missing in {}: {}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let inside = String::from_utf8_lossy(&out.stdout).trim().to_string();
    std::fs::canonicalize(root)
        .unwrap()
        .join(inside.trim_start_matches('/'))
}

/// Fails unless every pid of `ranks` maps `lib` (a host path).
pub fn assert_ranks_map(ranks: &[(i64, i32)], lib: &Path) {
    for &(rank, pid) in ranks {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
        assert!(
            maps.contains(lib.to_str().unwrap()),
            "rank {rank} (pid {pid}) does not map {}",
            lib.display()
        );
    }
}

/// tests/mpich/PROGRAM.c (with tests/mpich/hang_common.h beside it) built
/// in `root` by its `mpicc.mpich` (`-g -O0`) into `dir`, which the root
/// sees at the same path: the executable.
pub fn build_mpich_in_root(root: &Path, dir: &Path, program: &str) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/mpich/{program}.c"));
    let copy = dir.join(format!("{program}.c"));
    std::fs::copy(&source, &copy).unwrap();
    std::fs::copy(
        source.with_file_name("hang_common.h"),
        dir.join("hang_common.h"),
    )
    .unwrap();
    let exe = dir.join(program);
    let out = in_root(root, &[dir])
        .args(["mpicc.mpich", "-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&copy)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc.mpich in {} failed: {}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}
