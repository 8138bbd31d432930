//! The object files that the targets of one run load, each read once for
//! all of them: a job's ranks map the same few builds, and finding,
//! mapping, placing and searching the debug file of each object again for
//! every rank cost more than reading the rank.
//!
//! Everything is kept per [`FileStamp`] (path, device and inode, size,
//! modification time), so two targets share an object only when its file
//! is the same file on disk: the same path under another sysroot, or a
//! file replaced during the run, is read anew. A debug-file search is kept
//! per object file, debug search and name the target knew it by, for the
//! life of the [`ObjectFiles`]: a debug file installed later is seen by
//! the next run, not by the one in progress.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use memmap2::Mmap;

use crate::backend::file_identity::FileStamp;
use crate::backend::file_maps::FileMaps;
use crate::symbols::debug_files::DebugSearch;
use crate::symbols::elf_symbols::{placement_of, ElfPlacement, FoundDebug, ObjectTable, SymbolMap};
use crate::symbols::symbol_error::SymbolError;

/// Object files kept at most: the objects of a few builds, many times
/// over. Past that the list starts again rather than grow.
const MAX_OBJECTS: usize = 1024;

/// The object files of one run, shared by every target opened with it
/// ([`CoreTarget::open_shared`](crate::CoreTarget::open_shared),
/// [`ElfSymbols::with_object_files`](crate::ElfSymbols::with_object_files)).
/// Cloning shares them. A target opened without one reads its files
/// alone, as if it were the only one.
///
/// ```no_run
/// use mpidd_read::{CoreTarget, CoreTargetOptions, ObjectFiles};
/// use std::path::Path;
///
/// let files = ObjectFiles::default();
/// let options = CoreTargetOptions::default();
/// for core in ["core.0", "core.1"] {
///     // The second rank finds, maps and searches nothing again.
///     let rank = CoreTarget::open_shared(Path::new(core), &options, &files)?;
///     println!("{} objects", rank.symbols().objects().count());
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct ObjectFiles {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    maps: Arc<FileMaps>,
    objects: Mutex<HashMap<FileStamp, Arc<ObjectFile>>>,
}

impl std::fmt::Debug for ObjectFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectFiles")
            .field("maps", &*self.shared.maps)
            .field("objects", &lock(&self.shared.objects).len())
            .finish()
    }
}

/// One object file as the run found it, and what was read from it,
/// each on first use.
pub(crate) struct ObjectFile {
    pub(crate) stamp: FileStamp,
    pub(crate) map: Arc<Mmap>,
    placement: OnceLock<Result<ElfPlacement, String>>,
    /// Its symbol table, or why it has none.
    pub(crate) table: OnceLock<Result<Arc<ObjectTable>, String>>,
    /// Its debug-file searches, by debug roots and the name the target
    /// knew it by (a few at most: one per way of opening it).
    pub(crate) debug: Kept<(DebugSearch, String), FoundDebug>,
    /// The symbols another source knows for its build, by the source's
    /// address.
    pub(crate) extra: Kept<usize, SymbolMap>,
}

/// Values made once each, by key: a short list, searched in order.
pub(crate) type Kept<K, T> = Mutex<Vec<(K, Arc<T>)>>;

impl ObjectFile {
    /// Where the file wants to be loaded.
    pub(crate) fn placement(&self) -> Result<ElfPlacement, SymbolError> {
        self.placement
            .get_or_init(|| placement_of(&self.map).map_err(|e| e.to_string()))
            .clone()
            .map_err(|reason| SymbolError::Parse {
                path: self.stamp.path.display().to_string(),
                reason,
            })
    }
}

/// The entry of `list` under `key`, made by `make` the first time. Two
/// threads may make one at once; the first kept wins.
pub(crate) fn kept<K: PartialEq, T>(list: &Kept<K, T>, key: K, make: impl FnOnce() -> T) -> Arc<T> {
    if let Some((_, v)) = lock(list).iter().find(|(k, _)| *k == key) {
        return v.clone();
    }
    let made = Arc::new(make());
    let mut list = lock(list);
    if let Some((_, v)) = list.iter().find(|(k, _)| *k == key) {
        return v.clone();
    }
    list.push((key, made.clone()));
    made
}

impl ObjectFiles {
    /// The run's located paths and mappings.
    pub(crate) fn maps(&self) -> Arc<FileMaps> {
        self.shared.maps.clone()
    }

    /// The object file at `path` as it is now: one `stat`, and the rest
    /// only the first time the run meets this file.
    pub(crate) fn open(&self, path: &Path) -> Result<Arc<ObjectFile>, SymbolError> {
        let io = |cause| SymbolError::Io {
            path: path.display().to_string(),
            cause,
        };
        let stamp = FileStamp::of(path).ok_or_else(|| {
            io(std::fs::metadata(path)
                .err()
                .unwrap_or_else(|| std::io::Error::other("it is gone")))
        })?;
        if let Some(found) = lock(&self.shared.objects).get(&stamp) {
            return Ok(found.clone());
        }
        let map = self.shared.maps.map(&stamp).ok_or_else(|| {
            io(crate::backend::core_file::map_file(path)
                .err()
                .unwrap_or_else(|| std::io::Error::other("it changed while it was opened")))
        })?;
        let object = Arc::new(ObjectFile {
            stamp: stamp.clone(),
            map,
            placement: OnceLock::new(),
            table: OnceLock::new(),
            debug: Mutex::new(Vec::new()),
            extra: Mutex::new(Vec::new()),
        });
        let mut objects = lock(&self.shared.objects);
        if objects.len() >= MAX_OBJECTS {
            objects.clear();
        }
        Ok(objects.entry(stamp).or_insert(object).clone())
    }
}

/// Locks a list; entries go in whole, so a poisoned lock is used as it is.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
