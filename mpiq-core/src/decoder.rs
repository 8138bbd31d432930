//! Native message-queue decoders: what one implements, and how the right
//! one is picked for a target.

use mpidd_read::{
    choose_loaded_layouts, ElfSymbols, LayoutOrigin, LayoutProfile, Limits, NoLayouts, ReadError,
    SymbolSource, Target, TargetParts,
};
use mpidd_types::TargetAddr;

use crate::model::ProcessQueues;
use crate::mpich_ch3::MpichCh3;
use crate::mpich_ch4::MpichCh4;
use crate::ompi_ob1::{ompi_version, OmpiOb1};
use mpidd_read::TargetMemory;
use mpidd_read::{LayoutError, Layouts};

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
    /// built for ([`detect`]), or any other that loads the same build of
    /// the library (the ranks of a job), whose layouts are the same.
    fn read_queues(
        &self,
        target: &dyn Target,
        limits: &Limits,
    ) -> Result<ProcessQueues, DecodeError>;
}

/// A decoder found by [`detect`], kept with the target it was found for
/// and the limits to read it with: what a caller holds to read a
/// process's queues, once or again after the process moved on.
///
/// ```no_run
/// use mpidd_read::{CoreTarget, Limits};
/// use std::path::Path;
///
/// let rank = CoreTarget::open(Path::new("rank0.core"), None, None)?;
/// let reader = mpiq_core::detect(&rank, &Limits::default())?;
/// let queues = reader.read_queues()?;
/// println!("{}: {} communicators", reader.name(), queues.communicators.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct QueueReader<'t> {
    decoder: Box<dyn QueueDecoder>,
    target: &'t dyn Target,
    limits: Limits,
}

impl<'t> QueueReader<'t> {
    /// What it decodes, with the version found, e.g.
    /// `MPICH 4.0.2 (ch3:nemesis)`.
    pub fn name(&self) -> &str {
        self.decoder.name()
    }

    /// Reads every communicator and queue of the target.
    pub fn read_queues(&self) -> Result<ProcessQueues, DecodeError> {
        self.decoder.read_queues(self.target, &self.limits)
    }

    /// The target it reads.
    pub fn target(&self) -> &'t dyn Target {
        self.target
    }

    /// The decoder alone, to read other targets that load the same build
    /// of the library ([`QueueDecoder::read_queues`]).
    pub fn into_decoder(self) -> Box<dyn QueueDecoder> {
        self.decoder
    }
}

/// The native decoders, by the name `mpidd profile` and
/// [`ProcessQueues::source`] know them by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecoderKind {
    /// MPICH with the CH3 device ([`MpichCh3`]).
    MpichCh3,
    /// MPICH 4.0 with the CH4 device ([`MpichCh4`]).
    MpichCh4,
    /// Open MPI with the ob1 PML ([`OmpiOb1`]).
    OmpiOb1,
}

impl DecoderKind {
    /// Every native decoder.
    pub const ALL: &'static [DecoderKind] = &[
        DecoderKind::MpichCh3,
        DecoderKind::MpichCh4,
        DecoderKind::OmpiOb1,
    ];

    /// Its short name, e.g. `mpich-ch3`.
    pub fn name(self) -> &'static str {
        match self {
            DecoderKind::MpichCh3 => "mpich-ch3",
            DecoderKind::MpichCh4 => "mpich-ch4",
            DecoderKind::OmpiOb1 => "ompi-ob1",
        }
    }

    /// The MPI implementation it reads, as profiles name it.
    pub fn implementation(self) -> &'static str {
        match self {
            DecoderKind::MpichCh3 | DecoderKind::MpichCh4 => "MPICH",
            DecoderKind::OmpiOb1 => "Open MPI",
        }
    }

    /// The decoder called `name`, if any.
    pub fn from_name(name: &str) -> Option<DecoderKind> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Asks `layouts` every layout question the decoder may ask, so that a
    /// profile can be written for it ([`mpidd_read::LayoutProfile::write`])
    /// and a source can be checked for it before any read.
    pub fn ask_layouts(self, layouts: &dyn Layouts) {
        match self {
            DecoderKind::MpichCh3 => MpichCh3::ask_layouts(layouts),
            DecoderKind::MpichCh4 => MpichCh4::ask_layouts(layouts),
            DecoderKind::OmpiOb1 => OmpiOb1::ask_layouts(layouts),
        }
    }

    /// What the decoder cannot do without that `layouts` lacks; empty when
    /// it can decode with them (questions it can do without, such as
    /// those for optional details, may stay unanswered).
    pub fn missing_layouts(self, layouts: &dyn Layouts) -> Vec<LayoutError> {
        match self {
            DecoderKind::MpichCh3 => MpichCh3::missing_layouts(layouts),
            DecoderKind::MpichCh4 => MpichCh4::missing_layouts(layouts),
            DecoderKind::OmpiOb1 => OmpiOb1::missing_layouts(layouts),
        }
    }
}

/// Which decoder reads a target, found from its symbols and version strings
/// alone (no layouts needed), so that the layouts can be chosen for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identified {
    /// The decoder.
    pub kind: DecoderKind,
    /// The implementation's version string.
    pub version: String,
    /// Its device or transport, where it has one (MPICH's `ch3:nemesis`).
    pub device: String,
    /// The loaded object (a path) whose private types the decoder reads.
    pub library: String,
}

/// Finds which decoder reads the target's MPI: Open MPI (by its exported
/// `ompi_mpi_communicators`), whose PML the decoder checks once it has
/// layouts, or MPICH (by `MPII_Version_string` and `MPII_Version_device`)
/// with the CH3 device or, on 4.0, the CH4 device. Anything else is
/// refused, saying so.
pub fn identify(
    memory: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    limits: &Limits,
) -> Result<Identified, DecodeError> {
    let string = |name: &str| -> Option<(String, String)> {
        let sym = symbols.lookup(name)?;
        TargetMemory::read_c_string(memory, sym.addr, limits.max_string_len)
            .ok()
            .map(|b| (String::from_utf8_lossy(&b).into_owned(), sym.object))
    };
    if let Some(comms) = symbols.lookup("ompi_mpi_communicators") {
        return Ok(Identified {
            kind: DecoderKind::OmpiOb1,
            version: ompi_version(memory, symbols, limits).unwrap_or_default(),
            device: String::new(),
            library: comms.object,
        });
    }
    let Some((version, library)) = string("MPII_Version_string") else {
        return Err(DecodeError::Unsupported {
            reason: "neither MPICH's MPII_Version_string nor Open MPI's ompi_mpi_communicators is there: \
                     no MPI library is loaded"
                .to_string(),
        });
    };
    let device = string("MPII_Version_device").unwrap_or_default().0;
    if device.starts_with("ch3") {
        return Ok(Identified {
            kind: DecoderKind::MpichCh3,
            version,
            device,
            library,
        });
    }
    if device.starts_with("ch4") {
        // Checked on 4.0.2 only: CH4's request and global layouts moved a
        // lot between releases, and 4.1 keeps debugger lists of its own.
        if !version.starts_with("4.0") {
            return Err(DecodeError::Unsupported {
                reason: format!(
                    "MPICH {version} with the {device:?} device: the CH4 decoder was checked \
                     on MPICH 4.0 only"
                ),
            });
        }
        return Ok(Identified {
            kind: DecoderKind::MpichCh4,
            version,
            device,
            library,
        });
    }
    Err(DecodeError::Unsupported {
        reason: format!("MPICH {version} with the {device:?} device, which no decoder reads"),
    })
}

/// Picks the decoder for the target's MPI ([`identify`]), builds it over
/// the target's layouts and keeps it with the target, ready to read
/// ([`QueueReader::read_queues`]).
pub fn detect<'t>(target: &'t dyn Target, limits: &Limits) -> Result<QueueReader<'t>, DecodeError> {
    Ok(QueueReader {
        decoder: build_decoder(target, limits)?,
        target,
        limits: *limits,
    })
}

/// The decoder for the target's MPI, built over the target's layouts, on
/// its own: [`detect`] without the target, for a caller that reads many
/// targets of one library build with it.
pub fn build_decoder(
    target: &dyn Target,
    limits: &Limits,
) -> Result<Box<dyn QueueDecoder>, DecodeError> {
    let found = identify(target.memory(), target.symbols(), limits)?;
    match found.kind {
        DecoderKind::MpichCh3 => Ok(Box::new(MpichCh3::new(
            target,
            &found.version,
            &found.device,
        )?)),
        DecoderKind::MpichCh4 => Ok(Box::new(MpichCh4::new(
            target,
            &found.version,
            &found.device,
        )?)),
        DecoderKind::OmpiOb1 => Ok(Box::new(OmpiOb1::new(target, limits)?)),
    }
}

/// The layouts to decode `found` with: the library's own DWARF (`dwarf`)
/// when it answers every question the decoder asks, else the first of
/// `profiles` made for the library's build-id (read from its file, found
/// through `objects`), else a [`NoLayouts`] that says what is missing and
/// the ways out.
pub fn decoder_layouts<'a>(
    found: &Identified,
    dwarf: &'a dyn Layouts,
    objects: &ElfSymbols,
    profiles: &'a [LayoutProfile],
) -> Result<(&'a dyn Layouts, LayoutOrigin), NoLayouts> {
    choose_loaded_layouts(
        dwarf,
        &|l| found.kind.missing_layouts(l),
        &found.library,
        (!found.version.is_empty()).then_some(found.version.as_str()),
        objects,
        profiles,
    )
}

/// Reads a process's queues natively, start to end: [`identify`] its MPI,
/// choose the layouts ([`decoder_layouts`]: `dwarf` if it describes the
/// library, else a matching profile of `profiles`), build the decoder and
/// read. Also says where the layouts came from.
pub fn read_native_queues(
    memory: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    objects: &ElfSymbols,
    dwarf: &dyn Layouts,
    profiles: &[LayoutProfile],
    limits: &Limits,
) -> Result<(ProcessQueues, LayoutOrigin), DecodeError> {
    let found = identify(memory, symbols, limits)?;
    let (types, origin) = decoder_layouts(&found, dwarf, objects, profiles)?;
    let target = TargetParts {
        memory,
        symbols,
        layouts: types,
    };
    Ok((detect(&target, limits)?.read_queues()?, origin))
}
