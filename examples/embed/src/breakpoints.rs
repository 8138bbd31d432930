//! Software breakpoints: an `int3` byte planted at a function's entry with
//! `PTRACE_POKEDATA`, the original byte kept to restore, and the step over
//! a breakpoint a thread stopped at.
//!
//! Writing into the process is what a breakpoint is; every planted byte is
//! restored by [`Breakpoints::remove_all`], which the stop loop calls
//! before it detaches, on success and failure alike.

use std::time::Duration;

use nix::sys::ptrace;
use nix::unistd::Pid;

use crate::tracer::{TraceError, Tracer};

/// The x86 breakpoint instruction.
const INT3: u8 = 0xcc;

/// One planted breakpoint.
#[derive(Debug)]
struct Planted {
    addr: u64,
    /// The byte the int3 replaced.
    original: u8,
    /// Whether the int3 is in memory now (not while a thread steps over).
    in_memory: bool,
}

/// The breakpoints planted in one process.
#[derive(Debug, Default)]
pub struct Breakpoints {
    planted: Vec<Planted>,
}

/// Replaces the lowest-addressed byte of the word at `addr` (x86_64 is
/// little-endian) through stopped thread `tid`, returning the byte that was
/// there.
fn swap_byte(tid: i32, addr: u64, byte: u8) -> Result<u8, TraceError> {
    let at = addr as ptrace::AddressType;
    let word = ptrace::read(Pid::from_raw(tid), at).map_err(|errno| TraceError::Ptrace {
        request: "PEEKDATA",
        tid,
        errno,
    })?;
    let old = (word & 0xff) as u8;
    let new = (word & !0xff) | nix::libc::c_long::from(byte);
    ptrace::write(Pid::from_raw(tid), at, new).map_err(|errno| TraceError::Ptrace {
        request: "POKEDATA",
        tid,
        errno,
    })?;
    Ok(old)
}

/// A thread to write through, or why there is none.
fn writer(tracer: &Tracer) -> Result<i32, TraceError> {
    tracer.any_stopped().ok_or(TraceError::Unsupported {
        pid: tracer.pid(),
        reason: "no stopped thread to write a breakpoint through".into(),
    })
}

impl Breakpoints {
    /// Plants an int3 at `addr`; every thread must be stopped.
    pub fn plant(&mut self, tracer: &Tracer, addr: u64) -> Result<(), TraceError> {
        if self.planted.iter().any(|p| p.addr == addr) {
            return Ok(());
        }
        let original = swap_byte(writer(tracer)?, addr, INT3)?;
        self.planted.push(Planted {
            addr,
            original,
            in_memory: true,
        });
        Ok(())
    }

    /// Removes the breakpoint at `addr`, its byte restored; every thread
    /// must be stopped.
    pub fn remove(&mut self, tracer: &Tracer, addr: u64) -> Result<(), TraceError> {
        let Some(i) = self.planted.iter().position(|p| p.addr == addr) else {
            return Ok(());
        };
        if self.planted[i].in_memory {
            swap_byte(writer(tracer)?, addr, self.planted[i].original)?;
        }
        self.planted.remove(i);
        Ok(())
    }

    /// Whether a breakpoint is planted at `addr`.
    pub fn is_planted_at(&self, addr: u64) -> bool {
        self.planted.iter().any(|p| p.addr == addr)
    }

    /// Steps thread `tid`, stopped at breakpoint `addr` (its pc already set
    /// back to `addr`), over the breakpoint's instruction: the original
    /// byte back, one single step, the int3 again. The other threads stay
    /// stopped meanwhile, so none runs past the breakpoint unseen.
    pub fn step_over(
        &mut self,
        tracer: &mut Tracer,
        tid: i32,
        addr: u64,
        limit: Duration,
    ) -> Result<(), TraceError> {
        let Some(i) = self.planted.iter().position(|p| p.addr == addr) else {
            return Ok(());
        };
        swap_byte(tid, addr, self.planted[i].original)?;
        self.planted[i].in_memory = false;
        tracer.step(tid, limit)?;
        swap_byte(writer(tracer)?, addr, INT3)?;
        self.planted[i].in_memory = true;
        Ok(())
    }

    /// Restores every original byte; every thread must be stopped. Tries
    /// them all and returns the first failure.
    pub fn remove_all(&mut self, tracer: &Tracer) -> Result<(), TraceError> {
        if self.planted.is_empty() {
            return Ok(());
        }
        let mut first_error = None;
        let tid = writer(tracer)?;
        for p in self.planted.drain(..) {
            if !p.in_memory {
                continue;
            }
            if let Err(e) = swap_byte(tid, p.addr, p.original) {
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
