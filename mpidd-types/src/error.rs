//! Errors of decoding and encoding records.
//!
//! This crate sees only bytes, so its errors name the record and the field
//! (and the offset inside the record). The reading layer wraps them with the
//! target address the bytes came from.

use crate::abi::AddressWidth;

/// Why bytes could not be turned into a record, or a record into bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TypesError {
    /// The buffer is shorter than the record.
    #[error("{record}: needs {needed} bytes, only {available} available")]
    Truncated {
        /// C name of the record.
        record: &'static str,
        /// Size of the record for the ABI in use.
        needed: usize,
        /// Bytes that were there.
        available: usize,
    },
    /// An address does not fit the target's address width.
    #[error(
        "{record}.{field}: address {value:#x} does not fit a {}-byte target address",
        width.bytes()
    )]
    AddressTooWide {
        /// C name of the record.
        record: &'static str,
        /// Field name as in the interface document.
        field: &'static str,
        /// The value that did not fit.
        value: u64,
        /// The target's address width.
        width: AddressWidth,
    },
    /// A signed target word (`mqs_tword_t`) does not fit the target's width.
    #[error(
        "{record}.{field}: value {value} does not fit a {}-byte target word",
        width.bytes()
    )]
    WordOutOfRange {
        /// C name of the record.
        record: &'static str,
        /// Field name as in the interface document.
        field: &'static str,
        /// The value that did not fit.
        value: i64,
        /// The target's word width.
        width: AddressWidth,
    },
    /// `MPI2DD_INFO.magic` is not `M P I 2 0x7f`.
    #[error(
        "MPI2DD_INFO.magic[{index}] is {found:#04x}, expected {expected:#04x} \
         (the bytes {bytes:02x?} are not an MPI2DD_INFO)"
    )]
    BadMagic {
        /// Index of the first byte that differs.
        index: usize,
        /// The byte the interface requires there.
        expected: u8,
        /// The byte found.
        found: u8,
        /// All five bytes found.
        bytes: [u8; 5],
    },
    /// `MPI2DD_INFO.version` is one this crate does not know.
    #[error(
        "MPI2DD_INFO.version is {found}; this library reads version {supported} \
         of the interface and cannot guess the layout of others"
    )]
    UnsupportedVersion {
        /// Version found in the target.
        found: u8,
        /// Version this crate understands.
        supported: u8,
    },
    /// `MPI2DD_INFO.variant` is one this crate does not know.
    #[error(
        "MPI2DD_INFO.variant is {found}; this library knows variant {supported} only, \
         and another variant may change the layout or the protocol"
    )]
    UnsupportedVariant {
        /// Variant found in the target.
        found: u8,
        /// Variant this crate understands.
        supported: u8,
    },
    /// scroll refused a read or write; every record checks its length first,
    /// so this only appears when scroll is used on a record directly.
    #[error("byte access failed: {0}")]
    Bytes(String),
    /// A buffer for a fixed-size C character array was too long.
    #[error("{record}.{field}: text of {len} bytes does not fit {capacity} bytes")]
    TextTooLong {
        /// C name of the record.
        record: &'static str,
        /// Field name.
        field: &'static str,
        /// Length of the text given.
        len: usize,
        /// Bytes available in the array, including the terminator.
        capacity: usize,
    },
}

impl From<scroll::Error> for TypesError {
    fn from(e: scroll::Error) -> Self {
        TypesError::Bytes(e.to_string())
    }
}
