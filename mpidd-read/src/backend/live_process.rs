//! A running Linux process as [`TargetMemory`], and its symbols.
//!
//! Reads use `process_vm_readv` and fall back to `/proc/PID/mem` when the
//! kernel refuses the first (no CMA permission, seccomp, old kernels); the
//! reason the first strategy failed is kept for error messages. Reading
//! does not stop the process. Writes go through `/proc/PID/mem` and happen
//! only through [`TargetMemoryMut`].
//!
//! Many ranges (the strings of a process table) are read with one
//! `process_vm_readv` per [`IOV_MAX`] ranges rather than one each.

use std::fs::{File, OpenOptions};
use std::io::{IoSliceMut, Read};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

use mpidd_types::{TargetAbi, TargetAddr};
use nix::errno::Errno;
use nix::sys::uio::{process_vm_readv, RemoteIoVec};
use nix::unistd::Pid;

use crate::backend::core_file::{auxv_pairs, MappedFile, AT_SYSINFO_EHDR};
use crate::backend::memory::{TargetMemory, TargetMemoryMut};
use crate::error::ReadError;

/// Bytes of `/proc/PID/maps` room is made for before it is read; a
/// longer one grows as it is read.
const MAPS_CAPACITY: usize = 64 << 10;

/// Most ranges one `process_vm_readv` takes (Linux's `UIO_MAXIOV`); more
/// fail with `EINVAL`.
const IOV_MAX: usize = 1024;

/// Why a live process could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LiveError {
    /// A `/proc` file could not be read.
    #[error("cannot read {path}: {cause} (does process {pid} exist, and may this user trace it?)")]
    Proc {
        /// The pid.
        pid: i32,
        /// The `/proc` path.
        path: PathBuf,
        /// The OS error: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
    /// The executable is not an ELF file.
    #[error("the executable of process {pid} ({path}) is not an ELF file: {reason}")]
    NotElf {
        /// The pid.
        pid: i32,
        /// Its executable.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
}

/// The memory of a running process on this machine.
#[derive(Debug)]
pub struct LiveProcess {
    pid: i32,
    abi: TargetAbi,
    /// Why `process_vm_readv` was given up on (its errno), once it has
    /// been; 0 until then. Threads that race to set it set the same kind of
    /// refusal, and a read that misses the update only tries the syscall
    /// once more, so no ordering is needed.
    vm_readv_error: AtomicI32,
    mem: OnceLock<Result<File, std::io::ErrorKind>>,
}

impl LiveProcess {
    /// Opens process `pid` for reading. The ABI comes from its executable's
    /// ELF header.
    pub fn open(pid: i32) -> Result<Self, LiveError> {
        let exe = PathBuf::from(format!("/proc/{pid}/exe"));
        // The ELF identification alone says the word size and byte order:
        // mapping and parsing the whole executable, once per rank of a
        // job, would cost more than reading the rank.
        let mut ident = [0u8; 16];
        let read = File::open(&exe).and_then(|f| {
            let mut got = 0;
            while got < ident.len() {
                match f.read_at(&mut ident[got..], got as u64)? {
                    0 => break,
                    n => got += n,
                }
            }
            Ok(got)
        });
        let got = read.map_err(|cause| LiveError::Proc {
            pid,
            path: exe.clone(),
            cause,
        })?;
        let abi = crate::backend::elf_ident::elf_abi(&ident[..got]).map_err(|reason| {
            LiveError::NotElf {
                pid,
                path: exe.clone(),
                reason,
            }
        })?;
        Ok(LiveProcess {
            pid,
            abi,
            vm_readv_error: AtomicI32::new(0),
            mem: OnceLock::new(),
        })
    }

    /// The pid.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Where the process's vDSO starts: `AT_SYSINFO_EHDR` of
    /// `/proc/PID/auxv`, `None` when it has none or the file cannot be
    /// read (the vDSO then unwinds by frame pointer alone).
    pub fn vdso(&self) -> Option<u64> {
        // The vector is a few dozen pairs; more than a page is not one.
        let mut bytes = Vec::with_capacity(512);
        File::open(format!("/proc/{}/auxv", self.pid))
            .and_then(|f| f.take(4096).read_to_end(&mut bytes))
            .ok()?;
        auxv_pairs(self.abi, &bytes)
            .into_iter()
            .find(|(key, _)| *key == AT_SYSINFO_EHDR)
            .map(|(_, value)| value)
    }

    /// The file-backed mappings of `/proc/PID/maps`.
    pub fn mappings(&self) -> Result<Vec<MappedFile>, LiveError> {
        let path = PathBuf::from(format!("/proc/{}/maps", self.pid));
        // A /proc file has no size to start from: room for a process of
        // many libraries up front reads it in a few calls, not a dozen
        // doubling ones (this runs twice for each rank of a job).
        let mut text = String::with_capacity(MAPS_CAPACITY);
        File::open(&path)
            .and_then(|mut f| f.read_to_string(&mut text))
            .map_err(|cause| LiveError::Proc {
                pid: self.pid,
                path,
                cause,
            })?;
        Ok(text.lines().filter_map(parse_maps_line).collect())
    }

    /// Why `process_vm_readv` was given up on, if it has been.
    fn vm_readv_refused(&self) -> Option<Errno> {
        match self.vm_readv_error.load(Ordering::Relaxed) {
            0 => None,
            raw => Some(Errno::from_raw(raw)),
        }
    }

    /// Gives `process_vm_readv` up for this process.
    fn refuse_vm_readv(&self, e: Errno) {
        // nix's unknown errno is 0, which would read back as "not
        // refused"; -1 reads back as that same unknown errno.
        let raw = match e as i32 {
            0 => -1,
            raw => raw,
        };
        self.vm_readv_error.store(raw, Ordering::Relaxed);
    }

    fn mem_file(&self) -> Result<&File, std::io::ErrorKind> {
        self.mem
            .get_or_init(|| File::open(format!("/proc/{}/mem", self.pid)).map_err(|e| e.kind()))
            .as_ref()
            .map_err(|e| *e)
    }
}

/// `start-end perms offset dev inode path`; only lines with an absolute
/// path that still exists on disk.
fn parse_maps_line(line: &str) -> Option<MappedFile> {
    let mut parts = line.splitn(6, ' ');
    let range = parts.next()?;
    let _perms = parts.next()?;
    let offset = u64::from_str_radix(parts.next()?, 16).ok()?;
    let _dev = parts.next()?;
    let _inode = parts.next()?;
    let path = parts.next()?.trim_start();
    if !path.starts_with('/') || path.ends_with(" (deleted)") {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    Some(MappedFile {
        start: TargetAddr(u64::from_str_radix(start, 16).ok()?),
        end: TargetAddr(u64::from_str_radix(end, 16).ok()?),
        file_offset: offset,
        path: path.to_string(),
    })
}

impl TargetMemory for LiveProcess {
    fn abi(&self) -> TargetAbi {
        self.abi
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        if buf.is_empty() {
            return Ok(0);
        }
        // The process runs on this machine, so its addresses fit the host's
        // pointers; one that does not cannot be mapped.
        let Ok(base) = usize::try_from(addr.0) else {
            return Ok(0);
        };
        if self.vm_readv_refused().is_none() {
            let remote = [RemoteIoVec {
                base,
                len: buf.len(),
            }];
            match process_vm_readv(
                Pid::from_raw(self.pid),
                &mut [IoSliceMut::new(buf)],
                &remote,
            ) {
                Ok(n) => return Ok(n),
                // The first byte is not mapped.
                Err(Errno::EFAULT) => return Ok(0),
                Err(e) => self.refuse_vm_readv(e),
            }
        }
        let backend = |source: std::io::Error| ReadError::Backend {
            what: "process memory",
            addr,
            cause: std::io::Error::new(
                source.kind(),
                format!(
                    "/proc/{}/mem: {source}; process_vm_readv: {}",
                    self.pid,
                    self.vm_readv_refused()
                        .map(|e| e.desc().to_string())
                        .unwrap_or_default()
                ),
            ),
        };
        let file = self.mem_file().map_err(|k| backend(k.into()))?;
        let mut done = 0;
        while done < buf.len() {
            let Some(at) = addr.0.checked_add(done as u64) else {
                break;
            };
            match file.read_at(&mut buf[done..], at) {
                Ok(0) => break,
                Ok(n) => done += n,
                // Unmapped memory reads as EIO.
                Err(e) if e.raw_os_error() == Some(libc_eio()) => break,
                Err(e) => return Err(backend(e)),
            }
        }
        Ok(done)
    }

    fn read_many(&self, requests: &mut [(TargetAddr, &mut [u8])]) -> Vec<Result<usize, ReadError>> {
        let mut results: Vec<Option<Result<usize, ReadError>>> =
            requests.iter().map(|_| None).collect();
        // Empty ranges and addresses no host pointer holds are answered by
        // read_into without a syscall.
        let batchable: Vec<usize> = requests
            .iter()
            .enumerate()
            .filter(|(_, (addr, buf))| !buf.is_empty() && usize::try_from(addr.0).is_ok())
            .map(|(i, _)| i)
            .collect();
        let mut next = 0;
        while next < batchable.len() && self.vm_readv_refused().is_none() {
            let batch = &batchable[next..batchable.len().min(next + IOV_MAX)];
            let Some(whole) = self.readv_batch(requests, batch, &mut results) else {
                break;
            };
            if whole < batch.len() {
                // The range the kernel stopped at, alone: read_into finds
                // exactly how much of it is readable. The batch resumes
                // after it.
                let i = batch[whole];
                let (addr, buf) = &mut requests[i];
                results[i] = Some(self.read_into(*addr, buf));
                next += whole + 1;
            } else {
                next += batch.len();
            }
        }
        // Whatever is left: process_vm_readv was refused (read_into then
        // goes to /proc/PID/mem and keeps both errors), or needs no syscall.
        requests
            .iter_mut()
            .zip(results)
            .map(|((addr, buf), r)| r.unwrap_or_else(|| self.read_into(*addr, buf)))
            .collect()
    }
}

impl LiveProcess {
    /// `process_vm_readv` over `batch` (indices into `requests`, at most
    /// [`IOV_MAX`]). Returns how many leading ranges were read whole and
    /// stores their counts in `results`; `None` when the syscall itself is
    /// refused (which is remembered, so later reads go to `/proc/PID/mem`).
    fn readv_batch(
        &self,
        requests: &mut [(TargetAddr, &mut [u8])],
        batch: &[usize],
        results: &mut [Option<Result<usize, ReadError>>],
    ) -> Option<usize> {
        let mut remote = Vec::with_capacity(batch.len());
        let mut lens = Vec::with_capacity(batch.len());
        for &i in batch {
            let (addr, buf) = &requests[i];
            // read_many only batches ranges whose address fits a host
            // pointer, so this does not fail.
            let base = usize::try_from(addr.0).ok()?;
            remote.push(RemoteIoVec {
                base,
                len: buf.len(),
            });
            lens.push(buf.len());
        }
        let first = *batch.first()?;
        let mut wanted = batch.iter().copied().peekable();
        let mut local: Vec<IoSliceMut<'_>> = requests
            .iter_mut()
            .enumerate()
            .skip(first)
            .filter_map(|(i, (_, buf))| {
                wanted.next_if_eq(&i)?;
                Some(IoSliceMut::new(&mut buf[..]))
            })
            .take(batch.len())
            .collect();
        let mut left = match process_vm_readv(Pid::from_raw(self.pid), &mut local, &remote) {
            Ok(n) => n,
            // The first range's first page is not mapped.
            Err(Errno::EFAULT) => 0,
            Err(e) => {
                self.refuse_vm_readv(e);
                return None;
            }
        };
        // The kernel stops at the first range that faults and returns the
        // bytes copied up to there, so the ranges before it are whole.
        for (k, (&i, &len)) in batch.iter().zip(&lens).enumerate() {
            if left < len {
                return Some(k);
            }
            left -= len;
            results[i] = Some(Ok(len));
        }
        Some(batch.len())
    }
}

fn libc_eio() -> i32 {
    Errno::EIO as i32
}

impl TargetMemoryMut for LiveProcess {
    fn write_all(&mut self, addr: TargetAddr, bytes: &[u8]) -> Result<(), ReadError> {
        let path = format!("/proc/{}/mem", self.pid);
        let file = OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|cause| ReadError::Backend {
                what: "write to process memory",
                addr,
                cause,
            })?;
        file.write_all_at(bytes, addr.0)
            .map_err(|cause| ReadError::Backend {
                what: "write to process memory",
                addr,
                cause,
            })
    }
}
