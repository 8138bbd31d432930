//! The persistent layout cache: the layouts a decoder resolved from a
//! library's DWARF, kept on disk as a [`LayoutProfile`] per build-id, so
//! that the next run on the same build reads no DWARF at all.
//!
//! An entry is the file `<dir>/<build-id in hex>.json`. It is chosen only
//! for the build-id its name and its contents both give, and is written to
//! a temporary file in the same directory, then renamed over the old one:
//! a reader sees a whole entry or none, whatever other runs are doing. An
//! entry that cannot be read is [`CacheLookup::Unusable`], which callers
//! report in one line and then replace.
//!
//! Beside the entries, the cache is an [`AbsentNameStore`]: the type names
//! an object's DWARF does not define, in `<dir>/<build-id>.absent-names.json`
//! per build, written the same way. Such a file is believed only for the
//! DWARF identity it names; any other file (corrupt, too large, made for
//! other DWARF) is ignored, and the names are searched for again.
//!
//! ```
//! use mpidd_read::{LayoutCache, LayoutProfile, LayoutTable, ProfileIdentity, ProfileObject};
//! use mpidd_read::CacheLookup;
//!
//! let dir = std::env::temp_dir().join(format!("mpidd-doc-cache-{}", std::process::id()));
//! let cache = LayoutCache::at(&dir);
//! let id = [0xab, 0xcd];
//! let mut layouts = LayoutTable::default();
//! layouts.add_type("MPIR_Comm", 896);
//! let identity = ProfileIdentity {
//!     objects: vec![ProfileObject { name: "libmpi.so.12".into(), source_build_id: None,
//!                                   build_ids: vec!["abcd".into()], code_digests: Vec::new() }],
//!     ..Default::default()
//! };
//! cache.put(&id, &LayoutProfile::cached(identity, layouts))?;
//! match cache.get(&id) {
//!     CacheLookup::Hit { profile, .. } => assert_eq!(profile.layouts.len(), 1),
//!     other => panic!("{other:?}"),
//! }
//! assert!(matches!(cache.get(&[0xef]), CacheLookup::Miss));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::dwarf::absent_names::{AbsentNameStore, DwarfIdentity, MAX_ABSENT_NAMES};
use crate::layouts::layout_profile::{hex, LayoutProfile, ProfileError};

/// The `format` of an absent-names file.
const ABSENT_FORMAT: &str = "mpidd-absent-names";

/// The suffix of an absent-names file, after the build-id.
const ABSENT_SUFFIX: &str = ".absent-names.json";

/// An absent-names file.
#[derive(Serialize, Deserialize)]
struct AbsentFile {
    format: String,
    version: u32,
    dwarf: DwarfIdentity,
    names: Vec<String>,
}

/// An entry larger than this is not read: the profiles the decoders need
/// are tens of kilobytes, and the file may be anyone's.
pub const MAX_ENTRY_BYTES: u64 = 16 << 20;

/// A directory of cached layouts, one entry per library build-id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutCache {
    dir: PathBuf,
}

/// What [`LayoutCache::get`] found for a build-id.
#[derive(Debug)]
pub enum CacheLookup {
    /// An entry made for this build-id.
    Hit {
        /// The entry.
        profile: LayoutProfile,
        /// Its file.
        path: PathBuf,
    },
    /// No entry.
    Miss,
    /// An entry that cannot be used (unreadable, corrupt, too large, or
    /// made for another build-id), and why. It is safe to overwrite.
    Unusable {
        /// Its file.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
}

/// One entry, as [`LayoutCache::entries`] lists it.
#[derive(Debug)]
pub struct CacheEntry {
    /// Its file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// The entry, or why it cannot be read.
    pub profile: Result<LayoutProfile, String>,
}

/// A cache directory that cannot be listed, written or cleared.
#[derive(Debug, thiserror::Error)]
#[error("layout cache {path}: {action}")]
pub struct CacheError {
    /// The file or directory.
    pub path: PathBuf,
    /// What was being done.
    pub action: &'static str,
    /// Why it failed.
    #[source]
    pub source: std::io::Error,
}

impl LayoutCache {
    /// A cache in `dir` (created when the first entry is written).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        LayoutCache { dir: dir.into() }
    }

    /// The user's cache: `$MPIDD_CACHE_DIR` when set, else
    /// `$XDG_CACHE_HOME/mpidd/layouts`, else `$HOME/.cache/mpidd/layouts`
    /// (the XDG base directory rules). `None` when none of them is set.
    pub fn user() -> Option<Self> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(dir) = var("MPIDD_CACHE_DIR") {
            return Some(Self::at(dir));
        }
        let base = var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(Self::at(base.join("mpidd").join("layouts")))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the symbol tables of large object files are kept between
    /// runs, when the caller asks for it
    /// ([`keep_symbol_indexes_in`](crate::keep_symbol_indexes_in)): the
    /// `symbols` folder of the cache, emptied by [`clear`](Self::clear)
    /// with the rest.
    pub fn symbol_index_dir(&self) -> PathBuf {
        self.dir.join("symbols")
    }

    /// The file of the entry for `build_id`.
    pub fn entry_path(&self, build_id: &[u8]) -> PathBuf {
        self.dir.join(format!("{}.json", hex(build_id)))
    }

    /// The absent-names file of the DWARF whose build-id is `build_id`
    /// (hex).
    pub fn absent_names_path(&self, build_id: &str) -> PathBuf {
        self.dir.join(format!("{build_id}{ABSENT_SUFFIX}"))
    }

    /// Writes `bytes` as `path`, through a temporary file and a rename.
    fn write_whole(&self, path: &Path, bytes: &[u8]) -> Result<(), CacheError> {
        let fail = |path: &Path, action, source| CacheError {
            path: path.to_path_buf(),
            action,
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(|e| fail(&self.dir, "create", e))?;
        let mut file = tempfile::Builder::new()
            .prefix(".entry-")
            .suffix(".tmp")
            .tempfile_in(&self.dir)
            .map_err(|e| fail(&self.dir, "create a temporary entry in", e))?;
        // Not synced to disk: the rename alone gives other runs a whole
        // file or none, and a file a crash left short or empty fails to
        // parse and is rebuilt. A sync made the first read of a build wait
        // for the disk (0.1 to 0.25 s on a busy machine) for nothing.
        file.write_all(bytes)
            .map_err(|e| fail(file.path(), "write", e))?;
        file.persist(path)
            .map_err(|e| fail(path, "rename a new entry onto", e.error))?;
        Ok(())
    }

    /// The entry for `build_id`, if there is a usable one.
    pub fn get(&self, build_id: &[u8]) -> CacheLookup {
        let path = self.entry_path(build_id);
        let unusable = |reason: String| CacheLookup::Unusable {
            path: path.clone(),
            reason,
        };
        match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return CacheLookup::Miss,
            Err(e) => return unusable(e.to_string()),
            Ok(m) if m.len() > MAX_ENTRY_BYTES => {
                return unusable(format!(
                    "{} bytes, more than an entry can be ({MAX_ENTRY_BYTES})",
                    m.len()
                ))
            }
            Ok(_) => {}
        }
        match LayoutProfile::load(&path) {
            Ok(profile) if profile.describes(build_id) => CacheLookup::Hit { profile, path },
            Ok(_) => unusable(format!(
                "it is not made for build-id {}, its file name notwithstanding",
                hex(build_id)
            )),
            Err(ProfileError::Io { cause: source, .. }) => unusable(source.to_string()),
            Err(e) => unusable(e.to_string()),
        }
    }

    /// Writes `profile` as the entry for `build_id`, replacing any other at
    /// once (through a temporary file and a rename in the same directory).
    /// Returns the entry's file.
    pub fn put(&self, build_id: &[u8], profile: &LayoutProfile) -> Result<PathBuf, CacheError> {
        let path = self.entry_path(build_id);
        self.write_whole(&path, profile.to_json().as_bytes())?;
        Ok(path)
    }

    /// Every entry, in file-name order. Temporary files of writes under way
    /// are not entries.
    pub fn entries(&self) -> Result<Vec<CacheEntry>, CacheError> {
        let mut paths = self.entry_files()?;
        paths.sort();
        Ok(paths
            .into_iter()
            .map(|path| {
                let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
                let profile = if bytes > MAX_ENTRY_BYTES {
                    Err(format!("{bytes} bytes, more than an entry can be"))
                } else {
                    LayoutProfile::load(&path).map_err(|e| e.to_string())
                };
                CacheEntry {
                    path,
                    bytes,
                    profile,
                }
            })
            .collect())
    }

    /// Removes every entry, every absent-names file (and leftover
    /// temporary files); returns how many entries there were. A missing
    /// directory is an empty cache.
    pub fn clear(&self) -> Result<usize, CacheError> {
        let entries = self.entry_files()?;
        let absent = self.files(|name| name.ends_with(ABSENT_SUFFIX))?;
        for path in entries.iter().chain(&absent) {
            std::fs::remove_file(path).map_err(|e| CacheError {
                path: path.clone(),
                action: "remove",
                source: e,
            })?;
        }
        for leftover in self.files(|name| name.starts_with(".entry-"))? {
            let _ = std::fs::remove_file(leftover);
        }
        let symbols = self.symbol_index_dir();
        match std::fs::remove_dir_all(&symbols) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(CacheError {
                    path: symbols,
                    action: "remove",
                    source: e,
                })
            }
            _ => {}
        }
        Ok(entries.len())
    }

    fn read_absent(&self, dwarf: &DwarfIdentity) -> Option<Vec<String>> {
        let path = self.absent_names_path(&dwarf.build_id);
        let meta = std::fs::metadata(&path).ok()?;
        if meta.len() > MAX_ENTRY_BYTES {
            return None;
        }
        let text = std::fs::read(&path).ok()?;
        let file: AbsentFile = serde_json::from_slice(&text).ok()?;
        let made_for_this = file.format == ABSENT_FORMAT
            && file.version == 1
            && file.dwarf == *dwarf
            && file.names.len() <= MAX_ABSENT_NAMES;
        made_for_this.then_some(file.names)
    }

    fn entry_files(&self) -> Result<Vec<PathBuf>, CacheError> {
        self.files(|name| {
            name.strip_suffix(".json")
                .is_some_and(|stem| !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_hexdigit()))
        })
    }

    fn files(&self, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, CacheError> {
        let listing = match std::fs::read_dir(&self.dir) {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(CacheError {
                    path: self.dir.clone(),
                    action: "list",
                    source: e,
                })
            }
        };
        Ok(listing
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_str().is_some_and(&keep))
            .map(|e| e.path())
            .collect())
    }
}

impl AbsentNameStore for LayoutCache {
    fn recall(&self, dwarf: &DwarfIdentity) -> Option<Vec<String>> {
        // A build-id that is not plain hex could name a path elsewhere.
        if dwarf.build_id.is_empty() || !dwarf.build_id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.read_absent(dwarf)
    }

    fn keep(&self, dwarf: &DwarfIdentity, names: &[String]) -> Result<(), String> {
        if dwarf.build_id.is_empty() || !dwarf.build_id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("build-id {:?} is not hex", dwarf.build_id));
        }
        let file = AbsentFile {
            format: ABSENT_FORMAT.into(),
            version: 1,
            dwarf: dwarf.clone(),
            names: names.iter().take(MAX_ABSENT_NAMES).cloned().collect(),
        };
        let json = serde_json::to_vec_pretty(&file).map_err(|e| e.to_string())?;
        self.write_whole(&self.absent_names_path(&dwarf.build_id), &json)
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layouts::layout_profile::{ProfileIdentity, ProfileObject};
    use crate::layouts::LayoutTable;

    fn profile_for(id: &str, comm_size: u64) -> LayoutProfile {
        let mut layouts = LayoutTable::default();
        layouts.add_type("MPIR_Comm", comm_size);
        LayoutProfile::cached(
            ProfileIdentity {
                objects: vec![ProfileObject {
                    name: "libmpi.so.12".into(),
                    source_build_id: Some(id.into()),
                    build_ids: vec![id.into()],
                    code_digests: Vec::new(),
                }],
                ..Default::default()
            },
            layouts,
        )
    }

    #[test]
    fn an_entry_is_found_only_for_its_build_id() {
        let dir = tempfile::tempdir().unwrap();
        let cache = LayoutCache::at(dir.path().join("layouts"));
        cache.put(&[1, 2], &profile_for("0102", 896)).unwrap();
        assert!(matches!(cache.get(&[1, 2]), CacheLookup::Hit { .. }));
        assert!(matches!(cache.get(&[1, 3]), CacheLookup::Miss));
        // An entry renamed onto another build-id's name is refused.
        std::fs::rename(cache.entry_path(&[1, 2]), cache.entry_path(&[1, 3])).unwrap();
        match cache.get(&[1, 3]) {
            CacheLookup::Unusable { reason, .. } => assert!(reason.contains("0103"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn corrupt_and_oversized_entries_are_unusable_and_replaceable() {
        let dir = tempfile::tempdir().unwrap();
        let cache = LayoutCache::at(dir.path());
        std::fs::write(cache.entry_path(&[9]), b"{\"format\": \"mpidd-layout-pro").unwrap();
        assert!(matches!(cache.get(&[9]), CacheLookup::Unusable { .. }));
        let big = std::fs::File::create(cache.entry_path(&[8])).unwrap();
        big.set_len(MAX_ENTRY_BYTES + 1).unwrap();
        match cache.get(&[8]) {
            CacheLookup::Unusable { reason, .. } => assert!(reason.contains("bytes"), "{reason}"),
            other => panic!("{other:?}"),
        }
        cache.put(&[9], &profile_for("09", 8)).unwrap();
        assert!(matches!(cache.get(&[9]), CacheLookup::Hit { .. }));
    }

    #[test]
    fn entries_lists_and_clear_removes_only_entries() {
        let dir = tempfile::tempdir().unwrap();
        let cache = LayoutCache::at(dir.path());
        assert_eq!(cache.clear().unwrap(), 0);
        cache.put(&[1], &profile_for("01", 8)).unwrap();
        cache.put(&[2], &profile_for("02", 8)).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        let entries = cache.entries().unwrap();
        assert_eq!(entries.len(), 2);
        assert!(entries.iter().all(|e| e.profile.is_ok() && e.bytes > 0));
        assert_eq!(cache.clear().unwrap(), 2);
        assert!(cache.entries().unwrap().is_empty());
        assert!(dir.path().join("notes.txt").exists());
    }

    #[test]
    fn concurrent_writers_leave_a_whole_entry() {
        let dir = tempfile::tempdir().unwrap();
        let cache = LayoutCache::at(dir.path());
        std::thread::scope(|s| {
            for writer in 0..8u64 {
                let cache = &cache;
                s.spawn(move || {
                    for round in 0..25 {
                        cache
                            .put(&[7], &profile_for("07", 100 + writer * 100 + round))
                            .unwrap();
                        // Every read between the writes sees a whole entry.
                        assert!(matches!(cache.get(&[7]), CacheLookup::Hit { .. }));
                    }
                });
            }
        });
        assert!(matches!(cache.get(&[7]), CacheLookup::Hit { .. }));
        assert_eq!(cache.entries().unwrap().len(), 1);
    }
}
