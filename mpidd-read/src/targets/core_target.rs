//! A core file together with the symbols of the objects it had loaded.

use std::path::{Path, PathBuf};

use mpidd_types::{TargetAbi, TargetAddr};

use serde::Serialize;

use crate::backend::core_file::{CoreError, CoreFile, FileSearch, MappedFile};
use crate::backend::memory::TargetMemory;
use crate::error::ReadError;
use crate::limits::Limits;
use crate::symbols::debug_files::{hex, DebugSearch};
use crate::symbols::elf_symbols::{ElfPlacement, ElfSymbols};
use crate::symbols::link_map;
use crate::symbols::object_files::{ObjectFile, ObjectFiles};
use crate::symbols::symbol_error::SymbolError;
use crate::symbols::{Symbol, SymbolSource};

use crate::backend::core_file::AT_SYSINFO_EHDR;

/// Auxiliary-vector key of the program's entry point.
const AT_ENTRY: u64 = 9;
/// Auxiliary-vector key of the address of the program's headers.
const AT_PHDR: u64 = 3;
/// Offsets within a page; objects are mapped at page boundaries.
const PAGE_MASK: u64 = 0xfff;

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
    /// The executable given or found is not the one the core was made from.
    #[error("wrong executable: {0}")]
    WrongExecutable(ObjectProblem),
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

/// How to open a core: which executable, where to find the files it names,
/// and the bounds on what is read while finding them.
#[derive(Clone, Debug, Default)]
pub struct CoreTargetOptions {
    /// The executable, if the caller knows it better than the core does.
    /// Used as given, never moved under the sysroot.
    pub exe: Option<PathBuf>,
    /// Where recorded paths are looked for (sysroot, search path).
    pub search: FileSearch,
    /// Where separate debug files are looked for (default
    /// `/usr/lib/debug`).
    pub debug: DebugSearch,
    /// Bounds on the `link_map` walk.
    pub limits: Limits,
}

/// Something about a loaded object that kept it, or part of it, out of the
/// target. The target still opens; the caller decides how loud to be.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum ObjectProblem {
    /// No file was found in any of the places tried.
    NotFound {
        /// The path the target recorded.
        recorded: String,
        /// The places tried.
        tried: Vec<PathBuf>,
    },
    /// The file found is not the one the target had mapped: the build-id
    /// in the core's copy of its first page differs from the file's.
    BuildIdMismatch {
        /// The path the target recorded.
        recorded: String,
        /// The file found.
        file: PathBuf,
        /// The build-id in the core, hex.
        in_core: String,
        /// The build-id of the file, hex.
        in_file: String,
    },
    /// The file found could not be read as an ELF object.
    Unreadable {
        /// The path the target recorded.
        recorded: String,
        /// Why.
        reason: String,
    },
    /// The dynamic linker's list of objects could not be read, so shared
    /// libraries of a core without NT_FILE are unknown.
    LinkMap {
        /// Why.
        reason: String,
    },
}

impl std::fmt::Display for ObjectProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ObjectProblem::NotFound { recorded, tried } => {
                let tried: Vec<_> = tried.iter().map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "{recorded}: not found (tried {}); give a sysroot or search path",
                    tried.join(", ")
                )
            }
            ObjectProblem::BuildIdMismatch {
                recorded,
                file,
                in_core,
                in_file,
            } => write!(
                f,
                "{recorded}: {} is a different build (build-id {in_file}, the core has \
                 {in_core}); not used",
                file.display()
            ),
            ObjectProblem::Unreadable { recorded, reason } => write!(f, "{recorded}: {reason}"),
            ObjectProblem::LinkMap { reason } => {
                write!(f, "shared libraries unknown: link_map unreadable: {reason}")
            }
        }
    }
}

/// A core file and the symbols of its executable and of every shared
/// library it had loaded, found through NT_FILE or, for cores without it,
/// through the dynamic linker's `link_map` list in the core's memory.
///
/// Files found on disk are checked against the core where the core holds
/// their first page: a different build-id keeps the file out.
///
/// ```no_run
/// use mpidd_read::{mpir, CoreTarget, Limits};
/// use std::path::Path;
///
/// let target = CoreTarget::open(Path::new("mpirun.core"), None, None)?;
/// for problem in target.problems() {
///     eprintln!("warning: {problem}");
/// }
/// let state = mpir::read_state(&target, &Limits::default())?;
/// println!("{} ranks", state.proctable.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct CoreTarget {
    core: CoreFile,
    symbols: ElfSymbols,
    /// The object files it reads through: its own, or its run's.
    files: ObjectFiles,
    types: std::sync::OnceLock<crate::layouts::loaded_layouts::LoadedLayouts>,
    executable: PathBuf,
    problems: Vec<ObjectProblem>,
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
        Self::open_with(
            core,
            &CoreTargetOptions {
                exe: exe.map(Path::to_path_buf),
                search: FileSearch {
                    sysroot: sysroot.map(Path::to_path_buf),
                    search_path: Vec::new(),
                },
                debug: DebugSearch::default(),
                limits: Limits::default(),
            },
        )
    }

    /// Opens `core` as `options` say.
    pub fn open_with(core: &Path, options: &CoreTargetOptions) -> Result<Self, CoreTargetError> {
        Self::open_shared(core, options, &ObjectFiles::default())
    }

    /// Opens `core` as `options` say, one of the targets of a run that
    /// share `files`: each object file (the same file on disk) is found,
    /// mapped, placed and searched for its debug file once for all of
    /// them. What each target gets is what [`open_with`](Self::open_with)
    /// gives it.
    pub fn open_shared(
        core: &Path,
        options: &CoreTargetOptions,
        files: &ObjectFiles,
    ) -> Result<Self, CoreTargetError> {
        let core = CoreFile::open(core)?.with_search_in(options.search.clone(), files.maps());
        let entry = core.auxv_value(AT_ENTRY);
        let recorded_exe = entry.and_then(|e| {
            core.mapped_files()
                .iter()
                .find(|f| f.start.0 <= e && e < f.end.0)
                .or_else(|| core.mapped_files().first())
                .map(|f| f.path.clone())
        });
        let (exe_path, exe_name) = match (&options.exe, &recorded_exe) {
            (Some(p), _) => (p.clone(), p.display().to_string()),
            (None, Some(r)) => (core.resolve_path(r), r.clone()),
            (None, None) => {
                return Err(CoreTargetError::NoExecutable {
                    core: core.path().to_path_buf(),
                })
            }
        };
        let exe_file = files.open(&exe_path)?;
        let placement = exe_file.placement()?;
        core.back_with(&exe_path, &exe_file.map);
        let bias = if placement.relocatable {
            let entry = entry.ok_or_else(|| CoreTargetError::NoEntry {
                core: core.path().to_path_buf(),
                exe: exe_path.clone(),
            })?;
            entry.wrapping_sub(placement.entry)
        } else {
            0
        };
        let mut target = CoreTarget {
            core,
            symbols: ElfSymbols::new()
                .with_debug_search(options.debug.clone())
                .with_object_files(files.clone()),
            files: files.clone(),
            types: std::sync::OnceLock::new(),
            executable: exe_path.clone(),
            problems: Vec::new(),
        };
        // The program headers sit in the executable's first page, so
        // AT_PHDR finds the image the target really ran, whatever the bias
        // a wrong file would imply.
        let first_page = match target.core.auxv_value(AT_PHDR) {
            Some(phdr) => phdr & !PAGE_MASK,
            None => bias.wrapping_add(placement.first_load_vaddr & !PAGE_MASK),
        };
        if let Some(problem) = target.build_id_problem(&exe_name, &exe_path, &placement, first_page)
        {
            return Err(CoreTargetError::WrongExecutable(problem));
        }
        target.symbols.add_opened(&exe_file, &exe_name, bias)?;
        if recorded_exe.is_none() {
            // Without NT_FILE nothing says where the executable's pages came
            // from, nor which libraries were loaded: the executable's own
            // segments and the dynamic linker's list do.
            target.map_segments(&exe_name, &exe_path, &placement, bias);
            target.add_link_map_objects(&placement, bias, &options.limits);
        } else {
            target.add_nt_file_objects(recorded_exe.as_deref().unwrap_or_default());
        }
        let vdso = target.core.auxv_value(AT_SYSINFO_EHDR);
        target.symbols.set_vdso(vdso);
        Ok(target)
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

    /// The C types of its loaded objects, from their DWARF (or their
    /// debug files'), read on first use.
    pub fn types(&self) -> &crate::dwarf::type_oracle::TypeOracle {
        self.loaded_layouts().dwarf()
    }

    /// Its layouts as a [`Target`](crate::Target): the DWARF of
    /// [`types`](Self::types), and for what that lacks, the shipped
    /// profiles made for the builds it has loaded.
    pub fn loaded_layouts(&self) -> &crate::layouts::loaded_layouts::LoadedLayouts {
        self.types
            .get_or_init(|| crate::layouts::loaded_layouts::LoadedLayouts::new(&self.symbols))
    }

    /// What kept loaded objects, or parts of them, out of this target.
    pub fn problems(&self) -> &[ObjectProblem] {
        &self.problems
    }

    /// Libraries NT_FILE lists (each once, by the mapping of its first
    /// page), checked against the core and added for symbols.
    fn add_nt_file_objects(&mut self, exe: &str) {
        let firsts: Vec<MappedFile> = self
            .core
            .mapped_files()
            .iter()
            .filter(|f| f.file_offset == 0 && !f.path.is_empty() && f.path != exe)
            .cloned()
            .collect();
        let mut seen = std::collections::HashSet::new();
        for f in firsts {
            if !seen.insert(f.path.clone()) {
                continue;
            }
            let on_disk = self.core.resolve_path(&f.path);
            // NT_FILE also lists data files (locale archives, shared memory):
            // only ELF objects have symbols.
            let Ok((object, p)) = self.placed(&on_disk) else {
                continue;
            };
            if let Some(problem) = self.build_id_problem(&f.path, &on_disk, &p, f.start.0) {
                self.core.unback(&f.path);
                self.symbols.note_searched(&f.path);
                self.problems.push(problem);
                continue;
            }
            let bias = f.start.0.wrapping_sub(p.first_load_vaddr & !PAGE_MASK);
            if let Err(e) = self.symbols.add_opened(&object, &f.path, bias) {
                self.problems.push(ObjectProblem::Unreadable {
                    recorded: f.path.clone(),
                    reason: e.to_string(),
                });
            }
        }
    }

    /// Libraries the dynamic linker's list names: their symbols, and their
    /// segments as the backing of pages the core omits.
    fn add_link_map_objects(&mut self, exe: &ElfPlacement, bias: u64, limits: &Limits) {
        let Some(dynamic) = exe.dynamic else {
            return; // static executable: no shared libraries
        };
        let list =
            link_map::r_debug_address(&self.core, TargetAddr(bias.wrapping_add(dynamic)), limits)
                .and_then(|r| match r {
                    Some(r) => link_map::read_link_map(&self.core, r, limits),
                    None => Ok(Vec::new()),
                });
        let list = match list {
            Ok(list) => list,
            Err(e) => {
                self.problems.push(ObjectProblem::LinkMap {
                    reason: e.to_string(),
                });
                return;
            }
        };
        for entry in list {
            // The executable has no name; the vDSO's name is not a file.
            if entry.name.is_empty() || !entry.name.contains('/') {
                continue;
            }
            let on_disk = self.core.resolve_path(&entry.name);
            if !on_disk.is_file() {
                self.symbols.note_searched(&entry.name);
                self.problems.push(ObjectProblem::NotFound {
                    recorded: entry.name.clone(),
                    tried: self.core.search().candidates(&entry.name),
                });
                continue;
            }
            let (object, placement) = match self.placed(&on_disk) {
                Ok(p) => p,
                Err(e) => {
                    self.symbols.note_searched(&entry.name);
                    self.problems.push(ObjectProblem::Unreadable {
                        recorded: entry.name.clone(),
                        reason: e.to_string(),
                    });
                    continue;
                }
            };
            let first_page = entry
                .bias
                .wrapping_add(placement.first_load_vaddr & !PAGE_MASK);
            if let Some(problem) =
                self.build_id_problem(&entry.name, &on_disk, &placement, first_page)
            {
                self.symbols.note_searched(&entry.name);
                self.problems.push(problem);
                continue;
            }
            self.map_segments(&entry.name, &on_disk, &placement, entry.bias);
            if let Err(e) = self.symbols.add_opened(&object, &entry.name, entry.bias) {
                self.problems.push(ObjectProblem::Unreadable {
                    recorded: entry.name.clone(),
                    reason: e.to_string(),
                });
            }
        }
    }

    /// The object file at `on_disk`, through the run's files, and where it
    /// wants to be loaded.
    fn placed(
        &self,
        on_disk: &Path,
    ) -> Result<(std::sync::Arc<ObjectFile>, ElfPlacement), SymbolError> {
        let object = self.files.open(on_disk)?;
        let placement = object.placement()?;
        // The file just stamped backs the core's omitted pages too.
        self.core.back_with(on_disk, &object.map);
        Ok((object, placement))
    }

    /// Declares the file-backed parts of an object's segments as mapped
    /// where `bias` puts them.
    fn map_segments(&mut self, name: &str, on_disk: &Path, p: &ElfPlacement, bias: u64) {
        for &(vaddr, offset, size) in &p.loads {
            let start = bias.wrapping_add(vaddr);
            self.core.add_mapping(
                MappedFile {
                    start: TargetAddr(start),
                    end: TargetAddr(start.saturating_add(size)),
                    file_offset: offset,
                    path: name.to_string(),
                },
                on_disk,
            );
        }
    }

    /// Compares the build-id of the file with the one in the core's own copy
    /// of the object's first page, where the core has both.
    fn build_id_problem(
        &self,
        recorded: &str,
        on_disk: &Path,
        p: &ElfPlacement,
        first_page: u64,
    ) -> Option<ObjectProblem> {
        let in_file = p.build_id.as_ref()?;
        let mut page = vec![0u8; PAGE_MASK as usize + 1];
        let n = self.core.read_dumped(TargetAddr(first_page), &mut page);
        let in_core = crate::symbols::debug_files::build_id_in_headers(&page[..n])?;
        (in_core != *in_file).then(|| ObjectProblem::BuildIdMismatch {
            recorded: recorded.to_string(),
            file: on_disk.to_path_buf(),
            in_core: hex(&in_core),
            in_file: hex(in_file),
        })
    }
}

impl TargetMemory for CoreTarget {
    fn abi(&self) -> TargetAbi {
        self.core.abi()
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        self.core.read_into(addr, buf)
    }

    fn borrow_c_string(&self, addr: TargetAddr, max_len: usize) -> Option<&[u8]> {
        self.core.borrow_c_string(addr, max_len)
    }

    fn mapped(&self, addr: TargetAddr, len: usize) -> Option<&[u8]> {
        self.core.mapped(addr, len)
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

impl crate::targets::Target for CoreTarget {
    fn memory(&self) -> &dyn TargetMemory {
        self
    }

    fn symbols(&self) -> &dyn SymbolSource {
        self
    }

    fn layouts(&self) -> &dyn crate::layouts::Layouts {
        self.loaded_layouts()
    }
}
