//! The reads decoders make, as a trait object: [`TargetMemory`] has
//! generic methods, so a decoder that must run on any source (a core, a
//! live process, a debugger's callbacks inside a message-queue library)
//! takes `&dyn ByteSource` instead.

use mpidd_types::{ByteOrder, TargetAbi, TargetAddr};

use crate::error::ReadError;
use crate::memory::{decode_unsigned, TargetMemory};

/// The reads a decoder needs, object-safe. Every [`TargetMemory`] is one;
/// other sources implement [`ByteSource::abi`] and
/// [`ByteSource::read_exact`] and get the rest.
///
/// ```
/// use mpidd_read::{ByteSource, SyntheticMemory};
/// use mpidd_types::{TargetAbi, TargetAddr};
///
/// let mut mem = SyntheticMemory::new(TargetAbi::X86_64);
/// mem.map(TargetAddr(0x1000), b"rank\0".to_vec());
/// let source: &dyn ByteSource = &mem;
/// assert_eq!(source.read_c_string(TargetAddr(0x1000), 16)?, b"rank");
/// # Ok::<(), mpidd_read::ReadError>(())
/// ```
pub trait ByteSource {
    /// The target's ABI.
    fn abi(&self) -> TargetAbi;

    /// Fills `buf` from `addr`, or fails naming the address and `what`.
    fn read_exact(
        &self,
        addr: TargetAddr,
        buf: &mut [u8],
        what: &'static str,
    ) -> Result<(), ReadError>;

    /// The `buf.len()` bytes at `addr`: borrowed from the source when it
    /// holds them in one piece (a memory-mapped core), else read into
    /// `buf`. Fails as [`ByteSource::read_exact`] does. For decoders that
    /// look at a few fields of many records, where the copy would cost
    /// more than the decoding.
    fn view<'a>(
        &'a self,
        addr: TargetAddr,
        buf: &'a mut [u8],
        what: &'static str,
    ) -> Result<&'a [u8], ReadError> {
        self.read_exact(addr, buf, what)?;
        Ok(buf)
    }

    /// A NUL-terminated string of at most `max_len` bytes (terminator
    /// excluded), as bytes. The default reads chunks and, where a chunk
    /// crosses into memory that cannot be read after the terminator,
    /// single bytes.
    fn read_c_string(&self, addr: TargetAddr, max_len: usize) -> Result<Vec<u8>, ReadError> {
        let mut out = Vec::new();
        let mut chunk = [0u8; 64];
        while out.len() < max_len {
            let at = TargetAddr(addr.0.wrapping_add(out.len() as u64));
            let want = chunk.len().min(max_len - out.len());
            if self.read_exact(at, &mut chunk[..want], "C string").is_err() {
                let mut one = [0u8; 1];
                self.read_exact(at, &mut one, "C string")?;
                if one[0] == 0 {
                    return Ok(out);
                }
                out.push(one[0]);
                continue;
            }
            if let Some(end) = chunk[..want].iter().position(|&b| b == 0) {
                out.extend_from_slice(&chunk[..end]);
                return Ok(out);
            }
            out.extend_from_slice(&chunk[..want]);
        }
        Err(ReadError::Unterminated { addr, cap: max_len })
    }
}

impl<T: TargetMemory + ?Sized> ByteSource for T {
    fn abi(&self) -> TargetAbi {
        TargetMemory::abi(self)
    }

    fn read_exact(
        &self,
        addr: TargetAddr,
        buf: &mut [u8],
        what: &'static str,
    ) -> Result<(), ReadError> {
        TargetMemory::read_exact(self, addr, buf, what)
    }

    fn view<'a>(
        &'a self,
        addr: TargetAddr,
        buf: &'a mut [u8],
        what: &'static str,
    ) -> Result<&'a [u8], ReadError> {
        if let Some(bytes) = self.mapped(addr, buf.len()) {
            return Ok(bytes);
        }
        TargetMemory::read_exact(self, addr, buf, what)?;
        Ok(buf)
    }

    fn read_c_string(&self, addr: TargetAddr, max_len: usize) -> Result<Vec<u8>, ReadError> {
        TargetMemory::read_c_string(self, addr, max_len)
    }
}

/// The unsigned integer in `bytes` (1 to 8 of them; more are ignored) in
/// `order`.
///
/// ```
/// use mpidd_read::decode_uint;
/// use mpidd_types::ByteOrder;
///
/// assert_eq!(decode_uint(&[0x12, 0x34], ByteOrder::Big), 0x1234);
/// ```
#[inline]
pub fn decode_uint(bytes: &[u8], order: ByteOrder) -> u64 {
    decode_unsigned(order, &bytes[..bytes.len().min(8)])
}

/// The two's-complement integer in `bytes` (1 to 8 of them; more are
/// ignored, none reads as 0) in `order`, sign-extended.
///
/// ```
/// use mpidd_read::decode_int;
/// use mpidd_types::ByteOrder;
///
/// assert_eq!(decode_int(&[0xfe, 0xff], ByteOrder::Little), -2);
/// ```
#[inline]
pub fn decode_int(bytes: &[u8], order: ByteOrder) -> i64 {
    let n = bytes.len().min(8);
    if n == 0 {
        return 0;
    }
    let shift = 64 - 8 * n as u32;
    ((decode_uint(bytes, order) << shift) as i64) >> shift
}
