//! The only machine-specific parts of the launch driver: the breakpoint
//! instruction, where a thread stopped by it says it stopped, and how its
//! program counter is read and set.
//!
//! The driver traces a launcher on an x86_64 host (a 32-bit x86 launcher
//! there too: the trap and the register are the same). On any other host
//! [`check_host`] refuses with [`LaunchError::UnsupportedHost`] before a
//! process is started, so nothing is planted that this module could not
//! take back out. A new host needs its trap bytes, [`trap_site`] and the
//! two register accessors here, and nothing else.

use crate::mpir::launch::error::LaunchError;

/// The host architectures the driver runs on (`std::env::consts::ARCH`
/// names).
pub const SUPPORTED_HOSTS: &[&str] = &["x86_64"];

/// Fails with [`LaunchError::UnsupportedHost`] on a host the driver does
/// not know the breakpoint instruction of.
pub fn check_host() -> Result<(), LaunchError> {
    if cfg!(target_arch = "x86_64") {
        Ok(())
    } else {
        Err(LaunchError::UnsupportedHost {
            arch: std::env::consts::ARCH,
        })
    }
}

pub(crate) use host::{program_counter, set_program_counter, trap_site, TRAP};

#[cfg(target_arch = "x86_64")]
mod host {
    use nix::sys::ptrace;
    use nix::unistd::Pid;

    /// `int3`.
    pub(crate) const TRAP: &[u8] = &[0xcc];

    /// The breakpoint's address, from the program counter of a thread its
    /// trap stopped: `int3` leaves it just past the trap.
    pub(crate) fn trap_site(pc: u64) -> u64 {
        pc.wrapping_sub(TRAP.len() as u64)
    }

    /// A stopped thread's program counter (`rip`).
    pub(crate) fn program_counter(tid: Pid) -> nix::Result<u64> {
        ptrace::getregs(tid).map(|r| r.rip)
    }

    /// Sets a stopped thread's program counter.
    pub(crate) fn set_program_counter(tid: Pid, pc: u64) -> nix::Result<()> {
        let mut regs = ptrace::getregs(tid)?;
        regs.rip = pc;
        ptrace::setregs(tid, regs)
    }
}

/// Never reached: [`check_host`] refuses these hosts before any process
/// is traced. The answers are errors, not guesses.
#[cfg(not(target_arch = "x86_64"))]
mod host {
    use nix::errno::Errno;
    use nix::unistd::Pid;

    pub(crate) const TRAP: &[u8] = &[];

    pub(crate) fn trap_site(pc: u64) -> u64 {
        pc
    }

    pub(crate) fn program_counter(_tid: Pid) -> nix::Result<u64> {
        Err(Errno::ENOSYS)
    }

    pub(crate) fn set_program_counter(_tid: Pid, _pc: u64) -> nix::Result<()> {
        Err(Errno::ENOSYS)
    }
}

/// The name of the request that reads or writes the program counter, for
/// errors.
pub(crate) const REGISTERS: &str = if cfg!(target_arch = "x86_64") {
    "PTRACE_GETREGS"
} else {
    "reading the registers"
};
