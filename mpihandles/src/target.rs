//! Reading the target for the decoders: records read once and decoded by
//! member from bytes in the target's byte order, pointers and ints of the
//! target's widths, strings and arrays bounded by [`Limits`].

use std::collections::HashSet;

pub(crate) use mpidd_read::{decode_int as signed, decode_uint as unsigned};
use mpidd_read::{Limits, ReadError, Symbol, SymbolSource, TargetMemory};
use mpidd_types::{ByteOrder, TargetAddr};

use crate::error::HandleError;
use mpidd_read::{LayoutError, Layouts, Member};

/// `base + offset` as the target's own pointer arithmetic would wrap; a
/// wild address fails at the read.
pub(crate) fn at(base: TargetAddr, offset: u64) -> TargetAddr {
    TargetAddr(base.0.wrapping_add(offset))
}

/// What a decoder reads with.
pub(crate) struct Ctx<'a> {
    pub(crate) mem: &'a dyn TargetMemory,
    pub(crate) symbols: &'a dyn SymbolSource,
    pub(crate) layouts: &'a dyn Layouts,
    pub(crate) limits: Limits,
}

/// The symbol source of a reader whose caller found every address: it
/// looks none up.
struct NoSymbols;

impl SymbolSource for NoSymbols {
    fn lookup(&self, _name: &str) -> Option<Symbol> {
        None
    }

    fn searched_objects(&self) -> Vec<String> {
        Vec::new()
    }
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        mem: &'a dyn TargetMemory,
        symbols: &'a dyn SymbolSource,
        layouts: &'a dyn Layouts,
        limits: Limits,
    ) -> Ctx<'a> {
        Ctx {
            mem,
            symbols,
            layouts,
            limits,
        }
    }

    /// A reader that looks up no symbols: for readers given their
    /// addresses.
    pub(crate) fn without_symbols(
        mem: &'a dyn TargetMemory,
        layouts: &'a dyn Layouts,
        limits: Limits,
    ) -> Ctx<'a> {
        Ctx::new(mem, &NoSymbols, layouts, limits)
    }
}

impl Ctx<'_> {
    pub(crate) fn order(&self) -> ByteOrder {
        self.mem.abi().byte_order
    }

    pub(crate) fn word(&self) -> u64 {
        self.mem.abi().address_bytes() as u64
    }

    /// A member's place, or an error naming it.
    pub(crate) fn m(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        self.layouts.member(type_name, path)
    }

    /// The name of the enumerator whose value is `value`, of the member
    /// `path` of `type_name` (an enumeration); `None` when none has it.
    pub(crate) fn enumerator(
        &self,
        type_name: &str,
        path: &str,
        value: i64,
    ) -> Result<Option<String>, LayoutError> {
        Ok(self
            .layouts
            .member_enumerators(type_name, path)?
            .into_iter()
            .find(|(_, v)| *v == i128::from(value))
            .map(|(n, _)| n))
    }

    /// `sizeof` a type; never 0, which would make arrays of it endless.
    pub(crate) fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
        match self.layouts.size_of(type_name)? {
            0 => Err(LayoutError {
                type_name: type_name.to_string(),
                member: None,
                reason: "its size is 0".to_string(),
            }),
            n => Ok(n),
        }
    }

    pub(crate) fn symbol(&self, name: &str, why: &'static str) -> Result<Symbol, HandleError> {
        self.symbols
            .lookup(name)
            .ok_or_else(|| HandleError::NoSymbol {
                symbol: name.to_string(),
                searched: mpidd_read::searched_summary(self.symbols),
                why,
            })
    }

    /// `len` bytes at `addr`; more than [`Limits::max_record_bytes`] is
    /// refused before anything is allocated.
    pub(crate) fn bytes(
        &self,
        addr: TargetAddr,
        len: u64,
        what: &'static str,
    ) -> Result<Vec<u8>, ReadError> {
        self.limits.check_record_bytes(what, addr, len)?;
        let mut buf = vec![0u8; len as usize];
        self.mem.read_exact(addr, &mut buf, what)?;
        Ok(buf)
    }

    /// The whole `type_name` record at `addr`, read once.
    pub(crate) fn record(
        &self,
        addr: TargetAddr,
        type_name: &'static str,
    ) -> Result<Rec, HandleError> {
        let size = self.size_of(type_name)?;
        Ok(Rec {
            base: addr,
            bytes: self.bytes(addr, size, type_name)?,
            order: self.order(),
            what: type_name,
        })
    }

    /// `size` bytes at `addr` as a record of the type `what`, whose size
    /// the caller already knows.
    pub(crate) fn record_sized(
        &self,
        addr: TargetAddr,
        size: u64,
        what: &'static str,
    ) -> Result<Rec, ReadError> {
        Ok(Rec {
            base: addr,
            bytes: self.bytes(addr, size, what)?,
            order: self.order(),
            what,
        })
    }

    /// `count` records of `size` bytes each, one after the other from
    /// `addr` (an array of them), read in one piece.
    pub(crate) fn records(
        &self,
        addr: TargetAddr,
        count: u64,
        size: u64,
        what: &'static str,
    ) -> Result<Vec<Rec>, ReadError> {
        let Some(chunk) = usize::try_from(size).ok().filter(|&n| n > 0) else {
            // A record of no bytes holds nothing to read.
            return Ok(Vec::new());
        };
        let len = count.checked_mul(size).ok_or(ReadError::AddressOverflow {
            what,
            addr,
            len: u64::MAX,
        })?;
        let bytes = self.bytes(addr, len, what)?;
        Ok(bytes
            .chunks_exact(chunk)
            .enumerate()
            .map(|(i, b)| Rec {
                base: at(addr, i as u64 * size),
                bytes: b.to_vec(),
                order: self.order(),
                what,
            })
            .collect())
    }

    /// The low bytes of `value` that make an address of the target's
    /// width: a pointer the target stored sign-extended, made an address
    /// again.
    pub(crate) fn address(&self, value: i64) -> TargetAddr {
        let word = self.word();
        let mask = if word >= 8 {
            u64::MAX
        } else {
            (1u64 << (word * 8)) - 1
        };
        TargetAddr(value as u64 & mask)
    }

    /// Walks a list in target memory from `first` until NULL or `end`:
    /// `step` reads each node and gives the next. More than
    /// [`Limits::max_list_len`] nodes is an error naming `list` (at
    /// `first`), and a node met twice a cycle of `link`.
    pub(crate) fn walk_list(
        &self,
        first: TargetAddr,
        end: TargetAddr,
        list: &'static str,
        link: &'static str,
        mut step: impl FnMut(TargetAddr) -> Result<TargetAddr, HandleError>,
    ) -> Result<(), HandleError> {
        let max = self.limits.max_list_len;
        let mut seen = HashSet::new();
        let mut node = first;
        while !node.is_null() && node != end {
            if seen.len() as u64 >= max {
                return Err(ReadError::LimitExceeded {
                    what: list,
                    addr: first,
                    count: seen.len() as u64,
                    max,
                    limit: "max_list_len",
                }
                .into());
            }
            if !seen.insert(node) {
                return Err(ReadError::Cycle {
                    what: link,
                    addr: node,
                }
                .into());
            }
            node = step(node)?;
        }
        Ok(())
    }

    pub(crate) fn pointer(
        &self,
        addr: TargetAddr,
        what: &'static str,
    ) -> Result<TargetAddr, ReadError> {
        let n = self.word();
        let b = self.bytes(addr, n, what)?;
        Ok(TargetAddr(unsigned(&b, self.order())))
    }

    /// A signed integer of `size` (1 to 8) bytes.
    pub(crate) fn int(
        &self,
        addr: TargetAddr,
        size: u64,
        what: &'static str,
    ) -> Result<i64, ReadError> {
        let b = self.bytes(addr, size.clamp(1, 8), what)?;
        Ok(signed(&b, self.order()))
    }

    /// A C string, bounded by [`Limits::max_string_len`]; invalid UTF-8 is
    /// replaced.
    pub(crate) fn string(&self, addr: TargetAddr) -> Result<String, ReadError> {
        let raw = self.mem.read_c_string(addr, self.limits.max_string_len)?;
        Ok(String::from_utf8_lossy(&raw).into_owned())
    }

    /// A count read from the target, refused when negative or above
    /// [`Limits::max_table_entries`].
    pub(crate) fn count(
        &self,
        count: i64,
        addr: TargetAddr,
        what: &'static str,
    ) -> Result<u64, ReadError> {
        let n = u64::try_from(count).map_err(|_| ReadError::NegativeCount { what, addr, count })?;
        if n > self.limits.max_table_entries {
            return Err(ReadError::LimitExceeded {
                what,
                addr,
                count: n,
                max: self.limits.max_table_entries,
                limit: "max_table_entries",
            });
        }
        Ok(n)
    }

    /// `count` signed integers of `size` bytes each, from a count the
    /// target gave: negative or above [`Limits::max_table_entries`] is
    /// refused before anything is read.
    pub(crate) fn ints(
        &self,
        addr: TargetAddr,
        count: i64,
        size: u64,
        what: &'static str,
    ) -> Result<Vec<i64>, ReadError> {
        let n = self.count(count, addr, what)?;
        let size = size.clamp(1, 8);
        let total = n.checked_mul(size).ok_or(ReadError::AddressOverflow {
            what,
            addr,
            len: u64::MAX,
        })?;
        let raw = self.bytes(addr, total, what)?;
        Ok(raw
            .chunks_exact(size as usize)
            .map(|c| signed(c, self.order()))
            .collect())
    }
}

/// A record's bytes, decoded by member.
pub(crate) struct Rec {
    pub(crate) base: TargetAddr,
    pub(crate) bytes: Vec<u8>,
    pub(crate) order: ByteOrder,
    pub(crate) what: &'static str,
}

impl Rec {
    fn field(&self, m: Member, size: u64) -> Result<&[u8], ReadError> {
        let start = usize::try_from(m.offset).ok();
        let len = usize::try_from(size).ok();
        start
            .zip(len)
            .and_then(|(s, l)| self.bytes.get(s..s.checked_add(l)?))
            .ok_or(ReadError::ShortRead {
                what: self.what,
                addr: at(self.base, m.offset),
                wanted: size as usize,
                got: 0,
            })
    }

    /// A signed integer member of its own size (1 to 8 bytes).
    pub(crate) fn int(&self, m: Member) -> Result<i64, ReadError> {
        Ok(signed(self.field(m, m.size.clamp(1, 8))?, self.order))
    }

    /// An unsigned integer or pointer member of its own size.
    pub(crate) fn uint(&self, m: Member) -> Result<u64, ReadError> {
        Ok(unsigned(self.field(m, m.size.clamp(1, 8))?, self.order))
    }

    /// A pointer member.
    pub(crate) fn ptr(&self, m: Member) -> Result<TargetAddr, ReadError> {
        self.uint(m).map(TargetAddr)
    }

    /// The NUL-terminated text of a `char[]` member.
    pub(crate) fn chars(&self, m: Member) -> Result<String, ReadError> {
        let raw = self.field(m, m.size)?;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        Ok(String::from_utf8_lossy(&raw[..end]).into_owned())
    }

    /// The address of a member inside the record.
    pub(crate) fn addr_of(&self, m: Member) -> TargetAddr {
        at(self.base, m.offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_of_every_width_and_order() {
        assert_eq!(signed(&[0xff, 0xfe], ByteOrder::Big), -2);
        assert_eq!(signed(&[0xfe, 0xff], ByteOrder::Little), -2);
        assert_eq!(signed(&[0, 0, 0, 5], ByteOrder::Big), 5);
        assert_eq!(
            unsigned(&[0x78, 0x56, 0x34, 0x12], ByteOrder::Little),
            0x1234_5678
        );
        assert_eq!(signed(&[0x80], ByteOrder::Little), -128);
    }
}
