//! A flat, growable piece of fake target memory for the demo: records and
//! strings are placed in it at target addresses, and read back by address.
//!
//! It stands in for the real target readers until `mpidd-read` has them.

use mpidd_types::{Record, TargetAbi, TargetAddr, TypesError};

/// Reading or writing the demo image failed.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// A record could not be encoded or decoded.
    #[error("{record} at {addr}: {source}")]
    Record {
        record: &'static str,
        addr: TargetAddr,
        source: TypesError,
    },
    /// An address outside the image.
    #[error("{what} at {addr}: {len} bytes are outside the image")]
    Unmapped {
        what: &'static str,
        addr: TargetAddr,
        len: usize,
    },
    /// A string with no terminator within the cap.
    #[error("string at {addr}: no NUL within {cap} bytes")]
    Unterminated { addr: TargetAddr, cap: usize },
    /// A table size that cannot be right.
    #[error("{what}: size {size} is negative or above the cap of {cap}")]
    BadCount {
        what: &'static str,
        size: i64,
        cap: usize,
    },
    /// The MPI2DD_INFO block is not valid.
    #[error("MPI2DD_info at {addr}: {source}")]
    BadInfo {
        addr: TargetAddr,
        source: TypesError,
    },
}

/// Fake target memory starting at `base`.
pub struct Image {
    abi: TargetAbi,
    base: u64,
    bytes: Vec<u8>,
}

impl Image {
    pub fn new(abi: TargetAbi, base: u64) -> Self {
        Image {
            abi,
            base,
            bytes: Vec::new(),
        }
    }

    pub fn abi(&self) -> TargetAbi {
        self.abi
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    fn reserve(&mut self, len: usize, align: usize) -> TargetAddr {
        let start = self.bytes.len().div_ceil(align) * align;
        self.bytes.resize(start + len, 0);
        TargetAddr(self.base + start as u64)
    }

    /// Place a NUL-terminated string, returning its address.
    pub fn put_str(&mut self, s: &str) -> TargetAddr {
        let at = self.reserve(s.len() + 1, 1);
        let off = (at.0 - self.base) as usize;
        self.bytes[off..off + s.len()].copy_from_slice(s.as_bytes());
        at
    }

    /// Place an array of records, returning the address of the first.
    pub fn put_records<R: Record>(&mut self, records: &[R]) -> Result<TargetAddr, ImageError> {
        let size = R::size_for(self.abi);
        let at = self.reserve(size * records.len(), self.abi.address_bytes());
        for (i, r) in records.iter().enumerate() {
            let off = (at.0 - self.base) as usize + i * size;
            let addr = TargetAddr(at.0 + (i * size) as u64);
            r.encode(&mut self.bytes[off..off + size], self.abi)
                .map_err(|source| ImageError::Record {
                    record: R::C_NAME,
                    addr,
                    source,
                })?;
        }
        Ok(at)
    }

    fn slice(&self, what: &'static str, addr: TargetAddr, len: usize) -> Result<&[u8], ImageError> {
        let unmapped = ImageError::Unmapped { what, addr, len };
        let off = addr
            .0
            .checked_sub(self.base)
            .ok_or(ImageError::Unmapped { what, addr, len })?;
        let off = usize::try_from(off).map_err(|_| ImageError::Unmapped { what, addr, len })?;
        let end = off
            .checked_add(len)
            .ok_or(ImageError::Unmapped { what, addr, len })?;
        self.bytes.get(off..end).ok_or(unmapped)
    }

    /// Read one record at `addr`.
    pub fn record<R: Record>(&self, addr: TargetAddr) -> Result<R, ImageError> {
        let bytes = self.slice(R::C_NAME, addr, R::size_for(self.abi))?;
        R::decode(bytes, self.abi).map_err(|source| ImageError::Record {
            record: R::C_NAME,
            addr,
            source,
        })
    }

    /// Read `count` records starting at `addr`, refusing counts above `cap`.
    pub fn records<R: Record>(
        &self,
        addr: TargetAddr,
        count: i64,
        cap: usize,
    ) -> Result<Vec<R>, ImageError> {
        let n = usize::try_from(count)
            .ok()
            .filter(|&n| n <= cap)
            .ok_or(ImageError::BadCount {
                what: R::C_NAME,
                size: count,
                cap,
            })?;
        let size = R::size_for(self.abi) as u64;
        (0..n as u64)
            .map(|i| self.record(TargetAddr(addr.0 + i * size)))
            .collect()
    }

    /// Read a NUL-terminated string of at most `cap` bytes.
    pub fn c_string(&self, addr: TargetAddr, cap: usize) -> Result<String, ImageError> {
        let off = addr
            .0
            .checked_sub(self.base)
            .and_then(|o| usize::try_from(o).ok())
            .filter(|&o| o < self.bytes.len())
            .ok_or(ImageError::Unmapped {
                what: "string",
                addr,
                len: 1,
            })?;
        let window = &self.bytes[off..self.bytes.len().min(off + cap)];
        let end = window
            .iter()
            .position(|&b| b == 0)
            .ok_or(ImageError::Unterminated { addr, cap })?;
        Ok(String::from_utf8_lossy(&window[..end]).into_owned())
    }
}
