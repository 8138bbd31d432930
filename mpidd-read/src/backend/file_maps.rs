//! The files that the targets of one run map, each found once and mapped
//! once: a job's ranks record the same few paths, and looking each up and
//! mapping it again for every rank was most of the system calls of
//! reading a thousand rank cores.
//!
//! A located path is remembered per search and recorded path for the run.
//! A mapping is kept per [`FileStamp`], so a file replaced under the same
//! path during the run is mapped again, never mistaken for the first.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use memmap2::Mmap;

use crate::backend::core_file::{map_open_file, FileSearch};
use crate::backend::file_identity::FileStamp;

/// Entries kept at most in each map: the objects of a few builds, many
/// times over. Past that a map starts again rather than grow.
const MAX_FILES: usize = 1024;

/// Where a recorded path was found, for one search and one machine.
#[derive(Clone, PartialEq, Eq, Hash)]
struct LocateKey {
    search: FileSearch,
    recorded: String,
    machine: u16,
}

/// Located paths and mappings shared by the targets of one run.
#[derive(Default)]
pub(crate) struct FileMaps {
    located: Mutex<HashMap<LocateKey, PathBuf>>,
    maps: Mutex<HashMap<FileStamp, Arc<Mmap>>>,
}

impl std::fmt::Debug for FileMaps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileMaps")
            .field("located", &lock(&self.located).len())
            .field("mapped", &lock(&self.maps).len())
            .finish()
    }
}

impl FileMaps {
    /// [`FileSearch::locate`], once per run for each search, recorded path
    /// and machine.
    pub(crate) fn locate(&self, search: &FileSearch, recorded: &str, machine: u16) -> PathBuf {
        let key = LocateKey {
            search: search.clone(),
            recorded: recorded.to_string(),
            machine,
        };
        if let Some(found) = lock(&self.located).get(&key) {
            return found.clone();
        }
        let found = search.locate(recorded, machine);
        let mut located = lock(&self.located);
        if located.len() >= MAX_FILES {
            located.clear();
        }
        located.insert(key, found.clone());
        found
    }

    /// The mapping of the file `stamp` describes: mapped on first use, then
    /// shared. `None` when it cannot be opened, or when the file opened is
    /// no longer the one stamped (it was replaced since).
    pub(crate) fn map(&self, stamp: &FileStamp) -> Option<Arc<Mmap>> {
        if let Some(map) = lock(&self.maps).get(stamp) {
            return Some(map.clone());
        }
        let file = File::open(&stamp.path).ok()?;
        let meta = file.metadata().ok()?;
        if FileStamp::with(&stamp.path, &meta) != *stamp {
            return None;
        }
        let map = Arc::new(map_open_file(&file).ok()?);
        let mut maps = lock(&self.maps);
        if maps.len() >= MAX_FILES {
            maps.clear();
        }
        Some(maps.entry(stamp.clone()).or_insert(map).clone())
    }

    /// The mapping of the file at `path` as it is now (one `stat` when it
    /// was mapped before).
    pub(crate) fn map_path(&self, path: &Path) -> Option<Arc<Mmap>> {
        self.map(&FileStamp::of(path)?)
    }
}

/// Locks a map; a panic elsewhere cannot leave one inconsistent (every
/// entry is inserted whole), so a poisoned lock is used as it is.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_replaced_under_its_path_is_mapped_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lib.so");
        std::fs::write(&path, b"first").unwrap();
        let maps = FileMaps::default();
        let first = maps.map_path(&path).unwrap();
        assert!(Arc::ptr_eq(&first, &maps.map_path(&path).unwrap()));
        // A new file (new inode, other size) under the same path.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, b"second file").unwrap();
        let second = maps.map_path(&path).unwrap();
        assert_eq!(&first[..], b"first");
        assert_eq!(&second[..], b"second file");
    }

    #[test]
    fn a_stale_stamp_maps_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lib.so");
        std::fs::write(&path, b"first").unwrap();
        let stamp = FileStamp::of(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, b"another").unwrap();
        assert!(FileMaps::default().map(&stamp).is_none());
    }
}
