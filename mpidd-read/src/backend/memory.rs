//! The byte source every reader works on, and the typed reads built on it.
//!
//! A backend implements only [`TargetMemory::read_into`] and
//! [`TargetMemory::abi`]. Everything typed (records, arrays, C strings,
//! pointers, ints) is provided on top, always in the target's byte order and
//! width, so the parsers above never touch the OS and never use host types
//! for target words.

use std::collections::HashMap;

use mpidd_types::{AddressWidth, ByteOrder, Record, TargetAbi, TargetAddr};

use crate::backend::short_reads::{fill_prefix, read_some};
use crate::error::ReadError;
use crate::limits::Limits;

/// How many bytes a string read asks for at a time. Strings in these tables
/// are short (host names, paths), so one read usually finds the NUL.
const STRING_CHUNK: usize = 256;

/// How many distinct strings [`TargetMemory::read_c_strings`] reads per
/// [`TargetMemory::read_many`] call: one `process_vm_readv` of a live
/// target takes at most this many ranges (Linux's `IOV_MAX`), and the
/// buffer stays at `STRING_CHUNK` times this, whatever the caller passes.
const STRINGS_PER_BATCH: usize = 1024;

/// How many records an array read decodes per backend call; keeps memory
/// proportional to what is really readable, whatever count the target
/// claims.
const RECORDS_PER_CHUNK: u64 = 8192;

/// Read-only access to a target's memory.
///
/// ```
/// use mpidd_read::{SyntheticMemory, TargetMemory};
/// use mpidd_types::{TargetAbi, TargetAddr};
///
/// let mut mem = SyntheticMemory::new(TargetAbi::S390X);
/// mem.map(TargetAddr(0x1000), b"\x00\x00\x00\x2a\xff\xff\xff\xfe".to_vec());
/// assert_eq!(mem.read_i32(TargetAddr(0x1000), "answer")?, 42);
/// assert_eq!(mem.read_i32(TargetAddr(0x1004), "minus two")?, -2);
/// assert!(mem.read_i32(TargetAddr(0x2000), "nothing").is_err());
/// # Ok::<(), mpidd_read::ReadError>(())
/// ```
///
/// # A debugger's own backend
///
/// A debugger that already reads the process (through ptrace, its own
/// core reader or a remote stub) implements the two required methods over
/// its reads, with nothing but this crate; every typed read, the MPIR and
/// MPI-2 readers and the decoders of the crates above then run on it. Its
/// [`TargetMemory::read_into`] must keep this contract:
///
/// - **`Ok(n)` with `n == buf.len()`**: all of `buf` holds the target's
///   bytes at `addr`.
/// - **`Ok(n)` with `n < buf.len()`**: `buf[..n]` holds the target's bytes
///   at `addr`; the rest of `buf` may hold anything. The count may stop at
///   the first byte that cannot be read (a core, a live process), or
///   earlier: a backend that reads all or nothing answers `Ok(0)` for any
///   range it cannot read whole, and one that caps its transfers answers
///   at most its cap. All three are correct: when a typed read needs more
///   than it got, it reads the rest again in smaller pieces (never across
///   a 4 KiB page boundary, then halving down to one byte), so a string
///   that ends just before an unmapped page is found on every kind. `n` is
///   never more than `buf.len()`; a backend that claims more gets a
///   [`ReadError::Backend`].
/// - **`Err(e)`**: the backend itself failed (the connection or the
///   process went away, a permission), which says nothing about whether
///   the memory is there. The typed reads do not read around it: they
///   return it with `what` renamed to what they were reading (the record,
///   `string`), so return [`ReadError::Backend`] with the address asked
///   for and the cause. Memory that simply is not mapped is `Ok(0)`, not
///   an `Err`.
/// - **No unbounded blocking**: a read returns within a bounded time, or
///   fails with [`ReadError::Backend`]; the readers above issue many
///   reads and have no way to interrupt one. A stopped or gone process is
///   an error, not a wait.
///
/// Only [`TargetMemory::abi`] and [`TargetMemory::read_into`] are
/// required; [`TargetMemory::read_many`] is worth overriding when the
/// backend can read many ranges in one request. The types a backend's
/// signatures need are re-exported at the crate's root:
///
/// ```
/// use mpidd_read::{
///     AddressWidth, ByteOrder, ReadError, TargetAbi, TargetAddr, TargetMemory,
/// };
///
/// /// A debugger's view of one mapping: its reads give a range whole or not
/// /// at all, as ptrace-based reads often do.
/// struct DebuggerMemory {
///     start: u64,
///     bytes: Vec<u8>,
/// }
///
/// impl TargetMemory for DebuggerMemory {
///     fn abi(&self) -> TargetAbi {
///         TargetAbi::new(ByteOrder::Little, AddressWidth::W64)
///     }
///
///     fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
///         let whole = addr
///             .0
///             .checked_sub(self.start)
///             .and_then(|off| usize::try_from(off).ok())
///             .and_then(|off| self.bytes.get(off..off.checked_add(buf.len())?));
///         match whole {
///             Some(src) => {
///                 buf.copy_from_slice(src);
///                 Ok(buf.len())
///             }
///             // Not all readable: all or nothing says nothing.
///             None => Ok(0),
///         }
///     }
/// }
///
/// // A host name that ends three bytes before the end of the mapping: the
/// // string read asks for more than that at first, and finds it anyway.
/// let mut bytes = vec![0xaa; 4093];
/// bytes.extend_from_slice(b"node7\0\0\0");
/// let mem = DebuggerMemory { start: 0x7000, bytes };
/// assert_eq!(mem.read_string(TargetAddr(0x7000 + 4093), 64)?, "node7");
/// assert_eq!(mem.read_i32(TargetAddr(0x7000), "first word")?, 0xaaaa_aaaa_u32 as i32);
/// let past_end = mem.read_i32(TargetAddr(0x7000 + 4098), "last word").unwrap_err();
/// assert!(matches!(past_end, ReadError::ShortRead { got: 3, wanted: 4, .. }));
/// # Ok::<(), ReadError>(())
/// ```
pub trait TargetMemory {
    /// The target's ABI: byte order and address width of everything read.
    fn abi(&self) -> TargetAbi;

    /// Reads up to `buf.len()` bytes at `addr`, possibly across segments,
    /// and returns how many leading bytes of `buf` it filled. Fewer than
    /// asked says that this call could not read more (the byte after them
    /// is unreadable, or the backend reads all or nothing, or caps its
    /// transfers); an `Err` means the backend failed in a way that says
    /// nothing about the memory. The contract in full, for backends written
    /// outside this crate, is in the [trait's documentation](TargetMemory).
    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError>;

    /// Reads many ranges, each as [`TargetMemory::read_into`] would: the
    /// result at index `i` is the count read into `requests[i].1`, short
    /// under the same contract as there. One failing range does not stop
    /// the others. The readers above use the counts only to find what
    /// came whole, and read what did not again on their own.
    ///
    /// Backends that can read several ranges in one request (a live
    /// process's `process_vm_readv`) override this; the default reads the
    /// ranges one by one.
    ///
    /// ```
    /// use mpidd_read::{SyntheticMemory, TargetMemory};
    /// use mpidd_types::{TargetAbi, TargetAddr};
    ///
    /// let mut mem = SyntheticMemory::new(TargetAbi::X86_64);
    /// mem.map(TargetAddr(0x1000), b"abcdef".to_vec());
    /// let (mut a, mut b) = ([0u8; 4], [0u8; 4]);
    /// let mut requests = [(TargetAddr(0x1000), &mut a[..]), (TargetAddr(0x1004), &mut b[..])];
    /// let counts: Vec<usize> = mem
    ///     .read_many(&mut requests)
    ///     .into_iter()
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(counts, [4, 2]);
    /// assert_eq!(&b[..2], b"ef");
    /// # Ok::<(), mpidd_read::ReadError>(())
    /// ```
    fn read_many(&self, requests: &mut [(TargetAddr, &mut [u8])]) -> Vec<Result<usize, ReadError>> {
        requests
            .iter_mut()
            .map(|(addr, buf)| self.read_into(*addr, buf))
            .collect()
    }

    /// The C string at `addr`, borrowed from memory the backend already
    /// holds (a memory-mapped core), if it lies there whole: at most
    /// `max_len` bytes before its terminator, which is not included.
    ///
    /// `None` says only that this fast path does not apply (a live
    /// process, a string running past the end of its segment or longer
    /// than `max_len`); [`TargetMemory::read_c_string`] then reads it and
    /// says what is wrong, if anything. The default is always `None`; a
    /// wrapper that counts reads ([`crate::ReadBudget`]) charges what it
    /// hands out.
    fn borrow_c_string(&self, addr: TargetAddr, max_len: usize) -> Option<&[u8]> {
        let _ = (addr, max_len);
        None
    }

    /// The `len` bytes at `addr` as this process already holds them (a
    /// memory-mapped core), when they sit there in one piece: the bytes
    /// [`TargetMemory::read_into`] would copy, without the copy, for
    /// readers that decode many small records. `None` says nothing about
    /// the memory, only that the caller must read it instead; the default
    /// always says so. Wrappers that count or filter reads must keep the
    /// default, or every byte they hand out bypasses them.
    ///
    /// ```
    /// use mpidd_read::{SyntheticMemory, TargetMemory};
    /// use mpidd_types::{TargetAbi, TargetAddr};
    ///
    /// let mut mem = SyntheticMemory::new(TargetAbi::X86_64);
    /// mem.map(TargetAddr(0x1000), b"abcdef".to_vec());
    /// assert_eq!(mem.mapped(TargetAddr(0x1002), 3), Some(&b"cde"[..]));
    /// assert_eq!(mem.mapped(TargetAddr(0x1004), 3), None);
    /// ```
    fn mapped(&self, addr: TargetAddr, len: usize) -> Option<&[u8]> {
        let _ = (addr, len);
        None
    }

    /// Reads exactly `buf.len()` bytes, or fails naming `what`.
    fn read_exact(
        &self,
        addr: TargetAddr,
        buf: &mut [u8],
        what: &'static str,
    ) -> Result<(), ReadError> {
        check_span(self.abi(), addr, buf.len() as u64, what)?;
        let mut got = read_some(self, addr, buf, what)?;
        if got < buf.len() {
            got = fill_prefix(self, addr, buf, got, what)?;
        }
        if got < buf.len() {
            return Err(ReadError::ShortRead {
                what,
                addr,
                wanted: buf.len(),
                got,
            });
        }
        Ok(())
    }

    /// Reads the longest readable run of bytes at `addr` into the front of
    /// `buf` and returns its length, on any backend the contract allows:
    /// one read when it comes back whole, smaller ones (bounded by pages,
    /// then halving) when it does not. For readers that take whatever part
    /// of a range is there (a table of strings of unknown length).
    ///
    /// ```
    /// use mpidd_read::{SyntheticMemory, TargetAbi, TargetAddr, TargetMemory};
    ///
    /// let mut mem = SyntheticMemory::new(TargetAbi::X86_64);
    /// mem.map(TargetAddr(0x1000), b"-np\04\0\0".to_vec());
    /// let mut buf = [0u8; 64];
    /// assert_eq!(mem.read_prefix(TargetAddr(0x1000), &mut buf, "arguments")?, 7);
    /// assert_eq!(&buf[..7], b"-np\04\0\0");
    /// # Ok::<(), mpidd_read::ReadError>(())
    /// ```
    fn read_prefix(
        &self,
        addr: TargetAddr,
        buf: &mut [u8],
        what: &'static str,
    ) -> Result<usize, ReadError> {
        let got = read_some(self, addr, buf, what)?;
        if got < buf.len() {
            return fill_prefix(self, addr, buf, got, what);
        }
        Ok(got)
    }

    /// The `buf.len()` bytes at `addr`: borrowed from the backend when it
    /// holds them in one piece ([`TargetMemory::mapped`]), else read into
    /// `buf`. Fails as [`TargetMemory::read_exact`] does. For decoders that
    /// look at a few fields of many records, where the copy would cost
    /// more than the decoding.
    ///
    /// ```
    /// use mpidd_read::{SyntheticMemory, TargetMemory};
    /// use mpidd_types::{TargetAbi, TargetAddr};
    ///
    /// let mut mem = SyntheticMemory::new(TargetAbi::X86_64);
    /// mem.map(TargetAddr(0x1000), b"rank\0".to_vec());
    /// // Decoders that must run on any backend take it as a trait object.
    /// let memory: &dyn TargetMemory = &mem;
    /// let mut buf = [0u8; 4];
    /// assert_eq!(memory.view(TargetAddr(0x1000), &mut buf, "name")?, b"rank");
    /// assert_eq!(memory.read_c_string(TargetAddr(0x1000), 16)?, b"rank");
    /// # Ok::<(), mpidd_read::ReadError>(())
    /// ```
    fn view<'a>(
        &'a self,
        addr: TargetAddr,
        buf: &'a mut [u8],
        what: &'static str,
    ) -> Result<&'a [u8], ReadError> {
        if let Some(bytes) = self.mapped(addr, buf.len()) {
            return Ok(bytes);
        }
        self.read_exact(addr, buf, what)?;
        Ok(buf)
    }

    /// Reads a NUL-terminated string of at most `max_len` bytes (terminator
    /// excluded). Invalid UTF-8 is kept as bytes.
    fn read_c_string(&self, addr: TargetAddr, max_len: usize) -> Result<Vec<u8>, ReadError> {
        let mut out = Vec::new();
        let mut chunk = [0u8; STRING_CHUNK];
        loop {
            let at = TargetAddr(addr.0.saturating_add(out.len() as u64));
            // Never ask for more than the cap allows, plus one for the NUL.
            let want = max_len
                .saturating_add(1)
                .saturating_sub(out.len())
                .min(STRING_CHUNK);
            check_span(self.abi(), at, want as u64, "string")?;
            let mut got = read_some(self, at, &mut chunk[..want], "string")?;
            let nul_in = |chunk: &[u8]| chunk.iter().position(|&b| b == 0);
            if got < want && nul_in(&chunk[..got]).is_none() {
                // The backend may read all or nothing, or cap its reads: the
                // string may still end before the unreadable byte.
                got = fill_prefix(self, at, &mut chunk[..want], got, "string")?;
            }
            if let Some(nul) = nul_in(&chunk[..got]) {
                out.extend_from_slice(&chunk[..nul]);
                return Ok(out);
            }
            out.extend_from_slice(&chunk[..got]);
            if out.len() > max_len {
                return Err(ReadError::Unterminated { addr, cap: max_len });
            }
            if got < want {
                return Err(ReadError::ShortRead {
                    what: "string",
                    addr,
                    wanted: out.len() + 1,
                    got: out.len(),
                });
            }
        }
    }

    /// Reads many C strings, each as [`TargetMemory::read_c_string`] would,
    /// in few backend requests: equal addresses are read once (launchers
    /// often share one host-name string between ranks), the first chunk of
    /// every distinct string comes from one [`TargetMemory::read_many`] per
    /// 1024 strings, and only strings with no NUL in that chunk are
    /// finished one by one. The result at index `i` is the string at
    /// `addrs[i]`.
    ///
    /// ```
    /// use mpidd_read::{ReadError, SyntheticMemory, TargetMemory};
    /// use mpidd_types::{TargetAbi, TargetAddr};
    ///
    /// let mut mem = SyntheticMemory::new(TargetAbi::I686);
    /// mem.map(TargetAddr(0x1000), b"node1\0/bin/ring\0".to_vec());
    /// let got = mem.read_c_strings(&[TargetAddr(0x1000), TargetAddr(0x1006), TargetAddr(0x1000)], 64);
    /// assert_eq!(got[0].as_deref().unwrap(), b"node1");
    /// assert_eq!(got[1].as_deref().unwrap(), b"/bin/ring");
    /// assert_eq!(got[2].as_deref().unwrap(), b"node1");
    /// let bad = mem.read_c_strings(&[TargetAddr(0x9000)], 64);
    /// assert!(matches!(bad[0], Err(ReadError::ShortRead { .. })));
    /// ```
    fn read_c_strings(
        &self,
        addrs: &[TargetAddr],
        max_len: usize,
    ) -> Vec<Result<Vec<u8>, ReadError>> {
        // Which distinct string each address is.
        let mut index: HashMap<u64, usize> = HashMap::new();
        let mut distinct = Vec::new();
        let slot: Vec<usize> = addrs
            .iter()
            .map(|a| {
                *index.entry(a.0).or_insert_with(|| {
                    distinct.push(*a);
                    distinct.len() - 1
                })
            })
            .collect();
        // The same first request as read_c_string makes, so the span check
        // and what is read agree with it byte for byte.
        let first = max_len.saturating_add(1).min(STRING_CHUNK);
        let mut strings: Vec<Option<Result<Vec<u8>, ReadError>>> =
            Vec::with_capacity(distinct.len());
        let mut buf = vec![0u8; first * distinct.len().min(STRINGS_PER_BATCH)];
        for batch in distinct.chunks(STRINGS_PER_BATCH) {
            let in_span: Vec<bool> = batch
                .iter()
                .map(|&a| check_span(self.abi(), a, first as u64, "string").is_ok())
                .collect();
            let mut requests: Vec<(TargetAddr, &mut [u8])> = batch
                .iter()
                .zip(&in_span)
                .zip(buf.chunks_exact_mut(first))
                .filter(|((_, ok), _)| **ok)
                .map(|((a, _), b)| (*a, &mut b[..first]))
                .collect();
            let mut counts = self.read_many(&mut requests).into_iter();
            drop(requests);
            for (i, (&addr, ok)) in batch.iter().zip(&in_span).enumerate() {
                let found = if *ok {
                    let chunk = &buf[i * first..(i + 1) * first];
                    match counts.next() {
                        Some(Ok(got)) => chunk[..got.min(first)]
                            .iter()
                            .position(|&b| b == 0)
                            .map(|nul| chunk[..nul].to_vec()),
                        _ => None,
                    }
                } else {
                    None
                };
                // No NUL in the first chunk: long, unterminated, unreadable
                // or out of the address space; read_c_string says which.
                strings.push(Some(match found {
                    Some(s) => Ok(s),
                    None => self.read_c_string(addr, max_len),
                }));
            }
        }
        // Hand each distinct result to its last user by move, copies to
        // the others.
        let mut last_use = vec![0usize; distinct.len()];
        for (i, &s) in slot.iter().enumerate() {
            last_use[s] = i;
        }
        slot.iter()
            .enumerate()
            .map(|(i, &s)| {
                if last_use[s] == i {
                    strings[s]
                        .take()
                        .unwrap_or_else(|| self.read_c_string(addrs[i], max_len))
                } else {
                    match &strings[s] {
                        Some(Ok(v)) => Ok(v.clone()),
                        Some(Err(e)) => Err(e.duplicate()),
                        None => self.read_c_string(addrs[i], max_len),
                    }
                }
            })
            .collect()
    }

    /// Reads a C string as text, replacing invalid UTF-8.
    fn read_string(&self, addr: TargetAddr, max_len: usize) -> Result<String, ReadError> {
        let bytes = self.read_c_string(addr, max_len)?;
        Ok(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Reads a target pointer (zero-extended to 64 bits).
    fn read_pointer(&self, addr: TargetAddr, what: &'static str) -> Result<TargetAddr, ReadError> {
        let abi = self.abi();
        let mut b = [0u8; 8];
        let n = abi.address_bytes();
        self.read_exact(addr, &mut b[..n], what)?;
        Ok(TargetAddr(decode_unsigned(abi.byte_order, &b[..n])))
    }

    /// Reads a 4-byte unsigned integer in the target's byte order.
    fn read_u32(&self, addr: TargetAddr, what: &'static str) -> Result<u32, ReadError> {
        let mut b = [0u8; 4];
        self.read_exact(addr, &mut b, what)?;
        Ok(decode_unsigned(self.abi().byte_order, &b) as u32)
    }

    /// Reads a 4-byte signed integer in the target's byte order.
    fn read_i32(&self, addr: TargetAddr, what: &'static str) -> Result<i32, ReadError> {
        self.read_u32(addr, what).map(|v| v as i32)
    }
}

/// Typed reads of records ([`mpidd_types::Record`]) from any
/// [`TargetMemory`], trait objects included. Kept apart from
/// [`TargetMemory`] because generic methods would keep that trait from
/// being used as `dyn TargetMemory`; every [`TargetMemory`] has them.
///
/// ```
/// use mpidd_read::{ReadRecords, SyntheticMemory, TargetMemory};
/// use mpidd_types::{MpirProcdesc, TargetAbi, TargetAddr};
///
/// let mut mem = SyntheticMemory::new(TargetAbi::I686);
/// // host_name, executable_name (pointers), pid: little-endian, 32-bit.
/// mem.map(TargetAddr(0x1000), [0x10u32, 0x20, 4242].iter().flat_map(|w| w.to_le_bytes()).collect());
/// let memory: &dyn TargetMemory = &mem;
/// let desc: MpirProcdesc = memory.read_record(TargetAddr(0x1000))?;
/// assert_eq!(desc.pid, 4242);
/// # Ok::<(), mpidd_read::ReadError>(())
/// ```
pub trait ReadRecords: TargetMemory {
    /// Reads one record.
    fn read_record<R: Record>(&self, addr: TargetAddr) -> Result<R, ReadError> {
        self.read_record_as(addr, self.abi())
    }

    /// Reads one record laid out for `abi`, which differs from the target's
    /// only in packing (the MPI-2 records may be packed).
    fn read_record_as<R: Record>(&self, addr: TargetAddr, abi: TargetAbi) -> Result<R, ReadError> {
        let mut buf = [0u8; 512];
        let size = R::size_for(abi);
        let mut heap;
        let bytes = if size <= buf.len() {
            &mut buf[..size]
        } else {
            heap = vec![0u8; size];
            &mut heap[..]
        };
        self.read_exact(addr, bytes, R::C_NAME)?;
        R::decode(bytes, abi).map_err(|cause| ReadError::Decode {
            record: R::C_NAME,
            addr,
            cause,
        })
    }

    /// Reads an array of `count` records. `count` is taken as the target
    /// gave it: negative counts and counts above
    /// [`Limits::max_table_entries`] are refused before anything is
    /// allocated.
    fn read_records<R: Record>(
        &self,
        addr: TargetAddr,
        count: i64,
        limits: &Limits,
    ) -> Result<Vec<R>, ReadError> {
        self.read_records_as(addr, count, self.abi(), limits)
    }

    /// [`ReadRecords::read_records`] with records laid out for `abi`.
    fn read_records_as<R: Record>(
        &self,
        addr: TargetAddr,
        count: i64,
        abi: TargetAbi,
        limits: &Limits,
    ) -> Result<Vec<R>, ReadError> {
        let mut out = Vec::new();
        self.visit_records_as(addr, count, abi, limits, |i, rec: R| {
            if i == 0 {
                out.reserve(count.clamp(0, RECORDS_PER_CHUNK as i64) as usize);
            }
            out.push(rec);
            Ok(())
        })?;
        Ok(out)
    }

    /// Reads an array of `count` records laid out for `abi` and hands each
    /// to `visit` with its index, in order, without collecting them: a
    /// million-entry table then needs one chunk of memory, not a million
    /// records. The checks of [`ReadRecords::read_records`] apply, and an
    /// error from `visit` stops the read and is returned.
    fn visit_records_as<R: Record>(
        &self,
        addr: TargetAddr,
        count: i64,
        abi: TargetAbi,
        limits: &Limits,
        mut visit: impl FnMut(u64, R) -> Result<(), ReadError>,
    ) -> Result<(), ReadError> {
        let what = R::C_NAME;
        visit_record_bytes(
            self,
            addr,
            count,
            R::size_for(abi),
            what,
            limits,
            |i, at, bytes| {
                let rec = R::decode(bytes, abi).map_err(|cause| ReadError::Decode {
                    record: what,
                    addr: at,
                    cause,
                })?;
                visit(i, rec)
            },
        )
    }
}

impl<M: TargetMemory + ?Sized> ReadRecords for M {}

/// Explicit writes into a target. Kept apart from [`TargetMemory`] so that
/// reading code cannot write by accident; a debugger only writes the few
/// variables the protocols tell it to (`MPIR_being_debugged`,
/// `MPIR_debug_gate`, `MPI2DD_info.debugger_flags`).
pub trait TargetMemoryMut: TargetMemory {
    /// Writes all of `bytes` at `addr`, or nothing.
    fn write_all(&mut self, addr: TargetAddr, bytes: &[u8]) -> Result<(), ReadError>;

    /// Writes a 4-byte integer in the target's byte order.
    fn write_i32(&mut self, addr: TargetAddr, value: i32) -> Result<(), ReadError> {
        let b = match self.abi().byte_order {
            ByteOrder::Little => value.to_le_bytes(),
            ByteOrder::Big => value.to_be_bytes(),
        };
        self.write_all(addr, &b)
    }
}

/// Fills `buf` from `addr` on by calling `copy` on each piece: `copy(at,
/// out)` copies what one segment holds at `at` into the front of `out` and
/// returns the count, 0 where nothing is mapped. Stops at the first gap and
/// returns the bytes filled, so a backend's short read counts correctly
/// across segment boundaries.
pub(crate) fn read_spanning(
    addr: TargetAddr,
    buf: &mut [u8],
    mut copy: impl FnMut(u64, &mut [u8]) -> usize,
) -> usize {
    let mut done = 0;
    while done < buf.len() {
        let Some(at) = addr.0.checked_add(done as u64) else {
            break;
        };
        let n = copy(at, &mut buf[done..]);
        if n == 0 {
            break;
        }
        done += n;
    }
    done
}

/// Reads an array of `count` records of `size` bytes named `what` a chunk
/// at a time, and hands each record's bytes to `visit` with its index and
/// address. Negative counts and counts above [`Limits::max_table_entries`]
/// are refused before anything is read or allocated.
pub(crate) fn visit_record_bytes<M: TargetMemory + ?Sized>(
    mem: &M,
    addr: TargetAddr,
    count: i64,
    size: usize,
    what: &'static str,
    limits: &Limits,
    mut visit: impl FnMut(u64, TargetAddr, &[u8]) -> Result<(), ReadError>,
) -> Result<(), ReadError> {
    let count = u64::try_from(count).map_err(|_| ReadError::NegativeCount { what, addr, count })?;
    if count > limits.max_table_entries {
        return Err(ReadError::LimitExceeded {
            what,
            addr,
            count,
            max: limits.max_table_entries,
            limit: "max_table_entries",
        });
    }
    let size = size.max(1) as u64;
    let total = count.checked_mul(size).ok_or(ReadError::AddressOverflow {
        what,
        addr,
        len: u64::MAX,
    })?;
    check_span(mem.abi(), addr, total, what)?;
    let mut buf = Vec::new();
    let mut done = 0u64;
    while done < count {
        let n = (count - done).min(RECORDS_PER_CHUNK);
        let at = TargetAddr(addr.0 + done * size);
        buf.resize((n * size) as usize, 0);
        mem.read_exact(at, &mut buf, what)?;
        for (i, chunk) in (0u64..).zip(buf.chunks_exact(size as usize)) {
            visit(done + i, TargetAddr(at.0 + i * size), chunk)?;
        }
        done += n;
    }
    Ok(())
}

/// Unsigned value of 1 to 8 bytes in the given byte order. Inlined into
/// the decoders of other crates, which call it for every field.
#[inline]
pub(crate) fn decode_unsigned(order: ByteOrder, bytes: &[u8]) -> u64 {
    // The widths C has as single loads: tables and queues decode millions
    // of them.
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
    let fold = |acc: u64, b: &u8| (acc << 8) | u64::from(*b);
    match order {
        ByteOrder::Big => bytes.iter().fold(0, fold),
        ByteOrder::Little => bytes.iter().rev().fold(0, fold),
    }
}

/// Fails if `[addr, addr + len)` leaves the target's address space.
fn check_span(
    abi: TargetAbi,
    addr: TargetAddr,
    len: u64,
    what: &'static str,
) -> Result<(), ReadError> {
    let top = match abi.address_width {
        AddressWidth::W32 => Some(u64::from(u32::MAX) + 1),
        AddressWidth::W64 => None,
    };
    let end = addr.0.checked_add(len);
    let ok = match (end, top) {
        (None, _) => false,
        (Some(end), Some(top)) => end <= top,
        (Some(_), None) => true,
    };
    if ok {
        Ok(())
    } else {
        Err(ReadError::AddressOverflow { what, addr, len })
    }
}
