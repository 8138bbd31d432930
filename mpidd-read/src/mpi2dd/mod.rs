//! The MPI-2 debugger interface: one process's `MPI2DD_info` and its
//! tables, read in full.
//!
//! Every process of an MPI-2 job exports `MPI2DD_info`. A directory process
//! lists ranks in its proctable; a metadirectory lists other directories
//! and metadirectories. [`crate::mpi2dd::walk`] follows those lists across
//! processes. The debugger writes only `debugger_flags`, through
//! [`write_debugger_flags`].
//!
//! This folder owns the MPI-2 debugger interface: this module reads one
//! process, and [`walk`] follows directories across processes. It stands on
//! `backend` and `symbols` (and `walk` opens core files as `targets`), and
//! on no other decoder.

pub mod walk;

use mpidd_types::{
    DebuggerFlags, Mpi2ddDebugState, Mpi2ddDirectoryEntry, Mpi2ddInfo, Mpi2ddProcdesc,
    Mpi2ddSpawndesc, MpiFlags, Packing, Record, TargetAbi, TargetAddr, TypesError,
};
use serde::Serialize;

use crate::backend::memory::{ReadRecords, TargetMemory, TargetMemoryMut};
use crate::backend::read_budget::ReadBudget;
use crate::error::ReadError;
use crate::limits::Limits;
use crate::symbols::SymbolSource;

/// Symbol of the info block.
pub const INFO_SYMBOL: &str = "MPI2DD_info";
/// Symbol of the breakpoint function.
pub const BREAKPOINT_SYMBOL: &str = "MPI2DD_breakpoint";

/// The spawn that created a rank.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Mpi2ddSpawn {
    /// The parent's `MPI_COMM_WORLD`.
    pub parent_comm_world_id: String,
    /// The parent's rank there.
    pub parent_rank: i32,
    /// Which spawn of that parent, from 0.
    pub sequence: i32,
}

/// One rank of a directory's proctable.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Mpi2ddRank {
    /// Host it runs on.
    pub host_name: String,
    /// Its executable.
    pub executable_name: String,
    /// Its pid on that host.
    pub pid: i32,
    /// Its rank in its `MPI_COMM_WORLD`.
    pub rank: i32,
    /// Names its `MPI_COMM_WORLD`.
    pub comm_world_id: String,
    /// Set for spawned ranks.
    pub spawn_desc: Option<Mpi2ddSpawn>,
}

/// A directory or metadirectory process named in a table.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Mpi2ddPeer {
    /// Host it runs on.
    pub host_name: String,
    /// Its executable.
    pub executable_name: String,
    /// Its pid on that host.
    pub pid: i32,
}

/// How the layout of a process's MPI-2 records was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PackingChoice {
    /// The caller said which (`--packed`, `--natural`).
    Forced,
    /// Both layouts were read and only this one gave valid records.
    Detected,
    /// The records read the same in both layouts (on this ABI they do
    /// not differ, or the tables that would tell them apart are empty or
    /// hold a single entry), so either one is right.
    Either,
}

/// The layout the MPI-2 records were read with, and how it was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct PackingUsed {
    /// The layout.
    pub packing: Packing,
    /// Why this one.
    pub chosen: PackingChoice,
}

impl std::fmt::Display for PackingUsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let packing = match self.packing {
            Packing::Packed => "packed",
            Packing::Natural => "natural",
        };
        match self.chosen {
            PackingChoice::Forced => write!(f, "{packing} layout, as asked"),
            PackingChoice::Detected => write!(f, "{packing} layout, detected"),
            PackingChoice::Either => write!(f, "same in the packed and natural layouts"),
        }
    }
}

/// What one process exposes through `MPI2DD_info`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mpi2ddProcess {
    /// The layout its records were read with.
    pub packing: PackingUsed,
    /// Address of its `MPI2DD_info`.
    pub info_addr: TargetAddr,
    /// The object that defines `MPI2DD_info`.
    pub defined_in: String,
    /// Why the breakpoint was last called.
    pub debug_state: Mpi2ddDebugState,
    /// Flags the debugger may set.
    pub debugger_flags: DebuggerFlags,
    /// Flags the MPI side sets (metadirectory, directory, starter...).
    pub mpi_flags: MpiFlags,
    /// Message-queue library for 32-bit debuggers.
    pub dll_name_32: Option<String>,
    /// Message-queue library for 64-bit debuggers.
    pub dll_name_64: Option<String>,
    /// Host of the metadirectory.
    pub meta_host_name: Option<String>,
    /// Executable of the metadirectory.
    pub meta_executable_name: Option<String>,
    /// Pid of the metadirectory.
    pub meta_pid: i32,
    /// Abort message.
    pub abort_string: Option<String>,
    /// Ranks, if this is a directory.
    pub proctable: Vec<Mpi2ddRank>,
    /// Other directories, if this is a metadirectory.
    pub directory_table: Vec<Mpi2ddPeer>,
    /// Other metadirectories.
    pub metadirectory_table: Vec<Mpi2ddPeer>,
}

/// Why a process's MPI-2 data could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Mpi2ddError {
    /// The process has no `MPI2DD_info`.
    #[error("no {INFO_SYMBOL} symbol in {}: the process does not implement the MPI-2 debugger interface, or its symbols were stripped",
        if searched.is_empty() { "any loaded object".to_string() } else { crate::symbols::searched_objects::summarize_objects(searched) })]
    NoInfo {
        /// The objects searched.
        searched: Vec<String>,
    },
    /// `MPI2DD_info` is there but not valid.
    #[error("{INFO_SYMBOL} at {addr}: {cause}")]
    Invalid {
        /// Its address.
        addr: TargetAddr,
        /// What is wrong: shown in the message, so not also as `source()`.
        cause: TypesError,
    },
    /// Reading memory failed.
    #[error(
        "{cause} (while reading the MPI-2 records with {packing:?} packing; a producer \
         that used the other layout misplaces every field after the first padding)"
    )]
    Read {
        /// The packing the records were read with.
        packing: Packing,
        /// What failed: shown in the message, so not also as `source()`.
        cause: ReadError,
    },
    /// Both layouts give valid records, and different ones: nothing says
    /// which the producer used.
    #[error(
        "{INFO_SYMBOL} at {addr}: its tables read as valid, different records in both the \
         packed and the natural layout; say which one the MPI uses (--packed or --natural)"
    )]
    AmbiguousPacking {
        /// Where `MPI2DD_info` is.
        addr: TargetAddr,
    },
    /// Neither layout gives valid records.
    #[error("in the natural layout: {natural}; in the packed layout: {packed}")]
    NeitherPacking {
        /// The failure of the natural layout.
        natural: Box<Mpi2ddError>,
        /// The failure of the packed layout.
        packed: Box<Mpi2ddError>,
    },
    /// Writing `debugger_flags` failed.
    #[error("writing {INFO_SYMBOL}.debugger_flags: {cause}")]
    Write {
        /// What failed: shown in the message, so not also as `source()`.
        cause: ReadError,
    },
}

/// Reads one process's `MPI2DD_info` and everything it points to.
///
/// `packing` forces a layout (`Packing::Packed`, `Packing::Natural`); `None`
/// detects it: where the two layouts differ on the target's ABI (on LP64,
/// the stride of `MPI2DD_DIRECTORYENTRY` arrays), the records are read in
/// both, and the one whose records are valid (readable pointers, strings,
/// positive pids) is used; [`Mpi2ddProcess::packing`] says which and how.
///
/// ```
/// use mpidd_read::{mpi2dd, Limits, SyntheticJob, synthetic::{Mpi2ddSpec, PeerSpec, RankSpec}};
/// use mpidd_read::mpi2dd::PackingChoice;
/// use mpidd_types::{Packing, TargetAbi};
///
/// let job = SyntheticJob::builder(TargetAbi::S390X)
///     .mpi2dd(&Mpi2ddSpec {
///         packing: Packing::Packed,
///         ranks: &[RankSpec { host: "n1", exe: "/bin/a", pid: 10, rank: 0, world: "w0", spawn: None }],
///         directories: &[PeerSpec { host: "n2", exe: "/bin/d", pid: 20 }, PeerSpec { host: "n3", exe: "/bin/d", pid: 30 }],
///         ..Mpi2ddSpec::default()
///     })
///     .build();
/// let p = mpi2dd::read_process(&job.memory, &job.symbols, None, &Limits::default())?;
/// assert_eq!(p.proctable[0].comm_world_id, "w0");
/// assert_eq!(p.directory_table[1].pid, 30);
/// assert_eq!((p.packing.packing, p.packing.chosen), (Packing::Packed, PackingChoice::Detected));
/// # Ok::<(), mpi2dd::Mpi2ddError>(())
/// ```
pub fn read_process<M: TargetMemory + ?Sized, S: SymbolSource + ?Sized>(
    mem: &M,
    syms: &S,
    packing: impl Into<Option<Packing>>,
    limits: &Limits,
) -> Result<Mpi2ddProcess, Mpi2ddError> {
    let budget = ReadBudget::new(mem, limits);
    let mem = &budget;
    let sym = syms
        .lookup(INFO_SYMBOL)
        .ok_or_else(|| Mpi2ddError::NoInfo {
            searched: syms.searched_objects(),
        })?;
    let used = |packing, chosen| PackingUsed { packing, chosen };
    if let Some(packing) = packing.into() {
        return read_with(mem, &sym, used(packing, PackingChoice::Forced), limits);
    }
    let abi = mem.abi();
    if layouts_agree(abi) {
        return read_with(
            mem,
            &sym,
            used(Packing::Natural, PackingChoice::Either),
            limits,
        );
    }
    let natural = read_with(
        mem,
        &sym,
        used(Packing::Natural, PackingChoice::Detected),
        limits,
    );
    let packed = read_with(
        mem,
        &sym,
        used(Packing::Packed, PackingChoice::Detected),
        limits,
    );
    match (natural, packed) {
        (Ok(mut n), Ok(p)) => {
            let same = Mpi2ddProcess {
                packing: n.packing,
                ..p.clone()
            } == n;
            if same {
                n.packing.chosen = PackingChoice::Either;
                return Ok(n);
            }
            match (plausible(&n), plausible(&p)) {
                (true, false) => Ok(n),
                (false, true) => Ok(p),
                _ => Err(Mpi2ddError::AmbiguousPacking { addr: sym.addr }),
            }
        }
        (Ok(n), Err(_)) => Ok(n),
        (Err(_), Ok(p)) => Ok(p),
        // The info block reads the same in both layouts, so a bad one
        // fails both alike: one message says it.
        (Err(n), Err(p)) if n.to_string() == p.to_string() => Err(n),
        (Err(n), Err(p)) => Err(Mpi2ddError::NeitherPacking {
            natural: Box::new(n),
            packed: Box::new(p),
        }),
    }
}

/// Whether every MPI-2 record has one layout whatever the packing, on
/// `abi` (true of 32-bit ABIs, where nothing is padded).
fn layouts_agree(abi: TargetAbi) -> bool {
    fn same<R: Record>(abi: TargetAbi) -> bool {
        R::layout(abi.with_packing(Packing::Packed))
            == R::layout(abi.with_packing(Packing::Natural))
    }
    same::<Mpi2ddInfo>(abi)
        && same::<Mpi2ddProcdesc>(abi)
        && same::<Mpi2ddSpawndesc>(abi)
        && same::<Mpi2ddDirectoryEntry>(abi)
}

/// Whether the tables hold what a producer would write: processes with
/// a positive pid and a host name of printable text. Records read in the
/// wrong layout straddle two real ones, and their pointers and pids are
/// pieces of others.
fn plausible(p: &Mpi2ddProcess) -> bool {
    let text = |s: &str| !s.is_empty() && !s.chars().any(char::is_control);
    p.directory_table
        .iter()
        .chain(&p.metadirectory_table)
        .all(|d| d.pid > 0 && text(&d.host_name))
        && p.proctable.iter().all(|r| text(&r.host_name))
}

/// Reads the records in the layout `used` names.
fn read_with<M: TargetMemory + ?Sized>(
    mem: &M,
    sym: &crate::symbols::Symbol,
    used: PackingUsed,
    limits: &Limits,
) -> Result<Mpi2ddProcess, Mpi2ddError> {
    let packing = used.packing;
    let abi = mem.abi().with_packing(packing);
    let read_err = |cause| Mpi2ddError::Read { packing, cause };
    let info: Mpi2ddInfo = mem.read_record_as(sym.addr, abi).map_err(read_err)?;
    info.validate().map_err(|cause| Mpi2ddError::Invalid {
        addr: sym.addr,
        cause,
    })?;
    read_tables(mem, &info, sym.clone(), used, abi, limits).map_err(read_err)
}

/// Everything `MPI2DD_info` points to.
fn read_tables<M: TargetMemory + ?Sized>(
    mem: &M,
    info: &Mpi2ddInfo,
    sym: crate::symbols::Symbol,
    packing: PackingUsed,
    abi: TargetAbi,
    limits: &Limits,
) -> Result<Mpi2ddProcess, ReadError> {
    let max = limits.max_string_len;
    let opt = |a: TargetAddr| -> Result<Option<String>, ReadError> {
        if a.is_null() {
            Ok(None)
        } else {
            mem.read_string(a, max).map(Some)
        }
    };
    let text = |a: TargetAddr| opt(a).map(Option::unwrap_or_default);
    let peers = |table: TargetAddr, size: i32| -> Result<Vec<Mpi2ddPeer>, ReadError> {
        if table.is_null() || size == 0 {
            return Ok(Vec::new());
        }
        mem.read_records_as::<Mpi2ddDirectoryEntry>(table, size.into(), abi, limits)?
            .into_iter()
            .map(|e| {
                Ok(Mpi2ddPeer {
                    host_name: text(e.host_name)?,
                    executable_name: text(e.executable_name)?,
                    pid: e.pid,
                })
            })
            .collect()
    };
    let mut proctable = Vec::new();
    if !info.proctable.is_null() && info.proctable_size != 0 {
        let entries: Vec<Mpi2ddProcdesc> =
            mem.read_records_as(info.proctable, info.proctable_size.into(), abi, limits)?;
        proctable.reserve(entries.len());
        for e in entries {
            let spawn_desc = if e.spawn_desc.is_null() {
                None
            } else {
                let d: Mpi2ddSpawndesc = mem.read_record_as(e.spawn_desc, abi)?;
                Some(Mpi2ddSpawn {
                    parent_comm_world_id: text(d.parent_comm_world_id)?,
                    parent_rank: d.parent_rank,
                    sequence: d.sequence,
                })
            };
            proctable.push(Mpi2ddRank {
                host_name: text(e.host_name)?,
                executable_name: text(e.executable_name)?,
                pid: e.pid,
                rank: e.rank,
                comm_world_id: text(e.comm_world_id)?,
                spawn_desc,
            });
        }
    }
    Ok(Mpi2ddProcess {
        packing,
        info_addr: sym.addr,
        defined_in: sym.object,
        debug_state: info.debug_state,
        debugger_flags: info.debugger_flags,
        mpi_flags: info.mpi_flags,
        dll_name_32: opt(info.dll_name_32)?,
        dll_name_64: opt(info.dll_name_64)?,
        meta_host_name: opt(info.meta_host_name)?,
        meta_executable_name: opt(info.meta_executable_name)?,
        meta_pid: info.meta_pid,
        abort_string: opt(info.abort_string)?,
        proctable,
        directory_table: peers(info.directory_table, info.directory_size)?,
        metadirectory_table: peers(info.metadirectory_table, info.metadirectory_size)?,
    })
}

/// Writes `MPI2DD_info.debugger_flags`, and only those four bytes.
pub fn write_debugger_flags<M: TargetMemoryMut + ?Sized, S: SymbolSource + ?Sized>(
    mem: &mut M,
    syms: &S,
    packing: Packing,
    flags: DebuggerFlags,
) -> Result<(), Mpi2ddError> {
    let sym = syms
        .lookup(INFO_SYMBOL)
        .ok_or_else(|| Mpi2ddError::NoInfo {
            searched: syms.searched_objects(),
        })?;
    let abi: TargetAbi = mem.abi().with_packing(packing);
    let offset = Mpi2ddInfo::layout(abi)
        .field("debugger_flags")
        .map(|f| f.offset as u64)
        .unwrap_or(8);
    let at = TargetAddr(sym.addr.0.wrapping_add(offset));
    mem.write_i32(at, flags.bits() as i32)
        .map_err(|cause| Mpi2ddError::Write { cause })?;
    Ok(())
}
