//! Integers, pointers and strings out of a [`ByteSource`], in the target's
//! byte order and widths, and out of bytes already read.

use mpidd_read::{Limits, ReadError};
use mpidd_types::{ByteOrder, TargetAddr};

use crate::mqs_target::ByteSource;

/// A [`ByteSource`] that refuses to read past
/// [`Limits::max_total_bytes`] in all (the byte-source twin of
/// `mpidd_read::ReadBudget`).
pub(crate) struct Budgeted<'a> {
    inner: &'a dyn ByteSource,
    used: std::cell::Cell<u64>,
    max: u64,
}

impl<'a> Budgeted<'a> {
    pub(crate) fn new(inner: &'a dyn ByteSource, limits: &Limits) -> Self {
        Budgeted {
            inner,
            used: std::cell::Cell::new(0),
            max: limits.max_total_bytes,
        }
    }
}

impl ByteSource for Budgeted<'_> {
    fn abi(&self) -> mpidd_types::TargetAbi {
        self.inner.abi()
    }

    fn read_exact(
        &self,
        addr: TargetAddr,
        buf: &mut [u8],
        what: &'static str,
    ) -> Result<(), ReadError> {
        self.charge(addr, buf.len(), what)?;
        self.inner.read_exact(addr, buf, what)
    }

    // Borrowed bytes count as read: the budget bounds what the decoder
    // looks at, however it gets it.
    fn view<'b>(
        &'b self,
        addr: TargetAddr,
        buf: &'b mut [u8],
        what: &'static str,
    ) -> Result<&'b [u8], ReadError> {
        self.charge(addr, buf.len(), what)?;
        self.inner.view(addr, buf, what)
    }
}

impl Budgeted<'_> {
    fn charge(&self, addr: TargetAddr, len: usize, what: &'static str) -> Result<(), ReadError> {
        let after = self.used.get().saturating_add(len as u64);
        if after > self.max {
            return Err(ReadError::LimitExceeded {
                what,
                addr,
                count: after,
                max: self.max,
                limit: "max_total_bytes",
            });
        }
        self.used.set(after);
        Ok(())
    }
}

/// Decodes an unsigned integer of `bytes.len()` (at most 8) bytes.
pub(crate) fn unsigned(bytes: &[u8], order: ByteOrder) -> u64 {
    // The widths C has, as single loads: decoders call this for every
    // field of every request.
    macro_rules! fixed {
        ($t:ty) => {
            if let Ok(b) = <[u8; size_of::<$t>()]>::try_from(bytes) {
                return u64::from(match order {
                    ByteOrder::Big => <$t>::from_be_bytes(b),
                    ByteOrder::Little => <$t>::from_le_bytes(b),
                });
            }
        };
    }
    fixed!(u64);
    fixed!(u32);
    fixed!(u16);
    let mut v = 0u64;
    match order {
        ByteOrder::Big => {
            for &b in bytes {
                v = (v << 8) | u64::from(b);
            }
        }
        ByteOrder::Little => {
            for &b in bytes.iter().rev() {
                v = (v << 8) | u64::from(b);
            }
        }
    }
    v
}

/// Decodes a signed integer of `bytes.len()` (1 to 8) bytes.
pub(crate) fn signed(bytes: &[u8], order: ByteOrder) -> i64 {
    let n = bytes.len().clamp(1, 8);
    let raw = unsigned(&bytes[..n], order);
    let shift = 64 - 8 * n as u32;
    ((raw << shift) as i64) >> shift
}

/// A view of bytes read from the target record at `base`, decoding fields
/// by their offset in the record; a field outside the view is an error
/// naming the record.
pub(crate) struct Record<'b> {
    pub(crate) base: TargetAddr,
    /// Where in the record `bytes` starts: a view may leave out a head the
    /// decoder never looks at.
    pub(crate) start: u64,
    pub(crate) bytes: &'b [u8],
    pub(crate) order: ByteOrder,
    pub(crate) what: &'static str,
}

impl Record<'_> {
    fn field(&self, offset: u64, size: usize) -> Result<&[u8], ReadError> {
        let start = offset
            .checked_sub(self.start)
            .and_then(|s| usize::try_from(s).ok());
        start
            .and_then(|s| self.bytes.get(s..s.checked_add(size)?))
            .ok_or(ReadError::ShortRead {
                what: self.what,
                addr: TargetAddr(self.base.0.wrapping_add(offset)),
                wanted: size,
                got: 0,
            })
    }

    /// A signed integer of `size` bytes at `offset`.
    pub(crate) fn int(&self, offset: u64, size: usize) -> Result<i64, ReadError> {
        Ok(signed(self.field(offset, size)?, self.order))
    }

    /// An unsigned integer of `size` bytes at `offset`.
    pub(crate) fn uint(&self, offset: u64, size: usize) -> Result<u64, ReadError> {
        Ok(unsigned(self.field(offset, size)?, self.order))
    }

    /// The NUL-terminated text of a `char[len]` at `offset`.
    pub(crate) fn chars(&self, offset: u64, len: usize) -> Result<String, ReadError> {
        let raw = self.field(offset, len)?;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        Ok(String::from_utf8_lossy(&raw[..end]).into_owned())
    }
}

/// Reads `len` bytes at `addr`; `len` above [`Limits::max_record_bytes`]
/// is refused before anything is allocated.
pub(crate) fn read_bytes(
    mem: &dyn ByteSource,
    addr: TargetAddr,
    len: u64,
    what: &'static str,
    limits: &Limits,
) -> Result<Vec<u8>, ReadError> {
    if len > limits.max_record_bytes {
        return Err(ReadError::LimitExceeded {
            what,
            addr,
            count: len,
            max: limits.max_record_bytes,
            limit: "max_record_bytes",
        });
    }
    let mut buf = vec![0u8; len as usize];
    mem.read_exact(addr, &mut buf, what)?;
    Ok(buf)
}

/// Reads a target pointer at `addr`.
pub(crate) fn read_pointer(
    mem: &dyn ByteSource,
    addr: TargetAddr,
    what: &'static str,
) -> Result<TargetAddr, ReadError> {
    let abi = mem.abi();
    let mut buf = [0u8; 8];
    let n = abi.address_bytes();
    mem.read_exact(addr, &mut buf[..n], what)?;
    Ok(TargetAddr(unsigned(&buf[..n], abi.byte_order)))
}

/// Reads a signed integer of `size` bytes at `addr`.
pub(crate) fn read_int(
    mem: &dyn ByteSource,
    addr: TargetAddr,
    size: usize,
    what: &'static str,
) -> Result<i64, ReadError> {
    let mut buf = [0u8; 8];
    let n = size.clamp(1, 8);
    mem.read_exact(addr, &mut buf[..n], what)?;
    Ok(signed(&buf[..n], mem.abi().byte_order))
}

/// Reads a C string of at most `max` bytes at `addr`, a byte at a time
/// in chunks that stop at the first unreadable byte.
pub(crate) fn read_c_string(
    mem: &dyn ByteSource,
    addr: TargetAddr,
    max: usize,
) -> Result<String, ReadError> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 64];
    while out.len() < max {
        let at = TargetAddr(addr.0.wrapping_add(out.len() as u64));
        let want = chunk.len().min(max - out.len());
        // Reading chunk by chunk may cross into an unmapped page after the
        // terminator; fall back to single bytes there.
        if mem.read_exact(at, &mut chunk[..want], "C string").is_err() {
            let mut one = [0u8; 1];
            mem.read_exact(at, &mut one, "C string")?;
            if one[0] == 0 {
                return Ok(String::from_utf8_lossy(&out).into_owned());
            }
            out.push(one[0]);
            continue;
        }
        if let Some(end) = chunk[..want].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            return Ok(String::from_utf8_lossy(&out).into_owned());
        }
        out.extend_from_slice(&chunk[..want]);
    }
    Err(ReadError::Unterminated { addr, cap: max })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_values_of_every_width_and_order() {
        assert_eq!(signed(&[0xff, 0xfe], ByteOrder::Big), -2);
        assert_eq!(signed(&[0xfe, 0xff], ByteOrder::Little), -2);
        assert_eq!(signed(&[0, 0, 0, 5], ByteOrder::Big), 5);
        assert_eq!(signed(&[0xff; 8], ByteOrder::Little), -1);
        assert_eq!(
            unsigned(&[0xff, 0xff, 0xff, 0xff], ByteOrder::Big),
            0xffff_ffff
        );
    }
}
