//! The error every decoder of private MPI types gives when a type, member
//! or enumerator it needs is not available, whichever source of layouts
//! (the type oracle, a table, a debugger's callbacks) it asked.

use crate::dwarf::type_error::TypeError;

/// A type, member or enumerator a decoder needs is not available.
///
/// ```
/// use mpidd_read::LayoutError;
///
/// let e = LayoutError::new("MPIR_Request", Some("dev.match"), "not a member");
/// assert_eq!(e.to_string(), "member `dev.match` of `MPIR_Request`: not a member");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", what(type_name, member.as_deref()))]
pub struct LayoutError {
    /// The type asked about.
    pub type_name: String,
    /// The member (a dotted path) or enumerator asked for, if any.
    pub member: Option<String>,
    /// Why it is not available.
    pub reason: String,
}

impl LayoutError {
    /// An error about `type_name`, or its `member`, for `reason`.
    pub fn new(type_name: &str, member: Option<&str>, reason: impl Into<String>) -> Self {
        LayoutError {
            type_name: type_name.to_string(),
            member: member.map(str::to_string),
            reason: reason.into(),
        }
    }

    /// The type oracle's error, as the reason `type_name` or its `member`
    /// is not available.
    pub fn from_type_error(type_name: &str, member: Option<&str>, e: &TypeError) -> Self {
        Self::new(type_name, member, e.to_string())
    }
}

fn what(type_name: &str, member: Option<&str>) -> String {
    match member {
        Some(m) => format!("member `{m}` of `{type_name}`"),
        None => format!("type `{type_name}`"),
    }
}
