//! A core file together with the symbols of the objects it had loaded.

use std::path::{Path, PathBuf};

use mpidd_types::{TargetAbi, TargetAddr};

use crate::core_file::{CoreError, CoreFile, MappedFile};
use crate::elf_symbols::{elf_placement, ElfSymbols, SymbolError};
use crate::error::ReadError;
use crate::memory::TargetMemory;
use crate::symbols::{Symbol, SymbolSource};

/// Auxiliary-vector key of the program's entry point.
const AT_ENTRY: u64 = 9;

/// Why a core target could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CoreTargetError {
    /// The core itself.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// The executable's symbols.
    #[error(transparent)]
    Symbols(#[from] SymbolError),
    /// Nothing says which executable the core came from.
    #[error(
        "{core} has no NT_FILE note naming its executable (qemu-user cores have none): \
         give the executable explicitly"
    )]
    NoExecutable {
        /// The core's path.
        core: PathBuf,
    },
    /// The executable is position-independent but the core has no AT_ENTRY.
    #[error(
        "{core} has no AT_ENTRY in its auxiliary vector, so the load address of {exe} is unknown"
    )]
    NoEntry {
        /// The core's path.
        core: PathBuf,
        /// The executable.
        exe: PathBuf,
    },
}

/// A core file and the symbols of its executable and of every mapped file
/// NT_FILE names that can be read.
///
/// ```no_run
/// use mpidd_read::{mpir, CoreTarget, Limits};
/// use std::path::Path;
///
/// let target = CoreTarget::open(Path::new("mpirun.core"), None, None)?;
/// let state = mpir::read_state(&target, &target, &Limits::default())?;
/// println!("{} ranks", state.proctable.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct CoreTarget {
    core: CoreFile,
    symbols: ElfSymbols,
    executable: PathBuf,
}

impl CoreTarget {
    /// Opens `core`. The executable is `exe` if given, else the file NT_FILE
    /// maps at the entry point. Files are looked up under `sysroot` if
    /// given.
    pub fn open(
        core: &Path,
        exe: Option<&Path>,
        sysroot: Option<&Path>,
    ) -> Result<Self, CoreTargetError> {
        let mut core = CoreFile::open(core)?;
        // An executable named by the caller is used as given; only paths
        // recorded in the core move under the sysroot.
        if let Some(root) = sysroot {
            core = core.with_sysroot(root);
        }
        let entry = core.auxv_value(AT_ENTRY);
        let recorded_exe = entry.and_then(|e| {
            core.mapped_files()
                .iter()
                .find(|f| f.start.0 <= e && e < f.end.0)
                .or_else(|| core.mapped_files().first())
                .map(|f| f.path.clone())
        });
        let (exe_path, exe_name) = match (exe, &recorded_exe) {
            (Some(p), _) => (p.to_path_buf(), p.display().to_string()),
            (None, Some(r)) => (core.resolve_path(r), r.clone()),
            (None, None) => {
                return Err(CoreTargetError::NoExecutable {
                    core: core.path().to_path_buf(),
                })
            }
        };
        let placement = elf_placement(&exe_path)?;
        let bias = if placement.relocatable {
            let entry = entry.ok_or_else(|| CoreTargetError::NoEntry {
                core: core.path().to_path_buf(),
                exe: exe_path.clone(),
            })?;
            entry.wrapping_sub(placement.entry)
        } else {
            0
        };
        let mut symbols = ElfSymbols::new();
        symbols.add_object(&exe_path, &exe_name, bias)?;
        if recorded_exe.is_none() {
            // Without NT_FILE nothing says where the executable's pages came
            // from; its own segments do.
            for &(vaddr, offset, size) in &placement.loads {
                let start = bias.wrapping_add(vaddr);
                core.add_mapping(
                    MappedFile {
                        start: TargetAddr(start),
                        end: TargetAddr(start.saturating_add(size)),
                        file_offset: offset,
                        path: exe_name.clone(),
                    },
                    &exe_path,
                );
            }
        }

        let skip = recorded_exe.clone().unwrap_or_default();
        symbols.add_mapped_objects(core.mapped_files(), &skip, |p| core.resolve_path(p));
        Ok(CoreTarget {
            core,
            symbols,
            executable: exe_path,
        })
    }

    /// The core file.
    pub fn core(&self) -> &CoreFile {
        &self.core
    }

    /// The executable whose symbols were loaded first.
    pub fn executable(&self) -> &Path {
        &self.executable
    }

    /// The symbols, with each loaded object's path, bias and debug file
    /// ([`ElfSymbols::objects`]).
    pub fn symbols(&self) -> &ElfSymbols {
        &self.symbols
    }
}

impl TargetMemory for CoreTarget {
    fn abi(&self) -> TargetAbi {
        self.core.abi()
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        self.core.read_into(addr, buf)
    }
}

impl SymbolSource for CoreTarget {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        self.symbols.lookup(name)
    }

    fn searched_objects(&self) -> Vec<String> {
        self.symbols.searched_objects()
    }
}
