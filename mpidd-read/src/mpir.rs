//! The MPIR process-acquisition interface: the starter's process table and
//! the variables around it.
//!
//! A starter (the launcher, such as `mpirun`) exports a handful of globals.
//! `MPIR_proctable` points to an array of `MPIR_PROCDESC`, one per rank of
//! `MPI_COMM_WORLD`, and `MPIR_proctable_size` counts it. `MPIR_debug_state`
//! says why the starter last called `MPIR_Breakpoint`. Some symbols matter by
//! their mere presence (`MPIR_i_am_starter` and friends). The debugger
//! writes `MPIR_being_debugged` and `MPIR_debug_gate`, and only those.

use mpidd_types::{MpirDebugState, MpirProcdesc, TargetAddr};
use serde::Serialize;

use crate::error::ReadError;
use crate::limits::Limits;
use crate::memory::{TargetMemory, TargetMemoryMut};
use crate::read_budget::ReadBudget;
use crate::symbols::SymbolSource;

/// Symbol names of the interface.
pub mod names {
    /// `MPIR_PROCDESC *MPIR_proctable`.
    pub const PROCTABLE: &str = "MPIR_proctable";
    /// `int MPIR_proctable_size`.
    pub const PROCTABLE_SIZE: &str = "MPIR_proctable_size";
    /// `volatile int MPIR_debug_state`.
    pub const DEBUG_STATE: &str = "MPIR_debug_state";
    /// `volatile int MPIR_debug_gate`.
    pub const DEBUG_GATE: &str = "MPIR_debug_gate";
    /// `int MPIR_being_debugged`.
    pub const BEING_DEBUGGED: &str = "MPIR_being_debugged";
    /// `char *MPIR_debug_abort_string`.
    pub const ABORT_STRING: &str = "MPIR_debug_abort_string";
    /// `char MPIR_dll_name[]`.
    pub const DLL_NAME: &str = "MPIR_dll_name";
    /// `void MPIR_Breakpoint(void)`.
    pub const BREAKPOINT: &str = "MPIR_Breakpoint";
    /// Presence only: the starter is not a rank.
    pub const I_AM_STARTER: &str = "MPIR_i_am_starter";
    /// Presence only: releasing the starter releases the job.
    pub const PARTIAL_ATTACH_OK: &str = "MPIR_partial_attach_ok";
    /// Presence only: ranks are stopped before `main`.
    pub const ACQUIRED_PRE_MAIN: &str = "MPIR_acquired_pre_main";
    /// Presence only: show `main` after acquisition.
    pub const FORCE_TO_MAIN: &str = "MPIR_force_to_main";
    /// Presence only: no message queues to show.
    pub const IGNORE_QUEUES: &str = "MPIR_ignore_queues";
    /// `char MPIR_executable_path[]` (256 in the MPI Forum text, 512 in
    /// Open MPI).
    pub const EXECUTABLE_PATH: &str = "MPIR_executable_path";
    /// `char MPIR_server_arguments[]`: NUL-separated, ended by an empty
    /// string.
    pub const SERVER_ARGUMENTS: &str = "MPIR_server_arguments";
    /// `char MPIR_attach_fifo[]`.
    pub const ATTACH_FIFO: &str = "MPIR_attach_fifo";
}

/// One rank of the MPIR process table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MpirProcess {
    /// Host the rank runs on.
    pub host_name: String,
    /// Executable of the rank.
    pub executable_name: String,
    /// Pid of the rank on that host.
    pub pid: i32,
}

/// Which presence-only symbols the target defines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MpirPresence {
    /// `MPIR_i_am_starter`.
    pub i_am_starter: bool,
    /// `MPIR_partial_attach_ok`.
    pub partial_attach_ok: bool,
    /// `MPIR_acquired_pre_main`.
    pub acquired_pre_main: bool,
    /// `MPIR_force_to_main`.
    pub force_to_main: bool,
    /// `MPIR_ignore_queues`.
    pub ignore_queues: bool,
}

/// Everything the MPIR interface exposes in one process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MpirState {
    /// `MPIR_debug_state`.
    pub debug_state: MpirDebugState,
    /// `MPIR_debug_gate`, if the symbol exists.
    pub debug_gate: Option<i32>,
    /// `MPIR_being_debugged`, if the symbol exists.
    pub being_debugged: Option<i32>,
    /// `MPIR_proctable_size` as found.
    pub proctable_size: i32,
    /// The table, in rank order. Empty until the job has spawned.
    pub proctable: Vec<MpirProcess>,
    /// `MPIR_debug_abort_string`, if set.
    pub abort_string: Option<String>,
    /// `MPIR_dll_name`, if the symbol exists.
    pub dll_name: Option<String>,
    /// Presence-only symbols.
    pub presence: MpirPresence,
    /// `MPIR_executable_path`, if the symbol exists.
    pub executable_path: Option<String>,
    /// `MPIR_server_arguments`, if the symbol exists.
    pub server_arguments: Option<Vec<String>>,
    /// `MPIR_attach_fifo`, if the symbol exists.
    pub attach_fifo: Option<String>,
    /// The object that defines `MPIR_proctable` (or `MPIR_debug_state`).
    pub defined_in: String,
}

/// Why the MPIR state could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MpirError {
    /// None of the MPIR symbols are there.
    #[error(
        "no MPIR symbols ({}, {}, {}) in {}: this is not an MPIR starter, or its \
         symbols were stripped (Debian's mpiexec.hydra, for one, exports none)",
        names::PROCTABLE, names::PROCTABLE_SIZE, names::DEBUG_STATE,
        if searched.is_empty() { "any loaded object".to_string() } else { searched.join(", ") }
    )]
    NoMpirSymbols {
        /// The objects whose symbol tables were searched.
        searched: Vec<String>,
    },
    /// Some symbols are there but one the reader needs is not.
    #[error("{missing} is missing, though {found} is defined in {object}")]
    MissingSymbol {
        /// The missing symbol.
        missing: &'static str,
        /// A symbol that was found.
        found: &'static str,
        /// Where that one was found.
        object: String,
    },
    /// Reading memory failed.
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// Table entries whose strings are read in one batch.
const STRING_BATCH_ENTRIES: usize = 4096;

/// Reads the MPIR state of one process.
///
/// ```
/// use mpidd_read::{mpir, Limits, SyntheticJob};
/// use mpidd_types::TargetAbi;
///
/// let job = SyntheticJob::builder(TargetAbi::POWERPC)
///     .mpir_starter(&[("node1", "/bin/a.out", 101), ("node2", "/bin/a.out", -1)])
///     .build();
/// let state = mpir::read_state(&job.memory, &job.symbols, &Limits::default())?;
/// assert_eq!(state.proctable[1].pid, -1);
/// assert_eq!(state.proctable[0].host_name, "node1");
/// # Ok::<(), mpidd_read::mpir::MpirError>(())
/// ```
pub fn read_state<M: TargetMemory + ?Sized, S: SymbolSource + ?Sized>(
    mem: &M,
    syms: &S,
    limits: &Limits,
) -> Result<MpirState, MpirError> {
    let budget = ReadBudget::new(mem, limits);
    let mem = &budget;
    let table = syms.lookup(names::PROCTABLE);
    let size = syms.lookup(names::PROCTABLE_SIZE);
    let state = syms.lookup(names::DEBUG_STATE);
    let anchor = match (&table, &size, &state) {
        (Some(s), _, _) | (None, Some(s), _) | (None, None, Some(s)) => s.clone(),
        (None, None, None) => {
            return Err(MpirError::NoMpirSymbols {
                searched: syms.searched_objects(),
            })
        }
    };
    let found = |name| syms.lookup(name).map(|s| s.addr);
    let need = |name: &'static str| {
        found(name).ok_or_else(|| MpirError::MissingSymbol {
            missing: name,
            found: if anchor.name == names::PROCTABLE {
                names::PROCTABLE
            } else if anchor.name == names::PROCTABLE_SIZE {
                names::PROCTABLE_SIZE
            } else {
                names::DEBUG_STATE
            },
            object: anchor.object.clone(),
        })
    };
    let int = |name: &'static str| -> Result<Option<i32>, MpirError> {
        match found(name) {
            Some(a) => Ok(Some(mem.read_i32(a, name)?)),
            None => Ok(None),
        }
    };
    let max = limits.max_string_len;
    // A char array symbol: read up to its own size when the table knows it.
    let array_string = |name: &'static str| -> Result<Option<String>, MpirError> {
        match syms.lookup(name) {
            None => Ok(None),
            Some(s) => {
                let cap = if s.size > 0 {
                    (s.size as usize).min(max + 1) - 1
                } else {
                    max
                };
                Ok(Some(mem.read_string(s.addr, cap)?))
            }
        }
    };

    let debug_state =
        MpirDebugState::from(mem.read_i32(need(names::DEBUG_STATE)?, names::DEBUG_STATE)?);
    let proctable_size = mem.read_i32(need(names::PROCTABLE_SIZE)?, names::PROCTABLE_SIZE)?;
    let table_ptr = mem.read_pointer(need(names::PROCTABLE)?, names::PROCTABLE)?;
    let mut proctable = Vec::new();
    if !table_ptr.is_null() && proctable_size != 0 {
        let entries: Vec<MpirProcdesc> =
            mem.read_records(table_ptr, i64::from(proctable_size), limits)?;
        // The strings of many entries at once: a live table of thousands of
        // ranks then costs a few syscalls, not two per rank. Batches keep
        // the bookkeeping of a million-entry table small.
        proctable.reserve(entries.len());
        for batch in entries.chunks(STRING_BATCH_ENTRIES) {
            let addrs: Vec<TargetAddr> = batch
                .iter()
                .flat_map(|e| [e.host_name, e.executable_name])
                .filter(|a| !a.is_null())
                .collect();
            let mut strings = mem.read_c_strings(&addrs, max).into_iter();
            // Null pointers show as empty; the rest come back in order, and
            // the first failure in table order is the one reported.
            let mut next = |addr: TargetAddr| -> Result<String, ReadError> {
                if addr.is_null() {
                    return Ok(String::new());
                }
                match strings.next() {
                    Some(r) => r.map(lossy),
                    None => mem.read_string(addr, max),
                }
            };
            for e in batch {
                proctable.push(MpirProcess {
                    host_name: next(e.host_name)?,
                    executable_name: next(e.executable_name)?,
                    pid: e.pid,
                });
            }
        }
    }
    let abort_string = match found(names::ABORT_STRING) {
        None => None,
        Some(a) => {
            let p = mem.read_pointer(a, names::ABORT_STRING)?;
            if p.is_null() {
                None
            } else {
                Some(mem.read_string(p, max)?)
            }
        }
    };
    let server_arguments = match syms.lookup(names::SERVER_ARGUMENTS) {
        None => None,
        Some(s) => Some(read_string_list(mem, s.addr, s.size, limits)?),
    };
    let has = |name| syms.lookup(name).is_some();
    Ok(MpirState {
        debug_state,
        debug_gate: int(names::DEBUG_GATE)?,
        being_debugged: int(names::BEING_DEBUGGED)?,
        proctable_size,
        proctable,
        abort_string,
        dll_name: array_string(names::DLL_NAME)?,
        presence: MpirPresence {
            i_am_starter: has(names::I_AM_STARTER),
            partial_attach_ok: has(names::PARTIAL_ATTACH_OK),
            acquired_pre_main: has(names::ACQUIRED_PRE_MAIN),
            force_to_main: has(names::FORCE_TO_MAIN),
            ignore_queues: has(names::IGNORE_QUEUES),
        },
        executable_path: array_string(names::EXECUTABLE_PATH)?,
        server_arguments,
        attach_fifo: array_string(names::ATTACH_FIFO)?,
        defined_in: anchor.object,
    })
}

/// Text of a C string, as [`TargetMemory::read_string`] makes it.
fn lossy(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// NUL-separated strings ending with an empty one, within `size` bytes
/// (or the string limit when the size is unknown).
fn read_string_list<M: TargetMemory + ?Sized>(
    mem: &M,
    addr: TargetAddr,
    size: u64,
    limits: &Limits,
) -> Result<Vec<String>, ReadError> {
    let total = if size > 0 {
        size as usize
    } else {
        limits.max_string_len
    };
    let total = total.min(limits.max_string_len);
    let mut buf = vec![0u8; total];
    let got = mem.read_into(addr, &mut buf)?;
    buf.truncate(got);
    Ok(buf
        .split(|&b| b == 0)
        .take_while(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect())
}

/// Writes `MPIR_being_debugged`. A target without the symbol is left alone
/// and `Ok(false)` says so.
pub fn set_being_debugged<M: TargetMemoryMut + ?Sized, S: SymbolSource + ?Sized>(
    mem: &mut M,
    syms: &S,
    value: i32,
) -> Result<bool, ReadError> {
    write_optional_int(mem, syms, names::BEING_DEBUGGED, value)
}

/// Sets `MPIR_debug_gate` to 1, releasing ranks that wait on it. A target
/// without the symbol is left alone and `Ok(false)` says so.
pub fn release_gate<M: TargetMemoryMut + ?Sized, S: SymbolSource + ?Sized>(
    mem: &mut M,
    syms: &S,
) -> Result<bool, ReadError> {
    write_optional_int(mem, syms, names::DEBUG_GATE, 1)
}

fn write_optional_int<M: TargetMemoryMut + ?Sized, S: SymbolSource + ?Sized>(
    mem: &mut M,
    syms: &S,
    name: &'static str,
    value: i32,
) -> Result<bool, ReadError> {
    match syms.lookup(name) {
        None => Ok(false),
        Some(s) => mem.write_i32(s.addr, value).map(|()| true),
    }
}
