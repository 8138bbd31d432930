//! A cap on the bytes one reader takes from a target, whatever the shape
//! of what it reads: many small records can add up to what no single
//! count check would catch.

use std::sync::atomic::{AtomicU64, Ordering};

use mpidd_types::{TargetAbi, TargetAddr};

use crate::backend::memory::TargetMemory;
use crate::error::ReadError;
use crate::limits::Limits;

/// A [`TargetMemory`] that counts the bytes read through it and refuses
/// to read past [`Limits::max_total_bytes`].
///
/// It is `Send + Sync` when the memory it wraps is: threads that share
/// one budget draw on it together, and their reads never add up past it.
///
/// ```
/// use mpidd_read::{Limits, ReadBudget, ReadError, SyntheticMemory, TargetMemory};
/// use mpidd_types::{TargetAbi, TargetAddr};
///
/// let mut mem = SyntheticMemory::new(TargetAbi::X86_64);
/// mem.map(TargetAddr(0x1000), vec![7; 64]);
/// let limits = Limits { max_total_bytes: 40, ..Limits::default() };
/// let budget = ReadBudget::new(&mem, &limits);
/// let mut buf = [0u8; 32];
/// budget.read_exact(TargetAddr(0x1000), &mut buf, "first")?;
/// let err = budget.read_exact(TargetAddr(0x1020), &mut buf, "second").unwrap_err();
/// assert!(matches!(err, ReadError::LimitExceeded { limit: "max_total_bytes", .. }));
/// assert_eq!(budget.used(), 32);
/// # Ok::<(), ReadError>(())
/// ```
pub struct ReadBudget<'m, M: TargetMemory + ?Sized> {
    inner: &'m M,
    used: AtomicU64,
    max: u64,
}

impl<'m, M: TargetMemory + ?Sized> ReadBudget<'m, M> {
    /// Wraps `inner` with a budget of `limits.max_total_bytes`.
    pub fn new(inner: &'m M, limits: &Limits) -> Self {
        ReadBudget {
            inner,
            used: AtomicU64::new(0),
            max: limits.max_total_bytes,
        }
    }

    /// Bytes read so far.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    fn charge(&self, addr: TargetAddr, len: usize) -> Result<(), ReadError> {
        // One atomic step, so two threads never both spend the last bytes.
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                let after = used.saturating_add(len as u64);
                (after <= self.max).then_some(after)
            })
            .map(|_| ())
            .map_err(|used| ReadError::LimitExceeded {
                what: "bytes read from the target",
                addr,
                count: used.saturating_add(len as u64),
                max: self.max,
                limit: "max_total_bytes",
            })
    }
}

impl<M: TargetMemory + ?Sized> TargetMemory for ReadBudget<'_, M> {
    fn abi(&self) -> TargetAbi {
        self.inner.abi()
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        self.charge(addr, buf.len())?;
        self.inner.read_into(addr, buf)
    }

    fn read_many(&self, requests: &mut [(TargetAddr, &mut [u8])]) -> Vec<Result<usize, ReadError>> {
        let total: usize = requests.iter().map(|(_, b)| b.len()).sum();
        let first = requests.first().map_or(TargetAddr(0), |(a, _)| *a);
        if let Err(e) = self.charge(first, total) {
            return requests.iter().map(|_| Err(e.duplicate())).collect();
        }
        self.inner.read_many(requests)
    }

    fn borrow_c_string(&self, addr: TargetAddr, max_len: usize) -> Option<&[u8]> {
        let s = self.inner.borrow_c_string(addr, max_len)?;
        // Over budget: let the copying path run into the limit and say so.
        self.charge(addr, s.len() + 1).ok()?;
        Some(s)
    }
}
