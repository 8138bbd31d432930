//! Errors of reading target memory. Each names the target address and what
//! was being read there.

use mpidd_types::{TargetAddr, TypesError};

/// Why a read from the target failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Fewer bytes could be read than the record needs (an unmapped page, the
    /// end of a segment, a core file that omits the page).
    #[error("{what} at {addr}: only {got} of {wanted} bytes are readable")]
    ShortRead {
        /// What was being read.
        what: &'static str,
        /// Where.
        addr: TargetAddr,
        /// Bytes needed.
        wanted: usize,
        /// Bytes that could be read.
        got: usize,
    },
    /// `addr + len` does not fit in 64 bits, or past the target's address
    /// width.
    #[error("{what} at {addr}: {len} bytes run past the end of the address space")]
    AddressOverflow {
        /// What was being read.
        what: &'static str,
        /// Where.
        addr: TargetAddr,
        /// Length asked for.
        len: u64,
    },
    /// The bytes were read but do not decode as the record.
    #[error("{record} at {addr}: {cause}")]
    Decode {
        /// The record's C name.
        record: &'static str,
        /// Where it was read.
        addr: TargetAddr,
        /// What the decoder said: shown in the message, so not also as `source()`.
        cause: TypesError,
    },
    /// A C string has no terminator within the cap.
    #[error("string at {addr}: no NUL terminator within {cap} bytes (raise Limits::max_string_len if it is real)")]
    Unterminated {
        /// Where the string starts.
        addr: TargetAddr,
        /// The cap that was applied.
        cap: usize,
    },
    /// A linked list in the target leads back to a node already read.
    #[error("{what}: the list loops back to {addr}")]
    Cycle {
        /// The link that was followed.
        what: &'static str,
        /// The node reached a second time.
        addr: TargetAddr,
    },
    /// A count read from the target is negative.
    #[error("{what} at {addr}: count {count} is negative")]
    NegativeCount {
        /// The table.
        what: &'static str,
        /// Where the table starts.
        addr: TargetAddr,
        /// The count found.
        count: i64,
    },
    /// A count read from the target is above the caller's limit.
    #[error("{what} at {addr}: {count} entries exceed the limit of {max} (Limits::{limit})")]
    LimitExceeded {
        /// The table, list or string.
        what: &'static str,
        /// Where it starts.
        addr: TargetAddr,
        /// Its count.
        count: u64,
        /// The limit applied.
        max: u64,
        /// Which field of [`Limits`](crate::Limits) it was.
        limit: &'static str,
    },
    /// The backend (the OS, a file) failed.
    #[error("{what} at {addr}: {cause}")]
    Backend {
        /// What was being read.
        what: &'static str,
        /// Where.
        addr: TargetAddr,
        /// The underlying error: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
    /// A write was refused because nothing is mapped there.
    #[error("write of {len} bytes at {addr}: the target has no writable memory there")]
    NotWritable {
        /// Where.
        addr: TargetAddr,
        /// Length.
        len: usize,
    },
}

impl ReadError {
    /// An equal error, for handing one failure to several callers (equal
    /// string addresses read once). The OS error keeps its errno.
    pub(crate) fn duplicate(&self) -> ReadError {
        match self {
            ReadError::ShortRead {
                what,
                addr,
                wanted,
                got,
            } => ReadError::ShortRead {
                what,
                addr: *addr,
                wanted: *wanted,
                got: *got,
            },
            ReadError::AddressOverflow { what, addr, len } => ReadError::AddressOverflow {
                what,
                addr: *addr,
                len: *len,
            },
            ReadError::Decode {
                record,
                addr,
                cause: source,
            } => ReadError::Decode {
                record,
                addr: *addr,
                cause: source.clone(),
            },
            ReadError::Cycle { what, addr } => ReadError::Cycle { what, addr: *addr },
            ReadError::Unterminated { addr, cap } => ReadError::Unterminated {
                addr: *addr,
                cap: *cap,
            },
            ReadError::NegativeCount { what, addr, count } => ReadError::NegativeCount {
                what,
                addr: *addr,
                count: *count,
            },
            ReadError::LimitExceeded {
                what,
                addr,
                count,
                max,
                limit,
            } => ReadError::LimitExceeded {
                what,
                addr: *addr,
                count: *count,
                max: *max,
                limit,
            },
            ReadError::Backend {
                what,
                addr,
                cause: source,
            } => ReadError::Backend {
                what,
                addr: *addr,
                cause: match source.raw_os_error() {
                    Some(code) => std::io::Error::from_raw_os_error(code),
                    None => std::io::Error::new(source.kind(), source.to_string()),
                },
            },
            ReadError::NotWritable { addr, len } => ReadError::NotWritable {
                addr: *addr,
                len: *len,
            },
        }
    }
}
