//! `mpidd queues`: the message queues of one MPI process, read by the
//! native decoder, from MPICH's debugger lists, or through a vendor
//! message-queue library.

use std::io::Write;
use std::path::PathBuf;

use mpidd_read::{LayoutCache, LayoutOrigin, Limits, ProfileSet, TargetReader};
use mpiq_core::compare::compare;
use mpiq_core::{
    read_process_queues, DecodeError, MqsError, MqsLibrary, QueueReadError, QueueReadOptions,
    QueueReaderChoice, QueueReadings, QueueTarget,
};

use crate::target_args::{read_target, OpenError, OpenTarget, Source};

/// Which reader to use.
pub enum Reader {
    /// The native decoder for the target's MPI.
    Native,
    /// MPICH's debugger lists, through the native decoder's layouts.
    DebuggerLists,
    /// The native decoder and the debugger lists, printing how they
    /// differ.
    CompareDebuggerLists,
    /// A vendor message-queue library.
    Dll(PathBuf),
    /// Both, printing how they differ.
    Compare(PathBuf),
}

/// What `mpidd queues` was asked.
pub struct Options {
    /// The reader.
    pub reader: Reader,
    /// Layout profiles for libraries without debug info (the shipped ones
    /// and the user's).
    pub profiles: ProfileSet,
    /// Ignore the library's debug info and take its layouts from a
    /// matching profile.
    pub prefer_profile: bool,
    pub cache: Option<LayoutCache>,
    /// The process's `MPI_COMM_WORLD` rank, when the caller knows it.
    pub rank: Option<i32>,
    /// Leave a live process running while it is read.
    pub no_stop: bool,
    /// On failure, list every object searched.
    pub verbose: bool,
    /// Print JSON.
    pub json: bool,
    /// Bounds on what the native decoder reads and on the library's
    /// iterators.
    pub limits: Limits,
}

/// Failures of `mpidd queues`.
#[derive(Debug, thiserror::Error)]
pub enum QueuesError {
    /// The target could not be opened or stopped.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The library failed or refused the target.
    #[error(transparent)]
    Mqs(#[from] MqsError),
    /// The native decoder failed or does not know the target.
    #[error(transparent)]
    Native(#[from] DecodeError),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Writing to standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

/// Reads and prints the queues.
pub fn run(source: Source, options: &Options) -> Result<(), QueuesError> {
    let library = match &options.reader {
        Reader::Native | Reader::DebuggerLists | Reader::CompareDebuggerLists => None,
        Reader::Dll(path) | Reader::Compare(path) => Some(MqsLibrary::load(path)?),
    };
    let readings = read_target(
        source,
        !options.no_stop,
        options.verbose,
        QueueReader { library, options },
    )?;
    // The second reading's key in JSON: what it was read from.
    let second = match options.reader {
        Reader::CompareDebuggerLists => "debugger_lists",
        _ => "dll",
    };
    match print(&readings, options.json, second) {
        Err(QueuesError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Reads the queues of an open target.
struct QueueReader<'a> {
    library: Option<&'a MqsLibrary>,
    options: &'a Options,
}

impl TargetReader for QueueReader<'_> {
    type Output = QueueReadings;
    type Error = QueuesError;
    fn read<T: OpenTarget>(self, t: &T) -> Result<QueueReadings, QueuesError> {
        let options = self.options;
        let resolver = QueueReadOptions::resolver(
            options.profiles.clone(),
            options.cache.clone(),
            options.prefer_profile,
        );
        let reader = match (&options.reader, self.library) {
            (Reader::Compare(_), Some(library)) => QueueReaderChoice::Compare(library),
            (_, Some(library)) => QueueReaderChoice::Library(library),
            (Reader::DebuggerLists, None) => QueueReaderChoice::DebuggerLists,
            (Reader::CompareDebuggerLists, None) => QueueReaderChoice::CompareDebuggerLists,
            (_, None) => QueueReaderChoice::Native,
        };
        let image = t.image().display().to_string();
        let read = read_process_queues(
            QueueTarget {
                memory: t,
                symbols: t,
                objects: t.elf_symbols(),
                image: &image,
            },
            &QueueReadOptions {
                reader,
                resolver: &resolver,
                prefer_profile: options.prefer_profile,
                rank: options.rank,
                limits: options.limits,
            },
        );
        crate::cache::print_warnings(resolver.take_warnings());
        let report = read.map_err(|e| match e {
            QueueReadError::Native(e) => QueuesError::Native(e),
            QueueReadError::Library(e) => QueuesError::Mqs(e),
        })?;
        for note in &report.notes {
            eprintln!("mpidd: warning: {note}; pass --rank to give it");
        }
        match &report.layout_origin {
            Some(LayoutOrigin::Family(f)) => eprintln!(
                "mpidd: the layouts of {} come from the family {} of the profile of {} {} ({}), \
                 chosen because the library states version {} and no profile names its build; \
                 checked on the process",
                // The profile's object is of another build: named by its
                // stem, as the family matched it.
                f.identity
                    .objects
                    .first()
                    .map(|o| mpidd_read::so_stem(&o.name))
                    .unwrap_or("the MPI library"),
                f.family.name(),
                f.identity.implementation,
                f.identity.version,
                f.identity.build,
                f.stated_version
            ),
            Some(LayoutOrigin::Profile(id)) => eprintln!(
                "mpidd: the layouts of {} come from the profile of {} {} ({})",
                id.objects
                    .first()
                    .map(|o| o.name.as_str())
                    .unwrap_or("the MPI library"),
                id.implementation,
                id.version,
                id.build
            ),
            Some(LayoutOrigin::Cache(path)) if options.verbose => eprintln!(
                "mpidd: the layouts come from the layout cache: {}",
                path.display()
            ),
            _ => {}
        }
        for under in &report.beneath {
            match under {
                LayoutOrigin::Family(f) => eprintln!(
                    "mpidd: beneath it, the layouts of {} come from the family {} of the profile \
                     of {} {} ({}), chosen because the library states version {} and no \
                     profile names its build; checked on the process",
                    f.identity
                        .objects
                        .first()
                        .map(|o| mpidd_read::so_stem(&o.name))
                        .unwrap_or("the library beneath"),
                    f.family.name(),
                    f.identity.implementation,
                    f.identity.version,
                    f.identity.build,
                    f.stated_version
                ),
                LayoutOrigin::Profile(id) => eprintln!(
                    "mpidd: beneath it, the layouts of {} come from the profile of {} {} ({})",
                    id.objects
                        .first()
                        .map(|o| o.name.as_str())
                        .unwrap_or("the library beneath"),
                    id.implementation,
                    id.version,
                    id.build
                ),
                _ => {}
            }
        }
        Ok(report.readings)
    }
}

/// Prints what was read: text through the library's `Display`, or JSON
/// (for two readings, both, the second under `second`, and their
/// differences).
fn print(readings: &QueueReadings, json: bool, second: &str) -> Result<(), QueuesError> {
    // Line-buffered stdout would make a write call per line of a
    // 100,000-operation dump, and an 8 KiB buffer (the default) still two
    // calls per 8 KiB, since stdout's own line buffer splits each at its
    // last newline: 12,000 calls for the 50 MB of that dump's JSON.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if !json {
        write!(out, "{readings}")?;
    } else {
        match readings {
            QueueReadings::One(queues) => serde_json::to_writer_pretty(&mut out, queues)?,
            QueueReadings::Two { native, library } => serde_json::to_writer_pretty(
                &mut out,
                &serde_json::json!({
                    "native": native,
                    second: library,
                    "differences": compare(native, library),
                }),
            )?,
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(())
}
