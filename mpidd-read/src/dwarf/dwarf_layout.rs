//! Reads one object's type DIEs: follows typedefs and qualifiers, sizes
//! types, lays out struct and union members (bit-fields, anonymous members,
//! arrays) and renders C type names.
//!
//! Every chain of references is followed at most [`MAX_CHAIN`] steps and
//! nesting is capped at [`MAX_NESTING`], so corrupt DWARF whose `DW_AT_type`
//! references form a cycle ends in [`TypeError::LimitExceeded`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Display;
use std::rc::Rc;

use gimli::{
    AttributeValue, DebuggingInformationEntry, DwAt, Endianity, Operation, Reader, UnitOffset,
};

use crate::dwarf::dwarf_file::{DwarfFile, DwarfReader};
use crate::dwarf::dwarf_index::{Candidate, TagClass};
use crate::dwarf::dwarf_units::{
    header_at, open_unit, same_unit, DieRef, UnitDirectory, UnitSection,
};
use crate::dwarf::type_error::TypeError;
use crate::dwarf::type_layout::{
    BitField, Enumerator, MemberLayout, TypeHandle, TypeKind, TypeLayout,
};

/// Most steps along one chain of type references (typedefs, qualifiers,
/// pointers, array elements).
pub(crate) const MAX_CHAIN: u64 = 64;
/// Most levels of anonymous members inside one another.
pub(crate) const MAX_NESTING: u64 = 32;

type Unit<'a> = gimli::Unit<DwarfReader<'a>>;
type Entry<'a> = DebuggingInformationEntry<DwarfReader<'a>>;

/// A DIE read, with its unit.
pub(crate) struct Die<'a> {
    pub(crate) at: DieRef,
    unit: Rc<Unit<'a>>,
    pub(crate) entry: Entry<'a>,
}

/// What a chain of typedefs and qualifiers ends in.
pub(crate) enum Resolved {
    /// Nothing: `void`.
    Void,
    /// A type with a definition here.
    Type(DieRef),
    /// A declaration only; the definition must be looked up by name.
    Declaration {
        /// `struct`, `union` or `enum`.
        class: TagClass,
        /// The tag.
        name: String,
    },
}

/// Reads the types of one object for the length of one query.
///
/// Not `Send` or `Sync`: it keeps the units it opened in `Rc`s for that
/// one query on one thread. What is shared across threads and queries is
/// the [`TypeOracle`](crate::TypeOracle) above it, which is both.
pub(crate) struct TypeReader<'a> {
    object: &'a str,
    object_index: usize,
    file: &'a DwarfFile,
    directory: &'a UnitDirectory,
    dwarf: gimli::Dwarf<DwarfReader<'a>>,
    units: RefCell<HashMap<(UnitSection, usize), Rc<Unit<'a>>>>,
}

impl<'a> TypeReader<'a> {
    pub(crate) fn new(
        object: &'a str,
        object_index: usize,
        file: &'a DwarfFile,
        directory: &'a UnitDirectory,
    ) -> Self {
        TypeReader {
            object,
            object_index,
            file,
            directory,
            dwarf: file.dwarf(),
            units: RefCell::new(HashMap::new()),
        }
    }

    fn err(&self, at: DieRef, reason: impl Display) -> TypeError {
        TypeError::Dwarf {
            object: self.object.to_string(),
            context: at.describe(),
            reason: reason.to_string(),
        }
    }

    fn unit(&self, at: DieRef) -> Result<Rc<Unit<'a>>, TypeError> {
        let key = (at.section, at.unit);
        if let Some(unit) = self.units.borrow().get(&key) {
            return Ok(unit.clone());
        }
        let unit = header_at(&self.dwarf, at.section, at.unit)
            .and_then(|header| open_unit(&self.dwarf, header, self.file.abbrevs()))
            .map_err(|e| self.err(at, format!("its unit: {e}")))?;
        let unit = Rc::new(unit);
        self.units.borrow_mut().insert(key, unit.clone());
        Ok(unit)
    }

    /// Reads the DIE at `at`.
    pub(crate) fn die(&self, at: DieRef) -> Result<Die<'a>, TypeError> {
        let unit = self.unit(at)?;
        let entry = unit
            .entry(UnitOffset(at.die))
            .map_err(|e| self.err(at, e))?;
        Ok(Die { at, unit, entry })
    }

    /// The DIE's `DW_AT_name`.
    pub(crate) fn name(&self, die: &Die<'a>) -> Result<Option<String>, TypeError> {
        let Some(value) = die.entry.attr_value(gimli::DW_AT_name) else {
            return Ok(None);
        };
        let text = self
            .dwarf
            .attr_string(&die.unit, value)
            .map(|r| r.to_string_lossy().into_owned())
            .map_err(|e| self.err(die.at, format!("its name: {e}")))?;
        Ok(Some(text))
    }

    /// Reads a candidate from the name index and checks it really is a
    /// type DIE called `name`, returning its class as the DIE says: indexes
    /// can be stale, and gdb's files base types as structs.
    pub(crate) fn check(
        &self,
        candidate: Candidate,
        name: &str,
    ) -> Result<Option<(Die<'a>, TagClass)>, TypeError> {
        let die = self.die(candidate.die)?;
        let Some(class) = TagClass::of(die.entry.tag()) else {
            return Ok(None);
        };
        Ok((self.name(&die)?.as_deref() == Some(name)).then_some((die, class)))
    }

    /// Whether the DIE is only a declaration.
    pub(crate) fn is_declaration(die: &Die<'a>) -> bool {
        matches!(
            die.entry.attr_value(gimli::DW_AT_declaration),
            Some(AttributeValue::Flag(true))
        )
    }

    /// The DIE an attribute refers to.
    fn reference(&self, die: &Die<'a>, name: DwAt) -> Result<Option<DieRef>, TypeError> {
        let Some(value) = die.entry.attr_value(name) else {
            return Ok(None);
        };
        let target = match value {
            AttributeValue::UnitRef(offset) => Some(same_unit(die.at, offset)),
            AttributeValue::DebugInfoRef(offset) => self.directory.at_info_offset(offset.0),
            AttributeValue::DebugTypesRef(signature) => self.directory.by_signature(signature.0),
            AttributeValue::DebugInfoRefSup(_) => {
                return Err(self.err(
                    die.at,
                    "refers into a supplementary (dwz) debug file, which is not read",
                ))
            }
            other => return Err(self.err(die.at, format!("{name} is {other:?}, not a reference"))),
        };
        target
            .map(Some)
            .ok_or_else(|| self.err(die.at, format!("{name} refers to no unit here")))
    }

    /// The DIE's `DW_AT_type`.
    fn type_of(&self, die: &Die<'a>) -> Result<Option<DieRef>, TypeError> {
        self.reference(die, gimli::DW_AT_type)
    }

    /// Follows typedefs and qualifiers from `at`.
    pub(crate) fn resolve(&self, at: DieRef) -> Result<Resolved, TypeError> {
        let mut at = at;
        for _ in 0..MAX_CHAIN {
            let die = self.die(at)?;
            // A skeleton whose definition is in a type unit.
            if let Some(definition) = self.reference(&die, gimli::DW_AT_signature)? {
                at = definition;
                continue;
            }
            if is_alias(die.entry.tag()) {
                match self.type_of(&die)? {
                    Some(next) => at = next,
                    None => return Ok(Resolved::Void),
                }
                continue;
            }
            if Self::is_declaration(&die) {
                if let (Some(class), Some(name)) = (TagClass::of(die.entry.tag()), self.name(&die)?)
                {
                    return Ok(Resolved::Declaration { class, name });
                }
            }
            return Ok(Resolved::Type(at));
        }
        Err(self.limit("typedef and qualifier chain", MAX_CHAIN))
    }

    fn limit(&self, what: &str, limit: u64) -> TypeError {
        TypeError::LimitExceeded {
            what: format!("{} in {}", what, self.object),
            limit,
        }
    }

    /// The layout of the type at `at`, which [`resolve`](Self::resolve)
    /// found defined, reported under `name`.
    pub(crate) fn layout(&self, at: DieRef, name: &str) -> Result<TypeLayout, TypeError> {
        let die = self.die(at)?;
        let kind = kind_of(die.entry.tag());
        let size = match self.size_of(at, 0)? {
            Some(size) => size,
            None if matches!(kind, TypeKind::Struct | TypeKind::Union | TypeKind::Base) => {
                return Err(self.err(at, "the type has no DW_AT_byte_size"))
            }
            None => 0,
        };
        let members = match kind {
            TypeKind::Struct | TypeKind::Union => self.members(&die, 0, 0)?,
            _ => Vec::new(),
        };
        let enumerators = match kind {
            TypeKind::Enum => self.enumerators(&die)?,
            _ => Vec::new(),
        };
        Ok(TypeLayout {
            name: name.to_string(),
            kind,
            size,
            object: self.object.to_string(),
            members,
            enumerators,
        })
    }

    /// The enumerators of the enumeration `parent`.
    fn enumerators(&self, parent: &Die<'a>) -> Result<Vec<Enumerator>, TypeError> {
        let mut entries = Vec::new();
        self.children(parent, |child| {
            if child.tag() == gimli::DW_TAG_enumerator {
                entries.push(child.clone());
            }
            Ok(())
        })?;
        entries
            .into_iter()
            .map(|entry| {
                let die = Die {
                    at: same_unit(parent.at, entry.offset()),
                    unit: parent.unit.clone(),
                    entry,
                };
                let name = self
                    .name(&die)?
                    .ok_or_else(|| self.err(die.at, "an enumerator without a name"))?;
                let value = constant(&die.entry, gimli::DW_AT_const_value)
                    .ok_or_else(|| self.err(die.at, format!("enumerator {name} has no value")))?;
                Ok(Enumerator { name, value })
            })
            .collect()
    }

    /// `sizeof` the type at `at`, if the DWARF says.
    pub(crate) fn size_of(&self, at: DieRef, depth: u64) -> Result<Option<u64>, TypeError> {
        if depth >= MAX_CHAIN {
            return Err(self.limit("type size chain", MAX_CHAIN));
        }
        let die = self.die(at)?;
        if let Some(definition) = self.reference(&die, gimli::DW_AT_signature)? {
            return self.size_of(definition, depth + 1);
        }
        if let Some(size) = constant(&die.entry, gimli::DW_AT_byte_size) {
            return u64::try_from(size)
                .map(Some)
                .map_err(|_| self.err(at, format!("negative byte size {size}")));
        }
        match die.entry.tag() {
            gimli::DW_TAG_pointer_type
            | gimli::DW_TAG_reference_type
            | gimli::DW_TAG_rvalue_reference_type => {
                Ok(Some(u64::from(die.unit.header.address_size())))
            }
            gimli::DW_TAG_array_type => {
                let Some(element) = self.type_of(&die)? else {
                    return Ok(None);
                };
                let Some(mut size) = self.size_of(element, depth + 1)? else {
                    return Ok(None);
                };
                for count in self.dimensions(&die)? {
                    let Some(count) = count else {
                        return Ok(None);
                    };
                    size = size
                        .checked_mul(count)
                        .ok_or_else(|| self.err(at, "array size overflows 64 bits"))?;
                }
                Ok(Some(size))
            }
            tag if is_alias(tag) || tag == gimli::DW_TAG_enumeration_type => {
                match self.type_of(&die)? {
                    Some(next) => self.size_of(next, depth + 1),
                    None => Ok(None),
                }
            }
            _ => Ok(None),
        }
    }

    /// An array's element counts, outermost first; `None` for a dimension
    /// without bounds (a flexible array member).
    fn dimensions(&self, array: &Die<'a>) -> Result<Vec<Option<u64>>, TypeError> {
        let mut counts = Vec::new();
        self.children(array, |child| {
            match child.tag() {
                gimli::DW_TAG_subrange_type => counts.push(subrange_count(child)),
                // An array indexed by an enumeration.
                gimli::DW_TAG_enumeration_type => counts.push(None),
                _ => {}
            }
            Ok(())
        })?;
        Ok(counts)
    }

    /// Calls `each` with every direct child of `parent`.
    fn children(
        &self,
        parent: &Die<'a>,
        mut each: impl FnMut(&Entry<'a>) -> Result<(), TypeError>,
    ) -> Result<(), TypeError> {
        if !parent.entry.has_children() {
            return Ok(());
        }
        let unit = &parent.unit;
        let mut tree = unit
            .header
            .entries_tree(&unit.abbreviations, Some(UnitOffset(parent.at.die)))
            .map_err(|e| self.err(parent.at, e))?;
        let root = tree.root().map_err(|e| self.err(parent.at, e))?;
        let mut children = root.children();
        while let Some(child) = children.next().map_err(|e| self.err(parent.at, e))? {
            each(child.entry())?;
        }
        Ok(())
    }

    /// The members of the struct or union `parent`, with offsets from
    /// `base`.
    fn members(
        &self,
        parent: &Die<'a>,
        base: u64,
        depth: u64,
    ) -> Result<Vec<MemberLayout>, TypeError> {
        if depth >= MAX_NESTING {
            return Err(self.limit("nesting of anonymous members", MAX_NESTING));
        }
        let mut entries = Vec::new();
        self.children(parent, |child| {
            if matches!(
                child.tag(),
                gimli::DW_TAG_member | gimli::DW_TAG_inheritance
            ) {
                entries.push(child.clone());
            }
            Ok(())
        })?;
        entries
            .into_iter()
            .map(|entry| {
                let die = Die {
                    at: same_unit(parent.at, entry.offset()),
                    unit: parent.unit.clone(),
                    entry,
                };
                self.member(&die, base, depth)
            })
            .collect()
    }

    /// One member, at `base` plus its own location.
    fn member(&self, die: &Die<'a>, base: u64, depth: u64) -> Result<MemberLayout, TypeError> {
        let name = match die.entry.tag() {
            // A C++ base class is reached like an anonymous member.
            gimli::DW_TAG_inheritance => None,
            _ => self.name(die)?,
        };
        let ty = self.type_of(die)?;
        let location = self.member_location(die)?;
        let size = match ty {
            Some(ty) => self.size_of(ty, 0)?,
            None => None,
        };
        let start = base
            .checked_mul(8)
            .and_then(|b| b.checked_add(location.checked_mul(8)?))
            .ok_or_else(|| self.err(die.at, "member offset overflows"))?;
        let (bit_start, bits) = match constant(&die.entry, gimli::DW_AT_bit_size) {
            Some(bit_size) => {
                let bit_size = u64::try_from(bit_size)
                    .map_err(|_| self.err(die.at, format!("bit size {bit_size}")))?;
                let from_start = self.bit_position(die, bit_size, size)?;
                let total = i128::from(start) + from_start;
                let total = u64::try_from(total)
                    .map_err(|_| self.err(die.at, format!("bit-field starts at bit {total}")))?;
                (
                    total,
                    Some(BitField {
                        bit_offset: total % 8,
                        bit_size,
                    }),
                )
            }
            None => (start, None),
        };
        let offset = bit_start / 8;
        let resolved = match ty {
            Some(ty) => self.resolve(ty)?,
            None => Resolved::Void,
        };
        let (array_len, members) = match resolved {
            Resolved::Type(inner) => {
                let inner_die = self.die(inner)?;
                match kind_of(inner_die.entry.tag()) {
                    TypeKind::Array => (
                        self.dimensions(&inner_die)?.first().copied().flatten(),
                        Vec::new(),
                    ),
                    TypeKind::Struct | TypeKind::Union if name.is_none() => {
                        (None, self.members(&inner_die, offset, depth + 1)?)
                    }
                    _ => (None, Vec::new()),
                }
            }
            _ => (None, Vec::new()),
        };
        Ok(MemberLayout {
            name,
            offset,
            size,
            bits,
            type_name: Some(self.type_name(ty)),
            array_len,
            members,
            ty: ty.map(|die| TypeHandle {
                object: self.object_index,
                die,
            }),
        })
    }

    /// A bit-field's first bit, counted from its member location in DWARF
    /// 4's numbering (see [`BitField`]).
    fn bit_position(
        &self,
        die: &Die<'a>,
        bit_size: u64,
        type_size: Option<u64>,
    ) -> Result<i128, TypeError> {
        if let Some(offset) = constant(&die.entry, gimli::DW_AT_data_bit_offset) {
            return Ok(offset);
        }
        let Some(bit_offset) = constant(&die.entry, gimli::DW_AT_bit_offset) else {
            return Ok(0);
        };
        // DWARF 2 and 3 count from the most significant bit of a storage
        // unit of DW_AT_byte_size bytes to the field's most significant bit.
        if self.file.endian().is_big_endian() {
            return Ok(bit_offset);
        }
        let unit_bytes = match constant(&die.entry, gimli::DW_AT_byte_size) {
            Some(size) => size,
            None => i128::from(type_size.ok_or_else(|| {
                self.err(
                    die.at,
                    "a DW_AT_bit_offset bit-field without a storage size",
                )
            })?),
        };
        Ok(unit_bytes * 8 - bit_offset - i128::from(bit_size))
    }

    /// `DW_AT_data_member_location`: a constant, or a simple expression of
    /// the kind DWARF 2 producers wrote (`DW_OP_plus_uconst n`).
    fn member_location(&self, die: &Die<'a>) -> Result<u64, TypeError> {
        let Some(value) = die.entry.attr_value(gimli::DW_AT_data_member_location) else {
            // Union members, and bit-fields with DW_AT_data_bit_offset.
            return Ok(0);
        };
        match value {
            AttributeValue::Udata(v) => Ok(v),
            AttributeValue::Sdata(v) => u64::try_from(v)
                .map_err(|_| self.err(die.at, format!("member location {v} is negative"))),
            AttributeValue::Exprloc(expr) => self.evaluate(die, expr.0, die.unit.header.encoding()),
            other => Err(self.err(
                die.at,
                format!("member location {other:?} is not a constant or an expression"),
            )),
        }
    }

    /// Evaluates a member-location expression with the struct's address,
    /// taken as 0, on the stack.
    fn evaluate(
        &self,
        die: &Die<'a>,
        mut bytes: DwarfReader<'a>,
        encoding: gimli::Encoding,
    ) -> Result<u64, TypeError> {
        let mut stack = vec![0u64];
        let bad =
            |reason: String| self.err(die.at, format!("member location expression: {reason}"));
        // Every operation consumes at least one byte, so this ends.
        while !bytes.is_empty() {
            let op = Operation::parse(&mut bytes, encoding).map_err(|e| bad(e.to_string()))?;
            match op {
                Operation::UnsignedConstant { value } => stack.push(value),
                Operation::SignedConstant { value } => stack.push(value as u64),
                Operation::PlusConstant { value } => {
                    let top = stack.last_mut().ok_or_else(|| bad("empty stack".into()))?;
                    *top = top.wrapping_add(value);
                }
                Operation::Plus | Operation::Minus => {
                    let (Some(b), Some(a)) = (stack.pop(), stack.pop()) else {
                        return Err(bad("too few operands".into()));
                    };
                    stack.push(match op {
                        Operation::Plus => a.wrapping_add(b),
                        _ => a.wrapping_sub(b),
                    });
                }
                other => return Err(bad(format!("{other:?} is not supported"))),
            }
        }
        let result = stack.pop().ok_or_else(|| bad("empty stack".into()))?;
        // Offsets of a real struct are small; a wrapped one is corrupt.
        if result > i64::MAX as u64 {
            return Err(bad(format!("offset {result:#x} is negative")));
        }
        Ok(result)
    }

    /// The C name of the type at `at` (`void` for `None`), best effort.
    pub(crate) fn type_name(&self, at: Option<DieRef>) -> String {
        self.render(at, String::new(), 0)
    }

    /// Renders a C declarator: `decl` is what goes around the name.
    fn render(&self, at: Option<DieRef>, decl: String, depth: u64) -> String {
        let join = |base: &str, decl: String| {
            if decl.is_empty() {
                base.to_string()
            } else {
                format!("{base} {decl}")
            }
        };
        let Some(at) = at else {
            return join("void", decl);
        };
        if depth >= MAX_CHAIN {
            return join("...", decl);
        }
        let Ok(die) = self.die(at) else {
            return join("?", decl);
        };
        if let Ok(Some(definition)) = self.reference(&die, gimli::DW_AT_signature) {
            return self.render(Some(definition), decl, depth + 1);
        }
        let name = self.name(&die).ok().flatten();
        let next = self.type_of(&die).ok().flatten();
        let tagged = |keyword: &str| match &name {
            Some(n) => format!("{keyword} {n}"),
            None => format!("{keyword} {{...}}"),
        };
        let wrapped = |decl: String| {
            if decl.starts_with('*') || decl.starts_with('&') {
                format!("({decl})")
            } else {
                decl
            }
        };
        match die.entry.tag() {
            gimli::DW_TAG_structure_type => join(&tagged("struct"), decl),
            gimli::DW_TAG_class_type => join(&tagged("class"), decl),
            gimli::DW_TAG_union_type => join(&tagged("union"), decl),
            gimli::DW_TAG_enumeration_type => join(&tagged("enum"), decl),
            gimli::DW_TAG_pointer_type => self.render(next, format!("*{decl}"), depth + 1),
            gimli::DW_TAG_reference_type => self.render(next, format!("&{decl}"), depth + 1),
            gimli::DW_TAG_const_type
            | gimli::DW_TAG_volatile_type
            | gimli::DW_TAG_atomic_type
            | gimli::DW_TAG_restrict_type => {
                let qualifier = match die.entry.tag() {
                    gimli::DW_TAG_const_type => "const",
                    gimli::DW_TAG_volatile_type => "volatile",
                    gimli::DW_TAG_atomic_type => "_Atomic",
                    _ => "restrict",
                };
                let points = next
                    .and_then(|n| self.die(n).ok())
                    .is_some_and(|d| d.entry.tag() == gimli::DW_TAG_pointer_type);
                if points {
                    // Qualifies the pointer itself: `char *const`.
                    self.render(next, join(qualifier, decl), depth + 1)
                } else {
                    format!("{qualifier} {}", self.render(next, decl, depth + 1))
                }
            }
            gimli::DW_TAG_array_type => {
                let dims: String = self
                    .dimensions(&die)
                    .unwrap_or_default()
                    .iter()
                    .map(|count| match count {
                        Some(n) => format!("[{n}]"),
                        None => "[]".to_string(),
                    })
                    .collect();
                self.render(next, format!("{}{dims}", wrapped(decl)), depth + 1)
            }
            gimli::DW_TAG_subroutine_type => {
                let mut params = Vec::new();
                let _ = self.children(&die, |child| {
                    match child.tag() {
                        gimli::DW_TAG_formal_parameter => {
                            let child = Die {
                                at: same_unit(die.at, child.offset()),
                                unit: die.unit.clone(),
                                entry: child.clone(),
                            };
                            let ty = self.type_of(&child).ok().flatten();
                            params.push(self.render(ty, String::new(), depth + 1));
                        }
                        gimli::DW_TAG_unspecified_parameters => params.push("...".into()),
                        _ => {}
                    }
                    Ok(())
                });
                let prototyped = matches!(
                    die.entry.attr_value(gimli::DW_AT_prototyped),
                    Some(AttributeValue::Flag(true))
                );
                if params.is_empty() && prototyped {
                    params.push("void".into());
                }
                let decl = format!("{}({})", wrapped(decl), params.join(", "));
                self.render(next, decl, depth + 1)
            }
            _ => join(name.as_deref().unwrap_or("?"), decl),
        }
    }

    /// The address size of the first unit: a data pointer's size.
    pub(crate) fn address_size(&self) -> Option<u64> {
        let start = self.directory.first_info_unit()?;
        let header = header_at(&self.dwarf, UnitSection::Info, start).ok()?;
        Some(u64::from(header.address_size()))
    }
}

/// Tags that only rename or qualify another type.
fn is_alias(tag: gimli::DwTag) -> bool {
    matches!(
        tag,
        gimli::DW_TAG_typedef
            | gimli::DW_TAG_const_type
            | gimli::DW_TAG_volatile_type
            | gimli::DW_TAG_restrict_type
            | gimli::DW_TAG_atomic_type
            | gimli::DW_TAG_immutable_type
            | gimli::DW_TAG_packed_type
            | gimli::DW_TAG_shared_type
    )
}

fn kind_of(tag: gimli::DwTag) -> TypeKind {
    match tag {
        gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type => TypeKind::Struct,
        gimli::DW_TAG_union_type => TypeKind::Union,
        gimli::DW_TAG_enumeration_type => TypeKind::Enum,
        gimli::DW_TAG_base_type => TypeKind::Base,
        gimli::DW_TAG_pointer_type
        | gimli::DW_TAG_reference_type
        | gimli::DW_TAG_rvalue_reference_type
        | gimli::DW_TAG_ptr_to_member_type => TypeKind::Pointer,
        gimli::DW_TAG_array_type => TypeKind::Array,
        _ => TypeKind::Other,
    }
}

/// An integer attribute in any constant form.
fn constant(entry: &Entry<'_>, name: DwAt) -> Option<i128> {
    match entry.attr(name)?.raw_value() {
        AttributeValue::Sdata(v) => Some(i128::from(v)),
        AttributeValue::Udata(v) => Some(i128::from(v)),
        AttributeValue::Data1(v) => Some(i128::from(v)),
        AttributeValue::Data2(v) => Some(i128::from(v)),
        AttributeValue::Data4(v) => Some(i128::from(v)),
        AttributeValue::Data8(v) => Some(i128::from(v)),
        _ => None,
    }
}

/// A subrange's element count: `DW_AT_count`, or the bounds (C arrays
/// start at 0). An upper bound of -1 is a zero-length array.
fn subrange_count(entry: &Entry<'_>) -> Option<u64> {
    if let Some(count) = constant(entry, gimli::DW_AT_count) {
        return u64::try_from(count).ok();
    }
    let upper = constant(entry, gimli::DW_AT_upper_bound)?;
    let lower = constant(entry, gimli::DW_AT_lower_bound).unwrap_or(0);
    if upper == -1 || upper == i128::from(u64::MAX) {
        return Some(0);
    }
    u64::try_from(upper - lower + 1).ok()
}
