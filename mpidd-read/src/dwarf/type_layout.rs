//! What the type oracle answers: a type's size and kind, and its members'
//! offsets, sizes, bit-field positions and C type names. These are owned
//! values, independent of the files they were read from.

use mpidd_types::ByteOrder;
use serde::Serialize;

use crate::dwarf::dwarf_units::DieRef;

/// What kind of type a layout describes, after typedefs and qualifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum TypeKind {
    /// A struct (or C++ class).
    Struct,
    /// A union.
    Union,
    /// An enumeration.
    Enum,
    /// A base type: `int`, `double`, `_Bool`...
    Base,
    /// A pointer or reference.
    Pointer,
    /// An array.
    Array,
    /// Anything else: a function type, `void`.
    Other,
}

/// The size and members of a type, as one object's DWARF defines it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TypeLayout {
    /// The name asked for (or, from
    /// [`member_type`](crate::TypeOracle::member_type), the member's type
    /// name).
    pub name: String,
    /// What it is, typedefs resolved.
    pub kind: TypeKind,
    /// `sizeof`, in bytes (0 when the DWARF gives none, as for functions).
    pub size: u64,
    /// The object whose DWARF defined it, by the name it was added under.
    pub object: String,
    /// For a struct or union, its direct members in declaration order.
    /// Anonymous struct and union members have no name and carry their own
    /// members in [`MemberLayout::members`].
    pub members: Vec<MemberLayout>,
    /// For an enumeration, its enumerators in declaration order. Empty
    /// otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub enumerators: Vec<Enumerator>,
}

/// One named value of an enumeration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Enumerator {
    /// Its name, e.g. `MPIR_COMM_KIND__INTERCOMM`.
    pub name: String,
    /// Its value (`DW_AT_const_value`). Fixed-size forms are taken as
    /// unsigned, as the DWARF does not say their signedness; C compilers
    /// write negative enumerators as `DW_FORM_sdata`.
    pub value: i128,
}

impl TypeLayout {
    /// The value of the enumerator called `name`, for an enumeration.
    pub fn enumerator(&self, name: &str) -> Option<i128> {
        self.enumerators
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.value)
    }

    /// The name of the first enumerator whose value is `value`.
    pub fn enumerator_name(&self, value: i128) -> Option<&str> {
        self.enumerators
            .iter()
            .find(|e| e.value == value)
            .map(|e| e.name.as_str())
    }

    /// The member called `name`: a direct member, or (C11) a member of an
    /// anonymous struct or union member at any depth. Its offset is from the
    /// start of this type.
    pub fn field(&self, name: &str) -> Option<&MemberLayout> {
        find_field(&self.members, name)
    }
}

fn find_field<'a>(members: &'a [MemberLayout], name: &str) -> Option<&'a MemberLayout> {
    members
        .iter()
        .find(|f| f.name.as_deref() == Some(name))
        .or_else(|| {
            members
                .iter()
                .filter(|f| f.name.is_none())
                .find_map(|f| find_field(&f.members, name))
        })
}

/// One member of a struct or union.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemberLayout {
    /// Its name; `None` for an anonymous struct or union member.
    pub name: Option<String>,
    /// Byte offset from the start of the outermost type asked about. For a
    /// bit-field, the byte that holds its first bit.
    pub offset: u64,
    /// Byte size of the member's type (for an array, of the whole array);
    /// `None` when the DWARF does not say (a flexible array, a function).
    pub size: Option<u64>,
    /// Set for bit-fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bits: Option<BitField>,
    /// The member's C type, e.g. `int`, `struct MPIR_Comm *`, `char [128]`
    /// (best effort).
    pub type_name: Option<String>,
    /// For an array member, its number of elements (the outermost
    /// dimension: 2 for `int a[2][3]`); `None` when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array_len: Option<u64>,
    /// For an anonymous struct or union member, that type's members, with
    /// offsets from the same outermost type. Empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberLayout>,
    /// Where the member's type is, for
    /// [`member_type`](crate::TypeOracle::member_type).
    #[serde(skip)]
    pub(crate) ty: Option<TypeHandle>,
}

/// Where a bit-field's bits are.
///
/// Bits are numbered as DWARF 4 and 5 number them
/// (`DW_AT_data_bit_offset`): on a little-endian target from the least
/// significant bit of the byte at [`MemberLayout::offset`] upwards, on a big-endian
/// one from its most significant bit downwards. DWARF 2 and 3's
/// `DW_AT_bit_offset` is converted to that numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BitField {
    /// Bits before the field's first bit, counted from [`MemberLayout::offset`]:
    /// always less than 8.
    pub bit_offset: u64,
    /// The field's width in bits.
    pub bit_size: u64,
}

impl BitField {
    /// How many bytes from [`MemberLayout::offset`] hold the field.
    pub fn byte_span(&self) -> u64 {
        (self.bit_offset + self.bit_size).div_ceil(8)
    }

    /// The field's value, zero-extended, from `bytes` read at
    /// [`MemberLayout::offset`] in the target's byte order. `None` when `bytes`
    /// is shorter than [`byte_span`](Self::byte_span) or the field is
    /// wider than 64 bits.
    ///
    /// ```
    /// use mpidd_read::BitField;
    /// use mpidd_types::ByteOrder;
    ///
    /// // unsigned b : 5, starting 3 bits into the byte.
    /// let bits = BitField { bit_offset: 3, bit_size: 5 };
    /// assert_eq!(bits.extract(&[0b1010_1000], ByteOrder::Little), Some(0b10101));
    /// assert_eq!(bits.extract(&[0b0001_0101], ByteOrder::Big), Some(0b10101));
    /// ```
    pub fn extract(&self, bytes: &[u8], order: ByteOrder) -> Option<u64> {
        if self.bit_size == 0 || self.bit_size > 64 || self.bit_offset >= 8 {
            return None;
        }
        let span = usize::try_from(self.byte_span()).ok()?;
        let bytes = bytes.get(..span)?;
        // At most 9 bytes: 7 bits of offset and 64 of field.
        let word = match order {
            ByteOrder::Little => bytes
                .iter()
                .rev()
                .fold(0u128, |w, &b| (w << 8) | u128::from(b)),
            ByteOrder::Big => bytes.iter().fold(0u128, |w, &b| (w << 8) | u128::from(b)),
        };
        let shift = match order {
            ByteOrder::Little => self.bit_offset,
            ByteOrder::Big => span as u64 * 8 - self.bit_offset - self.bit_size,
        };
        let mask = (1u128 << self.bit_size) - 1;
        u64::try_from((word >> shift) & mask).ok()
    }
}

/// Target base-type sizes in bytes, from the DWARF's base types: what the
/// mqs interface's `mqs_target_type_sizes` asks for. `None` where the
/// DWARF has no such type (a C compiler describes only the types a unit
/// uses).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BaseTypeSizes {
    /// `short`.
    pub short: Option<u64>,
    /// `int`.
    pub int: Option<u64>,
    /// `long`.
    pub long: Option<u64>,
    /// `long long`.
    pub long_long: Option<u64>,
    /// A data pointer: the units' address size.
    pub pointer: Option<u64>,
    /// `_Bool` (or C++ `bool`).
    pub bool: Option<u64>,
    /// `size_t`, through its typedef.
    pub size_t: Option<u64>,
}

impl BaseTypeSizes {
    /// Fills the fields `self` lacks from `other`.
    pub(crate) fn or(self, other: BaseTypeSizes) -> BaseTypeSizes {
        BaseTypeSizes {
            short: self.short.or(other.short),
            int: self.int.or(other.int),
            long: self.long.or(other.long),
            long_long: self.long_long.or(other.long_long),
            pointer: self.pointer.or(other.pointer),
            bool: self.bool.or(other.bool),
            size_t: self.size_t.or(other.size_t),
        }
    }

    /// Whether every field is known.
    pub(crate) fn is_complete(&self) -> bool {
        [
            self.short,
            self.int,
            self.long,
            self.long_long,
            self.pointer,
            self.bool,
            self.size_t,
        ]
        .iter()
        .all(Option::is_some)
    }
}

/// A type DIE in one of the oracle's objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TypeHandle {
    /// The object's position in the oracle.
    pub(crate) object: usize,
    pub(crate) die: DieRef,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: Option<&str>, offset: u64, members: Vec<MemberLayout>) -> MemberLayout {
        MemberLayout {
            name: name.map(String::from),
            offset,
            size: Some(4),
            bits: None,
            type_name: None,
            array_len: None,
            members,
            ty: None,
        }
    }

    #[test]
    fn fields_are_found_directly_and_through_anonymous_members() {
        let layout = TypeLayout {
            name: "s".into(),
            kind: TypeKind::Struct,
            size: 16,
            object: "o".into(),
            members: vec![
                field(Some("a"), 0, vec![]),
                field(
                    None,
                    4,
                    vec![
                        field(Some("b"), 4, vec![]),
                        field(None, 8, vec![field(Some("c"), 12, vec![])]),
                    ],
                ),
                // A named member's own members are not reachable by name.
                field(Some("d"), 12, vec![field(Some("hidden"), 12, vec![])]),
            ],
            enumerators: Vec::new(),
        };
        assert_eq!(layout.field("a").map(|f| f.offset), Some(0));
        assert_eq!(layout.field("b").map(|f| f.offset), Some(4));
        assert_eq!(layout.field("c").map(|f| f.offset), Some(12));
        assert!(layout.field("hidden").is_none());
        assert!(layout.field("zz").is_none());
    }

    #[test]
    fn bit_fields_extract_in_either_byte_order() {
        // 12 bits starting 6 bits in: spans 3 bytes.
        let bits = BitField {
            bit_offset: 6,
            bit_size: 12,
        };
        assert_eq!(bits.byte_span(), 3);
        // Little-endian: value v sits at bits 6..18 of the LE word.
        let v = 0xabcu64;
        let le = (v << 6).to_le_bytes();
        assert_eq!(bits.extract(&le[..3], ByteOrder::Little), Some(v));
        // Big-endian: bit 0 is the MSB of byte 0; 24-bit word.
        let be_word = (v as u32) << (24 - 6 - 12);
        let be = &be_word.to_be_bytes()[1..];
        assert_eq!(bits.extract(be, ByteOrder::Big), Some(v));
        assert_eq!(bits.extract(&le[..2], ByteOrder::Little), None);
        let wide = BitField {
            bit_offset: 7,
            bit_size: 64,
        };
        assert_eq!(wide.extract(&[0xff; 9], ByteOrder::Big), Some(u64::MAX));
        let too_wide = BitField {
            bit_offset: 0,
            bit_size: 65,
        };
        assert_eq!(too_wide.extract(&[0xff; 9], ByteOrder::Big), None);
    }
}
