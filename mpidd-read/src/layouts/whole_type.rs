//! Asking about every member of a type, for a profile that must answer
//! questions nobody has listed: the handle decoders meet MPICH's objects one
//! by one and ask about each as they go, so a profile of their questions is
//! a profile of whole types.

use crate::dwarf::type_error::TypeError;
use crate::dwarf::type_layout::{MemberLayout, TypeKind};
use crate::dwarf::type_oracle::TypeOracle;
use crate::layouts::Layouts;

/// How deep and how wide [`ask_whole_type`] goes: nested structs are
/// followed to `max_depth` members deep, and at most `max_paths` member paths
/// of one type are asked. Both bound what a hostile or huge DWARF can cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WholeTypeLimits {
    /// Members nested deeper than this are not asked about.
    pub max_depth: u32,
    /// At most this many member paths of one type are asked about.
    pub max_paths: usize,
}

impl Default for WholeTypeLimits {
    /// Deep enough for MPICH's `MPIR_Request` (`dev.ch4.am.u.recv.source`
    /// is 6 deep) with room to spare; its 1,000 or so paths fit many times.
    fn default() -> Self {
        WholeTypeLimits {
            max_depth: 12,
            max_paths: 20_000,
        }
    }
}

/// What [`ask_whole_type`] asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WholeTypeAsked {
    /// Member paths asked about.
    pub paths: usize,
    /// Whether a limit stopped the walk before every member was asked.
    pub truncated: bool,
}

/// Asks `layouts` the size of `type_name` and the offset and size of every
/// member path `oracle` finds in it: nested struct and union members by
/// their dotted paths (through anonymous ones, as C11 names them), the
/// enumerators of enum-typed members, and the member list of every struct
/// member. An enumeration is asked for its enumerators. Pointers and array
/// elements are not followed: a decoder asks about what they point at, or
/// their element type, by that type's own name.
///
/// Fails only when `oracle` does not know `type_name`; what `layouts`
/// answers (or not) is for the caller to collect, as
/// [`LayoutTable::record`](crate::LayoutTable::record) does.
pub fn ask_whole_type(
    oracle: &TypeOracle,
    layouts: &dyn Layouts,
    type_name: &str,
    limits: WholeTypeLimits,
) -> Result<WholeTypeAsked, TypeError> {
    let layout = oracle.find_type(type_name)?;
    let mut asked = WholeTypeAsked::default();
    if layout.kind == TypeKind::Enum {
        let _ = layouts.enumerators(type_name);
        return Ok(asked);
    }
    let _ = layouts.size_of(type_name);
    let mut walk = Walk {
        oracle,
        layouts,
        type_name,
        limits,
        asked: &mut asked,
    };
    walk.members(&layout.members, "", 1);
    Ok(asked)
}

struct Walk<'a> {
    oracle: &'a TypeOracle,
    layouts: &'a dyn Layouts,
    type_name: &'a str,
    limits: WholeTypeLimits,
    asked: &'a mut WholeTypeAsked,
}

impl Walk<'_> {
    fn members(&mut self, members: &[MemberLayout], prefix: &str, depth: u32) {
        if depth > self.limits.max_depth {
            self.asked.truncated = true;
            return;
        }
        for field in members {
            if self.asked.paths >= self.limits.max_paths {
                self.asked.truncated = true;
                return;
            }
            let Some(name) = &field.name else {
                // An anonymous struct or union: its members are named as if
                // they were the outer type's own.
                self.members(&field.members, prefix, depth + 1);
                continue;
            };
            let path = format!("{prefix}{name}");
            self.asked.paths += 1;
            let _ = self.layouts.member(self.type_name, &path);
            if field.array_len.is_some() {
                continue;
            }
            let Ok(inner) = self.oracle.member_type(field) else {
                continue;
            };
            match inner.kind {
                TypeKind::Enum => {
                    let _ = self.layouts.member_enumerators(self.type_name, &path);
                }
                TypeKind::Struct | TypeKind::Union if !inner.members.is_empty() => {
                    let _ = self.layouts.member_fields(self.type_name, &path);
                    self.members(&inner.members, &format!("{path}."), depth + 1);
                }
                _ => {}
            }
        }
    }
}
