//! Acquiring a job through MPIR by starting its launcher: the launcher runs
//! under ptrace, stops at `MPIR_Breakpoint` whenever it has news for the
//! debugger, and is let go with every byte of its code restored and no
//! thread left stopped. Linux only, with the `live` feature.
//!
//! Two levels:
//!
//! - [`MpirLauncher`] runs the whole protocol of
//!   [`mpir_protocol`](crate::mpir_protocol) on a launcher it starts:
//!   [`MpirLauncher::next_event`] returns each stop at `MPIR_Breakpoint`
//!   as an [`MpirEvent`] (the job has spawned, with its process table; it
//!   is aborting), then the launcher's end. [`release_local_ranks`] sets
//!   the ranks' `MPIR_debug_gate`, and [`snapshot`] reads a launcher that
//!   already runs.
//! - [`Tracee`] is the ptrace driver under it, for a debugger that plants
//!   breakpoints of its own: start a program traced and run it to its
//!   entry point, plant breakpoints, wait for a stop, step over, detach.
//!
//! The machine-specific parts (the trap instruction and the program
//! counter) are kept apart in one file; the driver runs on x86_64 hosts
//! ([`SUPPORTED_HOSTS`]) and refuses others with
//! [`LaunchError::UnsupportedHost`] before anything is started.
//!
//! ```no_run
//! use mpidd_read::mpir::launch::{LaunchEvent, MpirLauncher};
//! use mpidd_read::mpir_protocol::MpirEvent;
//! use mpidd_read::Limits;
//!
//! let argv: Vec<String> = ["mpirun", "-n", "4", "./ring"].map(String::from).to_vec();
//! let mut launcher = MpirLauncher::start(&argv)?;
//! loop {
//!     match launcher.next_event(&Limits::default())? {
//!         LaunchEvent::Mpir(MpirEvent::Spawned(state)) => {
//!             for (rank, p) in state.proctable.iter().enumerate() {
//!                 println!("rank {rank}: pid {} on {}", p.pid, p.host_name);
//!             }
//!             // Let the job run on without the debugger.
//!             for problem in launcher.detach() {
//!                 eprintln!("while detaching: {problem}");
//!             }
//!             println!("launcher exited with {}", launcher.wait_exit()?);
//!             break;
//!         }
//!         LaunchEvent::Mpir(other) => println!("{other:?}"),
//!         LaunchEvent::Exited(status) => {
//!             println!("launcher exited with {status} before spawning");
//!             break;
//!         }
//!         LaunchEvent::Interrupted(signal) => {
//!             launcher.detach();
//!             println!("{signal}: detached, the launcher runs on");
//!             break;
//!         }
//!     }
//! }
//! # Ok::<(), mpidd_read::mpir::launch::LaunchError>(())
//! ```

mod error;
mod gate;
mod machine;
mod tracee;

pub use error::{LaunchError, StartFailure};
pub use gate::{release_local_ranks, snapshot, GateFailure, GateRelease, LauncherSnapshot};
pub use machine::SUPPORTED_HOSTS;
pub use tracee::{LaunchOptions, Stop, Tracee};

use nix::sys::signal::Signal;

use crate::limits::Limits;
use crate::mpir::mpir_protocol::{MpirEvent, MpirSession};
use crate::targets::live_target::LiveTarget;

/// What a launcher driven by [`MpirLauncher`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchEvent {
    /// A thread stopped at `MPIR_Breakpoint`, and this is what
    /// `MPIR_debug_state` said. The thread stays there until the next
    /// [`MpirLauncher::next_event`] or the detach, so the table can be read
    /// and the ranks attached to meanwhile.
    Mpir(MpirEvent),
    /// The launcher ended, with this status as a shell shows it (128 +
    /// signal when killed).
    Exited(i32),
    /// This program was sent one of [`LaunchOptions::interrupt_on`]: the
    /// caller should [detach](MpirLauncher::detach).
    Interrupted(Signal),
}

/// A launcher started under the MPIR protocol: traced, stopped at its
/// entry point, with a breakpoint at `MPIR_Breakpoint` and
/// `MPIR_being_debugged` set to 1.
///
/// Dropping it detaches as [`detach`](Self::detach) does, without the
/// problems it met: call that to see them.
#[derive(Debug)]
pub struct MpirLauncher {
    // Field order: the session's last writes go through the tracee.
    tracee: Tracee,
    target: LiveTarget,
    session: MpirSession,
    breakpoint: u64,
    /// The thread left at the breakpoint by the last event.
    at_breakpoint: Option<i32>,
    detached: bool,
}

impl MpirLauncher {
    /// [`start_with`](Self::start_with) the default [`LaunchOptions`].
    pub fn start(argv: &[String]) -> Result<Self, LaunchError> {
        Self::start_with(argv, &LaunchOptions::default())
    }

    /// Starts `argv` (the launcher and its arguments) traced, runs it to its
    /// entry point, plants the breakpoint at `MPIR_Breakpoint` and
    /// announces the debugger (`MPIR_being_debugged = 1`). The launcher
    /// does not run on until [`next_event`](Self::next_event).
    ///
    /// A launcher without the MPIR symbols (Debian's `mpiexec.hydra`) is
    /// let go at once and runs on as if no debugger were there:
    /// [`LaunchError::NotAStarter`] says what is missing.
    pub fn start_with(argv: &[String], options: &LaunchOptions) -> Result<Self, LaunchError> {
        let mut tracee = Tracee::launch_with(argv, options)?;
        let pid = tracee.pid();
        let target = LiveTarget::open(pid)?;
        let session = match MpirSession::new(&target) {
            Ok(s) => s,
            Err(cause) => {
                // Not an MPIR starter: let it run on untouched.
                drop(tracee.detach_all());
                return Err(LaunchError::NotAStarter { pid, cause });
            }
        };
        let breakpoint = session.breakpoint().addr.0;
        let mut launcher = MpirLauncher {
            tracee,
            target,
            session,
            breakpoint,
            at_breakpoint: None,
            detached: false,
        };
        launcher.tracee.insert_breakpoint(breakpoint)?;
        launcher
            .session
            .announce(launcher.tracee.memory(), &launcher.target)?;
        Ok(launcher)
    }

    /// The launcher's pid.
    pub fn pid(&self) -> i32 {
        self.tracee.pid()
    }

    /// The launcher's memory and symbols, as read since its entry point.
    pub fn target(&self) -> &LiveTarget {
        &self.target
    }

    /// The protocol's state: where its breakpoint is, whether the ranks
    /// wait at their gates.
    pub fn session(&self) -> &MpirSession {
        &self.session
    }

    /// The ptrace driver under it, for breakpoints of the caller's own.
    /// A stop at one of those is stepped over by
    /// [`next_event`](Self::next_event), which reports only the MPIR ones.
    pub fn tracee(&mut self) -> &mut Tracee {
        &mut self.tracee
    }

    /// Lets the launcher run (past the breakpoint it stopped at last) until
    /// its next stop at `MPIR_Breakpoint`, its end, or an interrupt of this
    /// program.
    pub fn next_event(&mut self, limits: &Limits) -> Result<LaunchEvent, LaunchError> {
        match self.at_breakpoint.take() {
            Some(tid) => self.tracee.step_over(tid, self.breakpoint)?,
            None => self.tracee.resume_all()?,
        }
        loop {
            match self.tracee.wait_stop()? {
                Stop::Breakpoint { tid, addr } if addr == self.breakpoint => {
                    let event = self
                        .session
                        .on_breakpoint(&self.target, &self.target, limits)?;
                    self.at_breakpoint = Some(tid);
                    return Ok(LaunchEvent::Mpir(event));
                }
                Stop::Breakpoint { tid, addr } => self.tracee.step_over(tid, addr)?,
                Stop::Exited(status) => {
                    self.detached = true;
                    return Ok(LaunchEvent::Exited(status));
                }
                Stop::Interrupted(sig) => return Ok(LaunchEvent::Interrupted(sig)),
            }
        }
    }

    /// Lets the launcher go: every thread stopped, the breakpoints taken
    /// out (a thread stopped at one re-runs the real instruction),
    /// `MPIR_being_debugged` set back to 0, every thread detached. Never
    /// fails: each step is tried whatever happened before, and the problems
    /// met are returned. A second call does nothing.
    pub fn detach(&mut self) -> Vec<LaunchError> {
        if self.detached {
            return Vec::new();
        }
        self.detached = true;
        self.at_breakpoint = None;
        let session = &mut self.session;
        let target = &self.target;
        let mut undo = Vec::new();
        let mut problems = self.tracee.detach_all_with(|mem| {
            if let Err(e) = session.finish(mem, target) {
                undo.push(LaunchError::Mpir(e));
            }
        });
        problems.extend(undo);
        problems
    }

    /// Waits for the launcher to end (after [`detach`](Self::detach), or
    /// once [`LaunchEvent::Exited`] came); returns its exit status as a
    /// shell shows it.
    pub fn wait_exit(&mut self) -> Result<i32, LaunchError> {
        drop(self.detach());
        self.tracee.wait_exit()
    }
}

impl Drop for MpirLauncher {
    fn drop(&mut self) {
        drop(self.detach());
    }
}
