//! The `Record` trait that every interface record implements, and the scroll
//! glue derived from it.

use crate::abi::TargetAbi;
use crate::error::TypesError;
use crate::layout::{size_of_fields, Field, Layout, PackingRule};

/// A record of one of the debugger interfaces, with a layout that depends on
/// the target ABI.
///
/// ```
/// use mpidd_types::{MpirProcdesc, Record, TargetAbi, TargetAddr};
///
/// let entry = MpirProcdesc {
///     host_name: TargetAddr(0x1000),
///     executable_name: TargetAddr(0x2000),
///     pid: -1,
/// };
/// let bytes = entry.to_bytes(TargetAbi::POWERPC)?;
/// assert_eq!(bytes.len(), MpirProcdesc::size_for(TargetAbi::POWERPC));
/// assert_eq!(MpirProcdesc::decode(&bytes, TargetAbi::POWERPC)?, entry);
/// # Ok::<(), mpidd_types::TypesError>(())
/// ```
pub trait Record: Sized {
    /// The record's C name, as in the interface document.
    const C_NAME: &'static str;
    /// The fields in declaration order.
    const FIELDS: &'static [Field];
    /// Whether [`TargetAbi::packing`] applies to this record.
    const PACKING: PackingRule;

    /// Decode the record from the front of `bytes`.
    fn decode(bytes: &[u8], abi: TargetAbi) -> Result<Self, TypesError>;

    /// Encode the record into the front of `out`, returning the bytes
    /// written. Padding bytes are written as zero.
    fn encode(&self, out: &mut [u8], abi: TargetAbi) -> Result<usize, TypesError>;

    /// Size of the record (C `sizeof`) for `abi`, without an instance and
    /// without allocating.
    fn size_for(abi: TargetAbi) -> usize {
        size_of_fields(Self::FIELDS, abi, Self::PACKING.resolve(abi))
    }

    /// Offsets and sizes of every field for `abi`.
    fn layout(abi: TargetAbi) -> Layout {
        Layout::compute(Self::FIELDS, abi, Self::PACKING.resolve(abi))
    }

    /// Encode into a new buffer of exactly [`Record::size_for`] bytes.
    fn to_bytes(&self, abi: TargetAbi) -> Result<Vec<u8>, TypesError> {
        let mut out = vec![0u8; Self::size_for(abi)];
        self.encode(&mut out, abi)?;
        Ok(out)
    }
}

/// Implements scroll's context traits for a record in terms of [`Record`],
/// so records work with `pread_with`, `pwrite_with` and `gread_with`.
macro_rules! scroll_glue {
    ($ty:ty) => {
        impl<'a> scroll::ctx::TryFromCtx<'a, $crate::abi::TargetAbi> for $ty {
            type Error = $crate::error::TypesError;
            fn try_from_ctx(
                from: &'a [u8],
                abi: $crate::abi::TargetAbi,
            ) -> Result<(Self, usize), Self::Error> {
                let value = <$ty as $crate::record::Record>::decode(from, abi)?;
                Ok((value, <$ty as $crate::record::Record>::size_for(abi)))
            }
        }

        impl scroll::ctx::TryIntoCtx<$crate::abi::TargetAbi> for &$ty {
            type Error = $crate::error::TypesError;
            fn try_into_ctx(
                self,
                into: &mut [u8],
                abi: $crate::abi::TargetAbi,
            ) -> Result<usize, Self::Error> {
                <$ty as $crate::record::Record>::encode(self, into, abi)
            }
        }

        impl scroll::ctx::TryIntoCtx<$crate::abi::TargetAbi> for $ty {
            type Error = $crate::error::TypesError;
            fn try_into_ctx(
                self,
                into: &mut [u8],
                abi: $crate::abi::TargetAbi,
            ) -> Result<usize, Self::Error> {
                <$ty as $crate::record::Record>::encode(&self, into, abi)
            }
        }

        impl scroll::ctx::SizeWith<$crate::abi::TargetAbi> for $ty {
            fn size_with(abi: &$crate::abi::TargetAbi) -> usize {
                <$ty as $crate::record::Record>::size_for(*abi)
            }
        }
    };
}
pub(crate) use scroll_glue;
