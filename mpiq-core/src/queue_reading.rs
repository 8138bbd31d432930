//! Reading one process's queues the way a caller asked: with the native
//! decoder, from the lists the MPI library keeps for debuggers, with a
//! vendor mqs library, or with two of them to compare; and
//! the world rank a vendor library is given when the caller knows none.
//!
//! `mpidd queues` and `mpidd-job`'s `JobReader` both read a vendor
//! library's view of a process through [`read_with_library`], so the rank
//! it is handed is found one way everywhere.

#[cfg(feature = "mqs")]
use mpidd_read::{LayeredLayouts, LayoutTable, Layouts};
use mpidd_read::{
    LayoutCache, LayoutOrigin, Limits, LoadedObjects, ProfileSet, SymbolSource, TargetMemory,
    TypeOracle,
};

#[cfg(feature = "mqs")]
use crate::detect::{decoder_layouts, identify};

use crate::decoder::DecodeError;
use crate::decoder::NativeSource;
use crate::layout_resolver::{LayoutResolver, TypeSource};
use crate::model::ProcessQueues;
#[cfg(feature = "mqs")]
use crate::mqs::host::{MqsError, MqsLibrary};
#[cfg(feature = "mqs")]
use crate::mqs::target::{MqsTarget, TargetTypeSizes};
#[cfg(feature = "mqs")]
use crate::world_rank::world_rank;

/// Which reader decodes the queues.
#[derive(Clone, Copy)]
pub enum QueueReaderChoice<'a> {
    /// The native decoder for the target's MPI ([`crate::detect`]).
    Native,
    /// The lists the target's MPI keeps for debuggers, read through the
    /// native decoder's layouts and communicators
    /// ([`QueueDecoder::read_debugger_lists`](crate::QueueDecoder::read_debugger_lists)):
    /// MPICH's `MPIR_Sendq_head`, `MPIR_Recvq_head` and `MPIR_Unexpq_head`.
    DebuggerLists,
    /// Both: the native decoder and the debugger lists, to compare.
    CompareDebuggerLists,
    /// A vendor message-queue library.
    #[cfg(feature = "mqs")]
    Library(&'a MqsLibrary),
    /// Both: the native decoder and the library, to compare.
    #[cfg(feature = "mqs")]
    Compare(&'a MqsLibrary),
    #[doc(hidden)]
    #[cfg(not(feature = "mqs"))]
    _Lifetime(std::marker::PhantomData<&'a ()>),
}

/// How one process's queues are read.
pub struct QueueReadOptions<'a> {
    /// The reader.
    pub reader: QueueReaderChoice<'a>,
    /// Resolves the native decoder's layouts; see
    /// [`QueueReadOptions::resolver`].
    pub resolver: &'a LayoutResolver,
    /// Ignore the library's DWARF and take its layouts from a profile.
    pub prefer_profile: bool,
    /// The process's `MPI_COMM_WORLD` rank, when the caller knows it.
    pub rank: Option<i32>,
    /// Bounds on what the decoder reads and on the library's iterators.
    pub limits: Limits,
}

impl QueueReadOptions<'_> {
    /// The layout resolver for a reading: the profiles, and the cache
    /// unless `prefer_profile`, since a profile preferred to the DWARF is
    /// preferred to layouts once taken from DWARF too.
    pub fn resolver(
        profiles: impl Into<ProfileSet>,
        cache: Option<LayoutCache>,
        prefer_profile: bool,
    ) -> LayoutResolver {
        let resolver = LayoutResolver::new(profiles);
        match cache {
            Some(cache) if !prefer_profile => resolver.with_cache(cache),
            _ => resolver,
        }
    }
}

/// One process as the queue readers take it.
#[derive(Clone, Copy)]
pub struct QueueTarget<'a> {
    /// Its memory.
    pub memory: &'a dyn TargetMemory,
    /// Its symbols, local ones included.
    pub symbols: &'a dyn SymbolSource,
    /// Its loaded ELF objects, for the DWARF and the build-ids.
    pub objects: &'a dyn LoadedObjects,
    /// The executable's name, shown in a vendor library's messages.
    pub image: &'a str,
}

/// What was read: one reading, or the two to compare.
#[derive(Debug)]
pub enum QueueReadings {
    /// The one reader's.
    One(ProcessQueues),
    /// The native decoder's and the vendor library's (or the debugger
    /// lists', [`QueueReaderChoice::CompareDebuggerLists`]).
    Two {
        /// The native decoder's.
        native: ProcessQueues,
        /// The vendor library's, or the debugger lists'.
        library: ProcessQueues,
    },
}

/// The readings, with where the native decoder's layouts came from and
/// what the caller should be told.
#[derive(Debug)]
pub struct QueueReport {
    /// The queues.
    pub readings: QueueReadings,
    /// Where the native decoder's layouts came from, when it ran.
    pub layout_origin: Option<LayoutOrigin>,
    /// Where a vendor library's answers about types came from, when one
    /// ran: the DWARF, or the profile of the MPI library's build (see
    /// [`read_process_queues`]).
    pub library_types: Option<LayoutOrigin>,
    /// Warnings about the reading, one line each (e.g. the world rank
    /// handed to a library was not found).
    pub notes: Vec<String>,
    /// Where the layouts of the libraries beneath the MPI library (UCX's)
    /// came from, when the native decoder ran: a profile made for the
    /// build loaded beside, or the profile of its release family.
    pub beneath: Vec<LayoutOrigin>,
}

/// Why the queues could not be read.
#[derive(Debug, thiserror::Error)]
pub enum QueueReadError {
    /// The native decoder failed or does not know the target.
    #[error(transparent)]
    Native(#[from] DecodeError),
    /// The vendor library failed or refused the target.
    #[cfg(feature = "mqs")]
    #[error(transparent)]
    Library(#[from] MqsError),
}

/// Reads one process's queues with the reader `options` names.
///
/// The native decoder's layouts come from the target's DWARF (unless
/// `prefer_profile`), else a matching profile, through
/// `options.resolver`. A vendor library's type callbacks are answered
/// from the same source: the DWARF when it describes the MPI library,
/// else the profile made for the build the process loaded, once it has
/// read the process's predefined objects as what they are (so Open MPI's
/// own library reads Debian's stripped Open MPI through the profile
/// mpidd ships, written with the library's questions). A vendor library
/// is handed `options.rank`, else the rank read from the process, else
/// the native decoder's, else −1 with a note.
pub fn read_process_queues(
    target: QueueTarget<'_>,
    options: &QueueReadOptions<'_>,
) -> Result<QueueReport, QueueReadError> {
    let mut types = TypeOracle::from_objects(target.objects);
    if let Some(cache) = options.resolver.cache() {
        // The names a build's DWARF lacks are kept beside its layouts, so
        // that no later run scans that DWARF for them again.
        types = types.with_absent_name_store(std::sync::Arc::new(cache.clone()));
    }
    let mut origin = None;
    let mut beneath = Vec::new();
    let mut read_native = |wanted: NativeSource| -> Result<ProcessQueues, DecodeError> {
        let dwarf = (!options.prefer_profile).then_some(&types);
        let r = options.resolver.resolve(
            target.memory,
            target.symbols,
            target.objects,
            TypeSource::Dwarf(dwarf),
            &options.limits,
            wanted,
        )?;
        origin = Some(r.origin);
        beneath = r.beneath_origins;
        Ok(r.queues)
    };
    let mut native = || read_native(NativeSource::Queues);
    #[cfg_attr(not(feature = "mqs"), allow(unused_mut))]
    let mut notes = Vec::new();
    #[cfg_attr(not(feature = "mqs"), allow(unused_mut))]
    let mut library_types = None;
    #[cfg(feature = "mqs")]
    let no_dwarf = LayoutTable::default();
    #[cfg(feature = "mqs")]
    let dwarf: &dyn Layouts = if options.prefer_profile {
        &no_dwarf
    } else {
        &types
    };
    let readings = match options.reader {
        QueueReaderChoice::Native => QueueReadings::One(native()?),
        QueueReaderChoice::DebuggerLists => {
            QueueReadings::One(read_native(NativeSource::DebuggerLists)?)
        }
        QueueReaderChoice::CompareDebuggerLists => QueueReadings::Two {
            native: read_native(NativeSource::Queues)?,
            library: read_native(NativeSource::DebuggerLists)?,
        },
        #[cfg(feature = "mqs")]
        QueueReaderChoice::Library(library) => {
            // A layout profile may still give the native decoder the world
            // communicator when the DWARF cannot.
            let fallback = || {
                native()
                    .ok()
                    .and_then(|q| i32::try_from(q.global_rank).ok())
            };
            let (layouts, origin) = library_layouts(target, dwarf, options);
            library_types = Some(origin);
            let read = read_through(
                library,
                target,
                &types,
                &layouts,
                options.rank,
                fallback,
                &options.limits,
            )?;
            notes.extend(read.note);
            QueueReadings::One(read.queues)
        }
        #[cfg(feature = "mqs")]
        QueueReaderChoice::Compare(library) => {
            let native = native()?;
            let known = i32::try_from(native.global_rank).ok();
            let (layouts, origin) = library_layouts(target, dwarf, options);
            library_types = Some(origin);
            let read = read_through(
                library,
                target,
                &types,
                &layouts,
                options.rank,
                || known,
                &options.limits,
            )?;
            notes.extend(read.note);
            QueueReadings::Two {
                native,
                library: read.queues,
            }
        }
        #[cfg(not(feature = "mqs"))]
        QueueReaderChoice::_Lifetime(_) => QueueReadings::One(native()?),
    };
    for problem in types.keep_absent_names() {
        options.resolver.warn(problem);
    }
    Ok(QueueReport {
        readings,
        layout_origin: origin,
        library_types,
        notes,
        beneath,
    })
}

/// The layouts a vendor library's type callbacks answer from, and where
/// they come from: those the native decoder would read the process with
/// (`dwarf` when it describes the MPI library, else the profile made for
/// the loaded build, with the profiles of the libraries beside it),
/// `dwarf` alone for a process no native decoder knows. A profile that
/// does not read the process's predefined objects is not used, and the
/// resolver's warnings say why.
#[cfg(feature = "mqs")]
fn library_layouts<'a>(
    target: QueueTarget<'_>,
    dwarf: &'a dyn Layouts,
    options: &'a QueueReadOptions<'_>,
) -> (LayeredLayouts<'a>, LayoutOrigin) {
    let limits = &options.limits;
    let Ok(found) = identify(target.memory, target.symbols, limits) else {
        return (LayeredLayouts::alone(dwarf), LayoutOrigin::Dwarf);
    };
    // The layouts returned borrow the profiles: all of them, which the
    // resolver keeps (a vendor library's reading is not the warm path).
    let profiles = options.resolver.profiles();
    match decoder_layouts(&found, dwarf, target.objects, profiles) {
        Ok((layouts, origin)) if origin.profile().is_some() => {
            match mpihandles::check_layouts(target.memory, target.symbols, &layouts, limits) {
                Ok(()) => {
                    // An exact build's profile is named with where it came
                    // from; a family's by the family and the version that
                    // chose it.
                    let source = match &origin {
                        LayoutOrigin::Profile(identity) => format!(
                            "the profile of {} {} ({})",
                            identity.implementation, identity.version, identity.build
                        ),
                        other => other.source_text(),
                    };
                    // Said before the library runs: when it fails, what
                    // it asked may be what the profile does not record.
                    options.resolver.warn(format!(
                        "the message-queue library's questions about types are answered from \
                         {source}, which records what was asked when it was written; a question \
                         it does not record goes unanswered"
                    ));
                    (layouts, origin)
                }
                Err(why) => {
                    options.resolver.warn(format!(
                        "{} does not read this process ({why}); the message-queue library's \
                         questions about types go to the DWARF alone",
                        origin.source_text()
                    ));
                    (LayeredLayouts::alone(dwarf), LayoutOrigin::Dwarf)
                }
            }
        }
        Ok((layouts, origin)) => (layouts, origin),
        Err(_) => (LayeredLayouts::alone(dwarf), LayoutOrigin::Dwarf),
    }
}

/// A vendor library's reading and, when the world rank it was handed was
/// not found, why.
#[cfg(feature = "mqs")]
#[derive(Debug)]
pub struct LibraryReading {
    /// The queues.
    pub queues: ProcessQueues,
    /// Why the library was handed −1 for the world rank, when it was.
    pub note: Option<String>,
}

/// Reads one process's queues through a vendor library, handing it
/// `rank`, else the rank read from the process's MPI library (through
/// `types`, its DWARF), else `fallback`'s, else −1 (and a note why). The
/// library's type callbacks are answered from `types` too.
#[cfg(feature = "mqs")]
pub fn read_with_library(
    library: &MqsLibrary,
    target: QueueTarget<'_>,
    types: &TypeOracle,
    rank: Option<i32>,
    fallback: impl FnOnce() -> Option<i32>,
    limits: &Limits,
) -> Result<LibraryReading, MqsError> {
    read_through(library, target, types, types, rank, fallback, limits)
}

/// [`read_with_library`], with the library's type callbacks (and the
/// world rank read from the process) answered from `layouts`; `oracle`
/// still gives the sizes of the target's base types.
#[cfg(feature = "mqs")]
fn read_through(
    library: &MqsLibrary,
    target: QueueTarget<'_>,
    oracle: &TypeOracle,
    layouts: &dyn Layouts,
    rank: Option<i32>,
    fallback: impl FnOnce() -> Option<i32>,
    limits: &Limits,
) -> Result<LibraryReading, MqsError> {
    let (rank, note) = library_rank(target, layouts, rank, fallback, limits);
    let mqs_target = MqsTarget {
        image_name: target.image.to_string(),
        memory: target.memory,
        symbols: target.symbols,
        types: layouts,
        global_rank: rank,
        type_sizes: TargetTypeSizes::from_oracle(oracle, target.memory.abi()),
    };
    Ok(LibraryReading {
        queues: library.read_queues(&mqs_target, limits)?,
        note,
    })
}

/// The world rank handed to a library, and why it is −1 when it is.
#[cfg(feature = "mqs")]
fn library_rank(
    target: QueueTarget<'_>,
    types: &dyn Layouts,
    rank: Option<i32>,
    fallback: impl FnOnce() -> Option<i32>,
    limits: &Limits,
) -> (i32, Option<String>) {
    if let Some(rank) = rank {
        return (rank, None);
    }
    let parts = mpidd_read::TargetParts {
        memory: target.memory,
        symbols: target.symbols,
        layouts: types,
    };
    match world_rank(&parts, limits) {
        Ok(found) => (found.rank, None),
        Err(e) => match fallback() {
            Some(rank) if rank >= 0 => (rank, None),
            _ => (-1, Some(e.to_string())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpidd_read::{SymbolTable, SyntheticMemory};
    use mpidd_types::TargetAbi;

    struct Empty {
        memory: SyntheticMemory,
        symbols: SymbolTable,
        objects: mpidd_read::ElfSymbols,
    }

    fn empty() -> Empty {
        Empty {
            memory: SyntheticMemory::new(TargetAbi::X86_64),
            symbols: SymbolTable::new(),
            objects: mpidd_read::ElfSymbols::default(),
        }
    }

    fn target(t: &Empty) -> QueueTarget<'_> {
        QueueTarget {
            memory: &t.memory,
            symbols: &t.symbols,
            objects: &t.objects,
            image: "a.out",
        }
    }

    #[test]
    fn a_process_without_mpi_is_a_decoder_error() {
        let t = empty();
        let resolver = QueueReadOptions::resolver(Vec::new(), None, false);
        let read = read_process_queues(
            target(&t),
            &QueueReadOptions {
                reader: QueueReaderChoice::Native,
                resolver: &resolver,
                prefer_profile: false,
                rank: None,
                limits: Limits::default(),
            },
        );
        assert!(matches!(read, Err(QueueReadError::Native(_))));
    }

    #[cfg(feature = "mqs")]
    #[test]
    fn the_rank_given_wins_then_the_process_then_the_fallback() {
        let t = empty();
        let types = TypeOracle::from_objects(&t.objects);
        let limits = Limits::default();
        assert_eq!(
            library_rank(target(&t), &types, Some(3), || Some(5), &limits),
            (3, None)
        );
        // Nothing in an empty process says its rank.
        assert_eq!(
            library_rank(target(&t), &types, None, || Some(5), &limits),
            (5, None)
        );
        let (rank, note) = library_rank(target(&t), &types, None, || None, &limits);
        assert_eq!(rank, -1);
        assert!(note.is_some_and(|n| !n.is_empty()));
        // A negative fallback is no rank either.
        assert_eq!(
            library_rank(target(&t), &types, None, || Some(-1), &limits).0,
            -1
        );
    }
}
