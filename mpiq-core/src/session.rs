//! A [`Session`]: what a debugger keeps from one stop of its processes to
//! the next, so that a stop costs the bytes it reads and little else.
//!
//! The work that depends on a library build alone (finding its types in
//! DWARF or a profile, the profiles of the libraries beneath it, the
//! build-ids of the files it maps) is done at the first stop that meets
//! the build and kept, per build, for the session's lifetime; every later
//! stop of any process of that build identifies the library (two symbol
//! lookups and a string read), checks the build by its file's size and
//! time, and reads.
//!
//! Stands on `layout_resolver` (layouts per build) and `detect`; nothing
//! below imports it.

use std::fmt;

use mpidd_read::{
    LayoutCache, LayoutOrigin, Limits, LoadedObjects, ProfileIdentity, ProfileSet, Target,
    TypeOracle,
};

use crate::decoder::DecodeError;
use crate::detect::{DecoderKind, Identified};
use crate::layout_resolver::{LayoutResolver, Resolution, TypeSource};
use crate::model::ProcessQueues;

/// What a debugger keeps for its lifetime to read message queues at each
/// stop: per library build, the layouts its decoder needs, wherever they
/// came from. `Send` and `Sync`: one session serves every thread and every
/// process of the debugger.
///
/// ```no_run
/// use mpidd_read::LiveTarget;
/// use mpiq_core::Session;
///
/// let session = Session::new();
/// let mut rank = LiveTarget::open(12345)?;
/// loop {
///     // ... the debugger stops the process ...
///     rank.refresh()?; // a library opened since the last stop is seen
///     let reading = session.read_queues(&rank, rank.symbols())?;
///     println!("{}", reading.provenance);
///     for comm in &reading.queues.communicators {
///         println!("{}: {} receives", comm.name, comm.pending_receives.operations().len());
///     }
///     # break;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Session {
    resolver: LayoutResolver,
    limits: Limits,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("profiles", &self.resolver.profile_set().len())
            .field(
                "cache",
                &self.resolver.cache().map(|c| c.dir().to_path_buf()),
            )
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// One reading of a process's queues through a [`Session`], and what it
/// rests on. (A [`QueueReadings`](crate::QueueReadings) is instead the
/// one or two readings `read_process_queues` compares.)
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SessionReading {
    /// The queues.
    pub queues: ProcessQueues,
    /// Which decoder read them, from which layouts.
    pub provenance: Provenance,
}

/// Where a reading's answer came from: the decoder and the builds it was
/// checked on, the MPI library it found, and the source of its layouts.
/// Its `Display` is one line for a person.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Provenance {
    /// The decoder, its library, version and device.
    pub identified: Identified,
    /// The builds the decoder was checked on ([`DecoderKind::checked_on`]).
    pub checked_on: &'static str,
    /// Where the MPI library's layouts came from: its DWARF, a profile, the
    /// layout cache, or the caller's types.
    pub layouts: LayoutOrigin,
    /// The profiles of the libraries beneath it that answered what the
    /// MPI library's layouts do not (UCX's).
    pub beneath: Vec<ProfileIdentity>,
    /// Whether the layouts were those the session had resolved for the
    /// same build at an earlier stop.
    pub reused: bool,
}

impl Provenance {
    fn of(r: &Resolution) -> Provenance {
        Provenance {
            identified: r.identified.clone(),
            checked_on: r.identified.kind.checked_on(),
            layouts: r.origin.clone(),
            beneath: r.beneath.clone(),
            reused: r.reused,
        }
    }

    /// The decoder.
    pub fn decoder(&self) -> DecoderKind {
        self.identified.kind
    }
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let found = &self.identified;
        let library = found.library.rsplit('/').next().unwrap_or(&found.library);
        write!(
            f,
            "decoder {} (checked on {}) on {library}",
            found.kind.name(),
            self.checked_on
        )?;
        let about: Vec<&str> = [found.version.as_str(), found.device.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect();
        if !about.is_empty() {
            write!(f, " ({})", about.join(", "))?;
        }
        match &self.layouts {
            LayoutOrigin::Dwarf => write!(f, ", layouts from its DWARF")?,
            LayoutOrigin::Profile(id) => write!(f, ", layouts from {}", profile_name(id))?,
            LayoutOrigin::Family(family) => write!(
                f,
                ", layouts from the family {} of {}, chosen by the version it states, {}, \
                 and checked on the process",
                family.family.name(),
                profile_name(&family.identity),
                family.stated_version
            )?,
            LayoutOrigin::Cache(path) => {
                write!(f, ", layouts from the layout cache ({})", path.display())?
            }
            LayoutOrigin::Caller => write!(f, ", layouts from the caller's types")?,
        }
        for id in &self.beneath {
            write!(f, ", with {} beneath", profile_name(id))?;
        }
        if self.reused {
            write!(f, " (kept from an earlier stop)")?;
        }
        Ok(())
    }
}

fn profile_name(id: &ProfileIdentity) -> String {
    format!(
        "the profile of {} {} ({})",
        id.implementation, id.version, id.build
    )
}

impl Session {
    /// A session with the profiles mpidd ships for stripped builds, no
    /// layout cache on disk, and the default [`Limits`].
    pub fn new() -> Session {
        Session::with_profiles(ProfileSet::shipped())
    }

    /// A session that falls back on `profiles` for libraries without
    /// DWARF: a `Vec` of profiles alone, or a [`ProfileSet`] with the
    /// shipped ones.
    pub fn with_profiles(profiles: impl Into<ProfileSet>) -> Session {
        Session {
            resolver: LayoutResolver::new(profiles),
            limits: Limits::default(),
        }
    }

    /// Also keeps the layouts resolved from DWARF in `cache` for later
    /// sessions, and takes them from there before any DWARF is read.
    pub fn with_cache(self, cache: LayoutCache) -> Session {
        Session {
            resolver: self.resolver.with_cache(cache),
            ..self
        }
    }

    /// Bounds every read of target memory with `limits`.
    pub fn with_limits(self, limits: Limits) -> Session {
        Session { limits, ..self }
    }

    /// The limits it reads with.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Reads the queues of `target`, whose memory, symbols and types are
    /// the caller's: a debugger's own reader of the process it traces, or
    /// one of mpidd's targets. `objects` are the process's loaded objects
    /// (for each file's build, and the profiles of the libraries beneath
    /// the MPI library); build it once per process, and again when the
    /// process loads a library (`mpidd_read::LiveTarget::refresh` does
    /// that for a live target).
    ///
    /// The MPI library's types come from `target.layouts()` when they
    /// answer every question its decoder asks, else from the profile
    /// made for its build; at later stops of the same build, from what
    /// was resolved at the first. The reading's [`Provenance`] names
    /// them as the types say ([`Layouts::origin`](mpidd_read::Layouts::origin):
    /// mpidd's own targets tell their DWARF from the profile that
    /// answered), else as the caller's. Nothing here stops, attaches to or
    /// writes to the process.
    pub fn read_queues(
        &self,
        target: &dyn Target,
        objects: &dyn LoadedObjects,
    ) -> Result<SessionReading, DecodeError> {
        self.read(target, objects, TypeSource::Caller(target.layouts()))
    }

    /// Reads the queues of `target` with the types of its loaded objects'
    /// DWARF (each library's, or its separate debug file's), indexed once
    /// per build, else a profile: for a caller with no types of its own.
    /// `target.layouts()` is not asked.
    pub fn read_queues_with_dwarf(
        &self,
        target: &dyn Target,
        objects: &dyn LoadedObjects,
    ) -> Result<SessionReading, DecodeError> {
        let mut dwarf = TypeOracle::from_objects(objects);
        if let Some(cache) = self.resolver.cache() {
            // The names a build's DWARF lacks, kept beside its layouts.
            dwarf = dwarf.with_absent_name_store(std::sync::Arc::new(cache.clone()));
        }
        let reading = self.read(target, objects, TypeSource::Dwarf(Some(&dwarf)));
        for problem in dwarf.keep_absent_names() {
            self.resolver.warn(problem);
        }
        reading
    }

    fn read(
        &self,
        target: &dyn Target,
        objects: &dyn LoadedObjects,
        types: TypeSource<'_>,
    ) -> Result<SessionReading, DecodeError> {
        let resolution = self.resolver.resolve(
            target.memory(),
            target.symbols(),
            objects,
            types,
            &self.limits,
            crate::decoder::NativeSource::Queues,
        )?;
        Ok(SessionReading {
            provenance: Provenance::of(&resolution),
            queues: resolution.queues,
        })
    }

    /// What went wrong with the layout cache since the last call, one line
    /// each; none of it stops a reading.
    pub fn take_warnings(&self) -> Vec<String> {
        self.resolver.take_warnings()
    }
}
