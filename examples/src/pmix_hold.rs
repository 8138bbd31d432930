//! How `mpidd launch` holds an Open MPI 5 job's ranks, as MPIR's gate
//! holds an Open MPI 4 job's: PRRTE's launcher is given `--stop-in-init`,
//! so that each rank's PMIx client waits in `PMIx_Init` until a tool sends
//! `PMIX_DEBUGGER_RELEASE` (`--gate`, or `mpidd attach --gate PID` later).
//!
//! The option is added only to a launcher known to be PRRTE's (its
//! `prterun` or `prte`, or a `mpirun`/`mpiexec`/`oshrun` installed beside
//! one, as Open MPI 5 installs its wrapper): another launcher would take
//! it for an error or, worse, for the program to run.

use std::path::{Path, PathBuf};

/// PRRTE's option that holds the ranks in `PMIx_Init`.
pub const STOP_IN_INIT: &str = "--stop-in-init";

/// Whether the ranks of a PMIx job are held in `PMIx_Init`, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// mpidd added `--stop-in-init` to PRRTE's launcher.
    Added,
    /// The command asked for it itself.
    Given,
    /// Not asked for: the ranks run from the start.
    None,
}

impl Hold {
    /// Whether the ranks wait for a release.
    pub fn holds(self) -> bool {
        self != Hold::None
    }
}

/// `argv` as mpidd starts it, with `--stop-in-init` after the program
/// when that is PRRTE's launcher and the command does not already ask for
/// the stop (in either of PRRTE's spellings: the option, or
/// `stop-in-init` among `--runtime-options`).
pub fn with_hold(argv: &[String]) -> (Vec<String>, Hold) {
    let runtime_options = |a: &str| a == "--runtime-options" || a == "--rtos";
    let asks = argv.iter().skip(1).any(|a| a == STOP_IN_INIT)
        || argv
            .windows(2)
            .any(|w| runtime_options(&w[0]) && w[1].split(',').any(|o| o == "stop-in-init"));
    match argv.first() {
        _ if asks => (argv.to_vec(), Hold::Given),
        Some(program) if is_prrte_launcher(program) => {
            let mut held = Vec::with_capacity(argv.len() + 1);
            held.push(program.clone());
            held.push(STOP_IN_INIT.to_string());
            held.extend(argv[1..].iter().cloned());
            (held, Hold::Added)
        }
        _ => (argv.to_vec(), Hold::None),
    }
}

/// Whether `program` (as given on the command line) is PRRTE's launcher
/// or Open MPI 5's wrapper of it.
pub fn is_prrte_launcher(program: &str) -> bool {
    let Some(found) = resolve(program) else {
        return false;
    };
    let real = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
    let is_prrte = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n == "prterun" || n == "prte")
    };
    if is_prrte(&found) || is_prrte(&real) {
        return true;
    }
    // By the file the links lead to: Debian's `mpirun` may lead to Open
    // MPI 4's `orterun` or to MPICH's `mpiexec.hydra`, in a directory that
    // may also hold a `prterun`.
    let wrapper = real
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| OPEN_MPI_5_WRAPPERS.contains(&n));
    wrapper
        && real
            .parent()
            .is_some_and(|dir| dir.join("prterun").is_file())
}

/// The names Open MPI 5 installs its wrapper of `prterun` under (Debian
/// adds `.openmpi` for its alternatives).
const OPEN_MPI_5_WRAPPERS: &[&str] = &[
    "mpirun",
    "mpiexec",
    "oshrun",
    "mpirun.openmpi",
    "mpiexec.openmpi",
    "oshrun.openmpi",
];

/// The file `program` names: itself when it holds a slash, else the first
/// match on `PATH`, as the shell would find it.
fn resolve(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// A directory with empty files of these names.
    fn install(names: &[&str]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "mpidd-hold-{}-{}",
            std::process::id(),
            names.join("-")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for n in names {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        dir
    }

    #[test]
    fn open_mpi_5s_wrapper_and_prterun_are_held() {
        let dir = install(&["mpirun", "prterun"]);
        let mpirun = dir.join("mpirun").display().to_string();
        let (held, hold) = with_hold(&argv(&[&mpirun, "-n", "4", "./a.out"]));
        assert_eq!(hold, Hold::Added);
        assert_eq!(held[1..], argv(&["--stop-in-init", "-n", "4", "./a.out"]));
        let prterun = dir.join("prterun").display().to_string();
        assert_eq!(with_hold(&argv(&[&prterun, "./a.out"])).1, Hold::Added);
    }

    #[test]
    fn another_launcher_is_left_as_it_is() {
        let dir = install(&["mpirun"]);
        let mpirun = dir.join("mpirun").display().to_string();
        let command = argv(&[&mpirun, "-n", "2", "./a.out"]);
        assert_eq!(with_hold(&command), (command.clone(), Hold::None));
        let missing = argv(&["/nonexistent/mpirun", "./a.out"]);
        assert_eq!(with_hold(&missing).1, Hold::None);
    }

    #[test]
    fn a_link_beside_prterun_to_another_launcher_is_left_as_it_is() {
        // Debian 13's /usr/bin holds prterun, mpiexec.hydra and
        // mpirun.mpich -> mpiexec.hydra; Debian 12's mpirun leads to
        // orterun.
        let dir = install(&["prterun", "mpiexec.hydra", "orterun", "mpirun.openmpi"]);
        std::os::unix::fs::symlink("mpiexec.hydra", dir.join("mpirun.mpich")).unwrap();
        std::os::unix::fs::symlink("orterun", dir.join("mpirun")).unwrap();
        for name in ["mpirun.mpich", "mpiexec.hydra", "mpirun", "orterun"] {
            let program = dir.join(name).display().to_string();
            assert_eq!(
                with_hold(&argv(&[&program, "./a.out"])).1,
                Hold::None,
                "{name}"
            );
        }
        let openmpi = dir.join("mpirun.openmpi").display().to_string();
        assert_eq!(with_hold(&argv(&[&openmpi, "./a.out"])).1, Hold::Added);
    }

    #[test]
    fn a_command_that_asks_for_the_stop_is_not_given_it_twice() {
        let dir = install(&["mpiexec", "prterun"]);
        let mpiexec = dir.join("mpiexec").display().to_string();
        let command = argv(&[&mpiexec, "--stop-in-init", "./a.out"]);
        assert_eq!(with_hold(&command), (command.clone(), Hold::Given));
        let rtos = argv(&[&mpiexec, "--runtime-options", "stop-in-init", "./a.out"]);
        assert_eq!(with_hold(&rtos).1, Hold::Given);
    }
}
