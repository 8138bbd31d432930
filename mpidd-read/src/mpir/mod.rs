//! The MPIR process-acquisition interface: the starter's process table and
//! the variables around it.
//!
//! A starter (the launcher, such as `mpirun`) exports a handful of globals.
//! `MPIR_proctable` points to an array of `MPIR_PROCDESC`, one per rank of
//! `MPI_COMM_WORLD`, and `MPIR_proctable_size` counts it. `MPIR_debug_state`
//! says why the starter last called `MPIR_Breakpoint`. Some symbols matter by
//! their mere presence (`MPIR_i_am_starter` and friends). The debugger
//! writes `MPIR_being_debugged` and `MPIR_debug_gate`, and only those.
//!
//! This folder owns MPIR: this module reads the table and its variables,
//! [`mpir_protocol`] drives the attach protocol around them, `proc_table`
//! decodes the table's entries, and `launch` (Linux, with the `live`
//! feature) starts a launcher under ptrace and runs the protocol on it.
//! The readers stand on `backend` and `symbols` only; `launch` also opens
//! live targets.

#[cfg(all(feature = "live", target_os = "linux"))]
pub mod launch;
pub mod mpir_protocol;
pub(crate) mod proc_table;

use mpidd_types::{ByteOrder, MpirDebugState, MpirProcdesc, Record, TargetAbi, TargetAddr};
use serde::Serialize;

use crate::backend::memory::{decode_unsigned, visit_record_bytes, TargetMemory, TargetMemoryMut};
use crate::backend::read_budget::ReadBudget;
use crate::error::ReadError;
use crate::limits::Limits;
use crate::mpir::proc_table::ProcTableBuilder;
pub use crate::mpir::proc_table::{Iter, MpirProcess, ProcTable};
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
    pub proctable: ProcTable,
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
        if searched.is_empty() { "any loaded object".to_string() } else { crate::symbols::searched_objects::summarize_objects(searched) }
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

/// Most entries a table reserves room for before it has read them.
const RESERVE_ENTRIES: usize = 1 << 20;

/// Marks a string index as one of the addresses a batch reads later.
const LATER: u32 = 1 << 31;

/// Most string addresses remembered across batches. A launcher's table
/// points at a few strings (one per node, one per executable) a million
/// times; a table of distinct strings stops remembering at this bound.
const ADDRESS_CACHE_ENTRIES: usize = 1 << 16;

/// Reads the MPIR state of one process.
///
/// ```
/// use mpidd_read::{mpir, Limits, SyntheticJob};
/// use mpidd_types::TargetAbi;
///
/// let job = SyntheticJob::builder(TargetAbi::POWERPC)
///     .mpir_starter(&[("node1", "/bin/a.out", 101), ("node2", "/bin/a.out", -1)])
///     .build();
/// let state = mpir::read_state(&job, &Limits::default())?;
/// assert_eq!(state.proctable.get(1).map(|p| p.pid), Some(-1));
/// assert_eq!(state.proctable.get(0).map(|p| p.host_name), Some("node1"));
/// # Ok::<(), mpidd_read::mpir::MpirError>(())
/// ```
pub fn read_state<T: TargetMemory + SymbolSource + ?Sized>(
    target: &T,
    limits: &Limits,
) -> Result<MpirState, MpirError> {
    read_state_from(target, target, limits)
}

/// [`read_state`] from a memory and symbols kept apart (a bare
/// [`crate::LiveProcess`] or a `SyntheticMemory` with a
/// [`crate::SymbolTable`], a debugger's own sources).
pub fn read_state_from<M: TargetMemory + ?Sized, S: SymbolSource + ?Sized>(
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
    let proctable = if table_ptr.is_null() || proctable_size == 0 {
        ProcTable::default()
    } else {
        read_table(mem, table_ptr, proctable_size, limits)?
    };
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

/// Reads the table and its strings. Records are decoded a chunk at a
/// time and never collected. Strings a core holds are interned straight
/// from its mapping; the others (a live process) are read for a batch of
/// entries at once, so a table of thousands of ranks costs a few
/// syscalls, not two per rank.
fn read_table<M: TargetMemory + ?Sized>(
    mem: &M,
    addr: TargetAddr,
    count: i32,
    limits: &Limits,
) -> Result<ProcTable, ReadError> {
    let max = limits.max_string_len;
    let mut strings = StringInterner::new();
    let mut known = KnownAddresses::default();
    // Entries waiting for their strings: an index into `strings`, or
    // `LATER | i` for the i-th address of `later`.
    let mut batch: Vec<(u32, u32, i32)> = Vec::with_capacity(STRING_BATCH_ENTRIES);
    let mut later: Vec<TargetAddr> = Vec::new();
    // Which `LATER | i` each address of this batch already has.
    let mut pending: foldhash::HashMap<u64, u32> = foldhash::HashMap::default();
    let flush = |batch: &mut Vec<(u32, u32, i32)>,
                 later: &mut Vec<TargetAddr>,
                 pending: &mut foldhash::HashMap<u64, u32>,
                 strings: &mut StringInterner,
                 known: &mut KnownAddresses|
     -> Result<(), ReadError> {
        let mut read = Vec::with_capacity(later.len());
        // `later` is in table order, so the first failure is the one the
        // earliest entry meets.
        for text in mem.read_c_strings(later, max) {
            read.push(strings.intern(&text?));
        }
        let id = |i: u32| {
            if i & LATER == 0 {
                i
            } else {
                // read_c_strings answers every address; were one missing,
                // the index past the strings reads as an empty string.
                read.get((i & !LATER) as usize).copied().unwrap_or(u32::MAX)
            }
        };
        for (host, exe, pid) in batch.drain(..) {
            strings.table.push(id(host), id(exe), pid);
        }
        for (a, &i) in later.iter().zip(&read) {
            known.remember(a.0, i);
        }
        later.clear();
        pending.clear();
        Ok(())
    };
    let abi = mem.abi();
    let slots = ProcdescSlots::new(abi);
    let what = MpirProcdesc::C_NAME;
    let size = MpirProcdesc::size_for(abi);
    visit_record_bytes(
        mem,
        addr,
        i64::from(count),
        size,
        what,
        limits,
        |i, at, bytes| {
            let e = match &slots {
                Some(s) => s.decode(bytes),
                None => MpirProcdesc::decode(bytes, abi).map_err(|cause| ReadError::Decode {
                    record: what,
                    addr: at,
                    cause,
                })?,
            };
            if i == 0 {
                // The count passed the entry limit, but the memory behind it may
                // still end early: reserve for large tables as they prove real.
                strings
                    .table
                    .reserve((count.unsigned_abs() as usize).min(RESERVE_ENTRIES));
            }
            let mut id = |a: TargetAddr, field: usize| {
                if a.is_null() {
                    return strings.empty();
                }
                match mem.borrow_c_string(a, max) {
                    Some(text) => strings.intern_near(text, field),
                    // Read from elsewhere (a file the core omits, a live
                    // process): once per address.
                    None => match known.get(a.0, field) {
                        Some(i) => i,
                        None => *pending.entry(a.0).or_insert_with(|| {
                            later.push(a);
                            LATER | (later.len() - 1) as u32
                        }),
                    },
                }
            };
            let host = id(e.host_name, 0);
            let exe = id(e.executable_name, 1);
            batch.push((host, exe, e.pid));
            if batch.len() == STRING_BATCH_ENTRIES {
                flush(
                    &mut batch,
                    &mut later,
                    &mut pending,
                    &mut strings,
                    &mut known,
                )?;
            }
            Ok(())
        },
    )?;
    flush(
        &mut batch,
        &mut later,
        &mut pending,
        &mut strings,
        &mut known,
    )?;
    Ok(strings.table.finish())
}

/// Where the fields of `MPIR_PROCDESC` lie for one ABI. A table of a
/// million entries is decoded from these offsets, computed once from the
/// record's own layout, rather than by the field-by-field decoder.
struct ProcdescSlots {
    order: ByteOrder,
    host: std::ops::Range<usize>,
    exe: std::ops::Range<usize>,
    pid: std::ops::Range<usize>,
}

impl ProcdescSlots {
    fn new(abi: TargetAbi) -> Option<Self> {
        let layout = MpirProcdesc::layout(abi);
        let range = |name: &str| layout.field(name).map(|f| f.offset..f.offset + f.size);
        Some(ProcdescSlots {
            order: abi.byte_order,
            host: range("host_name")?,
            exe: range("executable_name")?,
            pid: range("pid")?,
        })
    }

    /// `bytes` is one whole record, so every range lies in it.
    fn decode(&self, bytes: &[u8]) -> MpirProcdesc {
        let field = |r: &std::ops::Range<usize>| {
            bytes
                .get(r.clone())
                .map_or(0, |b| decode_unsigned(self.order, b))
        };
        MpirProcdesc {
            host_name: TargetAddr(field(&self.host)),
            executable_name: TargetAddr(field(&self.exe)),
            pid: field(&self.pid) as u32 as i32,
        }
    }
}

/// The strings of a table that had to be read (not borrowed from a
/// core's own bytes: a file mapping gcore left out, a live process), by
/// target address, so that each distinct address is read once however
/// many entries point at it. Up to [`ADDRESS_CACHE_ENTRIES`] addresses are
/// kept, and each field's last one is checked before any hashing.
#[derive(Default)]
struct KnownAddresses {
    /// Each field's last address and its string.
    near: [Option<(u64, u32)>; 2],
    by_address: foldhash::HashMap<u64, u32>,
}

impl KnownAddresses {
    fn get(&mut self, addr: u64, field: usize) -> Option<u32> {
        if let Some((a, i)) = self.near[field] {
            if a == addr {
                return Some(i);
            }
        }
        if self.by_address.is_empty() {
            return None;
        }
        let i = *self.by_address.get(&addr)?;
        self.near[field] = Some((addr, i));
        Some(i)
    }

    fn remember(&mut self, addr: u64, i: u32) {
        if self.by_address.len() < ADDRESS_CACHE_ENTRIES {
            self.by_address.insert(addr, i);
        }
    }
}

/// Interns the strings of a table by their bytes.
struct StringInterner {
    table: ProcTableBuilder,
    by_bytes: foldhash::HashMap<Box<[u8]>, u32>,
    /// What each field of the previous rank interned: neighbouring ranks
    /// mostly share a host and an executable, and comparing a few bytes is
    /// cheaper than hashing them.
    near: [Option<(Box<[u8]>, u32)>; 2],
    /// The index of the empty string, which null pointers show as, once
    /// one has.
    empty: Option<u32>,
}

impl StringInterner {
    fn new() -> Self {
        StringInterner {
            table: ProcTableBuilder::default(),
            by_bytes: foldhash::HashMap::default(),
            near: [None, None],
            empty: None,
        }
    }

    fn empty(&mut self) -> u32 {
        match self.empty {
            Some(i) => i,
            None => {
                let i = self.intern(b"");
                self.empty = Some(i);
                i
            }
        }
    }

    fn intern(&mut self, bytes: &[u8]) -> u32 {
        if let Some(&i) = self.by_bytes.get(bytes) {
            return i;
        }
        // Invalid UTF-8 becomes U+FFFD, as in TargetMemory::read_string.
        let i = self.table.add_string(&String::from_utf8_lossy(bytes));
        self.by_bytes.insert(bytes.into(), i);
        i
    }

    fn intern_near(&mut self, bytes: &[u8], field: usize) -> u32 {
        if let Some((last, i)) = &self.near[field] {
            if **last == *bytes {
                return *i;
            }
        }
        let i = self.intern(bytes);
        self.near[field] = Some((bytes.into(), i));
        i
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
    let got = mem.read_prefix(addr, &mut buf, "string list")?;
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
