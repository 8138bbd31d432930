//! Why a handle could not be interpreted.

use mpidd_read::ReadError;
use mpidd_types::TargetAddr;

use crate::model::HandleKind;
use mpidd_read::LayoutError;

/// Why a handle could not be interpreted. Each names the handle, the
/// address or the type concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandleError {
    /// The target has none of the symbols of the implementation's handle
    /// pools.
    #[error(
        "not an {implementation} process: no symbol {symbol} in {searched} \
         (the library's local symbols are needed: an unstripped library, or its debug file)"
    )]
    NotThisImplementation {
        /// The implementation looked for.
        implementation: &'static str,
        /// The symbol that was missing.
        symbol: String,
        /// The objects searched.
        searched: String,
    },
    /// A symbol a decoder needs is missing.
    #[error("no symbol {symbol} in {searched}: {why}")]
    NoSymbol {
        /// The symbol.
        symbol: String,
        /// The objects searched.
        searched: String,
        /// What it is needed for.
        why: &'static str,
    },
    /// The value does not fit the handle type.
    #[error("{value} is not an {kind} value: {reason}")]
    BadValue {
        /// The kind asked for.
        kind: HandleKind,
        /// The value given.
        value: i64,
        /// Why.
        reason: String,
    },
    /// The handle is the kind's null handle.
    #[error("{value:#010x} is {name}, the null {kind}: it refers to no object")]
    Null {
        /// The kind.
        kind: HandleKind,
        /// The handle.
        value: u32,
        /// The null handle's name.
        name: String,
    },
    /// The pointer handle is the kind's null handle (an object in Open
    /// MPI, standing for no object).
    #[error("{addr} is {name}, the null {kind}: it refers to no object")]
    NullObject {
        /// The kind.
        kind: HandleKind,
        /// The handle.
        addr: TargetAddr,
        /// The null handle's name.
        name: String,
    },
    /// The handle's bits name another kind of object.
    #[error("{value:#010x} is not an {expected} handle: its bits name {found}")]
    WrongKind {
        /// The kind asked for.
        expected: HandleKind,
        /// The handle.
        value: u32,
        /// What its bits name.
        found: String,
    },
    /// The handle's bits are not a valid handle of the kind.
    #[error("{value:#010x} is not a valid {kind} handle: {reason}")]
    Invalid {
        /// The kind.
        kind: HandleKind,
        /// The handle.
        value: u32,
        /// Why.
        reason: String,
    },
    /// The handle's index is past the array or block it names.
    #[error("{value:#010x}: {what} {index} is out of range ({array} has {limit})")]
    OutOfRange {
        /// The handle.
        value: u32,
        /// Which index: `builtin index`, `direct index`, `block`...
        what: &'static str,
        /// Its value.
        index: u64,
        /// The array or block.
        array: String,
        /// How many it has.
        limit: u64,
    },
    /// The slot the handle names holds no object of that handle: it was
    /// never handed out (or MPI is not initialized).
    #[error(
        "{value:#010x}: no object was ever allocated for it: the slot at {addr} holds handle {found:#010x}{hint}"
    )]
    NeverAllocated {
        /// The handle.
        value: u32,
        /// The slot.
        addr: TargetAddr,
        /// The handle the slot holds.
        found: u32,
        /// A hint on why.
        hint: &'static str,
    },
    /// A pointer handle does not point at an object of the kind.
    #[error("{kind} {addr} does not point at one: {reason}")]
    NotAnObject {
        /// The kind.
        kind: HandleKind,
        /// The pointer.
        addr: TargetAddr,
        /// Why.
        reason: String,
    },
    /// The kind has no Fortran INTEGER form here, or it was never made.
    #[error("Fortran {kind} {value}: {reason}")]
    Fortran {
        /// The kind.
        kind: HandleKind,
        /// The INTEGER given.
        value: i32,
        /// Why it does not resolve.
        reason: String,
    },
    /// The target's data contradicts itself (a corrupt or changing
    /// target).
    #[error("{addr}: {reason}")]
    Inconsistent {
        /// Where.
        addr: TargetAddr,
        /// What does not add up.
        reason: String,
    },
    /// The question does not apply to the kind.
    #[error("{0}")]
    Unsupported(String),
    /// A type or member the decoder needs is not in the debug info. The
    /// layout error is shown in the message, so it is not also the
    /// `source()`.
    #[error(
        "{0} (the MPI library's debug info is needed: build it with -g, or install its debug file)"
    )]
    Layout(LayoutError),
    /// Target memory could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
}

impl From<LayoutError> for HandleError {
    fn from(e: LayoutError) -> Self {
        HandleError::Layout(e)
    }
}
