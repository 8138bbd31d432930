//! A file's symbol table kept on disk between runs, so that a later run on
//! the same file looks names up without reading its `.symtab` again.
//!
//! Building the table of a debug build's `libmpi` and of libc's debug file
//! (some 50,000 names hashed and inserted) was most of what a warm read of
//! a core cost once the layouts came from the layout cache. The index is
//! that table written out as an open-addressing hash table whose entries
//! point at the names where the file itself holds them: a run maps the
//! index, probes it for the few names it asks, and touches a few pages.
//!
//! An index is made for one file as it is (path, device, inode, size,
//! modification time, and which of its tables): its header repeats that
//! key, and an index whose key, format or hash differs is not used. Each
//! index is written whole, through a temporary file and a rename. The
//! indexes are kept only where the caller says ([`keep_symbol_indexes_in`]):
//! a library does not write to disk unasked.

use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::time::UNIX_EPOCH;

use memmap2::Mmap;
use sha2::{Digest, Sha256};

use crate::backend::core_file::map_file;
use crate::backend::file_identity::FileStamp;
use crate::symbols::debug_files::hex;

/// The first bytes of every index: the format's name and version.
const MAGIC: &[u8; 8] = b"MPIDDSY1";

/// The fixed part of the header: magic, key length, hash check, slot
/// count, entry count.
const HEADER: usize = 8 + 8 + 8 + 8 + 8;

/// One slot: the name's place in the file (start, length), the hash's
/// high half, the symbol's address and size.
const SLOT: usize = 32;

/// Tables with fewer symbols are built again each run (a test program's
/// few hundred cost less than opening an index).
pub(crate) const MIN_INDEXED_SYMBOLS: usize = 512;

/// Indexes kept in the directory at most: past this, the directory is
/// emptied before the next one is written (a cache, not a store).
const MAX_INDEXES: usize = 256;

/// The seed of the hash every table uses: the same in every run, so that
/// an index written by one run is probed by the next.
const SEED: u64 = 0x6d70_6964_645f_7379;

/// The hasher of names, in tables and in indexes.
pub(crate) fn name_hasher() -> foldhash::fast::FixedState {
    foldhash::fast::FixedState::with_seed(SEED)
}

/// What an index records of the hasher: the hash of a fixed text. An index
/// written by a build whose hash differs is not used.
fn hash_check() -> u64 {
    name_hasher().hash_one(b"mpidd symbol index".as_slice())
}

static INDEX_DIR: RwLock<Option<PathBuf>> = RwLock::new(None);

/// Keeps the symbol tables of large object files (512 symbols or more:
/// a debug build's MPI library, libc's debug file) as indexes in `dir`,
/// and looks names up in them on later runs instead of reading the
/// files' tables again; the code digests of objects without a build-id
/// ([`BuildKey::CodeDigest`](crate::BuildKey)), which hash all their
/// code; and what DWARF said of the frames a run named (a job's stacks),
/// for each DWARF file. `None` (the default) keeps none. At most 256 files are
/// kept; the directory is emptied past that. `mpidd` keeps them in the
/// layout cache's `symbols` folder.
pub fn keep_symbol_indexes_in(dir: Option<PathBuf>) {
    *INDEX_DIR.write().unwrap_or_else(|e| e.into_inner()) = dir;
}

/// Where indexes are kept, when they are.
pub(crate) fn index_dir() -> Option<PathBuf> {
    INDEX_DIR.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The key of one table of the file `stamp` describes (`kind` tells the
/// tables of one file apart); `None` when the file cannot be told from
/// another (no modification time), which is then never indexed.
pub(crate) fn index_key(stamp: &FileStamp, kind: u8) -> Option<Vec<u8>> {
    let modified = stamp.modified?.duration_since(UNIX_EPOCH).ok()?;
    let mut key = vec![kind];
    key.extend_from_slice(&stamp.len.to_le_bytes());
    key.extend_from_slice(&modified.as_secs().to_le_bytes());
    key.extend_from_slice(&modified.subsec_nanos().to_le_bytes());
    key.extend_from_slice(&stamp.file.as_ref()?.bytes());
    key.extend_from_slice(stamp.path.as_os_str().as_encoded_bytes());
    Some(key)
}

/// The file in `dir` of what is kept for `key`, with the extension
/// `kind` (`names`: a symbol index).
pub(crate) fn index_path(dir: &Path, key: &[u8], kind: &str) -> PathBuf {
    let digest = Sha256::digest(key);
    dir.join(format!("{}.{kind}", hex(&digest[..16])))
}

/// A table read from its index: the slots, probed in place.
pub(crate) struct StoredNames {
    index: Mmap,
    /// Where the slots start.
    start: usize,
    /// How many slots (a power of two).
    slots: u64,
    /// How many of them hold a symbol.
    entries: u64,
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

impl StoredNames {
    /// The index kept for `key`, if there is one made for exactly that
    /// key and whose slots fit a file of `file_len` bytes.
    pub(crate) fn load(key: &[u8], file_len: usize) -> Option<StoredNames> {
        let dir = index_dir()?;
        let index = map_file(&index_path(&dir, key, "names")).ok()?;
        if index.len() < HEADER || &index[..8] != MAGIC {
            return None;
        }
        let key_len = usize::try_from(u64_at(&index, 8)).ok()?;
        let slots = u64_at(&index, 24);
        let entries = u64_at(&index, 32);
        let start = HEADER.checked_add(key_len)?;
        // Each name takes two bytes of the file at least (one and its
        // NUL), and the slots are twice the names, rounded up to a power
        // of two. The slots are probed in the mapping, never allocated.
        let most = (file_len as u64 / 2 + 1).saturating_mul(4);
        let whole = (start as u64).checked_add(slots.checked_mul(SLOT as u64)?)?;
        let fits = u64_at(&index, 16) == hash_check()
            && index.get(HEADER..start) == Some(key)
            && slots.is_power_of_two()
            && slots <= most
            && entries < slots
            && whole == index.len() as u64;
        fits.then_some(StoredNames {
            index,
            start,
            slots,
            entries,
        })
    }

    /// How many symbols it holds.
    pub(crate) fn len(&self) -> usize {
        usize::try_from(self.entries).unwrap_or(usize::MAX)
    }

    /// The value of `name`, whose hash is `hash`, where `file` holds the
    /// names: at most one probe per slot.
    pub(crate) fn get(&self, file: &[u8], name: &[u8], hash: u64) -> Option<(u64, u64)> {
        let mask = self.slots - 1;
        let tag = (hash >> 32) as u32;
        let mut i = hash & mask;
        for _ in 0..self.slots {
            let at = self.start + (i as usize) * SLOT;
            let slot = &self.index[at..at + SLOT];
            let len = u32_at(slot, 8) as usize;
            if len == 0 {
                return None;
            }
            if u32_at(slot, 12) == tag && len == name.len() {
                let begin = usize::try_from(u64_at(slot, 0)).ok()?;
                let held = begin.checked_add(len).and_then(|end| file.get(begin..end));
                if held == Some(name) {
                    return Some((u64_at(slot, 16), u64_at(slot, 24)));
                }
            }
            i = (i + 1) & mask;
        }
        None
    }
}

/// Writes the index of a table for `key`: `names` gives each symbol's
/// place in the file (start, end), its name's bytes and its value. Does
/// nothing unless indexes are kept; a failure to write is not an error
/// (the next run builds the table again).
pub(crate) fn store<'a>(
    key: &[u8],
    count: usize,
    names: impl Iterator<Item = ((usize, usize), &'a [u8], (u64, u64))>,
) {
    let Some(dir) = index_dir() else {
        return;
    };
    let Some(slots) = count.checked_mul(2).map(|n| n.next_power_of_two().max(2)) else {
        return;
    };
    let start = HEADER + key.len();
    let Some(size) = slots.checked_mul(SLOT).and_then(|s| s.checked_add(start)) else {
        return;
    };
    let mut bytes = vec![0u8; size];
    bytes[..8].copy_from_slice(MAGIC);
    bytes[8..16].copy_from_slice(&(key.len() as u64).to_le_bytes());
    bytes[16..24].copy_from_slice(&hash_check().to_le_bytes());
    bytes[24..32].copy_from_slice(&(slots as u64).to_le_bytes());
    bytes[HEADER..start].copy_from_slice(key);
    let hasher = name_hasher();
    let mask = slots - 1;
    let mut entries = 0u64;
    for ((begin, end), name, (value, size)) in names {
        if entries as usize >= count {
            break;
        }
        let hash = hasher.hash_one(name);
        let mut i = (hash as usize) & mask;
        // `count` is at most half the slots: an empty one is found.
        while u32_at(&bytes, start + i * SLOT + 8) != 0 {
            i = (i + 1) & mask;
        }
        let slot = &mut bytes[start + i * SLOT..start + (i + 1) * SLOT];
        slot[0..8].copy_from_slice(&(begin as u64).to_le_bytes());
        slot[8..12].copy_from_slice(&((end - begin) as u32).to_le_bytes());
        slot[12..16].copy_from_slice(&((hash >> 32) as u32).to_le_bytes());
        slot[16..24].copy_from_slice(&value.to_le_bytes());
        slot[24..32].copy_from_slice(&size.to_le_bytes());
        entries += 1;
    }
    bytes[32..40].copy_from_slice(&entries.to_le_bytes());
    write_kept(&dir, &index_path(&dir, key, "names"), &bytes);
}

/// Writes `bytes` as `path` in `dir`, whole (a temporary file, then a
/// rename), after emptying `dir` of what it keeps when it holds too much.
/// A failure is not an error: the next run computes it again.
pub(crate) fn write_kept(dir: &Path, path: &Path, bytes: &[u8]) {
    let _ = try_write_kept(dir, path, bytes);
}

fn try_write_kept(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let kept = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "names" || x == "digest" || x == "frames")
        })
        .map(|e| e.path())
        .collect::<Vec<_>>();
    if kept.len() >= MAX_INDEXES {
        for old in kept {
            let _ = std::fs::remove_file(old);
        }
    }
    let mut file = tempfile::Builder::new()
        .prefix(".names-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    std::io::Write::write_all(&mut file, bytes)?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::name_table::NameTable;
    use std::sync::Arc;

    /// A file of `n` names, `sym0` to `sym{n-1}`, NUL-separated, and the
    /// table of them built in this run (`symK` at `0x1000 + K`).
    fn names_file(dir: &Path, n: usize) -> (Arc<Mmap>, NameTable) {
        let mut bytes = vec![0u8];
        for k in 0..n {
            bytes.extend_from_slice(format!("sym{k}").as_bytes());
            bytes.push(0);
        }
        let path = dir.join("names");
        std::fs::write(&path, &bytes).unwrap();
        let file = Arc::new(map_file(&path).unwrap());
        let mut table = NameTable::new(file.clone(), n);
        let mut at = 1;
        for k in 0..n {
            let len = format!("sym{k}").len();
            table.insert(&file[at..at + len], (0x1000 + k as u64, 8), true);
            at += len + 1;
        }
        (file, table)
    }

    // One test: the index directory is one setting for the whole process.
    #[test]
    fn a_kept_table_answers_as_built_and_only_for_its_own_key() {
        let dir = tempfile::tempdir().unwrap();
        keep_symbol_indexes_in(Some(dir.path().join("symbols")));
        let (file, built) = names_file(dir.path(), 3000);
        built.keep(b"key one");
        let stored = NameTable::stored(file.clone(), b"key one").expect("the index kept");
        assert_eq!(stored.len(), 3000);
        for k in [0, 1, 1234, 2999] {
            let name = format!("sym{k}");
            assert_eq!(stored.get(&name), built.get(&name), "{name}");
            assert_eq!(stored.get(&name), Some((0x1000 + k, 8)));
        }
        assert_eq!(stored.get("sym3000"), None);
        assert_eq!(stored.get(""), None);

        // Another file's key, or another table of the same file: no index.
        assert!(NameTable::stored(file.clone(), b"key two").is_none());

        // An index cut short, or written with another hash, is not used.
        let path = index_path(&dir.path().join("symbols"), b"key one", "names");
        let whole = std::fs::read(&path).unwrap();
        std::fs::write(&path, &whole[..whole.len() - 1]).unwrap();
        assert!(NameTable::stored(file.clone(), b"key one").is_none());
        let mut other_hash = whole.clone();
        other_hash[16] ^= 1;
        std::fs::write(&path, &other_hash).unwrap();
        assert!(NameTable::stored(file.clone(), b"key one").is_none());

        // Slots that point outside the file find nothing, never panic.
        let mut outside = whole.clone();
        let start = HEADER + b"key one".len();
        for slot in outside[start..].chunks_mut(SLOT) {
            if slot[8..12] != [0; 4] {
                slot[0..8].copy_from_slice(&u64::MAX.to_le_bytes());
            }
        }
        std::fs::write(&path, &outside).unwrap();
        let bent = NameTable::stored(file.clone(), b"key one").expect("the header fits");
        assert_eq!(bent.get("sym5"), None);

        // A code digest is kept for its file as it is, and for no other.
        use crate::symbols::debug_files::kept_digest::{keep_digest, kept_digest};
        let object = dir.path().join("libnobuildid.so");
        std::fs::write(&object, b"code").unwrap();
        assert_eq!(kept_digest(&object), None);
        keep_digest(&object, &[7; 32]);
        assert_eq!(kept_digest(&object), Some(vec![7; 32]));
        std::fs::write(&object, b"other code").unwrap();
        assert_eq!(kept_digest(&object), None, "a digest of the file before");
        keep_digest(&object, &[9; 31]);
        assert_eq!(kept_digest(&object), None, "a digest of the wrong length");

        // A small table is not worth an index.
        let (small_file, small) = names_file(&dir.path().join("small").tap_mkdir(), 10);
        small.keep(b"small");
        assert!(NameTable::stored(small_file, b"small").is_none());
        keep_symbol_indexes_in(None);
        assert!(NameTable::stored(file, b"key one").is_none());
    }

    trait TapMkdir {
        fn tap_mkdir(self) -> Self;
    }

    impl TapMkdir for PathBuf {
        fn tap_mkdir(self) -> Self {
            std::fs::create_dir_all(&self).unwrap();
            self
        }
    }
}
