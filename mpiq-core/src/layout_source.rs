//! Where decoders get the sizes and member offsets of an MPI library's
//! private types.
//!
//! Decoders ask one type and one member at a time, as the message-queue
//! interface's `mqs_find_type`/`mqs_field_offset` do, so the same decoder
//! runs on the DWARF [`TypeOracle`] or on a debugger's callbacks.

pub use mpidd_read::LayoutError;
use mpidd_read::{TypeLayout, TypeOracle};

/// Sizes and offsets of named C types of the target.
pub trait LayoutSource {
    /// The byte offset of `member` (found through anonymous members too) in
    /// the struct or union `type_name` (a typedef or a tag).
    fn member_offset(&self, type_name: &str, member: &str) -> Result<u64, LayoutError>;

    /// `sizeof` the type.
    fn type_size(&self, type_name: &str) -> Result<u64, LayoutError>;

    /// The size of `type_name` and the offsets of `members` in it, each
    /// answered as [`LayoutSource::type_size`] and
    /// [`LayoutSource::member_offset`] would. The default asks them one by
    /// one; a source that looks the type up for every question (DWARF)
    /// answers them all from one lookup.
    fn type_members(&self, type_name: &str, members: &[&str]) -> TypeMembers {
        TypeMembers {
            size: self.type_size(type_name),
            offsets: members
                .iter()
                .map(|m| self.member_offset(type_name, m))
                .collect(),
        }
    }

    /// The member at a dotted `path` in `type_name` (each step through
    /// typedefs and anonymous members), with its size. The default only
    /// answers single-step paths, without a size.
    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        if path.contains('.') {
            return Err(LayoutError {
                type_name: type_name.to_string(),
                member: Some(path.to_string()),
                reason: "this layout source answers no nested member paths".to_string(),
            });
        }
        Err(LayoutError {
            type_name: type_name.to_string(),
            member: Some(path.to_string()),
            reason: format!(
                "this layout source gives no member sizes (offset {})",
                self.member_offset(type_name, path)?
            ),
        })
    }

    /// The enumerators of the enumeration `type_name`, in declaration
    /// order. The default has none.
    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        Err(LayoutError {
            type_name: type_name.to_string(),
            member: None,
            reason: "this layout source gives no enumerators".to_string(),
        })
    }
}

/// Where a member is in its type, from [`LayoutSource::member`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// Byte offset from the start of the outer type.
    pub offset: u64,
    /// Byte size of the member (of the whole array, for an array).
    pub size: u64,
    /// For an array member, its element count.
    pub array_len: Option<u64>,
}

/// Every layout question a decoder asks, declared in one place so that a
/// layout profile can be made for exactly these answers: the types whose
/// size and members (dotted paths) it reads, and the enumerators it uses.
#[derive(Clone, Copy, Debug)]
pub struct LayoutQuestions {
    /// Each type with the member paths asked of it (its size is asked too).
    pub types: &'static [(&'static str, &'static [&'static str])],
    /// Each enumeration with the enumerators asked of it.
    pub enums: &'static [(&'static str, &'static [&'static str])],
}

/// A type's size and the offsets of some of its members, from
/// [`LayoutSource::type_members`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeMembers {
    /// `sizeof` the type.
    pub size: Result<u64, LayoutError>,
    /// The offset of each member asked for, in the order asked.
    pub offsets: Vec<Result<u64, LayoutError>>,
}

fn member_of(type_name: &str, layout: &TypeLayout, member: &str) -> Result<u64, LayoutError> {
    layout
        .field(member)
        .map(|f| f.offset)
        .ok_or_else(|| LayoutError {
            type_name: type_name.to_string(),
            member: Some(member.to_string()),
            reason: format!("{type_name} (from {}) has no such member", layout.object),
        })
}

impl LayoutSource for TypeOracle {
    fn member_offset(&self, type_name: &str, member: &str) -> Result<u64, LayoutError> {
        let layout = self
            .find_type(type_name)
            .map_err(|e| LayoutError::from_type_error(type_name, Some(member), &e))?;
        member_of(type_name, &layout, member)
    }

    // One DWARF lookup, not one per member: finding a type can mean
    // parsing the abbreviations of many units that only declare it.
    fn type_members(&self, type_name: &str, members: &[&str]) -> TypeMembers {
        match self.find_type(type_name) {
            Ok(layout) => TypeMembers {
                size: Ok(layout.size),
                offsets: members
                    .iter()
                    .map(|m| member_of(type_name, &layout, m))
                    .collect(),
            },
            Err(e) => {
                let reason = e.to_string();
                let error = |member: Option<&str>| LayoutError {
                    type_name: type_name.to_string(),
                    member: member.map(str::to_string),
                    reason: reason.clone(),
                };
                TypeMembers {
                    size: Err(error(None)),
                    offsets: members.iter().map(|m| Err(error(Some(m)))).collect(),
                }
            }
        }
    }

    fn type_size(&self, type_name: &str) -> Result<u64, LayoutError> {
        self.find_type(type_name)
            .map(|t| t.size)
            .map_err(|e| LayoutError::from_type_error(type_name, None, &e))
    }

    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        let field = self
            .offset_of(type_name, path)
            .map_err(|e| LayoutError::from_type_error(type_name, Some(path), &e))?;
        let size = field.size.ok_or_else(|| LayoutError {
            type_name: type_name.to_string(),
            member: Some(path.to_string()),
            reason: "the debug info gives the member no size".to_string(),
        })?;
        Ok(Member {
            offset: field.offset,
            size,
            array_len: field.array_len,
        })
    }

    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        let layout = self
            .find_type(type_name)
            .map_err(|e| LayoutError::from_type_error(type_name, None, &e))?;
        if layout.enumerators.is_empty() {
            return Err(LayoutError {
                type_name: type_name.to_string(),
                member: None,
                reason: format!("{type_name} (from {}) is not an enumeration", layout.object),
            });
        }
        Ok(layout
            .enumerators
            .into_iter()
            .map(|e| (e.name, e.value))
            .collect())
    }
}

/// A fixed table of layouts, for tests and for targets described by hand.
///
/// ```
/// use mpiq_core::{LayoutSource, LayoutTable};
/// let mut t = LayoutTable::default();
/// t.insert("MPIR_Comm_list", 16, &[("sequence_number", 0), ("head", 8)]);
/// assert_eq!(t.member_offset("MPIR_Comm_list", "head").unwrap(), 8);
/// assert!(t.member_offset("MPIR_Comm_list", "tail").is_err());
/// ```
#[derive(Clone, Debug, Default)]
pub struct LayoutTable {
    types: std::collections::HashMap<String, (u64, Vec<(String, u64)>)>,
    paths: std::collections::HashMap<(String, String), Member>,
    enums: std::collections::HashMap<String, Vec<(String, i128)>>,
}

impl LayoutTable {
    /// Adds a type of `size` bytes with these members.
    pub fn insert(&mut self, type_name: &str, size: u64, members: &[(&str, u64)]) {
        self.types.insert(
            type_name.to_string(),
            (
                size,
                members.iter().map(|(n, o)| (n.to_string(), *o)).collect(),
            ),
        );
    }
}

impl LayoutTable {
    /// Adds the member at a dotted `path` of `type_name`, with its size
    /// (answered by [`LayoutSource::member`]).
    pub fn insert_member(&mut self, type_name: &str, path: &str, member: Member) {
        self.paths
            .insert((type_name.to_string(), path.to_string()), member);
    }

    /// Adds an enumeration with these enumerators.
    pub fn insert_enum(&mut self, type_name: &str, enumerators: &[(&str, i128)]) {
        self.enums.insert(
            type_name.to_string(),
            enumerators
                .iter()
                .map(|(n, v)| (n.to_string(), *v))
                .collect(),
        );
    }
}

impl LayoutSource for LayoutTable {
    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        self.paths
            .get(&(type_name.to_string(), path.to_string()))
            .copied()
            .ok_or_else(|| LayoutError {
                type_name: type_name.to_string(),
                member: Some(path.to_string()),
                reason: "no such member in the table".to_string(),
            })
    }

    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        self.enums
            .get(type_name)
            .cloned()
            .ok_or_else(|| LayoutError {
                type_name: type_name.to_string(),
                member: None,
                reason: "no such enumeration in the table".to_string(),
            })
    }

    fn member_offset(&self, type_name: &str, member: &str) -> Result<u64, LayoutError> {
        let missing = |reason: &str| LayoutError {
            type_name: type_name.to_string(),
            member: Some(member.to_string()),
            reason: reason.to_string(),
        };
        let (_, members) = self
            .types
            .get(type_name)
            .ok_or_else(|| missing("no such type in the table"))?;
        members
            .iter()
            .find(|(n, _)| n == member)
            .map(|(_, o)| *o)
            .ok_or_else(|| missing("no such member in the table"))
    }

    fn type_size(&self, type_name: &str) -> Result<u64, LayoutError> {
        self.types
            .get(type_name)
            .map(|(size, _)| *size)
            .ok_or_else(|| LayoutError {
                type_name: type_name.to_string(),
                member: None,
                reason: "no such type in the table".to_string(),
            })
    }
}
