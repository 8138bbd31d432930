//! Memory read the ways a debugger's own backend may read it, for tests of
//! the readers above `TargetMemory`: all or nothing, capped transfers,
//! failures in a range, garbage throughout.

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};

use mpidd_types::{TargetAbi, TargetAddr};

use crate::backend::memory::TargetMemory;
use crate::error::ReadError;
use crate::symbols::{Symbol, SymbolSource};

/// How an [`OutsideMemory`] answers a read; each is allowed by the read
/// contract of [`TargetMemory`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutsideReads {
    /// As the wrapped memory answers (a short count stops at the first
    /// unreadable byte).
    Partial,
    /// The whole range, or `Ok(0)` with the buffer scribbled over, as
    /// debuggers' ptrace-based reads often answer.
    AllOrNothing,
    /// At most this many bytes per call (at least one).
    Capped(usize),
    /// A [`ReadError::Backend`] for every read that touches `[start, end)`;
    /// the others as the wrapped memory answers.
    FailIn {
        /// First address that fails.
        start: TargetAddr,
        /// One past the last.
        end: TargetAddr,
    },
    /// Every read succeeds whole, with bytes made from their address and
    /// the seed (the same bytes for the same address each time).
    Garbage {
        /// Picks the bytes.
        seed: u64,
    },
}

/// A backend over another, answering as [`OutsideReads`] says; counts the
/// calls it gets, so a test can bound them. The symbols, if the wrapped
/// target has any, are passed through.
///
/// ```
/// use mpidd_read::synthetic::{OutsideMemory, OutsideReads};
/// use mpidd_read::{SyntheticMemory, TargetAbi, TargetAddr, TargetMemory};
///
/// let mut mem = SyntheticMemory::new(TargetAbi::X86_64);
/// mem.map(TargetAddr(0x1000), b"rank0\0".to_vec());
/// let outside = OutsideMemory::new(&mem, OutsideReads::AllOrNothing);
/// let mut buf = [0u8; 8];
/// assert_eq!(outside.read_into(TargetAddr(0x1000), &mut buf)?, 0);
/// assert_eq!(outside.read_c_string(TargetAddr(0x1000), 64)?, b"rank0");
/// # Ok::<(), mpidd_read::ReadError>(())
/// ```
#[derive(Debug)]
pub struct OutsideMemory<M> {
    inner: M,
    reads: OutsideReads,
    calls: AtomicU64,
}

impl<M> OutsideMemory<M> {
    /// `inner` (a reference, a `Box`, anything that derefs to the memory)
    /// read as `reads` says.
    pub fn new(inner: M, reads: OutsideReads) -> Self {
        OutsideMemory {
            inner,
            reads,
            calls: AtomicU64::new(0),
        }
    }

    /// How many reads it has answered.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// What it wraps.
    pub fn inner(&self) -> &M {
        &self.inner
    }
}

/// The garbage byte at `addr` (splitmix64 of the address and the seed).
fn garbage(seed: u64, addr: u64) -> u8 {
    let mut z = seed ^ addr.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as u8
}

impl<M: Deref<Target: TargetMemory>> TargetMemory for OutsideMemory<M> {
    fn abi(&self) -> TargetAbi {
        self.inner.abi()
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        match self.reads {
            OutsideReads::Partial => self.inner.read_into(addr, buf),
            OutsideReads::AllOrNothing => {
                let got = self.inner.read_into(addr, buf)?;
                if got == buf.len() {
                    Ok(got)
                } else {
                    // What a failed read leaves behind is not the target's:
                    // a reader that takes it is caught.
                    buf.fill(0x5a);
                    Ok(0)
                }
            }
            OutsideReads::Capped(cap) => {
                let n = buf.len().min(cap.max(1));
                self.inner.read_into(addr, &mut buf[..n])
            }
            OutsideReads::FailIn { start, end } => {
                let last = addr.0.saturating_add(buf.len() as u64);
                if addr.0 < end.0 && last > start.0 {
                    Err(ReadError::Backend {
                        what: "debugger memory",
                        addr,
                        cause: std::io::Error::other("ptrace(PEEKDATA): I/O error"),
                    })
                } else {
                    self.inner.read_into(addr, buf)
                }
            }
            OutsideReads::Garbage { seed } => {
                for (i, b) in (0u64..).zip(buf.iter_mut()) {
                    *b = garbage(seed, addr.0.wrapping_add(i));
                }
                Ok(buf.len())
            }
        }
    }
}

impl<M: Deref<Target: SymbolSource>> SymbolSource for OutsideMemory<M> {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        self.inner.lookup(name)
    }

    fn searched_objects(&self) -> Vec<String> {
        self.inner.searched_objects()
    }
}
