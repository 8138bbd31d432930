//! Symbol lookup: where a named global lives in the target, and which loaded
//! object defines it.
//!
//! This folder owns names and the objects that define them: [`elf_symbols`]
//! (`.symtab` and `.dynsym` of every loaded object, with its bias),
//! [`debug_files`] (finding a stripped object's separate debug file),
//! [`loaded_objects`] (the list of loaded objects, from whoever knows it),
//! [`object_files`] (each object file read once for all the targets of a
//! run), [`name_table`] (an object's symbols by name, the names left in
//! its mapping), [`name_index`] (those tables kept on disk between runs,
//! where the caller asks),
//! [`link_map`] (the loader's list of objects), [`symbolize`] (an address
//! to a function and line), [`searched_objects`] (saying which objects
//! were looked in), [`symbol_error`], [`constant_data`] (an object's
//! `.rodata`, for the strings a build states about itself), and [`extra_symbols`] (the narrow
//! interface through which another source, such as a shipped layout
//! profile, adds symbols that an object's own tables lack). This module
//! itself holds [`Symbol`], [`SymbolSource`] and [`SymbolTable`].
//!
//! It stands on `backend` only. It must not depend on `dwarf`, `layouts`,
//! `targets` or the decoders: whatever knows more symbols hands them in
//! through [`extra_symbols::ExtraSymbols`].

pub(crate) mod constant_data;
pub(crate) mod debug_files;
pub(crate) mod elf_symbols;
pub(crate) mod extra_symbols;
pub(crate) mod kept_frames;
pub mod link_map;
pub(crate) mod loaded_objects;
pub(crate) mod name_index;
pub(crate) mod name_table;
pub(crate) mod object_files;
pub(crate) mod searched_objects;
pub(crate) mod symbol_error;
pub(crate) mod symbolize;

use std::collections::BTreeMap;

use mpidd_types::TargetAddr;
use serde::Serialize;

/// A resolved symbol.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Symbol {
    /// Its name.
    pub name: String,
    /// Its run-time address (load bias applied).
    pub addr: TargetAddr,
    /// Its size in bytes as the symbol table gives it (0 when unknown).
    pub size: u64,
    /// The loaded object that defines it (a path).
    pub object: String,
}

/// Something that resolves global symbols of a target.
pub trait SymbolSource {
    /// The symbol with this name, if any loaded object defines it.
    fn lookup(&self, name: &str) -> Option<Symbol>;

    /// The objects that were searched, for error messages.
    fn searched_objects(&self) -> Vec<String>;
}

/// A fixed table of symbols, as a synthetic target or a test provides.
///
/// ```
/// use mpidd_read::{SymbolSource, SymbolTable};
/// use mpidd_types::TargetAddr;
///
/// let mut t = SymbolTable::new();
/// t.insert("/usr/lib/libopen-rte.so.40", "MPIR_proctable", TargetAddr(0x7000), 8);
/// assert_eq!(t.lookup("MPIR_proctable").unwrap().object, "/usr/lib/libopen-rte.so.40");
/// assert!(t.lookup("MPIR_Breakpoint").is_none());
/// ```
#[derive(Clone, Debug, Default)]
pub struct SymbolTable {
    symbols: BTreeMap<String, Symbol>,
    objects: Vec<String>,
}

impl SymbolTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a symbol defined by `object`. The first definition of a name
    /// wins, as in the dynamic linker's search order.
    pub fn insert(&mut self, object: &str, name: &str, addr: TargetAddr, size: u64) {
        if !self.objects.iter().any(|o| o == object) {
            self.objects.push(object.to_string());
        }
        self.symbols.entry(name.to_string()).or_insert(Symbol {
            name: name.to_string(),
            addr,
            size,
            object: object.to_string(),
        });
    }

    /// Records an object that was searched even if it defines nothing.
    pub fn add_object(&mut self, object: &str) {
        if !self.objects.iter().any(|o| o == object) {
            self.objects.push(object.to_string());
        }
    }

    /// Every symbol, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Symbol> {
        self.symbols.values()
    }
}

impl SymbolSource for SymbolTable {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        self.symbols.get(name).cloned()
    }

    fn searched_objects(&self) -> Vec<String> {
        self.objects.clone()
    }
}
