//! The code digest of an object without a build-id, kept on disk between
//! runs beside the symbol indexes ([`keep_symbol_indexes_in`]): computing
//! it hashes every byte of the object's code (some 5 MB for a wheel's
//! `libmpi`), which was nearly all a warm read of a wheel's rank cost.
//! Kept for one file as it is (path, device, inode, size, modification
//! time), and used only for exactly that file.
//!
//! [`keep_symbol_indexes_in`]: crate::keep_symbol_indexes_in

use std::path::Path;

use crate::backend::file_identity::FileStamp;
use crate::symbols::name_index::{index_dir, index_key, index_path};

/// The first bytes of every kept digest: the format's name and version.
const MAGIC: &[u8; 8] = b"MPIDDDG1";

/// The tag of a digest's key among the keys of a file's kept tables.
const DIGEST_KEY: u8 = 3;

/// A SHA-256 digest's length.
const DIGEST_LEN: usize = 32;

/// The digest kept for the file at `path` as it is now, if any.
pub(crate) fn kept_digest(path: &Path) -> Option<Vec<u8>> {
    let dir = index_dir()?;
    let key = index_key(&FileStamp::of(path)?, DIGEST_KEY)?;
    let bytes = std::fs::read(index_path(&dir, &key, "digest")).ok()?;
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let rest = rest.strip_prefix(key.as_slice())?;
    (rest.len() == DIGEST_LEN).then(|| rest.to_vec())
}

/// Keeps `digest` for the file at `path` as it is now, when digests are
/// kept at all; a failure to write is not an error.
pub(crate) fn keep_digest(path: &Path, digest: &[u8]) {
    let (Some(dir), Some(stamp)) = (index_dir(), FileStamp::of(path)) else {
        return;
    };
    let Some(key) = index_key(&stamp, DIGEST_KEY) else {
        return;
    };
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&key);
    bytes.extend_from_slice(digest);
    crate::symbols::name_index::write_kept(&dir, &index_path(&dir, &key, "digest"), &bytes);
}
