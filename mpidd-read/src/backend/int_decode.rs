//! Integers in a target's byte order out of bytes already read, for
//! decoders that read a record once and decode its members from the
//! bytes.

use mpidd_types::ByteOrder;

use crate::backend::memory::decode_unsigned;

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
