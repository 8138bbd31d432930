//! [`ReadAhead`]: records a decoder will read one by one (UCX's requests
//! behind MPICH's), read together first, so that a live process costs one
//! batched read for all of them instead of one system call each.

use std::collections::BTreeMap;

use mpidd_read::{ReadError, TargetMemory};
use mpidd_types::{TargetAbi, TargetAddr};

/// A [`TargetMemory`] that answers reads lying wholly inside one of the
/// ranges it was given, from the bytes read for them in one
/// [`TargetMemory::read_many`], and hands every other read to the memory
/// beneath unchanged. A range the batch did not read whole is left to the
/// memory beneath, which then reads it and says what is wrong, as it
/// would have without the batch.
pub(crate) struct ReadAhead<'a> {
    inner: &'a dyn TargetMemory,
    /// Bytes read, by their start address.
    held: BTreeMap<u64, Vec<u8>>,
}

impl<'a> ReadAhead<'a> {
    /// Reads `ranges` (start, length) from `inner` in one batch. Ranges of
    /// more than `max_each` bytes are not read ahead.
    pub(crate) fn new(
        inner: &'a dyn TargetMemory,
        ranges: &[(TargetAddr, u64)],
        max_each: u64,
    ) -> ReadAhead<'a> {
        let mut bufs: Vec<(TargetAddr, Vec<u8>)> = ranges
            .iter()
            .filter(|(addr, len)| *len <= max_each && addr.0.checked_add(*len).is_some())
            .filter_map(|&(addr, len)| Some((addr, vec![0u8; usize::try_from(len).ok()?])))
            .collect();
        let mut requests: Vec<(TargetAddr, &mut [u8])> = bufs
            .iter_mut()
            .map(|(addr, buf)| (*addr, buf.as_mut_slice()))
            .collect();
        let results = inner.read_many(&mut requests);
        let held = bufs
            .into_iter()
            .zip(results)
            .filter(|((_, buf), got)| matches!(got, Ok(n) if *n == buf.len()))
            .map(|((addr, buf), _)| (addr.0, buf))
            .collect();
        ReadAhead { inner, held }
    }

    /// The bytes read ahead, to answer another reading of the same
    /// ranges ([`ReadAhead::holding`]) without reading them again.
    pub(crate) fn into_held(self) -> BTreeMap<u64, Vec<u8>> {
        self.held
    }

    /// Answers from `held` (what [`ReadAhead::into_held`] gave) what it
    /// holds, and hands every other read to `inner`.
    pub(crate) fn holding(
        inner: &'a dyn TargetMemory,
        held: BTreeMap<u64, Vec<u8>>,
    ) -> ReadAhead<'a> {
        ReadAhead { inner, held }
    }

    /// The `len` bytes at `addr`, if one range read ahead holds them all.
    fn held(&self, addr: TargetAddr, len: usize) -> Option<&[u8]> {
        let (start, bytes) = self.held.range(..=addr.0).next_back()?;
        let from = usize::try_from(addr.0 - start).ok()?;
        bytes.get(from..from.checked_add(len)?)
    }
}

impl TargetMemory for ReadAhead<'_> {
    fn abi(&self) -> TargetAbi {
        self.inner.abi()
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        match self.held(addr, buf.len()) {
            Some(bytes) => {
                buf.copy_from_slice(bytes);
                Ok(buf.len())
            }
            None => self.inner.read_into(addr, buf),
        }
    }

    fn read_exact(
        &self,
        addr: TargetAddr,
        buf: &mut [u8],
        what: &'static str,
    ) -> Result<(), ReadError> {
        match self.held(addr, buf.len()) {
            Some(bytes) => {
                buf.copy_from_slice(bytes);
                Ok(())
            }
            None => self.inner.read_exact(addr, buf, what),
        }
    }

    fn view<'b>(
        &'b self,
        addr: TargetAddr,
        buf: &'b mut [u8],
        what: &'static str,
    ) -> Result<&'b [u8], ReadError> {
        match self.held(addr, buf.len()) {
            Some(bytes) => Ok(bytes),
            None => self.inner.view(addr, buf, what),
        }
    }

    fn read_many(&self, requests: &mut [(TargetAddr, &mut [u8])]) -> Vec<Result<usize, ReadError>> {
        self.inner.read_many(requests)
    }

    fn read_c_string(&self, addr: TargetAddr, max_len: usize) -> Result<Vec<u8>, ReadError> {
        self.inner.read_c_string(addr, max_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpidd_read::SyntheticMemory;

    #[test]
    fn reads_inside_a_range_come_from_the_batch_and_others_from_beneath() {
        let mut m = SyntheticMemory::new(TargetAbi::X86_64);
        m.map(TargetAddr(0x1000), (0u8..64).collect());
        m.map(TargetAddr(0x2000), vec![7; 16]);
        // The second range runs past mapped memory: not held, so a read
        // of it fails as it would beneath.
        let ahead = ReadAhead::new(
            &m,
            &[(TargetAddr(0x1000), 32), (TargetAddr(0x2008), 16)],
            1024,
        );
        assert_eq!(ahead.held.len(), 1);
        let mut b = [0u8; 4];
        ahead.read_exact(TargetAddr(0x1010), &mut b, "t").unwrap();
        assert_eq!(b, [16, 17, 18, 19]);
        // Past the held range: read beneath, same bytes.
        ahead.read_exact(TargetAddr(0x101e), &mut b, "t").unwrap();
        assert_eq!(b, [30, 31, 32, 33]);
        let mut b8 = [0u8; 16];
        let beneath = m.read_exact(TargetAddr(0x2008), &mut b8, "t").unwrap_err();
        let above = ahead
            .read_exact(TargetAddr(0x2008), &mut b8, "t")
            .unwrap_err();
        assert_eq!(above.to_string(), beneath.to_string());
    }
}
