//! The tracer's own memory reader: the bytes of the traced process through
//! `/proc/PID/mem`, as a debugger that already ptraces the process reads
//! them. It is handed to the crates as their [`TargetMemory`].
//!
//! It is deliberately not the crates' `LiveProcess` reader: an embedding
//! debugger brings its own, and the crates must work over it. Like many
//! debuggers' readers it is all-or-nothing per range: a range is read
//! whole or reported unreadable (0 bytes), never partly, so the crates'
//! handling of a reader without short reads is exercised too.

use std::fs::File;
use std::os::unix::fs::FileExt;

use mpidd_read::{ReadError, TargetMemory};
use mpidd_types::{TargetAbi, TargetAddr};

/// Reads a traced process's memory through `/proc/PID/mem`.
#[derive(Debug)]
pub struct PtraceMemory {
    mem: File,
    abi: TargetAbi,
}

/// Why the process's memory could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open /proc/{pid}/mem: {cause}")]
pub struct OpenMemoryError {
    /// The process.
    pub pid: i32,
    /// The system's reason.
    #[source]
    pub cause: std::io::Error,
}

impl PtraceMemory {
    /// Opens process `pid`'s memory. The tracer only traces x86_64
    /// processes, so the ABI is x86_64's (checked by the tracer against
    /// the executable's ELF header before it attaches).
    pub fn open(pid: i32) -> Result<PtraceMemory, OpenMemoryError> {
        let mem = File::open(format!("/proc/{pid}/mem"))
            .map_err(|cause| OpenMemoryError { pid, cause })?;
        Ok(PtraceMemory {
            mem,
            abi: TargetAbi::X86_64,
        })
    }
}

impl TargetMemory for PtraceMemory {
    fn abi(&self) -> TargetAbi {
        self.abi
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        if buf.is_empty() {
            return Ok(0);
        }
        // One pread of the whole range, as a debugger's reader does; the
        // kernel may return fewer bytes at an unmapped page, which this
        // reader reports as nothing read (all or nothing).
        let mut done = 0;
        while done < buf.len() {
            let Some(at) = addr.0.checked_add(done as u64) else {
                return Ok(0);
            };
            match self.mem.read_at(&mut buf[done..], at) {
                Ok(0) | Err(_) => return Ok(0),
                Ok(n) => done += n,
            }
        }
        Ok(done)
    }
}
