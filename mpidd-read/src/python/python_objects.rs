//! Python objects a frame walk reads: strings, bytes, type names and
//! exceptions. Each read is bounded by [`PythonLimits`] and checks what it
//! can of the object's type.

use mpidd_types::TargetAddr;

use super::python_error::PythonError;
use super::python_layout::{shared, PythonLayout};
use super::PythonLimits;
use crate::{decode_uint, ReadError, TargetMemory};

/// What the reader knows of the target's interpreter beyond its table:
/// the addresses of the types it checks objects against.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KnownTypes {
    /// `PyCode_Type`, when the interpreter exports it.
    pub code: Option<TargetAddr>,
    /// `PyUnicode_Type`, when exported.
    pub unicode: Option<TargetAddr>,
}

/// Reads objects of one interpreter.
pub(crate) struct Objects<'a> {
    pub mem: &'a dyn TargetMemory,
    pub layout: &'a PythonLayout,
    pub types: KnownTypes,
    pub limits: &'a PythonLimits,
}

impl Objects<'_> {
    pub fn at(
        &self,
        addr: TargetAddr,
        offset: u64,
        what: &'static str,
    ) -> Result<TargetAddr, PythonError> {
        let field = add(addr, offset, what)?;
        Ok(self.mem.read_pointer(field, what)?)
    }

    pub fn u64_at(
        &self,
        addr: TargetAddr,
        offset: u64,
        what: &'static str,
    ) -> Result<u64, PythonError> {
        let field = add(addr, offset, what)?;
        let mut b = [0u8; 8];
        self.mem.read_exact(field, &mut b, what)?;
        Ok(decode_uint(&b, self.mem.abi().byte_order))
    }

    pub fn i32_at(
        &self,
        addr: TargetAddr,
        offset: u64,
        what: &'static str,
    ) -> Result<i32, PythonError> {
        let field = add(addr, offset, what)?;
        Ok(self.mem.read_i32(field, what)?)
    }

    pub fn u8_at(
        &self,
        addr: TargetAddr,
        offset: u64,
        what: &'static str,
    ) -> Result<u8, PythonError> {
        let field = add(addr, offset, what)?;
        let mut b = [0u8; 1];
        self.mem.read_exact(field, &mut b, what)?;
        Ok(b[0])
    }

    /// The type of the object at `addr`.
    pub fn type_of(&self, addr: TargetAddr) -> Result<TargetAddr, PythonError> {
        self.at(addr, shared::OB_TYPE, "PyObject.ob_type")
    }

    /// Whether the object at `addr` is a code object: checked against
    /// `PyCode_Type` when it is known.
    pub fn is_code(&self, addr: TargetAddr) -> Result<bool, PythonError> {
        match self.types.code {
            Some(code) => Ok(self.type_of(addr)? == code),
            None => Ok(true),
        }
    }

    /// A `str` object's text (lossy for characters that are not valid).
    pub fn string(&self, addr: TargetAddr, what: &'static str) -> Result<String, PythonError> {
        let ty = self.type_of(addr)?;
        let is_str = match self.types.unicode {
            Some(u) if u == ty => true,
            _ => {
                self.u64_at(ty, shared::TYPE_FLAGS, "PyTypeObject.tp_flags")? & shared::FLAG_UNICODE
                    != 0
            }
        };
        if !is_str {
            return Err(mismatch(self.layout, format!("{what} is not a str"), addr));
        }
        let length = self.u64_at(addr, shared::UNICODE_LENGTH, "PyASCIIObject.length")?;
        let state = self.mem.read_u32(
            add(addr, shared::UNICODE_STATE, what)?,
            "PyASCIIObject.state",
        )?;
        let kind = u64::from((state >> 2) & 7);
        let compact = state & (1 << 5) != 0;
        let ascii = state & (1 << 6) != 0;
        if !compact || !matches!(kind, 1 | 2 | 4) {
            return Err(mismatch(
                self.layout,
                format!("{what} is not a compact str (state {state:#x})"),
                addr,
            ));
        }
        let chars = length.min(self.limits.max_string_chars as u64);
        let data = add(
            addr,
            if ascii {
                self.layout.unicode_ascii_data
            } else {
                self.layout.unicode_compact_data
            },
            what,
        )?;
        let mut bytes = vec![0u8; (chars * kind) as usize];
        self.mem.read_exact(data, &mut bytes, what)?;
        let order = self.mem.abi().byte_order;
        // Code units of 1, 2 or 4 bytes in the target's order.
        let mut text: String = bytes
            .chunks_exact(kind as usize)
            .map(|c| {
                let unit = decode_uint(c, order) as u32;
                char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER)
            })
            .collect();
        if chars < length {
            text.push('…');
        }
        Ok(text)
    }

    /// A `bytes` object's contents, refused past `max_line_table_bytes`.
    pub fn bytes(&self, addr: TargetAddr, what: &'static str) -> Result<Vec<u8>, PythonError> {
        let size = self.u64_at(addr, shared::OB_SIZE, "PyBytesObject.ob_size")?;
        let limit = self.limits.max_line_table_bytes;
        if size > limit {
            return Err(PythonError::TooLarge {
                what,
                addr,
                size,
                limit,
            });
        }
        let mut out = vec![0u8; size as usize];
        self.mem
            .read_exact(add(addr, shared::BYTES_DATA, what)?, &mut out, what)?;
        Ok(out)
    }

    /// The name of a type (`tp_name`, a C string).
    pub fn type_name(&self, ty: TargetAddr) -> Result<String, PythonError> {
        let name = self.at(ty, shared::TYPE_NAME, "PyTypeObject.tp_name")?;
        Ok(self.mem.read_string(name, self.limits.max_string_chars)?)
    }

    /// Whether the object at `addr` is an exception: its type derives
    /// from `BaseException`.
    pub fn is_exception(&self, addr: TargetAddr) -> Result<bool, PythonError> {
        if addr.is_null() {
            return Ok(false);
        }
        let ty = self.type_of(addr)?;
        Ok(
            self.u64_at(ty, shared::TYPE_FLAGS, "PyTypeObject.tp_flags")? & shared::FLAG_BASE_EXC
                != 0,
        )
    }
}

/// `addr + offset`, or a read error that names the field.
pub(crate) fn add(
    addr: TargetAddr,
    offset: u64,
    what: &'static str,
) -> Result<TargetAddr, PythonError> {
    addr.checked_add(offset)
        .ok_or(PythonError::Read(ReadError::AddressOverflow {
            what,
            addr,
            len: offset,
        }))
}

pub(crate) fn mismatch(layout: &PythonLayout, what: String, addr: TargetAddr) -> PythonError {
    PythonError::LayoutMismatch {
        version: layout.version,
        what,
        addr,
    }
}
