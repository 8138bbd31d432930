//! A rank's loaded objects as the caller lists them (each one's name, the
//! file to read it from, its load bias), with their symbols and types,
//! kept while the list stays the same.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mpidd_read::{ElfSymbols, Limits, LoadedLayouts, TargetMemory};
use object::{Object, ObjectSection};

/// One loaded object as the caller gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedObject {
    /// The path the process used.
    pub name: String,
    /// The file to read it from (the same, or through the process's root).
    pub path: PathBuf,
    /// Run-time minus link-time address.
    pub bias: u64,
}

/// The objects of one list, their symbols (with the hidden globals a
/// shipped profile knows for a stripped build) and their types (DWARF,
/// else the shipped profile of the build).
pub struct ProcessObjects {
    /// The list they were made from.
    pub listed: Vec<ListedObject>,
    /// Their symbols.
    pub symbols: ElfSymbols,
    /// Their types.
    pub layouts: LoadedLayouts,
    /// The objects whose files could not be read, and why.
    pub unreadable: Vec<String>,
    /// Whether the MPI library has DWARF (in itself or its debug file),
    /// once it is identified; its DWARF is then searched first.
    mpi_library_dwarf: OnceLock<bool>,
}

impl ProcessObjects {
    /// Reads the symbols of every object listed; one that cannot be read
    /// is passed over and named in [`unreadable`](Self::unreadable), as a
    /// core's unreadable files are.
    pub fn new(listed: Vec<ListedObject>) -> ProcessObjects {
        let mut symbols = ElfSymbols::new();
        let mut unreadable = Vec::new();
        for o in &listed {
            if let Err(e) = symbols.add_object(&o.path, &o.name, o.bias) {
                symbols.note_searched(&o.name);
                unreadable.push(format!("{}: {e}", o.name));
            }
        }
        let layouts = LoadedLayouts::new(&symbols);
        ProcessObjects {
            listed,
            symbols,
            layouts,
            unreadable,
            mpi_library_dwarf: OnceLock::new(),
        }
    }

    /// Identifies the MPI library that `memory` holds (as
    /// `mpiq_core::identify` names it) and has its types asked of its own
    /// DWARF before any other object's, as mpidd's own reading does: the
    /// library's definition is the one its memory was laid out by, and a
    /// search that starts there never inflates or scans the DWARF of the
    /// objects listed before it (libc's debug file, when installed: 116 M
    /// instructions of zlib alone at a first stop). Returns whether the
    /// library has DWARF; `None` while no MPI is identified (asked again
    /// at the next call). Once per list.
    pub fn mpi_library_dwarf(&self, memory: &dyn TargetMemory) -> Option<bool> {
        if let Some(&dwarf) = self.mpi_library_dwarf.get() {
            return Some(dwarf);
        }
        let found = mpiq_core::identify(memory, &self.symbols, &Limits::default()).ok()?;
        let oracle = self.layouts.dwarf();
        oracle.search_first(&found.library);
        let dwarf = oracle.has_dwarf(&found.library);
        Some(*self.mpi_library_dwarf.get_or_init(|| dwarf))
    }
}

/// Why a section's bias could not be found.
#[derive(Debug, thiserror::Error)]
pub enum BiasError {
    /// The file could not be read.
    #[error("cannot read {path}: {cause}")]
    Read {
        /// The file.
        path: String,
        /// The system's reason.
        cause: std::io::Error,
    },
    /// The file is not an object file.
    #[error("{path} is not an ELF file: {reason}")]
    Parse {
        /// The file.
        path: String,
        /// The parser's reason.
        reason: String,
    },
    /// The file has no such section.
    #[error("{path} has no section {section}")]
    NoSection {
        /// The file.
        path: String,
        /// The section asked for.
        section: String,
    },
}

/// The load bias of the object file at `path` whose section `section` the
/// process has at `address`: what a debugger that lists sections (gdb's
/// `info files`) but not biases hands the crates.
pub fn section_bias(path: &Path, section: &str, address: u64) -> Result<u64, BiasError> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|cause| BiasError::Read {
        path: shown.clone(),
        cause,
    })?;
    // Only the headers are read, not the whole file.
    let cache = object::ReadCache::new(file);
    let elf = object::File::parse(&cache).map_err(|e| BiasError::Parse {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let linked = elf
        .section_by_name(section)
        .map(|s| s.address())
        .ok_or_else(|| BiasError::NoSection {
            path: shown,
            section: section.to_string(),
        })?;
    Ok(address.wrapping_sub(linked))
}
