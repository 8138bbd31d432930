//! Native message-queue decoders: what one implements, and how the right
//! one is picked for a target.

use mpidd_read::{Limits, ReadError, SymbolSource};
use mpidd_types::TargetAddr;

use crate::layout_source::{LayoutError, LayoutSource};
use crate::model::ProcessQueues;
use crate::mpich_ch3::MpichCh3;
use crate::mqs_target::ByteSource;
use crate::ompi_ob1::{is_open_mpi, OmpiOb1};

/// One MPI process as a native decoder sees it.
pub struct NativeTarget<'a> {
    /// Its memory.
    pub memory: &'a dyn ByteSource,
    /// Its symbols, local ones included.
    pub symbols: &'a dyn SymbolSource,
    /// Its MPI library's types.
    pub types: &'a dyn LayoutSource,
}

/// Why a native decoder could not read the queues.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// No decoder knows this target's MPI.
    #[error("no native message-queue decoder for this target: {reason}")]
    Unsupported {
        /// What was found instead.
        reason: String,
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

    /// Reads every communicator and queue of the process.
    fn read_queues(
        &self,
        target: &NativeTarget<'_>,
        limits: &Limits,
    ) -> Result<ProcessQueues, DecodeError>;
}

/// Picks the decoder for the target's MPI: Open MPI (by its exported
/// `ompi_mpi_communicators`) with the ob1 PML, or MPICH (by
/// `MPII_Version_string` and `MPII_Version_device`) with the CH3 device. MPICH's CH4 device keeps
/// no debugger queues (its own library cannot show them either), and Open
/// MPI's other PMLs (cm, ucx) keep their queues in the network library:
/// both are refused, saying so.
pub fn detect(
    target: &NativeTarget<'_>,
    limits: &Limits,
) -> Result<Box<dyn QueueDecoder>, DecodeError> {
    let string = |name: &str| -> Option<String> {
        let sym = target.symbols.lookup(name)?;
        ByteSource::read_c_string(target.memory, sym.addr, limits.max_string_len)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    if is_open_mpi(target.symbols) {
        return Ok(Box::new(OmpiOb1::new(target, limits)?));
    }
    let Some(version) = string("MPII_Version_string") else {
        return Err(DecodeError::Unsupported {
            reason: "neither MPICH's MPII_Version_string nor Open MPI's ompi_mpi_communicators is there: \
                     no MPI library is loaded"
                .to_string(),
        });
    };
    let device = string("MPII_Version_device").unwrap_or_default();
    if device.starts_with("ch3") {
        return Ok(Box::new(MpichCh3::new(target, &version, &device)?));
    }
    Err(DecodeError::Unsupported {
        reason: format!(
            "MPICH {version} with the {device:?} device: only CH3 keeps the queues debuggers read \
             (MPICH's own libtvmpich.so cannot show CH4 queues either)"
        ),
    })
}
