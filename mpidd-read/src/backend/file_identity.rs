//! Which file a path leads to, so that two paths (or one path read twice)
//! are known to name the same file: its device and inode on Unix hosts. On
//! other hosts, which have no inode in `std`, the canonical path stands in.
//! This is the only place the readers of files reach for `std::os`.

use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The identity of one file on this host (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FileKey(Key);

#[cfg(unix)]
type Key = (u64, u64);
#[cfg(not(unix))]
type Key = std::path::PathBuf;

impl FileKey {
    /// The identity as bytes, for keys written to disk.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        #[cfg(unix)]
        {
            let (dev, ino) = self.0;
            [dev.to_le_bytes(), ino.to_le_bytes()].concat()
        }
        #[cfg(not(unix))]
        {
            self.0.as_os_str().as_encoded_bytes().to_vec()
        }
    }
}

/// The identity of the file at `path`, whose metadata is `meta`; `None`
/// when it cannot be told.
pub(crate) fn file_key(path: &Path, meta: &Metadata) -> Option<FileKey> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = path;
        Some(FileKey((meta.dev(), meta.ino())))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        std::fs::canonicalize(path).ok().map(FileKey)
    }
}

/// A file as it is on disk now: its path, identity, size and
/// modification time. What was read from a file holds while its stamp is
/// unchanged; a file replaced or rewritten under the same path gets
/// another stamp.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FileStamp {
    pub(crate) path: PathBuf,
    pub(crate) file: Option<FileKey>,
    pub(crate) len: u64,
    pub(crate) modified: Option<SystemTime>,
}

impl FileStamp {
    /// The stamp of the file at `path` now (one `stat`); `None` when there
    /// is nothing there.
    pub(crate) fn of(path: &Path) -> Option<FileStamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileStamp::with(path, &meta))
    }

    /// The stamp of the file at `path` whose metadata is `meta`.
    pub(crate) fn with(path: &Path, meta: &Metadata) -> FileStamp {
        FileStamp {
            path: path.to_path_buf(),
            file: file_key(path, meta),
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// `name`, bytes read from a target file, as a file name of this host: the
/// bytes themselves on Unix; elsewhere only if they are UTF-8.
pub(crate) fn os_file_name(name: &[u8]) -> Option<&std::ffi::OsStr> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(std::ffi::OsStr::from_bytes(name))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(name).ok().map(std::ffi::OsStr::new)
    }
}
