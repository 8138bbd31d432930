//! Field lists and the layout rule that turns them into offsets.
//!
//! Every record is described once, as an ordered list of [`Field`]s. The
//! offsets, the size and the padding for a given [`TargetAbi`] are computed
//! from that list, and the record's decoder and encoder walk the same list
//! through [`FieldReader`] and [`FieldWriter`]. The layout is therefore
//! known without an instance, and the C-compiler tests can check it field by
//! field.

use scroll::{Pread, Pwrite};

use crate::abi::{AddressWidth, Packing, TargetAbi};
use crate::addr::TargetAddr;
use crate::error::TypesError;

/// The C type of one field element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// `char` or an unsigned byte.
    U8,
    /// A signed 32-bit integer (`int`, `MPI2DD_INT32_T`).
    I32,
    /// An unsigned 32-bit integer (`MPI2DD_UINT32_T`).
    U32,
    /// A target pointer (`char *`, `MPI2DD_ADDR_T`, `mqs_taddr_t`).
    Addr,
    /// A signed target word (`mqs_tword_t`, a C `long`).
    Word,
}

impl FieldKind {
    /// Size of one element on the given address width.
    pub const fn size(self, width: AddressWidth) -> usize {
        match self {
            FieldKind::U8 => 1,
            FieldKind::I32 | FieldKind::U32 => 4,
            FieldKind::Addr | FieldKind::Word => width.bytes(),
        }
    }
}

/// One field of a record: its name as in the interface documents, its
/// element type and its element count (1 for scalars).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// Name as the interface document spells it.
    pub name: &'static str,
    /// Element type.
    pub kind: FieldKind,
    /// Number of elements (C array length, 1 for scalars).
    pub count: usize,
}

impl Field {
    /// A scalar field.
    pub const fn scalar(name: &'static str, kind: FieldKind) -> Field {
        Field {
            name,
            kind,
            count: 1,
        }
    }

    /// An array field of `count` elements.
    pub const fn array(name: &'static str, kind: FieldKind, count: usize) -> Field {
        Field { name, kind, count }
    }

    /// Alignment of the field under the given ABI.
    ///
    /// Natural alignment is the element size. That holds for every ABI this
    /// crate names (the only 8-byte fields are LP64 words), and the C-compiler
    /// tests check it.
    pub const fn align(&self, abi: TargetAbi, packing: Packing) -> usize {
        match packing {
            Packing::Packed => 1,
            Packing::Natural => self.kind.size(abi.address_width),
        }
    }

    /// Total size of the field.
    pub const fn size(&self, abi: TargetAbi) -> usize {
        self.kind.size(abi.address_width) * self.count
    }
}

/// Whether a record follows [`TargetAbi::packing`] or is always laid out
/// naturally.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PackingRule {
    /// The record's packing comes from the ABI (the MPI2DD records).
    FromAbi,
    /// The record is a plain C struct everywhere (`MPIR_PROCDESC`, `mqs_*`).
    AlwaysNatural,
}

impl PackingRule {
    /// The packing that applies to a record under this rule and ABI.
    pub const fn resolve(self, abi: TargetAbi) -> Packing {
        match self {
            PackingRule::FromAbi => abi.packing,
            PackingRule::AlwaysNatural => Packing::Natural,
        }
    }
}

/// Where one field sits in a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSlot {
    /// The field.
    pub field: Field,
    /// Byte offset from the start of the record.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

/// The computed layout of a record for one ABI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Bytes from the start of one record to the start of the next in an
    /// array (C `sizeof`).
    pub size: usize,
    /// Alignment of the whole record.
    pub align: usize,
    /// Every field, in declaration order.
    pub fields: Vec<FieldSlot>,
}

impl Layout {
    /// Lay out `fields` for `abi` under the given packing.
    pub fn compute(fields: &[Field], abi: TargetAbi, packing: Packing) -> Layout {
        let mut offset = 0;
        let mut align = 1;
        let mut slots = Vec::with_capacity(fields.len());
        for field in fields {
            let a = field.align(abi, packing);
            align = align.max(a);
            offset = align_up(offset, a);
            let size = field.size(abi);
            slots.push(FieldSlot {
                field: *field,
                offset,
                size,
            });
            offset += size;
        }
        Layout {
            size: align_up(offset, align),
            align,
            fields: slots,
        }
    }

    /// The slot of the field with this name.
    pub fn field(&self, name: &str) -> Option<&FieldSlot> {
        self.fields.iter().find(|s| s.field.name == name)
    }

    /// Byte ranges that no field covers (padding). Always empty when packed.
    pub fn padding(&self) -> Vec<std::ops::Range<usize>> {
        let mut gaps = Vec::new();
        let mut at = 0;
        for slot in &self.fields {
            if slot.offset > at {
                gaps.push(at..slot.offset);
            }
            at = slot.offset + slot.size;
        }
        if self.size > at {
            gaps.push(at..self.size);
        }
        gaps
    }
}

/// Size of a record without building its [`Layout`] (no allocation).
pub(crate) const fn size_of_fields(fields: &[Field], abi: TargetAbi, packing: Packing) -> usize {
    let mut offset = 0;
    let mut align = 1;
    let mut i = 0;
    while i < fields.len() {
        let a = fields[i].align(abi, packing);
        if a > align {
            align = a;
        }
        offset = align_up(offset, a) + fields[i].size(abi);
        i += 1;
    }
    align_up(offset, align)
}

const fn align_up(offset: usize, align: usize) -> usize {
    offset.div_ceil(align) * align
}

/// Walks a record's fields in order over a byte buffer, reading each one at
/// its computed offset in the target's byte order.
///
/// Record decoders use it so that their code and their field list cannot
/// disagree about order. It checks the buffer length once, up front.
pub struct FieldReader<'a> {
    bytes: &'a [u8],
    abi: TargetAbi,
    packing: Packing,
    fields: &'static [Field],
    next: usize,
    offset: usize,
}

impl<'a> FieldReader<'a> {
    /// Start reading a record described by `fields` from the front of
    /// `bytes`.
    pub fn new(
        record: &'static str,
        fields: &'static [Field],
        rule: PackingRule,
        bytes: &'a [u8],
        abi: TargetAbi,
    ) -> Result<Self, TypesError> {
        let packing = rule.resolve(abi);
        let needed = size_of_fields(fields, abi, packing);
        if bytes.len() < needed {
            return Err(TypesError::Truncated {
                record,
                needed,
                available: bytes.len(),
            });
        }
        Ok(FieldReader {
            bytes: &bytes[..needed],
            abi,
            packing,
            fields,
            next: 0,
            offset: 0,
        })
    }

    /// Advance to the next field, which must have the expected kind, and
    /// return its offset.
    fn advance(&mut self, kind: FieldKind) -> usize {
        let field = &self.fields[self.next];
        debug_assert_eq!(field.kind, kind, "field {} read as wrong kind", field.name);
        let at = align_up(self.offset, field.align(self.abi, self.packing));
        self.offset = at + field.size(self.abi);
        self.next += 1;
        at
    }

    fn count(&self) -> usize {
        self.fields[self.next].count
    }

    /// Read the next field as a byte.
    pub fn u8(&mut self) -> u8 {
        let at = self.advance(FieldKind::U8);
        self.bytes[at]
    }

    /// Read the next field, a byte array of `N` bytes.
    pub fn bytes<const N: usize>(&mut self) -> [u8; N] {
        debug_assert_eq!(self.count(), N);
        let at = self.advance(FieldKind::U8);
        let mut out = [0u8; N];
        out.copy_from_slice(&self.bytes[at..at + N]);
        out
    }

    /// Read the next field, a byte array of `n` bytes, as a slice.
    pub fn byte_slice(&mut self, n: usize) -> &'a [u8] {
        debug_assert_eq!(self.count(), n);
        let at = self.advance(FieldKind::U8);
        &self.bytes[at..at + n]
    }

    /// Read the next field as a signed 32-bit integer.
    pub fn i32(&mut self) -> i32 {
        let at = self.advance(FieldKind::I32);
        self.scalar_i32(at)
    }

    /// Read the next field, an array of `N` signed 32-bit integers.
    pub fn i32_array<const N: usize>(&mut self) -> [i32; N] {
        debug_assert_eq!(self.count(), N);
        let at = self.advance(FieldKind::I32);
        std::array::from_fn(|i| self.scalar_i32(at + 4 * i))
    }

    /// Read the next field as an unsigned 32-bit integer.
    pub fn u32(&mut self) -> u32 {
        let at = self.advance(FieldKind::U32);
        self.scalar_u32(at)
    }

    /// Read the next field as a target address (zero-extended).
    pub fn addr(&mut self) -> TargetAddr {
        let at = self.advance(FieldKind::Addr);
        TargetAddr(match self.abi.address_width {
            AddressWidth::W32 => u64::from(self.scalar_u32(at)),
            AddressWidth::W64 => self.scalar_u64(at),
        })
    }

    /// Read the next field as a signed target word (sign-extended, so a
    /// 32-bit target's -1 stays -1).
    pub fn word(&mut self) -> i64 {
        let at = self.advance(FieldKind::Word);
        match self.abi.address_width {
            AddressWidth::W32 => i64::from(self.scalar_i32(at)),
            AddressWidth::W64 => self.scalar_u64(at) as i64,
        }
    }

    // The length was checked in `new`, so these reads cannot fail; the
    // fallback keeps a layout bug from turning into a panic.
    fn scalar_u32(&self, at: usize) -> u32 {
        self.bytes.pread_with(at, self.abi.endian()).unwrap_or(0)
    }

    fn scalar_i32(&self, at: usize) -> i32 {
        self.bytes.pread_with(at, self.abi.endian()).unwrap_or(0)
    }

    fn scalar_u64(&self, at: usize) -> u64 {
        self.bytes.pread_with(at, self.abi.endian()).unwrap_or(0)
    }

    /// Bytes consumed by the record (its size).
    pub fn finish(self) -> usize {
        debug_assert_eq!(self.next, self.fields.len(), "not every field was read");
        self.bytes.len()
    }
}

/// Writes a record's fields in order into a byte buffer, in the target's
/// byte order, with zeroed padding.
pub struct FieldWriter<'a> {
    record: &'static str,
    out: &'a mut [u8],
    abi: TargetAbi,
    packing: Packing,
    fields: &'static [Field],
    next: usize,
    offset: usize,
}

impl<'a> FieldWriter<'a> {
    /// Start writing a record described by `fields` at the front of `out`.
    /// The whole record's bytes are zeroed first, so padding is zero.
    pub fn new(
        record: &'static str,
        fields: &'static [Field],
        rule: PackingRule,
        out: &'a mut [u8],
        abi: TargetAbi,
    ) -> Result<Self, TypesError> {
        let packing = rule.resolve(abi);
        let needed = size_of_fields(fields, abi, packing);
        if out.len() < needed {
            return Err(TypesError::Truncated {
                record,
                needed,
                available: out.len(),
            });
        }
        let out = &mut out[..needed];
        out.fill(0);
        Ok(FieldWriter {
            record,
            out,
            abi,
            packing,
            fields,
            next: 0,
            offset: 0,
        })
    }

    fn advance(&mut self, kind: FieldKind) -> (usize, &'static str) {
        let field = &self.fields[self.next];
        debug_assert_eq!(
            field.kind, kind,
            "field {} written as wrong kind",
            field.name
        );
        let at = align_up(self.offset, field.align(self.abi, self.packing));
        self.offset = at + field.size(self.abi);
        self.next += 1;
        (at, field.name)
    }

    /// Write the next field, a byte.
    pub fn u8(&mut self, v: u8) -> &mut Self {
        let (at, _) = self.advance(FieldKind::U8);
        self.out[at] = v;
        self
    }

    /// Write the next field, a byte array.
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        debug_assert_eq!(self.fields[self.next].count, v.len());
        let (at, _) = self.advance(FieldKind::U8);
        self.out[at..at + v.len()].copy_from_slice(v);
        self
    }

    /// Write the next field, a signed 32-bit integer.
    pub fn i32(&mut self, v: i32) -> &mut Self {
        let (at, _) = self.advance(FieldKind::I32);
        self.put(at, v);
        self
    }

    /// Write the next field, an array of signed 32-bit integers.
    pub fn i32_array(&mut self, v: &[i32]) -> &mut Self {
        debug_assert_eq!(self.fields[self.next].count, v.len());
        let (at, _) = self.advance(FieldKind::I32);
        for (i, x) in v.iter().enumerate() {
            self.put(at + 4 * i, *x);
        }
        self
    }

    /// Write the next field, an unsigned 32-bit integer.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        let (at, _) = self.advance(FieldKind::U32);
        self.put(at, v);
        self
    }

    /// Write the next field, a target address. Fails if the address does not
    /// fit the target's width.
    pub fn addr(&mut self, v: TargetAddr) -> Result<&mut Self, TypesError> {
        let (at, field) = self.advance(FieldKind::Addr);
        match self.abi.address_width {
            AddressWidth::W32 => {
                let narrow = u32::try_from(v.0).map_err(|_| TypesError::AddressTooWide {
                    record: self.record,
                    field,
                    value: v.0,
                    width: self.abi.address_width,
                })?;
                self.put(at, narrow);
            }
            AddressWidth::W64 => self.put(at, v.0),
        }
        Ok(self)
    }

    /// Write the next field, a signed target word. Fails if the value does
    /// not fit the target's width.
    pub fn word(&mut self, v: i64) -> Result<&mut Self, TypesError> {
        let (at, field) = self.advance(FieldKind::Word);
        match self.abi.address_width {
            AddressWidth::W32 => {
                let narrow = i32::try_from(v).map_err(|_| TypesError::WordOutOfRange {
                    record: self.record,
                    field,
                    value: v,
                    width: self.abi.address_width,
                })?;
                self.put(at, narrow);
            }
            AddressWidth::W64 => self.put(at, v),
        }
        Ok(self)
    }

    fn put<T>(&mut self, at: usize, v: T)
    where
        T: scroll::ctx::TryIntoCtx<scroll::Endian, Error = scroll::Error>,
    {
        // The buffer length was checked in `new`; see FieldReader.
        let _ = self.out.pwrite_with(v, at, self.abi.endian());
    }

    /// Bytes written (the record's size).
    pub fn finish(self) -> usize {
        debug_assert_eq!(self.next, self.fields.len(), "not every field was written");
        self.out.len()
    }
}
