//! Addresses in the target's address space.

use serde::{Deserialize, Serialize};

/// An address in the target's address space.
///
/// It is a `u64` whatever the host, so a 64-bit target can be read from a
/// 32-bit debugger and the other way round. A 32-bit target's addresses are
/// zero-extended, as pointers are unsigned.
///
/// ```
/// use mpidd_types::TargetAddr;
///
/// let a = TargetAddr(0x1000);
/// assert_eq!(a.checked_add(0x20), Some(TargetAddr(0x1020)));
/// assert!(TargetAddr::NULL.is_null());
/// assert_eq!(a.to_string(), "0x1000");
/// ```
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct TargetAddr(pub u64);

impl TargetAddr {
    /// The null pointer.
    pub const NULL: TargetAddr = TargetAddr(0);

    /// Whether this is the null pointer.
    pub const fn is_null(self) -> bool {
        self.0 == 0
    }

    /// `self + offset`, or `None` on overflow of 64 bits.
    pub const fn checked_add(self, offset: u64) -> Option<TargetAddr> {
        match self.0.checked_add(offset) {
            Some(v) => Some(TargetAddr(v)),
            None => None,
        }
    }
}

impl From<u64> for TargetAddr {
    fn from(v: u64) -> Self {
        TargetAddr(v)
    }
}

impl std::fmt::Display for TargetAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl std::fmt::LowerHex for TargetAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::LowerHex::fmt(&self.0, f)
    }
}
