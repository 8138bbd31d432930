//! Where the decoders get sizes, member offsets and enumerator values of an
//! MPI library's private types: the library's own DWARF through the
//! [`TypeOracle`], or a table for targets described by hand.
//!
//! A missing type, member or enumerator is a [`LayoutError`] that names it;
//! nothing falls back on a guessed offset.

use std::collections::HashMap;
use std::sync::Mutex;

pub use mpidd_read::LayoutError;
use mpidd_read::{TypeKind, TypeOracle};

/// Where a member is in its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// Byte offset from the start of the outer type.
    pub offset: u64,
    /// Byte size of the member.
    pub size: u64,
    /// For an array member, its element count.
    pub array_len: Option<u64>,
}

/// Sizes, member offsets and enumerators of named C types of the target.
pub trait Layouts {
    /// `sizeof` the type (a typedef or a tag such as `struct X`).
    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError>;

    /// The member at a dotted `path` in `type_name`, e.g.
    /// `("MPIR_Request", "u.persist.real_request")`.
    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError>;

    /// The enumerators of the enumeration `type_name`, in declaration order.
    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError>;

    /// The enumerators of the type of the member at `path` (an enumeration,
    /// through typedefs), so a decoder need not name private enum types.
    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, LayoutError>;

    /// The named members of the struct that the member at `path` is, with
    /// offsets from the start of `type_name`, in declaration order.
    fn member_fields(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, Member)>, LayoutError>;

    /// The value of one enumerator.
    fn enum_value(&self, type_name: &str, name: &str) -> Result<i128, LayoutError> {
        self.enumerators(type_name)?
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .ok_or_else(|| LayoutError {
                type_name: type_name.to_string(),
                member: Some(name.to_string()),
                reason: "no such enumerator".to_string(),
            })
    }

    /// The name of the first enumerator with this value, if any.
    fn enum_name(&self, type_name: &str, value: i128) -> Result<Option<String>, LayoutError> {
        Ok(self
            .enumerators(type_name)?
            .into_iter()
            .find(|(_, v)| *v == value)
            .map(|(n, _)| n))
    }
}

/// Named values of an enumeration, in declaration order.
type Enumerators = Vec<(String, i128)>;
/// Answers kept by question.
type Cache<K, V> = Mutex<HashMap<K, Result<V, LayoutError>>>;

/// [`Layouts`] from a [`TypeOracle`], remembering every answer: a handle
/// view asks the same few dozen questions many times.
pub struct OracleLayouts<'a> {
    oracle: &'a TypeOracle,
    sizes: Cache<String, u64>,
    members: Cache<(String, String), Member>,
    enums: Cache<String, Enumerators>,
    member_enums: Cache<(String, String), Enumerators>,
}

impl<'a> OracleLayouts<'a> {
    /// Answers from `oracle`.
    pub fn new(oracle: &'a TypeOracle) -> Self {
        OracleLayouts {
            oracle,
            sizes: Mutex::new(HashMap::new()),
            members: Mutex::new(HashMap::new()),
            enums: Mutex::new(HashMap::new()),
            member_enums: Mutex::new(HashMap::new()),
        }
    }
}

/// Looks `key` up in `cache`, computing and keeping it the first time. A
/// poisoned lock (a panic elsewhere) only costs the cache.
fn cached<K: std::hash::Hash + Eq, V: Clone>(
    cache: &Mutex<HashMap<K, V>>,
    key: K,
    compute: impl FnOnce() -> V,
) -> V {
    if let Ok(map) = cache.lock() {
        if let Some(v) = map.get(&key) {
            return v.clone();
        }
    }
    let v = compute();
    if let Ok(mut map) = cache.lock() {
        map.insert(key, v.clone());
    }
    v
}

impl Layouts for OracleLayouts<'_> {
    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
        cached(&self.sizes, type_name.to_string(), || {
            let layout = self
                .oracle
                .find_type(type_name)
                .map_err(|e| LayoutError::from_type_error(type_name, None, &e))?;
            if layout.size == 0 {
                return Err(LayoutError {
                    type_name: type_name.to_string(),
                    member: None,
                    reason: format!("{} gives it no size", layout.object),
                });
            }
            Ok(layout.size)
        })
    }

    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        cached(
            &self.members,
            (type_name.to_string(), path.to_string()),
            || {
                let field = self
                    .oracle
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
            },
        )
    }

    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        cached(&self.enums, type_name.to_string(), || {
            let layout = self
                .oracle
                .find_type(type_name)
                .map_err(|e| LayoutError::from_type_error(type_name, None, &e))?;
            enumerators_of(layout, type_name, None)
        })
    }

    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, LayoutError> {
        cached(
            &self.member_enums,
            (type_name.to_string(), path.to_string()),
            || {
                let err = |e| LayoutError::from_type_error(type_name, Some(path), &e);
                let field = self.oracle.offset_of(type_name, path).map_err(err)?;
                let layout = self.oracle.member_type(&field).map_err(err)?;
                enumerators_of(layout, type_name, Some(path))
            },
        )
    }

    fn member_fields(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, Member)>, LayoutError> {
        let err = |e| LayoutError::from_type_error(type_name, Some(path), &e);
        let field = self.oracle.offset_of(type_name, path).map_err(err)?;
        let layout = self.oracle.member_type(&field).map_err(err)?;
        Ok(layout
            .members
            .iter()
            .filter_map(|f| {
                Some((
                    f.name.clone()?,
                    Member {
                        offset: field.offset + f.offset,
                        size: f.size?,
                        array_len: f.array_len,
                    },
                ))
            })
            .collect())
    }
}

fn enumerators_of(
    layout: mpidd_read::TypeLayout,
    type_name: &str,
    member: Option<&str>,
) -> Result<Vec<(String, i128)>, LayoutError> {
    if layout.kind != TypeKind::Enum {
        return Err(LayoutError {
            type_name: type_name.to_string(),
            member: member.map(str::to_string),
            reason: format!("{} is a {:?}, not an enumeration", layout.name, layout.kind),
        });
    }
    Ok(layout
        .enumerators
        .into_iter()
        .map(|e| (e.name, e.value))
        .collect())
}

/// A fixed table of layouts, for targets described by hand and for tests
/// that lay memory out independently of any compiler.
///
/// ```
/// use mpihandles::{Layouts, LayoutTable};
///
/// let mut t = LayoutTable::default();
/// t.add_type("MPIR_Group", 24)
///     .add_member("MPIR_Group", "size", 8, 4)
///     .add_enum("MPIR_Lang_t", &[("MPIR_LANG__C", 0)]);
/// assert_eq!(t.member("MPIR_Group", "size").unwrap().offset, 8);
/// assert_eq!(t.enum_value("MPIR_Lang_t", "MPIR_LANG__C").unwrap(), 0);
/// let missing = t.member("MPIR_Group", "rank").unwrap_err();
/// assert_eq!(missing.to_string(), "member `rank` of `MPIR_Group`: no such member in the table");
/// ```
#[derive(Clone, Debug, Default)]
pub struct LayoutTable {
    sizes: HashMap<String, u64>,
    members: HashMap<(String, String), Member>,
    enums: HashMap<String, Vec<(String, i128)>>,
    member_enums: HashMap<(String, String), String>,
}

impl LayoutTable {
    /// Adds (or resizes) a type.
    pub fn add_type(&mut self, type_name: &str, size: u64) -> &mut Self {
        self.sizes.insert(type_name.to_string(), size);
        self
    }

    /// Adds a member by its dotted path.
    pub fn add_member(&mut self, type_name: &str, path: &str, offset: u64, size: u64) -> &mut Self {
        self.members.insert(
            (type_name.to_string(), path.to_string()),
            Member {
                offset,
                size,
                array_len: None,
            },
        );
        self
    }

    /// Adds an array member of `len` elements.
    pub fn add_array(
        &mut self,
        type_name: &str,
        path: &str,
        offset: u64,
        size: u64,
        len: u64,
    ) -> &mut Self {
        self.members.insert(
            (type_name.to_string(), path.to_string()),
            Member {
                offset,
                size,
                array_len: Some(len),
            },
        );
        self
    }

    /// Says that the member at `path` of `type_name` is of the enumeration
    /// `enum_type` (added with [`add_enum`](Self::add_enum)).
    pub fn add_member_enum(&mut self, type_name: &str, path: &str, enum_type: &str) -> &mut Self {
        self.member_enums.insert(
            (type_name.to_string(), path.to_string()),
            enum_type.to_string(),
        );
        self
    }

    /// Adds an enumeration.
    pub fn add_enum(&mut self, type_name: &str, values: &[(&str, i128)]) -> &mut Self {
        self.enums.insert(
            type_name.to_string(),
            values.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        );
        self
    }
}

impl Layouts for LayoutTable {
    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
        self.sizes
            .get(type_name)
            .copied()
            .ok_or_else(|| LayoutError {
                type_name: type_name.to_string(),
                member: None,
                reason: "no such type in the table".to_string(),
            })
    }

    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        self.members
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

    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, LayoutError> {
        let enum_type = self
            .member_enums
            .get(&(type_name.to_string(), path.to_string()))
            .ok_or_else(|| LayoutError {
                type_name: type_name.to_string(),
                member: Some(path.to_string()),
                reason: "no enumeration for this member in the table".to_string(),
            })?;
        self.enumerators(enum_type)
    }

    fn member_fields(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, Member)>, LayoutError> {
        let prefix = format!("{path}.");
        let mut fields: Vec<(String, Member)> = self
            .members
            .iter()
            .filter(|((t, p), _)| t == type_name && p.starts_with(&prefix))
            .map(|((_, p), m)| (p[prefix.len()..].to_string(), *m))
            .filter(|(name, _)| !name.contains('.'))
            .collect();
        if fields.is_empty() {
            return Err(LayoutError {
                type_name: type_name.to_string(),
                member: Some(path.to_string()),
                reason: "no members under it in the table".to_string(),
            });
        }
        fields.sort_by_key(|(_, m)| m.offset);
        Ok(fields)
    }
}

/// The oracle answers directly, keeping no answers of its own beyond the
/// types it has found (use [`OracleLayouts`] where the same members are
/// asked many times). This lets a decoder that holds only a `TypeOracle`
/// ask the questions of this trait.
impl Layouts for TypeOracle {
    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
        OracleLayouts::new(self).size_of(type_name)
    }

    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        OracleLayouts::new(self).member(type_name, path)
    }

    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        OracleLayouts::new(self).enumerators(type_name)
    }

    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, LayoutError> {
        OracleLayouts::new(self).member_enumerators(type_name, path)
    }

    fn member_fields(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, Member)>, LayoutError> {
        OracleLayouts::new(self).member_fields(type_name, path)
    }
}
