//! What a release family predicts of its hidden globals, as a profile
//! keeps it (`hidden_globals`): facts measured from a build of the
//! family's source (scripts/write-mpich-wheel-profile.sh), never code.

use serde::{Deserialize, Serialize};

/// How a family's hidden globals are found in a stripped library of the
/// family, as its file is: records its initialised data holds, exported
/// functions' references, strings beside a known one, and neighbours.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HiddenGlobalRecipes {
    /// The object they are in, as the profile names it (`libmpi.so.12`).
    pub object: String,
    /// String constants found beside another string (MPICH's version and
    /// device beside its configure line).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strings: Vec<StringRecipe>,
    /// Records of initialised data whose fields the family predicts (an
    /// object allocator: kind, object size, direct size), and the globals
    /// their relocated pointers name (its direct array).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<RecordRecipe>,
    /// Globals found from the addresses exported functions reference.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<ReferenceRecipe>,
}

/// What a string constant found beside another is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StringKind {
    /// A release version (`4.3.2`, `5.0.0a1`).
    Version,
    /// An MPICH device (`ch4:ucx ofi`, `ch3:nemesis`).
    Device,
}

/// A string constant found within a window of another string.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StringRecipe {
    /// The global it is (`MPII_Version_string`).
    pub symbol: String,
    /// The string it lies beside (`--with-device=`, found in the
    /// configure line), which must occur in the read-only data.
    pub near: String,
    /// What it looks like.
    pub is: StringKind,
}

/// A record of a section's initialised data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordRecipe {
    /// The global the record is (`MPIR_Comm_mem`).
    pub symbol: String,
    /// Its size in bytes.
    pub size: u64,
    /// The section that holds it (`.data`).
    pub section: String,
    /// Its alignment: only addresses it divides are tried.
    pub align: u64,
    /// Fields with the values the family's initialiser gives.
    pub equal: Vec<InitialValue>,
    /// Pointer fields, relocated by the dynamic linker, and the globals
    /// they point at.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pointers: Vec<PointerField>,
}

/// A field and the value the initialiser gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InitialValue {
    /// Its offset in the record.
    pub offset: u64,
    /// Its size: 1, 2, 4 or 8 bytes, in the target's byte order.
    pub size: u64,
    /// The value.
    pub value: u64,
}

/// A pointer field of a record and the global it points at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointerField {
    /// Its offset in the record.
    pub offset: u64,
    /// The global it points at (`MPIR_Comm_direct`).
    pub symbol: String,
    /// That global's size.
    pub size: u64,
    /// The section that global must be in (`.bss`).
    pub section: String,
}

/// A global found from the addresses exported functions reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReferenceRecipe {
    /// The global (`MPIR_Process`).
    pub symbol: String,
    /// Its size.
    pub size: u64,
    /// Its alignment as the family's compiler gives it: only starts it
    /// divides are candidates.
    #[serde(default = "one")]
    pub align: u64,
    /// The sections it may be in (`.data`, `.bss`).
    pub sections: Vec<String>,
    /// The exported functions that reference it, each with the offsets
    /// into it that the family's build references.
    pub functions: Vec<FunctionReferences>,
    /// Where the family's stand-in library put it. Globals that one
    /// object defines keep their distances in every library linked from
    /// that object, which undoes a tie that their sizes leave (a request
    /// pool's allocator and builtin array, of one size, referenced by the
    /// same functions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standin_address: Option<u64>,
}

/// An exported function and the offsets into one global it references.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionReferences {
    /// The function, as the dynamic symbol table names it.
    pub function: String,
    /// The offsets into the global its instructions address.
    pub offsets: Vec<u64>,
}

/// An alignment that rules nothing out.
fn one() -> u64 {
    1
}
