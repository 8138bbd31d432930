//! Opening a core file, a live process or a gdbserver target by one
//! name, reading it, and letting a live one go: [`TargetSource::read`].
//!
//! A caller that reads any of the three (`mpidd queues`, `mpidd handle`)
//! writes its reading once, generic over [`OpenedTarget`], and never
//! handles the stop and the release itself, so no path can leave a
//! process stopped.

use std::path::PathBuf;

#[cfg(all(feature = "live", target_os = "linux"))]
use crate::backend::attach_guard::{AttachError, AttachGuard};
use crate::backend::gdb_remote::{GdbRemoteError, GdbRemoteOptions};
#[cfg(all(feature = "live", target_os = "linux"))]
use crate::backend::live_process::LiveError;
use crate::backend::memory::TargetMemory;
use crate::symbols::elf_symbols::ElfSymbols;
use crate::symbols::SymbolSource;
use crate::targets::core_target::{CoreTarget, CoreTargetError, CoreTargetOptions};
use crate::targets::gdb_remote_target::GdbRemoteTarget;
#[cfg(all(feature = "live", target_os = "linux"))]
use crate::targets::live_target::LiveTarget;

/// Where to read from.
#[derive(Clone, Debug)]
pub enum TargetSource {
    /// A core file, and how to find the files it names.
    Core {
        /// The core file.
        core: PathBuf,
        /// How to open it.
        options: CoreTargetOptions,
    },
    /// A live process on this machine.
    #[cfg(all(feature = "live", target_os = "linux"))]
    Pid(i32),
    /// A process behind gdbserver (`gdbserver --attach HOST:PORT PID`), at
    /// `HOST:PORT`; its files are read from this machine's disk.
    Gdbserver(String),
}

/// An open target of any of the three kinds, as a [`TargetReader`] takes
/// it.
pub trait OpenedTarget: TargetMemory + SymbolSource {
    /// Its loaded ELF objects, for the DWARF and the build-ids.
    fn elf_symbols(&self) -> &ElfSymbols;
    /// The main executable's path.
    fn image(&self) -> PathBuf;
    /// The files that were missing or of another build, one line each:
    /// they leave parts of the target unreadable.
    fn problems(&self) -> Vec<String>;
}

impl OpenedTarget for CoreTarget {
    fn elf_symbols(&self) -> &ElfSymbols {
        self.symbols()
    }
    fn image(&self) -> PathBuf {
        self.executable().to_path_buf()
    }
    fn problems(&self) -> Vec<String> {
        CoreTarget::problems(self)
            .iter()
            .map(|p| p.to_string())
            .collect()
    }
}

#[cfg(all(feature = "live", target_os = "linux"))]
impl OpenedTarget for LiveTarget {
    fn elf_symbols(&self) -> &ElfSymbols {
        self.symbols()
    }
    fn image(&self) -> PathBuf {
        let exe = format!("/proc/{}/exe", self.process().pid());
        std::fs::read_link(&exe).unwrap_or_else(|_| PathBuf::from(exe))
    }
    fn problems(&self) -> Vec<String> {
        // A live process's files are the ones it mapped.
        Vec::new()
    }
}

impl OpenedTarget for GdbRemoteTarget {
    fn elf_symbols(&self) -> &ElfSymbols {
        self.symbols()
    }
    fn image(&self) -> PathBuf {
        self.executable().to_path_buf()
    }
    fn problems(&self) -> Vec<String> {
        GdbRemoteTarget::problems(self)
            .iter()
            .map(|p| p.to_string())
            .collect()
    }
}

/// What a caller does with its target once open; generic over the kind of
/// target, so one reading serves all three.
pub trait TargetReader {
    /// What the reading gives.
    type Output;
    /// How it fails.
    type Error;
    /// Reads the open target.
    fn read<T: OpenedTarget>(self, target: &T) -> Result<Self::Output, Self::Error>;
}

/// Why a target could not be opened, stopped or let go.
#[derive(Debug, thiserror::Error)]
pub enum OpenTargetError {
    /// The core file or its executable could not be opened.
    #[error(transparent)]
    Core(#[from] CoreTargetError),
    /// The live process could not be opened.
    #[cfg(all(feature = "live", target_os = "linux"))]
    #[error(transparent)]
    Live(#[from] LiveError),
    /// The live process could not be stopped for a consistent read, or
    /// not let go after it.
    #[cfg(all(feature = "live", target_os = "linux"))]
    #[error(transparent)]
    Attach(#[from] AttachError),
    /// The gdbserver could not be reached or read, or the process not let
    /// go.
    #[error(transparent)]
    Remote(#[from] GdbRemoteError),
}

/// Why [`TargetSource::read`] failed: the target, or the reading.
#[derive(Debug, thiserror::Error)]
pub enum ReadTargetError<E> {
    /// Opening, stopping or letting go of the target failed.
    #[error(transparent)]
    Open(#[from] OpenTargetError),
    /// The reader failed.
    #[error(transparent)]
    Read(E),
}

impl TargetSource {
    /// Opens the target and reads it with `reader`.
    ///
    /// A live process is stopped first (every thread, through ptrace)
    /// unless `stop` is false, so that it cannot change what is read, and
    /// it is let go on every path, the reader's failure included; a
    /// process that was already stopped stays stopped. A gdbserver target
    /// is detached, and runs on, on every path. When both the reading and
    /// the release fail, the release's error is returned: a process that
    /// may still be stopped matters more.
    pub fn read<R: TargetReader>(
        self,
        #[cfg_attr(
            not(all(feature = "live", target_os = "linux")),
            allow(unused_variables)
        )]
        stop: bool,
        reader: R,
    ) -> Result<R::Output, ReadTargetError<R::Error>> {
        match self {
            TargetSource::Core { core, options } => {
                let t = CoreTarget::open_with(&core, &options).map_err(OpenTargetError::from)?;
                reader.read(&t).map_err(ReadTargetError::Read)
            }
            #[cfg(all(feature = "live", target_os = "linux"))]
            TargetSource::Pid(pid) => {
                let guard = if stop {
                    Some(AttachGuard::attach(pid).map_err(OpenTargetError::from)?)
                } else {
                    None
                };
                let read = match LiveTarget::open(pid) {
                    Ok(t) => reader.read(&t).map_err(ReadTargetError::Read),
                    Err(e) => Err(OpenTargetError::from(e).into()),
                };
                if let Some(guard) = guard {
                    guard.detach().map_err(OpenTargetError::from)?;
                }
                read
            }
            // gdbserver --attach has stopped the process already.
            TargetSource::Gdbserver(addr) => {
                let t = GdbRemoteTarget::connect(&addr, &GdbRemoteOptions::default())
                    .map_err(OpenTargetError::from)?;
                let read = reader.read(&t).map_err(ReadTargetError::Read);
                t.detach().map_err(OpenTargetError::from)?;
                read
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the symbols it was asked for, or fails when told to.
    struct Probe {
        fail: bool,
    }

    impl TargetReader for Probe {
        type Output = usize;
        type Error = &'static str;
        fn read<T: OpenedTarget>(self, t: &T) -> Result<usize, &'static str> {
            if self.fail {
                return Err("the reader failed");
            }
            Ok(t.elf_symbols().objects().count())
        }
    }

    #[test]
    fn a_missing_core_is_an_open_error_and_the_reader_never_runs() {
        let source = TargetSource::Core {
            core: PathBuf::from("/nonexistent/mpidd-test.core"),
            options: CoreTargetOptions::default(),
        };
        match source.read(true, Probe { fail: false }) {
            Err(ReadTargetError::Open(OpenTargetError::Core(e))) => {
                assert!(e.to_string().contains("mpidd-test.core"), "{e}")
            }
            other => panic!("expected the core's error, got {other:?}"),
        }
    }

    /// Whether `pid` is stopped (by a signal or a tracer).
    #[cfg(all(feature = "live", target_os = "linux"))]
    fn stopped(pid: i32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        // The state follows the command's closing parenthesis.
        let state = stat[stat.rfind(')').unwrap() + 2..].chars().next();
        matches!(state, Some('T' | 't'))
    }

    #[cfg(all(feature = "live", target_os = "linux"))]
    #[test]
    fn a_live_process_is_let_go_whether_the_reader_succeeds_or_fails() {
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let ok = TargetSource::Pid(pid).read(true, Probe { fail: false });
        let not_stopped_after_ok = !stopped(pid);
        let failed = TargetSource::Pid(pid).read(true, Probe { fail: true });
        let not_stopped_after_failure = !stopped(pid);
        child.kill().unwrap();
        child.wait().unwrap();
        match ok {
            Ok(objects) => assert!(objects > 0),
            // The suite runs where ptrace is allowed; a machine that
            // forbids it must say so, not pass a test that stopped nothing.
            Err(e) => panic!(
                "{e} (this test needs ptrace: run it as root, or with kernel.yama.ptrace_scope=0)"
            ),
        }
        assert!(not_stopped_after_ok);
        assert!(matches!(
            failed,
            Err(ReadTargetError::Read("the reader failed"))
        ));
        assert!(not_stopped_after_failure);
    }
}
