//! What a native message-queue decoder implements ([`QueueDecoder`]) and
//! how it fails ([`DecodeError`], naming the [`FoundLibrary`] it refused).
//!
//! Every decoder imports this file; it imports no decoder. Which decoder
//! reads a target is chosen in [`detect`](crate::detect), above them all.

use mpidd_read::{Limits, NoLayouts, ReadError, SymbolSource, Target};
use mpidd_types::TargetAddr;

use crate::model::ProcessQueues;
use mpidd_read::LayoutError;
use mpidd_read::TargetMemory;

/// Why a native decoder could not read the queues.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// No decoder knows this target's MPI, or not this build of it, or not
    /// in the state it is in.
    #[error("no native message-queue decoder for this target: {reason}{}", unsupported_tail(.library.as_deref(), .way_out.as_deref()))]
    Unsupported {
        /// What was found instead.
        reason: String,
        /// The MPI library found, when one was: its path, version and
        /// build-id, so that a person knows which build was refused.
        library: Option<Box<FoundLibrary>>,
        /// What can make the queues readable for that build, when
        /// something can.
        way_out: Option<String>,
    },
    /// A symbol the decoder needs is missing.
    #[error("the symbol `{name}` is missing (searched {searched}): {hint}")]
    MissingSymbol {
        /// The symbol.
        name: &'static str,
        /// The objects searched.
        searched: String,
        /// What its absence suggests.
        hint: &'static str,
    },
    /// Types or members the decoder needs are missing from the debug info
    /// (all of them are listed).
    #[error("the debug info lacks {}; without them no offset can be trusted, so nothing was read", list(.0))]
    Layouts(Vec<LayoutError>),
    /// Neither the library's DWARF nor a layout profile describes it.
    #[error(transparent)]
    NoLayouts(#[from] NoLayouts),
    /// Target memory could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A list in the target loops back on itself.
    #[error("the {what} list loops back to {addr} after {len} entries")]
    Cycle {
        /// Which list.
        what: &'static str,
        /// The entry seen twice.
        addr: TargetAddr,
        /// Entries walked before the repeat.
        len: u64,
    },
    /// A list in the target is longer than the caller allows.
    #[error("the {what} list is longer than the limit of {limit} entries (Limits::max_list_len); stopped at {addr}")]
    TooLong {
        /// Which list.
        what: &'static str,
        /// The limit.
        limit: u64,
        /// Where the walk stopped.
        addr: TargetAddr,
    },
    /// A communicator's group or connection table accounts for another
    /// number of processes than the communicator has, so no list of its
    /// world ranks can be trusted.
    #[error("the {what} at {addr} holds {found} processes where its communicator has {expected}")]
    MemberCount {
        /// `MPIR_Group` or `MPIDI_VCRT`.
        what: &'static str,
        /// Its address.
        addr: TargetAddr,
        /// The communicator's size.
        expected: i64,
        /// The count the record gives.
        found: i64,
    },
    /// A record in the target holds values no correct Open MPI or MPICH
    /// writes there.
    #[error("the {what} at {addr} is corrupt: {reason}")]
    Corrupt {
        /// The record's type.
        what: &'static str,
        /// Its address.
        addr: TargetAddr,
        /// What is wrong with it.
        reason: String,
    },
    /// A running target kept changing its communicators while they were
    /// read.
    #[error("the communicator list changed during each of {tries} reads (sequence number {first} then {last}); stop the process to read it")]
    KeptChanging {
        /// Reads attempted.
        tries: u32,
        /// The sequence number before the last try.
        first: i64,
        /// The sequence number after it.
        last: i64,
    },
}

/// The end of [`DecodeError::Unsupported`]'s message: the library and the
/// way out.
fn unsupported_tail(library: Option<&FoundLibrary>, way_out: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(l) = library {
        out.push_str(&format!(" (the library: {l})"));
    }
    if let Some(w) = way_out {
        out.push_str(". ");
        out.push_str(w);
    }
    out
}

impl DecodeError {
    /// [`DecodeError::Unsupported`] with only its reason.
    pub(crate) fn unsupported(reason: impl Into<String>) -> Self {
        DecodeError::Unsupported {
            reason: reason.into(),
            library: None,
            way_out: None,
        }
    }
}

/// What the native decoders read, for a refusal to say.
pub(crate) const DECODED: &str = "The native decoders read MPICH with the ch3 device, MPICH 3.4.x, \
     4.0.x, 4.1.x, 4.2.x, 4.3.x and 5.0.x with the ch4 device (checked on 4.0.2, Debian 13's 4.2.1 and pip's 3.4.3, 4.0.3, 4.1.3, 4.2.3, 4.3.1, 4.3.2, 5.0.0, 5.0.1 and 5.0.2), and Open MPI with the ob1 or ucx PML (checked on 4.1)";

/// Where a refusal of a build sends a person to see what was found of it:
/// the build, the facts, the profiles that fit or not and the check on the
/// process (`mpiq_core::BuildIdentity`).
pub(crate) const IDENTIFY: &str =
    "`mpidd identify` says what was found of this build and why nothing reads it";

/// An MPI library a refusal is about, as found in the target: enough for
/// a person to tell which build was refused, and to find or make what
/// reads it (a debug build, a layout profile: both are chosen by
/// build-id).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FoundLibrary {
    /// The object as the target loaded it (a path, e.g.
    /// `/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4`: its file name
    /// carries the library's so-version).
    pub path: String,
    /// The implementation and version the library says it is, when it
    /// could be read (`MPICH 4.1.2`, `Open MPI 4.1.4`).
    pub version: Option<String>,
    /// Its GNU build-id in hex: from the object's headers in the target's
    /// memory (found through the dynamic linker's list), else from its
    /// file. `None` when neither has one.
    pub build_id: Option<String>,
}

impl FoundLibrary {
    /// The library as `path`, with `version`, and the build-id found in
    /// the target for the object that holds `at` (a symbol of it), else
    /// in the file at `path`. Reads the dynamic linker's list (bounded by
    /// `limits`) and one page of headers.
    pub(crate) fn find(
        memory: &dyn TargetMemory,
        symbols: &dyn SymbolSource,
        path: &str,
        at: Option<TargetAddr>,
        version: Option<String>,
        limits: &Limits,
    ) -> Self {
        let in_memory = || -> Option<Vec<u8>> {
            let at = at?;
            let r_debug = symbols.lookup("_r_debug")?;
            let objects = mpidd_read::link_map::read_link_map(memory, r_debug.addr, limits).ok()?;
            // Shared objects start at their bias (their first segment is at
            // link-time address 0): the one holding `at` starts closest
            // below it.
            let holder = objects
                .iter()
                .filter(|o| o.bias != 0 && o.bias <= at.0)
                .max_by_key(|o| o.bias)?;
            mpidd_read::link_map::mapped_build_id(memory, holder.bias)
                .ok()
                .flatten()
        };
        let on_disk = || {
            let file = std::path::Path::new(path);
            file.is_absolute()
                .then(|| mpidd_read::build_id(file).ok().flatten())
                .flatten()
        };
        FoundLibrary {
            path: path.to_string(),
            version: version.filter(|v| !v.is_empty()),
            build_id: in_memory()
                .or_else(on_disk)
                .map(|id| mpidd_read::build_id_hex(&id)),
        }
    }

    /// Its file name, e.g. `libmpi.so.40.30.4`.
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

impl std::fmt::Display for FoundLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.path)?;
        if let Some(v) = &self.version {
            write!(f, ", {v}")?;
        }
        match &self.build_id {
            Some(id) => write!(f, ", build-id {id}"),
            None => f.write_str(", no build-id found"),
        }
    }
}

fn list(missing: &[LayoutError]) -> String {
    missing
        .iter()
        .map(|e| format!("the {e}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A message-queue decoder for one MPI implementation and version.
pub trait QueueDecoder: Send + Sync {
    /// What it decodes, with the version it found (for `ProcessQueues::source`).
    fn name(&self) -> &str;

    /// Reads every communicator and queue of `target`: the process it was
    /// built for ([`detect`](crate::detect)), or any other that loads the same build of
    /// the library (the ranks of a job), whose layouts are the same.
    fn read_queues(
        &self,
        target: &dyn Target,
        limits: &Limits,
    ) -> Result<ProcessQueues, DecodeError>;

    /// Reads the queues from the lists the MPI library keeps for
    /// debuggers alone (MPICH's `MPIR_Sendq_head`, `MPIR_Recvq_head` and
    /// `MPIR_Unexpq_head`, in a build with `--enable-debuginfo`, 4.0.3
    /// on), as a source to compare with [`read_queues`](Self::read_queues).
    /// A decoder whose MPI keeps no such lists refuses.
    fn read_debugger_lists(
        &self,
        target: &dyn Target,
        limits: &Limits,
    ) -> Result<ProcessQueues, DecodeError> {
        let _ = (target, limits);
        Err(DecodeError::unsupported(format!(
            "{} reads no debugger lists: only MPICH's CH4 decoder does (MPICH 4.0.3 on, \
             built with --enable-debuginfo)",
            self.name()
        )))
    }
}

/// What a native reading reads: the decoder's own queues, or the lists
/// the MPI library keeps for debuggers
/// ([`QueueDecoder::read_debugger_lists`](QueueDecoder::read_debugger_lists)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NativeSource {
    /// [`QueueDecoder::read_queues`](QueueDecoder::read_queues).
    Queues,
    /// [`QueueDecoder::read_debugger_lists`](QueueDecoder::read_debugger_lists).
    DebuggerLists,
}

/// The address of the symbol `name`, which the decoder cannot do without;
/// when it is missing, an error naming the objects searched and `hint`,
/// what its absence suggests.
pub(crate) fn required_symbol(
    target: &dyn Target,
    name: &'static str,
    hint: &'static str,
) -> Result<TargetAddr, DecodeError> {
    target
        .symbols()
        .lookup(name)
        .map(|s| s.addr)
        .ok_or_else(|| DecodeError::MissingSymbol {
            name,
            searched: mpidd_read::searched_summary(target.symbols()),
            hint,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_refusal_reads_as_before() {
        assert_eq!(
            DecodeError::unsupported("the decoder was not run").to_string(),
            "no native message-queue decoder for this target: the decoder was not run"
        );
    }
}
