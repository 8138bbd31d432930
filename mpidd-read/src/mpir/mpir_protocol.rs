//! The MPIR process-acquisition protocol, as a state machine a debugger
//! drives. It controls no process itself: the debugger stops and resumes
//! the launcher and calls in at the right moments.
//!
//! # The protocol
//!
//! The launcher (the "starter", `mpirun`) is the process the debugger runs.
//! It spawns the ranks and talks to the debugger through a few globals and
//! one empty function:
//!
//! 1. **Before the launcher spawns anything**, once the object that defines
//!    the MPIR symbols is loaded (for Open MPI that is `libopen-rte.so`, so
//!    the debugger waits for the dynamic linker, e.g. until the program's
//!    entry point is reached), the debugger:
//!    - resolves `MPIR_Breakpoint` and plants a breakpoint there
//!      ([`MpirSession::breakpoint`]);
//!    - writes 1 to `MPIR_being_debugged` ([`MpirSession::announce`]), which
//!      tells the launcher to hold the ranks for the debugger and to stop at
//!      the breakpoint after spawning them.
//! 2. **At each stop on `MPIR_Breakpoint`** the debugger reads
//!    `MPIR_debug_state` ([`MpirSession::on_breakpoint`]):
//!    - 1 (spawned): `MPIR_proctable[MPIR_proctable_size]` now lists every
//!      rank's host, executable and pid. The debugger may attach to the
//!      ranks.
//!    - 2 (aborting): the job is going down; `MPIR_debug_abort_string` may
//!      say why.
//!    - anything else is not for the debugger and is ignored.
//! 3. **Releasing the ranks.** Ranks of MPIs that wait in a loop on their
//!    own `MPIR_debug_gate` stay there until the debugger writes 1 into
//!    that variable in each rank. A launcher that defines
//!    `MPIR_partial_attach_ok` implements the start-up barrier itself, so
//!    resuming the launcher is enough; setting the gates anyway does no
//!    harm ([`MpirSession::gate`]).
//! 4. **Before detaching**, the debugger removes its breakpoint, writes 0
//!    back to `MPIR_being_debugged` ([`MpirSession::finish`]) and lets the
//!    launcher run on.
//!
//! ```
//! use mpidd_read::mpir_protocol::{MpirEvent, MpirSession};
//! use mpidd_read::{Limits, SyntheticJob};
//! use mpidd_types::TargetAbi;
//!
//! let mut job = SyntheticJob::builder(TargetAbi::X86_64)
//!     .mpir_starter(&[("n1", "/bin/ring", 4001)])
//!     .build();
//! let mut session = MpirSession::new(&job.symbols)?;
//! session.announce(&mut job.memory, &job.symbols)?;
//! // ... the debugger resumes the launcher until it stops at
//! // session.breakpoint().addr ...
//! match session.on_breakpoint(&job.memory, &job.symbols, &Limits::default())? {
//!     MpirEvent::Spawned(state) => assert_eq!(state.proctable.get(0).map(|p| p.pid), Some(4001)),
//!     other => panic!("{other:?}"),
//! }
//! session.finish(&mut job.memory, &job.symbols)?;
//! # Ok::<(), mpidd_read::mpir::MpirError>(())
//! ```

use mpidd_types::MpirDebugState;
use serde::Serialize;

use crate::backend::memory::{TargetMemory, TargetMemoryMut};
use crate::limits::Limits;
use crate::mpir::{self, names, MpirError, MpirState};
use crate::symbols::{Symbol, SymbolSource};

/// What a stop at `MPIR_Breakpoint` means.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum MpirEvent {
    /// The job has spawned; the state holds the full process table.
    Spawned(Box<MpirState>),
    /// The job is aborting, with `MPIR_debug_abort_string` if set.
    Aborting {
        /// Why, as the launcher put it.
        message: Option<String>,
    },
    /// `MPIR_debug_state` is 0: nothing for the debugger.
    Null,
    /// A state this library does not know; ignore it.
    Unknown {
        /// The value of `MPIR_debug_state`.
        state: i32,
    },
}

/// Whether the ranks wait for the debugger at `MPIR_debug_gate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateAdvice {
    /// The launcher defines `MPIR_partial_attach_ok`: it holds and
    /// releases the ranks itself. Setting the gates is harmless.
    LauncherReleases,
    /// The ranks may each wait until the debugger sets their
    /// `MPIR_debug_gate` to 1.
    RanksWaitAtGate,
}

/// One debugger's MPIR session with one launcher.
#[derive(Clone, Debug)]
pub struct MpirSession {
    breakpoint: Symbol,
    partial_attach_ok: bool,
    announced: bool,
}

impl MpirSession {
    /// The symbols the protocol needs resolved in the launcher before it
    /// can start; `MPIR_Breakpoint` and `MPIR_debug_state` are required.
    pub const SYMBOLS: &'static [&'static str] = &[
        names::BREAKPOINT,
        names::DEBUG_STATE,
        names::PROCTABLE,
        names::PROCTABLE_SIZE,
        names::BEING_DEBUGGED,
        names::DEBUG_GATE,
        names::ABORT_STRING,
        names::PARTIAL_ATTACH_OK,
    ];

    /// Starts a session with a launcher whose loaded objects `syms`
    /// describes. Fails, naming the objects searched, when the launcher is
    /// not an MPIR starter or its symbols were stripped.
    pub fn new<S: SymbolSource + ?Sized>(syms: &S) -> Result<Self, MpirError> {
        let state = syms.lookup(names::DEBUG_STATE);
        let breakpoint = syms.lookup(names::BREAKPOINT);
        let (breakpoint, _) = match (breakpoint, state) {
            (Some(b), Some(s)) => (b, s),
            (None, None) => {
                return Err(MpirError::NoMpirSymbols {
                    searched: syms.searched_objects(),
                })
            }
            (None, Some(s)) => {
                return Err(MpirError::MissingSymbol {
                    missing: names::BREAKPOINT,
                    found: names::DEBUG_STATE,
                    object: s.object,
                })
            }
            (Some(b), None) => {
                return Err(MpirError::MissingSymbol {
                    missing: names::DEBUG_STATE,
                    found: names::BREAKPOINT,
                    object: b.object,
                })
            }
        };
        Ok(MpirSession {
            breakpoint,
            partial_attach_ok: syms.lookup(names::PARTIAL_ATTACH_OK).is_some(),
            announced: false,
        })
    }

    /// Where to put the breakpoint: `MPIR_Breakpoint`'s address as the
    /// symbol table gives it (on ARM, bit 0 set means Thumb code).
    pub fn breakpoint(&self) -> &Symbol {
        &self.breakpoint
    }

    /// Tells the launcher a debugger is present: `MPIR_being_debugged = 1`.
    /// Returns whether the launcher has that variable.
    pub fn announce<M, S>(&mut self, mem: &mut M, syms: &S) -> Result<bool, MpirError>
    where
        M: TargetMemoryMut + ?Sized,
        S: SymbolSource + ?Sized,
    {
        let has = mpir::set_being_debugged(mem, syms, 1)?;
        self.announced = has;
        Ok(has)
    }

    /// Interprets a stop at the breakpoint.
    pub fn on_breakpoint<M, S>(
        &mut self,
        mem: &M,
        syms: &S,
        limits: &Limits,
    ) -> Result<MpirEvent, MpirError>
    where
        M: TargetMemory + ?Sized,
        S: SymbolSource + ?Sized,
    {
        let state = mpir::read_state_from(mem, syms, limits)?;
        Ok(match state.debug_state {
            MpirDebugState::Spawned => MpirEvent::Spawned(Box::new(state)),
            MpirDebugState::Aborting => MpirEvent::Aborting {
                message: state.abort_string,
            },
            MpirDebugState::Null => MpirEvent::Null,
            MpirDebugState::Unknown(n) => MpirEvent::Unknown { state: n },
        })
    }

    /// Whether the ranks must be released through their gates.
    pub fn gate(&self) -> GateAdvice {
        if self.partial_attach_ok {
            GateAdvice::LauncherReleases
        } else {
            GateAdvice::RanksWaitAtGate
        }
    }

    /// Ends the session before the debugger detaches:
    /// `MPIR_being_debugged = 0` if [`announce`](Self::announce) set it.
    pub fn finish<M, S>(&mut self, mem: &mut M, syms: &S) -> Result<(), MpirError>
    where
        M: TargetMemoryMut + ?Sized,
        S: SymbolSource + ?Sized,
    {
        if self.announced {
            mpir::set_being_debugged(mem, syms, 0)?;
            self.announced = false;
        }
        Ok(())
    }

    /// Releases one rank: `MPIR_debug_gate = 1` in that rank's memory
    /// (`rank_mem`, `rank_syms`). Returns whether the rank has a gate.
    pub fn release_rank<M, S>(rank_mem: &mut M, rank_syms: &S) -> Result<bool, MpirError>
    where
        M: TargetMemoryMut + ?Sized,
        S: SymbolSource + ?Sized,
    {
        Ok(mpir::release_gate(rank_mem, rank_syms)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::synthetic_job::SyntheticJob;
    use mpidd_types::TargetAbi;

    #[test]
    fn a_session_reads_spawned_then_aborting_and_restores_being_debugged() {
        let mut job = SyntheticJob::builder(TargetAbi::S390X)
            .mpir_starter(&[("n1", "/bin/a", 1), ("n2", "/bin/a", 2)])
            .mpir_abort("rank 1 called MPI_Abort")
            .build();
        let mut s = MpirSession::new(&job.symbols).unwrap();
        assert_eq!(s.breakpoint().name, names::BREAKPOINT);
        assert!(s.announce(&mut job.memory, &job.symbols).unwrap());
        let bd = job.symbols.lookup(names::BEING_DEBUGGED).unwrap().addr;
        assert_eq!(job.memory.read_i32(bd, "being_debugged").unwrap(), 1);
        let ds = job.symbols.lookup(names::DEBUG_STATE).unwrap().addr;
        job.memory.write_i32(ds, 1).unwrap();
        let ev = s
            .on_breakpoint(&job.memory, &job.symbols, &Limits::default())
            .unwrap();
        let MpirEvent::Spawned(state) = ev else {
            panic!("{ev:?}")
        };
        assert_eq!(state.proctable.len(), 2);

        job.memory.write_i32(ds, 2).unwrap();
        let ev = s
            .on_breakpoint(&job.memory, &job.symbols, &Limits::default())
            .unwrap();
        assert_eq!(
            ev,
            MpirEvent::Aborting {
                message: Some("rank 1 called MPI_Abort".into())
            }
        );
        job.memory.write_i32(ds, 7).unwrap();
        let ev = s
            .on_breakpoint(&job.memory, &job.symbols, &Limits::default())
            .unwrap();
        assert_eq!(ev, MpirEvent::Unknown { state: 7 });

        s.finish(&mut job.memory, &job.symbols).unwrap();
        assert_eq!(job.memory.read_i32(bd, "being_debugged").unwrap(), 0);
        assert_eq!(s.gate(), GateAdvice::RanksWaitAtGate);
    }

    #[test]
    fn a_launcher_without_symbols_is_refused_with_the_objects_searched() {
        let mut t = crate::symbols::SymbolTable::new();
        t.add_object("/usr/bin/mpiexec.hydra");
        let err = MpirSession::new(&t).unwrap_err();
        assert!(err.to_string().contains("/usr/bin/mpiexec.hydra"), "{err}");
    }
}
