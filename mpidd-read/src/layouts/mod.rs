//! The one way every decoder learns the sizes, member offsets and
//! enumerators of an MPI library's private types.
//!
//! Three kinds of source answer the same questions: the library's own DWARF
//! (the [`TypeOracle`]), a [`LayoutTable`] (written by hand for a synthetic
//! target, or loaded from a [`LayoutProfile`](crate::LayoutProfile) for a
//! stripped library), and a debugger's message-queue callbacks, which know
//! offsets and sizes only. A missing answer is a [`LayoutError`] naming what
//! was asked; nothing falls back on a guessed offset.
//!
//! This folder owns the layout sources and what keeps them: this module's
//! [`Layouts`] trait and [`LayoutTable`], [`layout_profile`] (a build's
//! answers kept in a versioned file), [`shipped_profiles`] (the profiles
//! inside the crate, and the hidden symbols they know, handed to `symbols`
//! through its `ExtraSymbols` interface), [`layout_cache`] (answers kept on disk per
//! build), [`loaded_layouts`] (choosing a source per loaded object),
//! [`layered_layouts`] (a library's layouts over those of the libraries
//! loaded beside it, such as UCX), [`profile_symbols`] (the text form of a profile's hidden symbols),
//! [`located_globals`] (the hidden globals of a stripped library of a
//! family, found in its file from what the family predicts),
//! [`profile_drift`] (a profile checked against a debug build's DWARF),
//! [`profile_set`] (the caller's profiles and the shipped ones, whose
//! layouts are parsed only when a process needs them),
//! [`ucx_version`] (the version a stripped libucp states, which a UCX
//! profile's release family is matched on), [`layout_error`] and
//! [`whole_type`]. It stands on `dwarf` and `symbols`,
//! and must not depend on the targets, stacks or decoders above it.

pub(crate) mod layered_layouts;
pub(crate) mod layout_cache;
pub(crate) mod layout_error;
pub(crate) mod layout_family;
pub(crate) mod layout_profile;
pub(crate) mod loaded_layouts;
pub(crate) mod located_globals;
pub(crate) mod object_file_facts;
pub(crate) mod profile_drift;
pub(crate) mod profile_set;
pub(crate) mod profile_symbols;
pub(crate) mod shipped_profiles;
pub(crate) mod ucx_version;
pub(crate) mod whole_type;

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::dwarf::type_layout::{TypeKind, TypeLayout};
use crate::dwarf::type_oracle::TypeOracle;
use crate::layouts::layout_error::LayoutError;

/// Where a member is in its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// Byte offset from the start of the outer type.
    pub offset: u64,
    /// Byte size of the member.
    pub size: u64,
    /// For an array member, its element count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_len: Option<u64>,
}

/// Sizes, member offsets and enumerators of named C types of the target.
///
/// Type names are typedefs or tags (`MPIR_Comm`, `struct mca_pml_ob1_comm_t`);
/// member paths are dotted and may pass through anonymous members
/// (`dev.match.parts.tag`).
pub trait Layouts {
    /// `sizeof` the type.
    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError>;

    /// The member at a dotted `path` in `type_name`.
    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError>;

    /// The byte offset of the member at `path`. A source that knows offsets
    /// but not member sizes (a debugger's callbacks) answers this one only.
    fn member_offset(&self, type_name: &str, path: &str) -> Result<u64, LayoutError> {
        self.member(type_name, path).map(|m| m.offset)
    }

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
            .ok_or_else(|| LayoutError::new(type_name, Some(name), "no such enumerator"))
    }

    /// The name of the first enumerator with this value, if any.
    fn enum_name(&self, type_name: &str, value: i128) -> Result<Option<String>, LayoutError> {
        Ok(self
            .enumerators(type_name)?
            .into_iter()
            .find(|(_, v)| *v == value)
            .map(|(n, _)| n))
    }

    /// Where the answers given so far came from, when the source can
    /// tell: the DWARF oracle says DWARF; [`LoadedLayouts`] (DWARF, else a
    /// shipped profile) says which of them answered. `None` (the default)
    /// for a source that cannot tell, such as a table or a caller's own
    /// types.
    ///
    /// [`LoadedLayouts`]: crate::LoadedLayouts
    fn origin(&self) -> Option<crate::LayoutOrigin> {
        None
    }
}

impl<L: Layouts + ?Sized> Layouts for &L {
    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
        (**self).size_of(type_name)
    }
    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        (**self).member(type_name, path)
    }
    fn member_offset(&self, type_name: &str, path: &str) -> Result<u64, LayoutError> {
        (**self).member_offset(type_name, path)
    }
    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        (**self).enumerators(type_name)
    }
    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, LayoutError> {
        (**self).member_enumerators(type_name, path)
    }
    fn member_fields(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, Member)>, LayoutError> {
        (**self).member_fields(type_name, path)
    }
    fn origin(&self) -> Option<crate::LayoutOrigin> {
        (**self).origin()
    }
}

// The oracle keeps every type it found, so each answer below is one map
// lookup and a walk of that type's members.
impl Layouts for TypeOracle {
    fn origin(&self) -> Option<crate::LayoutOrigin> {
        Some(crate::LayoutOrigin::Dwarf)
    }

    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
        let layout = self
            .find_type(type_name)
            .map_err(|e| LayoutError::from_type_error(type_name, None, &e))?;
        if layout.size == 0 {
            return Err(LayoutError::new(
                type_name,
                None,
                format!("{} gives it no size", layout.object),
            ));
        }
        Ok(layout.size)
    }

    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        let field = self
            .offset_of(type_name, path)
            .map_err(|e| LayoutError::from_type_error(type_name, Some(path), &e))?;
        let size = field.size.ok_or_else(|| {
            LayoutError::new(
                type_name,
                Some(path),
                "the debug info gives the member no size",
            )
        })?;
        Ok(Member {
            offset: field.offset,
            size,
            array_len: field.array_len,
        })
    }

    fn member_offset(&self, type_name: &str, path: &str) -> Result<u64, LayoutError> {
        self.offset_of(type_name, path)
            .map(|f| f.offset)
            .map_err(|e| LayoutError::from_type_error(type_name, Some(path), &e))
    }

    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        let layout = self
            .find_type(type_name)
            .map_err(|e| LayoutError::from_type_error(type_name, None, &e))?;
        enumerators_of(layout, type_name, None)
    }

    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, LayoutError> {
        let err = |e| LayoutError::from_type_error(type_name, Some(path), &e);
        let field = self.offset_of(type_name, path).map_err(err)?;
        let layout = self.member_type(&field).map_err(err)?;
        enumerators_of(layout, type_name, Some(path))
    }

    fn member_fields(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, Member)>, LayoutError> {
        let err = |e| LayoutError::from_type_error(type_name, Some(path), &e);
        let field = self.offset_of(type_name, path).map_err(err)?;
        let layout = self.member_type(&field).map_err(err)?;
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
    layout: TypeLayout,
    type_name: &str,
    member: Option<&str>,
) -> Result<Vec<(String, i128)>, LayoutError> {
    if layout.kind != TypeKind::Enum {
        return Err(LayoutError::new(
            type_name,
            member,
            format!("{} is a {:?}, not an enumeration", layout.name, layout.kind),
        ));
    }
    Ok(layout
        .enumerators
        .into_iter()
        .map(|e| (e.name, e.value))
        .collect())
}

/// A member as a table keeps it: the size may be unknown when the table was
/// filled from a source that gives offsets only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct TableMember {
    offset: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    array_len: Option<u64>,
}

/// One type of a [`LayoutTable`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct TableType {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    members: BTreeMap<String, TableMember>,
    /// Member path -> the enumeration its type is.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    member_enums: BTreeMap<String, String>,
    /// Set for an enumeration: its enumerators in declaration order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    enumerators: Option<Vec<(String, i128)>>,
}

/// A fixed table of layouts: written by hand for a synthetic target, or
/// answered once from a library's DWARF ([`LayoutTable::answer`]) and kept
/// in a [`LayoutProfile`](crate::LayoutProfile) for the stripped copies of
/// that library.
///
/// ```
/// use mpidd_read::{Layouts, LayoutTable};
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LayoutTable {
    types: BTreeMap<String, TableType>,
}

impl LayoutTable {
    fn entry(&mut self, type_name: &str) -> &mut TableType {
        self.types.entry(type_name.to_string()).or_default()
    }

    /// Takes every type of `other` this table does not have, whole: the
    /// answers of a library loaded beside the one this table describes
    /// (UCX's under an MPI library's), kept in one table. A type both
    /// have stays this table's.
    ///
    /// ```
    /// use mpidd_read::{LayoutTable, Layouts};
    ///
    /// let mut mpi = LayoutTable::default();
    /// mpi.add_type("MPIR_Request", 400).add_type("ucp_request_t", 208);
    /// let mut ucx = LayoutTable::default();
    /// ucx.add_type("ucp_request_t", 216).add_type("ucp_worker_t", 4096);
    /// mpi.fill_from(&ucx);
    /// assert_eq!(mpi.size_of("ucp_request_t").unwrap(), 208);
    /// assert_eq!(mpi.size_of("ucp_worker_t").unwrap(), 4096);
    /// ```
    pub fn fill_from(&mut self, other: &LayoutTable) -> &mut Self {
        for (name, ty) in &other.types {
            self.types.entry(name.clone()).or_insert_with(|| ty.clone());
        }
        self
    }

    /// Takes the type `type_name` out, whole, with the enumerations its
    /// members name (`TYPE.member`), whose names begin with its own.
    pub(crate) fn remove_type(&mut self, type_name: &str) {
        self.types.remove(type_name);
        let prefix = format!("{type_name}.");
        self.types.retain(|name, _| !name.starts_with(&prefix));
    }

    /// Adds (or resizes) a type.
    pub fn add_type(&mut self, type_name: &str, size: u64) -> &mut Self {
        self.entry(type_name).size = Some(size);
        self
    }

    /// Adds a member by its dotted path.
    pub fn add_member(&mut self, type_name: &str, path: &str, offset: u64, size: u64) -> &mut Self {
        self.put_member(type_name, path, offset, Some(size), None)
    }

    /// Adds an array member of `len` elements (`size` is the whole array's).
    pub fn add_array(
        &mut self,
        type_name: &str,
        path: &str,
        offset: u64,
        size: u64,
        len: u64,
    ) -> &mut Self {
        self.put_member(type_name, path, offset, Some(size), Some(len))
    }

    /// Adds (or replaces, members and all) a type of `size` bytes with
    /// members whose offsets alone are known, as a debugger's callbacks
    /// would give them: [`member_offset`](Layouts::member_offset) answers
    /// for them, [`member`](Layouts::member) says their size is unknown.
    pub fn add_offsets(
        &mut self,
        type_name: &str,
        size: u64,
        members: &[(&str, u64)],
    ) -> &mut Self {
        self.entry(type_name).members.clear();
        self.add_type(type_name, size);
        for (path, offset) in members {
            self.put_member(type_name, path, *offset, None, None);
        }
        self
    }

    fn put_member(
        &mut self,
        type_name: &str,
        path: &str,
        offset: u64,
        size: Option<u64>,
        array_len: Option<u64>,
    ) -> &mut Self {
        self.entry(type_name).members.insert(
            path.to_string(),
            TableMember {
                offset,
                size,
                array_len,
            },
        );
        self
    }

    /// Says that the member at `path` of `type_name` is of the enumeration
    /// `enum_type` (added with [`add_enum`](Self::add_enum)).
    pub fn add_member_enum(&mut self, type_name: &str, path: &str, enum_type: &str) -> &mut Self {
        self.entry(type_name)
            .member_enums
            .insert(path.to_string(), enum_type.to_string());
        self
    }

    /// Adds an enumeration.
    pub fn add_enum(&mut self, type_name: &str, values: &[(&str, i128)]) -> &mut Self {
        self.entry(type_name).enumerators =
            Some(values.iter().map(|(n, v)| (n.to_string(), *v)).collect());
        self
    }

    /// The number of types (enumerations included) in the table.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether the table holds no type at all.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// Whether the table describes the type `type_name` (its size, a
    /// member or its enumerators), under exactly that name.
    pub fn has_type(&self, type_name: &str) -> bool {
        self.types.contains_key(type_name)
    }

    /// Asks `source` every question that `ask` asks and keeps the answers:
    /// the table then answers those questions exactly as `source` did.
    /// Every question `source` cannot answer is returned; the table holds
    /// the rest.
    pub fn record(
        source: &dyn Layouts,
        ask: &dyn Fn(&dyn Layouts),
    ) -> (LayoutTable, Vec<LayoutError>) {
        let recorder = RecordingLayouts {
            source,
            table: Mutex::new(LayoutTable::default()),
            unanswered: Mutex::new(Vec::new()),
        };
        ask(&recorder);
        (into_inner(recorder.table), into_inner(recorder.unanswered))
    }

    /// Asks `layouts` every question this table answers, as the source it
    /// was recorded from was asked: recording that gives this table again
    /// exactly when `layouts` agrees with it (how a profile is checked
    /// against the DWARF it was written from).
    pub fn replay(&self, layouts: &dyn Layouts) {
        for (name, t) in &self.types {
            if t.size.is_some() {
                let _ = layouts.size_of(name);
            }
            for (path, m) in &t.members {
                let _ = match m.size {
                    Some(_) => layouts.member(name, path).map(drop),
                    None => layouts.member_offset(name, path).map(drop),
                };
            }
            for path in t.member_enums.keys() {
                let _ = layouts.member_enumerators(name, path);
            }
            // Enumerations kept under a member's name come back through
            // member_enumerators above.
            let by_member = self
                .types
                .values()
                .any(|o| o.member_enums.values().any(|e| e == name));
            if t.enumerators.is_some() && !by_member {
                let _ = layouts.enumerators(name);
            }
        }
    }

    /// [`record`](Self::record) for the questions of `needs`.
    pub fn answer(source: &dyn Layouts, needs: &[LayoutNeed]) -> (LayoutTable, Vec<LayoutError>) {
        Self::record(source, &|l| LayoutNeed::ask_all(needs, l))
    }
}

impl Layouts for LayoutTable {
    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
        self.types
            .get(type_name)
            .and_then(|t| t.size)
            .ok_or_else(|| LayoutError::new(type_name, None, "no such type in the table"))
    }

    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        let m = self.table_member(type_name, path)?;
        let size = m.size.ok_or_else(|| {
            LayoutError::new(
                type_name,
                Some(path),
                "the table gives the member's offset but not its size",
            )
        })?;
        Ok(Member {
            offset: m.offset,
            size,
            array_len: m.array_len,
        })
    }

    fn member_offset(&self, type_name: &str, path: &str) -> Result<u64, LayoutError> {
        self.table_member(type_name, path).map(|m| m.offset)
    }

    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        self.types
            .get(type_name)
            .and_then(|t| t.enumerators.clone())
            .ok_or_else(|| LayoutError::new(type_name, None, "no such enumeration in the table"))
    }

    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, LayoutError> {
        let enum_type = self
            .types
            .get(type_name)
            .and_then(|t| t.member_enums.get(path))
            .ok_or_else(|| {
                LayoutError::new(
                    type_name,
                    Some(path),
                    "no enumeration for this member in the table",
                )
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
            .types
            .get(type_name)
            .into_iter()
            .flat_map(|t| t.members.iter())
            .filter_map(|(p, m)| {
                let name = p.strip_prefix(&prefix)?;
                if name.contains('.') {
                    return None;
                }
                Some((
                    name.to_string(),
                    Member {
                        offset: m.offset,
                        size: m.size?,
                        array_len: m.array_len,
                    },
                ))
            })
            .collect();
        if fields.is_empty() {
            return Err(LayoutError::new(
                type_name,
                Some(path),
                "no members under it in the table",
            ));
        }
        fields.sort_by_key(|(_, m)| m.offset);
        Ok(fields)
    }
}

impl LayoutTable {
    fn table_member(&self, type_name: &str, path: &str) -> Result<&TableMember, LayoutError> {
        self.types
            .get(type_name)
            .and_then(|t| t.members.get(path))
            .ok_or_else(|| LayoutError::new(type_name, Some(path), "no such member in the table"))
    }
}

/// The layout questions a decoder asks about one type, declared once beside
/// the decoder so that a [`LayoutProfile`](crate::LayoutProfile) can be
/// written for exactly what it reads.
///
/// ```
/// use mpidd_read::LayoutNeed;
///
/// const NEEDS: &[LayoutNeed] = &[
///     LayoutNeed::members("MPIR_Comm", &["rank", "local_size"]).with_member_enums(&["comm_kind"]),
///     LayoutNeed::enumeration("MPIR_Lang_t"),
/// ];
/// assert_eq!(NEEDS[0].members.len(), 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutNeed {
    /// The type (or, with `is_enum`, the enumeration) asked about.
    pub type_name: &'static str,
    /// Member paths whose offset and size are read.
    pub members: &'static [&'static str],
    /// Member paths whose own members are listed
    /// ([`Layouts::member_fields`]).
    pub member_fields: &'static [&'static str],
    /// Member paths whose enumerators are read
    /// ([`Layouts::member_enumerators`]).
    pub member_enums: &'static [&'static str],
    /// `type_name` is an enumeration whose enumerators are read; its size is
    /// not asked.
    pub is_enum: bool,
}

impl LayoutNeed {
    /// The size of `type_name` and the offset and size of `members`.
    pub const fn members(type_name: &'static str, members: &'static [&'static str]) -> Self {
        LayoutNeed {
            type_name,
            members,
            member_fields: &[],
            member_enums: &[],
            is_enum: false,
        }
    }

    /// The enumerators of the enumeration `type_name`.
    pub const fn enumeration(type_name: &'static str) -> Self {
        LayoutNeed {
            type_name,
            members: &[],
            member_fields: &[],
            member_enums: &[],
            is_enum: true,
        }
    }

    /// Also the enumerators of the types of these members.
    pub const fn with_member_enums(self, paths: &'static [&'static str]) -> Self {
        LayoutNeed {
            member_enums: paths,
            ..self
        }
    }

    /// Asks `layouts` every question of `needs`, ignoring the answers: for
    /// [`LayoutTable::record`] and for checking that a source has them all.
    pub fn ask_all(needs: &[LayoutNeed], layouts: &dyn Layouts) {
        for need in needs {
            let t = need.type_name;
            if need.is_enum {
                let _ = layouts.enumerators(t);
                continue;
            }
            let _ = layouts.size_of(t);
            for path in need.members {
                let _ = layouts.member(t, path);
            }
            for path in need.member_fields {
                let _ = layouts.member_fields(t, path);
            }
            for path in need.member_enums {
                let _ = layouts.member_enumerators(t, path);
            }
        }
    }

    /// Also the members of these struct members.
    pub const fn with_member_fields(self, paths: &'static [&'static str]) -> Self {
        LayoutNeed {
            member_fields: paths,
            ..self
        }
    }
}

/// Passes every question on to `source` and keeps each answer in `table`,
/// each failure in `unanswered`.
struct RecordingLayouts<'a> {
    source: &'a dyn Layouts,
    table: Mutex<LayoutTable>,
    unanswered: Mutex<Vec<LayoutError>>,
}

impl RecordingLayouts<'_> {
    fn keep<T>(
        &self,
        r: Result<T, LayoutError>,
        put: impl FnOnce(&mut LayoutTable, &T),
    ) -> Result<T, LayoutError> {
        match &r {
            Ok(v) => {
                if let Ok(mut t) = self.table.lock() {
                    put(&mut t, v);
                }
            }
            Err(e) => {
                if let Ok(mut u) = self.unanswered.lock() {
                    if !u.contains(e) {
                        u.push(e.clone());
                    }
                }
            }
        }
        r
    }
}

impl Layouts for RecordingLayouts<'_> {
    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
        self.keep(self.source.size_of(type_name), |t, &size| {
            t.add_type(type_name, size);
        })
    }

    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        self.keep(self.source.member(type_name, path), |t, m| {
            t.put_member(type_name, path, m.offset, Some(m.size), m.array_len);
        })
    }

    fn member_offset(&self, type_name: &str, path: &str) -> Result<u64, LayoutError> {
        self.keep(self.source.member_offset(type_name, path), |t, &offset| {
            let known = t.table_member(type_name, path).ok().copied();
            match known {
                // A size already learnt from `member` is kept.
                Some(m) if m.offset == offset => {}
                _ => {
                    t.put_member(type_name, path, offset, None, None);
                }
            }
        })
    }

    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        self.keep(self.source.enumerators(type_name), |t, values| {
            t.entry(type_name).enumerators = Some(values.clone());
        })
    }

    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, LayoutError> {
        self.keep(
            self.source.member_enumerators(type_name, path),
            |t, values| {
                // Kept under a name of its own, so that the table need not know
                // the private enumeration's tag.
                let enum_name = format!("{type_name}.{path}");
                t.entry(&enum_name).enumerators = Some(values.clone());
                t.add_member_enum(type_name, path, &enum_name);
            },
        )
    }

    fn member_fields(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, Member)>, LayoutError> {
        self.keep(self.source.member_fields(type_name, path), |t, fields| {
            for (name, m) in fields {
                t.put_member(
                    type_name,
                    &format!("{path}.{name}"),
                    m.offset,
                    Some(m.size),
                    m.array_len,
                );
            }
        })
    }
}

/// A mutex's value; a panic elsewhere while it was held does not lose it.
fn into_inner<T>(m: Mutex<T>) -> T {
    m.into_inner().unwrap_or_else(|e| e.into_inner())
}
