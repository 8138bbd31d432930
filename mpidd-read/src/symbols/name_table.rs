//! An object file's defined symbols by name, with each name left where the
//! file's string table holds it: the table keeps the file's mapping and
//! the name's place in it, not a copy. A debug build's `libmpi` has some
//! 20,000 symbols and libc's debug file 10,000 more; a copy of each name
//! (an allocation, a UTF-8 check and a rehash as the map grew) was most of
//! what opening a core cost once the layouts came from the cache.

use std::hash::BuildHasher;
use std::ops::Range;
use std::sync::Arc;

use hashbrown::HashTable;
use memmap2::Mmap;

use crate::symbols::name_index::{self, name_hasher, StoredNames, MIN_INDEXED_SYMBOLS};

/// One symbol: where its name is in the file, its link-time address and
/// size.
#[derive(Clone, Copy)]
struct Entry {
    name: (usize, usize),
    value: (u64, u64),
}

/// The defined symbols of one file, by name.
pub(crate) struct NameTable {
    file: Arc<Mmap>,
    names: Names,
    hasher: foldhash::fast::FixedState,
}

/// Where the names are looked up.
enum Names {
    /// A table built from the file's symbols in this run.
    Built(HashTable<Entry>),
    /// A table an earlier run built and kept ([`name_index`](super::name_index)).
    Stored(StoredNames),
}

impl NameTable {
    /// An empty table over `file`, with room for `capacity` symbols.
    pub(crate) fn new(file: Arc<Mmap>, capacity: usize) -> Self {
        NameTable {
            file,
            names: Names::Built(HashTable::with_capacity(capacity)),
            hasher: name_hasher(),
        }
    }

    /// The table an earlier run kept for `key` over `file`, if there is
    /// one made for exactly that key.
    pub(crate) fn stored(file: Arc<Mmap>, key: &[u8]) -> Option<Self> {
        let stored = StoredNames::load(key, file.len())?;
        Some(NameTable {
            file,
            names: Names::Stored(stored),
            hasher: name_hasher(),
        })
    }

    /// Keeps this table for `key`, for later runs, when it is large enough
    /// to be worth it and indexes are kept at all.
    pub(crate) fn keep(&self, key: &[u8]) {
        let Names::Built(entries) = &self.names else {
            return;
        };
        if entries.len() < MIN_INDEXED_SYMBOLS {
            return;
        }
        let file = &self.file;
        name_index::store(
            key,
            entries.len(),
            entries
                .iter()
                .map(|e| (e.name, &file[e.name.0..e.name.1], e.value)),
        );
    }

    /// Adds the symbol named by `name`, a slice of the file's own bytes
    /// (as `object` returns names): a global definition replaces a local
    /// one of the same name, and otherwise the first one stays. A name
    /// that is not inside the file is passed over.
    pub(crate) fn insert(&mut self, name: &[u8], value: (u64, u64), global: bool) {
        let Some(range) = self.place_of(name) else {
            return;
        };
        let Names::Built(entries) = &mut self.names else {
            return;
        };
        let (file, hasher) = (&self.file, &self.hasher);
        let hash = hasher.hash_one(name);
        let bytes = |e: &Entry| &file[e.name.0..e.name.1];
        match entries.find_mut(hash, |e| bytes(e) == name) {
            Some(kept) if global => kept.value = value,
            Some(_) => {}
            None => {
                entries.insert_unique(
                    hash,
                    Entry {
                        name: (range.start, range.end),
                        value,
                    },
                    |e| hasher.hash_one(bytes(e)),
                );
            }
        }
    }

    /// The link-time address and size of the symbol called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<(u64, u64)> {
        let name = name.as_bytes();
        let hash = self.hasher.hash_one(name);
        match &self.names {
            Names::Built(entries) => entries
                .find(hash, |e| &self.file[e.name.0..e.name.1] == name)
                .map(|e| e.value),
            Names::Stored(stored) => stored.get(&self.file, name, hash),
        }
    }

    /// Whether a symbol is called `name`.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// How many symbols it holds.
    pub(crate) fn len(&self) -> usize {
        match &self.names {
            Names::Built(entries) => entries.len(),
            Names::Stored(stored) => stored.len(),
        }
    }

    /// Where `name` lies in the file, if it is a slice of it.
    fn place_of(&self, name: &[u8]) -> Option<Range<usize>> {
        let base = self.file.as_ptr() as usize;
        let start = (name.as_ptr() as usize).checked_sub(base)?;
        let end = start.checked_add(name.len())?;
        (end <= self.file.len()).then_some(start..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(bytes: &[u8]) -> Arc<Mmap> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("strtab");
        std::fs::write(&path, bytes).unwrap();
        Arc::new(crate::backend::core_file::map_file(&path).unwrap())
    }

    #[test]
    fn names_are_found_where_the_file_holds_them() {
        let file = mapped(b"\0alpha\0beta\0alpha\0");
        let mut table = NameTable::new(file.clone(), 0);
        table.insert(&file[1..6], (0x10, 4), false);
        table.insert(&file[7..11], (0x20, 8), true);
        assert_eq!(table.get("alpha"), Some((0x10, 4)));
        assert_eq!(table.get("beta"), Some((0x20, 8)));
        assert_eq!(table.get("gamma"), None);
        assert!(table.contains("beta"));
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn a_global_replaces_a_local_and_not_the_reverse() {
        let file = mapped(b"x\0x\0x\0");
        let mut table = NameTable::new(file.clone(), 0);
        table.insert(&file[0..1], (1, 0), false);
        table.insert(&file[2..3], (2, 0), true);
        table.insert(&file[4..5], (3, 0), false);
        assert_eq!(table.get("x"), Some((2, 0)));
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn a_name_outside_the_file_is_passed_over() {
        let file = mapped(b"name\0");
        let mut table = NameTable::new(file, 0);
        table.insert(b"name", (1, 1), true);
        assert_eq!(table.get("name"), None);
        assert_eq!(table.len(), 0);
    }
}
