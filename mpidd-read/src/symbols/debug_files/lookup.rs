//! What a search for a debug file gives: the file accepted and how it
//! was matched ([`DebugFile`], [`MatchedBy`]), or every candidate refused
//! and why ([`Rejection`], [`RejectReason`]), in a [`DebugLookup`].

use std::fmt;
use std::path::{Path, PathBuf};

use super::build_id::BUILD_ID_LEN;

/// Longest candidate path tried, in bytes: Linux's `PATH_MAX`.
pub(super) const MAX_PATH_LEN: usize = 4096;

/// How a debug file was matched to its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchedBy {
    /// Both carry the same build-id.
    BuildId,
    /// The object's `.gnu_debuglink` names it and its CRC32 matches (or,
    /// when the object has a build-id, its build-id does).
    DebugLink,
}

/// A separate debug file accepted for an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugFile {
    /// Where it is.
    pub path: PathBuf,
    /// How it was matched.
    pub matched_by: MatchedBy,
}

/// Why a candidate debug file was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RejectReason {
    /// The object itself could not be read, so nothing says which debug
    /// file is its.
    ObjectUnreadable {
        /// What went wrong.
        reason: String,
    },
    /// The object's build-id has a length no debug directory indexes.
    BuildIdUnusable {
        /// Its length in bytes.
        len: usize,
    },
    /// The object's `.gnu_debuglink` name is not a plain file name (it is
    /// empty, too long, `.` or `..`, or has a `/`), so it is not followed.
    BadDebugLinkName {
        /// The name, lossily decoded.
        name: String,
    },
    /// The candidate's path is longer than `PATH_MAX`.
    PathTooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The candidate is a directory, device or pipe.
    NotRegularFile,
    /// The candidate is the object itself.
    SameFileAsObject,
    /// The candidate is empty.
    Empty,
    /// The candidate could not be read.
    Unreadable {
        /// The OS error.
        reason: String,
    },
    /// The candidate is not an ELF file `object` can parse.
    NotElf {
        /// What the parser said.
        reason: String,
    },
    /// The candidate belongs to another build.
    BuildIdMismatch {
        /// The object's build-id.
        expected: Vec<u8>,
        /// The candidate's, if it has one.
        found: Option<Vec<u8>>,
    },
    /// The candidate's CRC32 is not the one the object's debuglink records.
    CrcMismatch {
        /// The CRC the debuglink records.
        expected: u32,
        /// The candidate's.
        found: u32,
    },
}

/// `bytes` in lowercase hex, as build-id paths spell them (and profiles,
/// cache entries and index files name builds).
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RejectReason::ObjectUnreadable { reason } => {
                write!(f, "the object cannot be read: {reason}")
            }
            RejectReason::BuildIdUnusable { len } => write!(
                f,
                "its build-id is {len} bytes long, outside {}..={}",
                BUILD_ID_LEN.start(),
                BUILD_ID_LEN.end()
            ),
            RejectReason::BadDebugLinkName { name } => write!(
                f,
                "its .gnu_debuglink names {name:?}, which is not a plain file name"
            ),
            RejectReason::PathTooLong { len } => {
                write!(f, "path is {len} bytes, longer than {MAX_PATH_LEN}")
            }
            RejectReason::NotRegularFile => f.write_str("not a regular file"),
            RejectReason::SameFileAsObject => f.write_str("it is the object itself"),
            RejectReason::Empty => f.write_str("empty file"),
            RejectReason::Unreadable { reason } => write!(f, "cannot read it: {reason}"),
            RejectReason::NotElf { reason } => write!(f, "not an ELF file: {reason}"),
            RejectReason::BuildIdMismatch { expected, found } => match found {
                Some(found) => write!(
                    f,
                    "build-id {} differs from the object's {}: a debug file of another build",
                    hex(found),
                    hex(expected)
                ),
                None => write!(
                    f,
                    "it has no build-id, but the object's is {}",
                    hex(expected)
                ),
            },
            RejectReason::CrcMismatch { expected, found } => write!(
                f,
                "CRC32 {found:08x} differs from {expected:08x} that the object's \
                 .gnu_debuglink records: a debug file of another build"
            ),
        }
    }
}

/// A candidate debug file that was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The candidate, or the object when the fault is in the object itself
    /// (an unreadable object, an unusable build-id or debuglink name).
    pub path: PathBuf,
    /// Why.
    pub reason: RejectReason,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

/// The result of a search: the debug file, if one matched, every path
/// tried and every candidate refused.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DebugLookup {
    pub(super) found: Option<DebugFile>,
    pub(super) tried: Vec<PathBuf>,
    pub(super) rejected: Vec<Rejection>,
}

impl DebugLookup {
    /// The accepted debug file.
    pub fn found(&self) -> Option<&DebugFile> {
        self.found.as_ref()
    }

    /// The accepted debug file, by value.
    pub fn into_found(self) -> Option<DebugFile> {
        self.found
    }

    /// Every candidate path looked at, in search order, whether or not a
    /// file was there.
    pub fn tried(&self) -> &[PathBuf] {
        &self.tried
    }

    /// Candidates that exist but were refused, and why.
    pub fn rejected(&self) -> &[Rejection] {
        &self.rejected
    }

    /// Splits into the accepted file and the refusals.
    pub fn into_parts(self) -> (Option<DebugFile>, Vec<Rejection>) {
        (self.found, self.rejected)
    }

    pub(super) fn reject(&mut self, path: &Path, reason: RejectReason) {
        self.rejected.push(Rejection {
            path: path.to_path_buf(),
            reason,
        });
    }
}
