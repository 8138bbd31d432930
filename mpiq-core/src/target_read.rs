//! Integers, pointers and strings out of a [`TargetMemory`], in the target's
//! byte order and widths, and out of bytes already read.

use mpidd_read::{decode_int as signed, decode_uint as unsigned, Limits, ReadError};
use mpidd_types::{ByteOrder, TargetAddr};

use mpidd_read::TargetMemory;

/// A [`TargetMemory`] that refuses to read past
/// [`Limits::max_total_bytes`] in all (the byte-source twin of
/// `mpidd_read::ReadBudget`).
pub(crate) struct Budgeted<'a> {
    inner: &'a dyn TargetMemory,
    used: std::cell::Cell<u64>,
    max: u64,
}

impl<'a> Budgeted<'a> {
    pub(crate) fn new(inner: &'a dyn TargetMemory, limits: &Limits) -> Self {
        Budgeted {
            inner,
            used: std::cell::Cell::new(0),
            max: limits.max_total_bytes,
        }
    }
}

impl TargetMemory for Budgeted<'_> {
    fn abi(&self) -> mpidd_types::TargetAbi {
        self.inner.abi()
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        self.charge(addr, buf.len(), "memory")?;
        self.inner.read_into(addr, buf)
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

    // Each range is charged; those within the budget go to the inner
    // memory together, so that a batch stays one batch (one
    // `process_vm_readv` for many ranges of a live process).
    fn read_many(&self, requests: &mut [(TargetAddr, &mut [u8])]) -> Vec<Result<usize, ReadError>> {
        let mut out: Vec<Result<usize, ReadError>> = requests
            .iter()
            .map(|(addr, buf)| self.charge(*addr, buf.len(), "memory").map(|()| 0))
            .collect();
        let mut allowed: Vec<(TargetAddr, &mut [u8])> = requests
            .iter_mut()
            .zip(&out)
            .filter(|(_, charged)| charged.is_ok())
            .map(|((addr, buf), _)| (*addr, &mut **buf))
            .collect();
        let mut read = self.inner.read_many(&mut allowed).into_iter();
        for slot in out.iter_mut().filter(|r| r.is_ok()) {
            *slot = read.next().unwrap_or(Ok(0));
        }
        out
    }

    // Small chunks, each charged, so that a string near the end of the
    // budget costs what it holds rather than a whole chunk of the inner
    // backend's; bytes one at a time where a chunk would cross into
    // memory that cannot be read after the terminator.
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
            // Built only on failure: a queue decodes millions of fields.
            .ok_or_else(|| ReadError::ShortRead {
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
    mem: &dyn TargetMemory,
    addr: TargetAddr,
    len: u64,
    what: &'static str,
    limits: &Limits,
) -> Result<Vec<u8>, ReadError> {
    limits.check_record_bytes(what, addr, len)?;
    let mut buf = vec![0u8; len as usize];
    mem.read_exact(addr, &mut buf, what)?;
    Ok(buf)
}

/// Reads a target pointer at `addr`.
pub(crate) fn read_pointer(
    mem: &dyn TargetMemory,
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
    mem: &dyn TargetMemory,
    addr: TargetAddr,
    size: usize,
    what: &'static str,
) -> Result<i64, ReadError> {
    let mut buf = [0u8; 8];
    let n = size.clamp(1, 8);
    // Borrowed where the memory holds the bytes itself (a core): a rank's
    // decoder reads one small field per member of every group, and the
    // copy through the read layers cost more than the field.
    let bytes = mem.view(addr, &mut buf[..n], what)?;
    Ok(signed(bytes, mem.abi().byte_order))
}

/// A count read from the target at `at`, checked before anything is
/// allocated for it: not negative, and at most
/// [`Limits::max_table_entries`].
pub(crate) fn checked_count(
    count: i64,
    what: &'static str,
    at: TargetAddr,
    limits: &Limits,
) -> Result<u64, ReadError> {
    let n = u64::try_from(count).map_err(|_| ReadError::NegativeCount {
        what,
        addr: at,
        count,
    })?;
    if n > limits.max_table_entries {
        return Err(ReadError::LimitExceeded {
            what,
            addr: at,
            count: n,
            max: limits.max_table_entries,
            limit: "max_table_entries",
        });
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpidd_read::SyntheticMemory;
    use mpidd_types::TargetAbi;

    /// Memory that counts how it is asked: single reads and batches.
    struct Counted {
        inner: SyntheticMemory,
        singles: std::cell::Cell<u32>,
        batches: std::cell::Cell<u32>,
    }

    impl TargetMemory for Counted {
        fn abi(&self) -> mpidd_types::TargetAbi {
            self.inner.abi()
        }

        fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
            self.singles.set(self.singles.get() + 1);
            self.inner.read_into(addr, buf)
        }

        fn read_many(
            &self,
            requests: &mut [(TargetAddr, &mut [u8])],
        ) -> Vec<Result<usize, ReadError>> {
            self.batches.set(self.batches.get() + 1);
            self.inner.read_many(requests)
        }
    }

    #[test]
    fn a_batch_is_charged_range_by_range_and_read_within_the_budget_in_one_batch() {
        let mut m = SyntheticMemory::new(TargetAbi::X86_64);
        m.map(TargetAddr(0x1000), (0u8..32).collect());
        let m = Counted {
            inner: m,
            singles: Default::default(),
            batches: Default::default(),
        };
        let limits = Limits {
            max_total_bytes: 12,
            ..Limits::default()
        };
        let budget = Budgeted::new(&m, &limits);
        let (mut a, mut b, mut c) = ([0u8; 8], [0u8; 8], [0u8; 4]);
        let mut batch: Vec<(TargetAddr, &mut [u8])> = vec![
            (TargetAddr(0x1000), &mut a),
            (TargetAddr(0x1008), &mut b),
            (TargetAddr(0x1010), &mut c),
        ];
        let got = budget.read_many(&mut batch);
        assert_eq!(got[0].as_ref().ok(), Some(&8));
        // 16 bytes would pass the budget of 12: refused, not read.
        assert!(matches!(
            got[1],
            Err(ReadError::LimitExceeded {
                limit: "max_total_bytes",
                ..
            })
        ));
        assert_eq!(got[2].as_ref().ok(), Some(&4));
        assert_eq!(a, [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(b, [0; 8]);
        assert_eq!(c, [16, 17, 18, 19]);
        // The ranges within the budget reached the memory as one batch.
        assert_eq!((m.batches.get(), m.singles.get()), (1, 0));
    }
}
