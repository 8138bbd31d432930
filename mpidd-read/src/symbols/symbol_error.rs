//! [`SymbolError`]: why an object's symbols (or its build-id) could not be
//! read; shared by the symbol tables and the debug-file search.

/// Why an object's symbols could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SymbolError {
    /// The file could not be read.
    #[error("cannot read {path}: {cause}")]
    Io {
        /// The path.
        path: String,
        /// The OS error: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
    /// The file is not an object file `object` can parse.
    #[error("{path} is not a readable ELF object: {reason}")]
    Parse {
        /// The path.
        path: String,
        /// What the parser said.
        reason: String,
    },
    /// Bytes in memory are not an object file `object` can parse.
    #[error("not a readable ELF object: {reason}")]
    Malformed {
        /// What the parser said.
        reason: String,
    },
}
