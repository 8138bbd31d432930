//! Symbols from the ELF files of a target's loaded objects.
//!
//! Both `.symtab` and `.dynsym` are read: MPICH keeps some of the globals a
//! debugger needs as local symbols that only `.symtab` has. Each object's
//! load bias is added, so addresses are run-time addresses.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mpidd_types::TargetAddr;
use object::{Object, ObjectKind, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};

use crate::core_file::{map_file, MappedFile};
use crate::symbols::{Symbol, SymbolSource};

/// Why an object's symbols could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SymbolError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not an object file `object` can parse.
    #[error("{path} is not a readable ELF object: {reason}")]
    Parse {
        /// The path.
        path: String,
        /// What the parser said.
        reason: String,
    },
}

/// What the loader needs to know about an ELF file to place it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfPlacement {
    /// `e_entry`.
    pub entry: u64,
    /// Whether it is position-independent (`ET_DYN`), so it has a bias.
    pub relocatable: bool,
    /// The lowest `p_vaddr` of its PT_LOAD segments.
    pub first_load_vaddr: u64,
    /// Its PT_LOAD segments' file-backed parts: (link-time address, file
    /// offset, size in the file).
    pub loads: Vec<(u64, u64, u64)>,
    /// The link-time address of its dynamic section (`PT_DYNAMIC`), if it
    /// has one.
    pub dynamic: Option<u64>,
    /// Its GNU build-id, if it has one.
    pub build_id: Option<Vec<u8>>,
}

struct LoadedObject {
    path: String,
    symbols: HashMap<String, (u64, u64)>,
}

/// Symbols of several loaded objects, searched in the order they were
/// added (the executable first, then libraries in load order).
#[derive(Default)]
pub struct ElfSymbols {
    objects: Vec<LoadedObject>,
    searched: Vec<String>,
}

impl std::fmt::Debug for ElfSymbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElfSymbols")
            .field("searched", &self.searched)
            .finish_non_exhaustive()
    }
}

/// Reads where an ELF file wants to be loaded.
pub fn elf_placement(path: &Path) -> Result<ElfPlacement, SymbolError> {
    let shown = path.display().to_string();
    let data = map_file(path).map_err(|source| SymbolError::Io {
        path: shown.clone(),
        source,
    })?;
    let file = object::File::parse(&*data).map_err(|e| SymbolError::Parse {
        path: shown,
        reason: e.to_string(),
    })?;
    Ok(ElfPlacement {
        entry: file.entry(),
        relocatable: file.kind() == ObjectKind::Dynamic,
        first_load_vaddr: file.segments().map(|s| s.address()).min().unwrap_or(0),
        loads: file
            .segments()
            .map(|s| {
                let (offset, size) = s.file_range();
                (s.address(), offset, size)
            })
            .collect(),
        dynamic: file.section_by_name(".dynamic").map(|s| s.address()),
        build_id: file.build_id().ok().flatten().map(<[u8]>::to_vec),
    })
}

impl ElfSymbols {
    /// No objects yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the symbols of the ELF file at `path`, shown as `name` in
    /// results, loaded at `bias` (run-time minus link-time address).
    pub fn add_object(&mut self, path: &Path, name: &str, bias: u64) -> Result<(), SymbolError> {
        self.searched.push(name.to_string());
        let data = map_file(path).map_err(|source| SymbolError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let file = object::File::parse(&*data).map_err(|e| SymbolError::Parse {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        let mut symbols = HashMap::new();
        for sym in file.symbols().chain(file.dynamic_symbols()) {
            if sym.is_undefined()
                || !matches!(
                    sym.kind(),
                    SymbolKind::Data | SymbolKind::Text | SymbolKind::Unknown | SymbolKind::Tls
                )
            {
                continue;
            }
            let Ok(sym_name) = sym.name() else { continue };
            if sym_name.is_empty() {
                continue;
            }
            // A global definition beats a local one of the same name.
            let entry = symbols.entry(sym_name.to_string());
            let value = (sym.address().wrapping_add(bias), sym.size());
            if sym.is_global() {
                entry.insert_entry(value);
            } else {
                entry.or_insert(value);
            }
        }
        self.objects.push(LoadedObject {
            path: name.to_string(),
            symbols,
        });
        Ok(())
    }

    /// Adds every ELF file among `mappings` (as NT_FILE or
    /// `/proc/PID/maps` list them) except `skip`. A file's bias is where its
    /// first page (file offset 0) was mapped, less its first segment's page.
    /// Files that are not ELF (devices, data, deleted files) are passed over.
    pub fn add_mapped_objects(
        &mut self,
        mappings: &[MappedFile],
        skip: &str,
        on_disk: impl Fn(&str) -> PathBuf,
    ) {
        let mut seen = vec![skip.to_string()];
        for f in mappings {
            if f.file_offset != 0 || f.path.is_empty() || seen.contains(&f.path) {
                continue;
            }
            seen.push(f.path.clone());
            let path = on_disk(&f.path);
            let Ok(p) = elf_placement(&path) else {
                continue;
            };
            let bias = f.start.0.wrapping_sub(p.first_load_vaddr & !0xfff);
            if self.add_object(&path, &f.path, bias).is_err() {
                self.note_searched(&f.path);
            }
        }
    }

    /// Records an object that was considered but could not be read, so
    /// error messages list it.
    pub fn note_searched(&mut self, name: &str) {
        self.searched.push(name.to_string());
    }
}

impl SymbolSource for ElfSymbols {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        self.objects.iter().find_map(|o| {
            o.symbols.get(name).map(|&(addr, size)| Symbol {
                name: name.to_string(),
                addr: TargetAddr(addr),
                size,
                object: o.path.clone(),
            })
        })
    }

    fn searched_objects(&self) -> Vec<String> {
        self.searched.clone()
    }
}
