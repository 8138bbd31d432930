//! An in-memory target: a set of byte segments at target addresses.

use std::collections::BTreeMap;

use mpidd_types::{TargetAbi, TargetAddr};

use crate::backend::memory::{read_spanning, TargetMemory, TargetMemoryMut};
use crate::error::ReadError;

/// Target memory held in the debugger's own memory: segments of bytes at
/// target addresses, with gaps between them that read as unmapped.
///
/// Tests and the demo build jobs in it; the synthetic job builder fills it.
#[derive(Clone, Debug)]
pub struct SyntheticMemory {
    abi: TargetAbi,
    segments: BTreeMap<u64, Vec<u8>>,
}

impl SyntheticMemory {
    /// Empty memory of a target with this ABI.
    pub fn new(abi: TargetAbi) -> Self {
        SyntheticMemory {
            abi,
            segments: BTreeMap::new(),
        }
    }

    /// Maps `bytes` at `addr`. Overlapping an existing segment replaces the
    /// overlapped segment entirely, so callers should map disjoint ranges.
    pub fn map(&mut self, addr: TargetAddr, bytes: Vec<u8>) {
        let end = addr.0.saturating_add(bytes.len() as u64);
        let overlapping: Vec<u64> = self
            .segments
            .range(..end)
            .filter(|(start, seg)| start.saturating_add(seg.len() as u64) > addr.0)
            .map(|(start, _)| *start)
            .collect();
        for start in overlapping {
            self.segments.remove(&start);
        }
        self.segments.insert(addr.0, bytes);
    }

    /// The segments, in address order.
    pub fn segments(&self) -> impl Iterator<Item = (TargetAddr, &[u8])> {
        self.segments
            .iter()
            .map(|(a, b)| (TargetAddr(*a), b.as_slice()))
    }

    /// The segment holding `addr` and the offset of `addr` in it.
    fn locate(&self, addr: u64) -> Option<(u64, usize)> {
        let (start, seg) = self.segments.range(..=addr).next_back()?;
        let off = usize::try_from(addr - start).ok()?;
        (off < seg.len()).then_some((*start, off))
    }
}

impl TargetMemory for SyntheticMemory {
    fn abi(&self) -> TargetAbi {
        self.abi
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        Ok(read_spanning(addr, buf, |at, out| {
            let Some((start, off)) = self.locate(at) else {
                return 0;
            };
            let Some(seg) = self.segments.get(&start) else {
                return 0;
            };
            let n = (seg.len() - off).min(out.len());
            out[..n].copy_from_slice(&seg[off..off + n]);
            n
        }))
    }

    fn mapped(&self, addr: TargetAddr, len: usize) -> Option<&[u8]> {
        let (start, off) = self.locate(addr.0)?;
        self.segments.get(&start)?.get(off..off.checked_add(len)?)
    }
}

impl TargetMemoryMut for SyntheticMemory {
    fn write_all(&mut self, addr: TargetAddr, bytes: &[u8]) -> Result<(), ReadError> {
        let mut probe = vec![0u8; bytes.len()];
        if self.read_into(addr, &mut probe)? < bytes.len() {
            return Err(ReadError::NotWritable {
                addr,
                len: bytes.len(),
            });
        }
        let mut done = 0;
        while done < bytes.len() {
            let at = addr.0 + done as u64;
            let not_writable = ReadError::NotWritable {
                addr,
                len: bytes.len(),
            };
            let Some((start, off)) = self.locate(at) else {
                return Err(not_writable);
            };
            let Some(seg) = self.segments.get_mut(&start) else {
                return Err(not_writable);
            };
            let n = (seg.len() - off).min(bytes.len() - done);
            seg[off..off + n].copy_from_slice(&bytes[done..done + n]);
            done += n;
        }
        Ok(())
    }
}
