//! Resolving a decoder's layouts once per library build, for every target
//! that loads that build.
//!
//! Indexing a debug build's DWARF is most of what reading one process's
//! queues costs, while the answers depend on the library's build alone. A
//! [`LayoutResolver`] keeps them: in memory for the targets it reads in one
//! run (a job's ranks, a debugger's refreshes), and, when given a
//! [`LayoutCache`], on disk for the next run, where they replace the DWARF
//! altogether.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use mpidd_read::{
    build_id_hex as hex, companion_profiles_of, family_companion_profiles, CacheLookup,
    LayeredLayouts, LayoutCache, LayoutOrigin, LayoutProfile, LayoutTable, Layouts, Limits,
    LoadedObjects, ObjectInfo, ProfileIdentity, ProfileObject, ProfileSet, StatedBuild,
    SymbolSource, TargetParts, TypeOracle, UCX_LIBRARY_STEM,
};

use crate::decoder::{DecodeError, NativeSource};
use crate::detect::{decoder_layouts, detect, identify, Identified};
use crate::model::ProcessQueues;
use mpidd_read::TargetMemory;

/// Finds the layouts each target's decoder needs, and keeps them per
/// library build: its own DWARF when it has it, a matching profile when it
/// is stripped, and what earlier targets of the same build resolved.
///
/// One resolver serves any number of targets, from any threads.
///
/// ```no_run
/// use std::path::Path;
/// use mpidd_read::{CoreTarget, LayoutCache, Limits, TypeOracle};
/// use mpiq_core::LayoutResolver;
///
/// let resolver = LayoutResolver::new(mpidd_read::shipped_profiles())
///     .with_cache(LayoutCache::user().expect("a home directory"));
/// for path in ["rank0.core", "rank1.core"] {
///     let core = CoreTarget::open(Path::new(path), None, None)?;
///     let dwarf = TypeOracle::from_symbols(core.symbols());
///     let (queues, origin) =
///         resolver.read_queues(&core, &core, core.symbols(), Some(&dwarf), &Limits::default())?;
///     println!("{path}: {} communicators ({origin:?})", queues.communicators.len());
/// }
/// for warning in resolver.take_warnings() {
///     eprintln!("warning: {warning}");
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LayoutResolver {
    profiles: ProfileSet,
    cache: Option<LayoutCache>,
    resolved: Mutex<HashMap<LibraryBuild, Arc<Resolved>>>,
    /// Build-ids of the files asked about, with the size and modification
    /// time each was read at.
    build_ids: Mutex<HashMap<PathBuf, FileBuildId>>,
    warnings: Mutex<Vec<String>>,
}

/// A file's build-id (if it has one), size and modification time.
type FileBuildId = (Option<Vec<u8>>, u64, Option<std::time::SystemTime>);

/// How many files' build-ids a resolver remembers at most.
const MAX_REMEMBERED_FILES: usize = 4096;

/// Where the MPI library's types come from, for [`LayoutResolver::resolve`].
pub(crate) enum TypeSource<'a> {
    /// The target's DWARF (`None`: none), then the profiles.
    Dwarf(Option<&'a TypeOracle>),
    /// The caller's own types, then the profiles.
    Caller(&'a dyn Layouts),
}

/// One reading, and all it rests on.
pub(crate) struct Resolution {
    pub(crate) queues: ProcessQueues,
    pub(crate) identified: Identified,
    pub(crate) origin: LayoutOrigin,
    pub(crate) beneath: Vec<ProfileIdentity>,
    /// The same, each with how it was chosen: made for the build loaded
    /// beside, or of its release family.
    pub(crate) beneath_origins: Vec<LayoutOrigin>,
    /// Whether the layouts were those resolved for the build earlier.
    pub(crate) reused: bool,
}

/// Layouts resolved for one build, and where they came from.
struct Resolved {
    layouts: LayoutTable,
    origin: LayoutOrigin,
}

/// One build of an MPI library: its path and build-id, or its size and
/// modification time when it has none.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct LibraryBuild {
    path: PathBuf,
    id: Vec<u8>,
    size: u64,
    modified: Option<std::time::SystemTime>,
}

impl LayoutResolver {
    /// A resolver that falls back on `profiles` for libraries without
    /// DWARF (see [`decoder_layouts`]), and keeps what it resolves in
    /// memory only. A `Vec` of profiles is those alone;
    /// [`ProfileSet::shipped_after`] adds the shipped ones, parsed only
    /// when a process needs them.
    pub fn new(profiles: impl Into<ProfileSet>) -> Self {
        LayoutResolver {
            profiles: profiles.into(),
            cache: None,
            resolved: Mutex::new(HashMap::new()),
            build_ids: Mutex::new(HashMap::new()),
            warnings: Mutex::new(Vec::new()),
        }
    }

    /// Also keeps the layouts resolved from DWARF in `cache`, and takes
    /// them from there before any DWARF is read.
    pub fn with_cache(mut self, cache: LayoutCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The profiles it falls back on (the shipped ones among them are
    /// parsed by the first call).
    pub fn profiles(&self) -> &[LayoutProfile] {
        self.profiles.all()
    }

    /// The set of profiles it falls back on, parsed or not.
    pub fn profile_set(&self) -> &ProfileSet {
        &self.profiles
    }

    /// The persistent cache, if it has one.
    pub fn cache(&self) -> Option<&LayoutCache> {
        self.cache.as_ref()
    }

    /// What went wrong with the cache since the last call, one line each
    /// (an entry that could not be read or written). None of it stops a
    /// reading; a caller shows them to the user.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Adds a line to what [`LayoutResolver::take_warnings`] returns.
    pub(crate) fn warn(&self, line: String) {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(line);
    }

    /// Reads a process's queues natively, as [`read_native_queues`]
    /// does, with layouts in this order: those resolved for the same
    /// library build earlier in this run; the cache's entry for its
    /// build-id; `dwarf` (the target's DWARF, `None` to skip it) or a
    /// profile. Layouts from the first two that fail to read the target are
    /// set aside and the reading is made again from the next, so keeping
    /// layouts can cost time but never a reading. Layouts read from DWARF
    /// are then kept for the build, in memory and in the cache.
    ///
    /// [`read_native_queues`]: crate::read_native_queues
    pub fn read_queues(
        &self,
        memory: &dyn TargetMemory,
        symbols: &dyn SymbolSource,
        objects: &dyn LoadedObjects,
        dwarf: Option<&TypeOracle>,
        limits: &Limits,
    ) -> Result<(ProcessQueues, LayoutOrigin), DecodeError> {
        self.resolve(
            memory,
            symbols,
            objects,
            TypeSource::Dwarf(dwarf),
            limits,
            NativeSource::Queues,
        )
        .map(|r| (r.queues, r.origin))
    }

    /// [`read_queues`](Self::read_queues), with the MPI library's types
    /// from `types`, what `wanted` names read, and a full account of
    /// the reading.
    pub(crate) fn resolve(
        &self,
        memory: &dyn TargetMemory,
        symbols: &dyn SymbolSource,
        objects: &dyn LoadedObjects,
        types: TypeSource<'_>,
        limits: &Limits,
        wanted: NativeSource,
    ) -> Result<Resolution, DecodeError> {
        let found = identify(memory, symbols, limits)?;
        if let TypeSource::Dwarf(Some(oracle)) = &types {
            // The decoder asks the library's own types: its DWARF answers
            // them without the objects mapped before it being read.
            oracle.search_first(&found.library);
        }
        let build = self.build_of(objects, &found.library);
        // The profiles of what this process loads, parsed now if no
        // process before needed them; never all that ship.
        let loaded_files = self.loaded_files(objects, &found.library);
        let loaded = keys_of(&loaded_files);
        // A library with DWARF of its own answers from it: no profile of
        // its release family is parsed, only those of the builds beside.
        let own_dwarf =
            matches!(&types, TypeSource::Dwarf(Some(oracle)) if oracle.has_dwarf(&found.library));
        let profiles = if own_dwarf {
            let beside: Vec<(String, Option<Vec<u8>>)> = loaded
                .iter()
                .filter(|(name, _)| *name != found.library)
                .cloned()
                .collect();
            self.profiles
                .for_loaded(found.kind.implementation(), &found.library, &beside)
        } else {
            self.profiles
                .for_loaded(found.kind.implementation(), &found.library, &loaded)
        };
        let profiles: &[LayoutProfile] = &profiles;
        // The libraries under the MPI library (UCX) have builds of their
        // own: their profiles answer under whatever answers for the MPI
        // library, and are never kept with its answers.
        let companions = self.companions(&loaded_files, &loaded, &found.library, profiles);
        let beneath: Vec<ProfileIdentity> =
            companions.iter().map(|(p, _)| p.identity.clone()).collect();
        let beneath_origins: Vec<LayoutOrigin> =
            companions.iter().map(|(_, o)| o.clone()).collect();
        let beside: Vec<&LayoutTable> = companions.iter().map(|(p, _)| &p.layouts).collect();
        let done = |queues: ProcessQueues, origin: LayoutOrigin, reused: bool| Resolution {
            queues,
            identified: found.clone(),
            origin,
            beneath: beneath.clone(),
            beneath_origins: beneath_origins.clone(),
            reused,
        };
        let read = |layouts: &dyn Layouts| -> Result<ProcessQueues, DecodeError> {
            let layered = LayeredLayouts::new(layouts, beside.clone());
            let target = TargetParts {
                memory,
                symbols,
                layouts: &layered,
            };
            let reader = detect(&target, limits)?;
            match wanted {
                NativeSource::Queues => reader.read_queues(),
                NativeSource::DebuggerLists => reader.read_debugger_lists(),
            }
        };
        // A cache entry that fails is blamed only if the DWARF then reads
        // the target: a target that no layouts read is not the cache's
        // fault.
        let mut failed_entry = None;
        if let Some(build) = &build {
            let known = self.known(build);
            // Layouts kept from a profile are checked on each process
            // again, as they were on the first: a family's above all,
            // which no build key vouches for.
            let known = known.filter(|k| {
                k.origin.profile().is_none()
                    || mpihandles::check_layouts(memory, symbols, &k.layouts, limits).is_ok()
            });
            if let Some(known) = known {
                if let Ok(queues) = read(&known.layouts) {
                    return Ok(done(queues, known.origin.clone(), true));
                }
            }
            if let Some((entry, path)) = self.cached(&found, build, objects) {
                match read(&entry.layouts) {
                    Ok(queues) => {
                        let origin = LayoutOrigin::Cache(path);
                        self.keep(build, entry.layouts, origin.clone());
                        return Ok(done(queues, origin, false));
                    }
                    Err(e) => failed_entry = Some((path, e)),
                }
            }
        }
        let empty = LayoutTable::default();
        let library_dwarf;
        let (source, dwarf): (&dyn Layouts, _) = match types {
            TypeSource::Dwarf(Some(oracle)) => {
                // A library without DWARF of its own has its private types
                // in no other object's DWARF: when a profile describes its
                // very build, the profile answers them without every other
                // object being scanned for them in vain first.
                // The same holds for the profile of its release family
                // (still checked on the process below, as the chooser
                // offers it only as a candidate).
                let profiled = match &build {
                    Some(build) if !oracle.has_dwarf(&found.library) => profiles
                        .iter()
                        .find(|p| p.describes(&build.id))
                        .map(|p| &p.layouts)
                        .or_else(|| family_layouts(&found, build, profiles)),
                    _ => None,
                };
                library_dwarf = LibraryDwarf {
                    oracle,
                    beside: &beside,
                    profiled,
                    profiles,
                };
                (&library_dwarf, Some(oracle))
            }
            TypeSource::Dwarf(None) => (&empty, None),
            TypeSource::Caller(layouts) => (layouts, None),
        };
        let (chosen, origin) = decoder_layouts(&found, source, objects, profiles)?;
        // What the chooser calls the target's own DWARF is, for types
        // handed in, the caller's: whatever those say they are (mpidd's
        // own targets fold a shipped profile under their DWARF and say
        // which answered), after the reading has asked them.
        let caller = match (&origin, &types) {
            (LayoutOrigin::Dwarf, TypeSource::Caller(layouts)) => Some(*layouts),
            _ => None,
        };
        let told = |origin: LayoutOrigin| match caller {
            Some(layouts) => layouts.origin().unwrap_or(LayoutOrigin::Caller),
            None => origin,
        };
        let layouts = chosen.first();
        // A profile is chosen by the build's key alone; before it reads
        // anything, the objects every MPI process knows must read as what
        // they are through it.
        let told_origin = told(origin.clone());
        if told_origin.profile().is_some() {
            if let Err(why) = mpihandles::check_layouts(memory, symbols, layouts, limits) {
                return Err(DecodeError::Unsupported {
                    reason: format!(
                        "{} was not used, because it does not read this process: {why}",
                        told_origin.source_text()
                    ),
                    library: None,
                    way_out: Some(crate::decoder::IDENTIFY.to_string()),
                });
            }
        }
        // A reading of the debugger lists asks too little of the layouts
        // for its answers to be kept: the native reading asks more as it
        // meets the request pools, and would find them missing.
        let (Some(build), NativeSource::Queues) = (build, wanted) else {
            let queues = read(layouts)?;
            return Ok(done(queues, told(origin), false));
        };
        // What is kept is what this reading asked, whatever path through
        // the target's memory it took, and all that the decoder declares
        // it may ask on other targets.
        let reading = Mutex::new(None);
        let (asked, _optional) = LayoutTable::record(layouts, &|l: &dyn Layouts| {
            *reading.lock().unwrap_or_else(|e| e.into_inner()) = Some(read(l));
            found.kind.ask_layouts(l);
        });
        let queues = reading
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or_else(|| Err(DecodeError::unsupported("the decoder was not run")))?;
        if let Some((path, e)) = failed_entry {
            self.warn(format!(
                "the layout cache entry {} did not read the target ({e}) where its DWARF \
                 or a profile did; an entry read from DWARF replaces it",
                path.display()
            ));
        }
        let origin = told(origin);
        match (&origin, dwarf) {
            (LayoutOrigin::Dwarf, Some(oracle)) => self.remember(&found, &build, oracle, asked),
            _ => self.keep(&build, asked, origin.clone()),
        }
        Ok(done(queues, origin, false))
    }

    /// The build of the object named `library`, its build-id read once
    /// per file for the resolver's lifetime.
    fn build_of(&self, objects: &dyn LoadedObjects, library: &str) -> Option<LibraryBuild> {
        let listed = objects.loaded_objects();
        let object = listed.into_iter().find(|o| o.name == library)?;
        let (id, size, modified) = self.file_build_id(object)?;
        Some(LibraryBuild {
            path: object.path.clone(),
            id: id.unwrap_or_default(),
            size,
            modified,
        })
    }

    /// A file's build-id with the size and modification time it was read
    /// at; read again only when those change. `None` if the file is gone.
    /// The size and modification time are those its symbols were read at
    /// when the reader says so, else the file's now.
    fn file_build_id(&self, object: &ObjectInfo) -> Option<FileBuildId> {
        let path = object.path.as_path();
        let (size, modified) = match object.file_read_as() {
            Some(read_as) => read_as,
            None => {
                let meta = std::fs::metadata(path).ok()?;
                (meta.len(), meta.modified().ok())
            }
        };
        let mut ids = self.build_ids.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = ids.get(path).filter(|k| k.1 == size && k.2 == modified) {
            return Some(known.clone());
        }
        let read = (
            mpidd_read::build_key(path)
                .ok()
                .flatten()
                .map(|k| k.bytes().to_vec()),
            size,
            modified,
        );
        // Bounded by the distinct files a process maps; a long-lived
        // session forgets them all past this, rather than grow.
        if ids.len() >= MAX_REMEMBERED_FILES {
            ids.clear();
        }
        ids.insert(path.to_path_buf(), read.clone());
        Some(read)
    }

    /// Each loaded object some profile mentions, and the MPI library
    /// `library` whatever its name, with its build key, read once per
    /// file: what profiles are chosen by.
    fn loaded_files(
        &self,
        objects: &dyn LoadedObjects,
        library: &str,
    ) -> Vec<(String, PathBuf, Option<Vec<u8>>)> {
        objects
            .loaded_objects()
            .into_iter()
            .filter(|o| o.name == library || self.profiles.might_mention(&o.name))
            .map(|o| {
                let id = self.file_build_id(o).and_then(|(id, ..)| id);
                (o.name.clone(), o.path.clone(), id)
            })
            .collect()
    }

    /// The profiles among `profiles` of the libraries loaded beside
    /// `library` (UCX's), as [`companion_profiles`] chooses them, of the
    /// loaded objects (`files`, and their names and keys, `loaded`).
    fn companions<'p>(
        &self,
        files: &[(String, PathBuf, Option<Vec<u8>>)],
        loaded: &[(String, Option<Vec<u8>>)],
        library: &str,
        profiles: &'p [LayoutProfile],
    ) -> Vec<(&'p LayoutProfile, LayoutOrigin)> {
        // A companion is a profile made for a loaded build, or one whose
        // release family holds a loaded build no profile names: when no
        // object other than the library is one a profile mentions, none
        // is.
        let named = loaded.iter().any(|(_, id)| {
            id.as_deref()
                .is_some_and(|id| self.profiles.might_describe(id))
        });
        // Only UCX's library states a version a family is matched on.
        let unnamed = loaded.iter().any(|(name, id)| {
            mpidd_read::so_stem(name) == UCX_LIBRARY_STEM
                && mpidd_read::so_stem(library) != UCX_LIBRARY_STEM
                && !id
                    .as_deref()
                    .is_some_and(|id| self.profiles.might_describe(id))
        });
        if !named && !unnamed {
            return Vec::new();
        }
        let mut chosen: Vec<(&LayoutProfile, LayoutOrigin)> = if named {
            companion_profiles_of(loaded, library, profiles)
                .into_iter()
                .map(|p| (p, LayoutOrigin::Profile(p.identity.clone())))
                .collect()
        } else {
            Vec::new()
        };
        // A family's profile is a candidate: the UCX readers check it on
        // the worker before reading through it.
        chosen.extend(
            family_companion_profiles(files, library, profiles)
                .into_iter()
                .map(|(p, family)| (p, LayoutOrigin::Family(Box::new(family)))),
        );
        chosen
    }

    fn known(&self, build: &LibraryBuild) -> Option<Arc<Resolved>> {
        let resolved = self.resolved.lock().unwrap_or_else(|e| e.into_inner());
        resolved.get(build).cloned()
    }

    fn keep(&self, build: &LibraryBuild, layouts: LayoutTable, origin: LayoutOrigin) {
        let mut resolved = self.resolved.lock().unwrap_or_else(|e| e.into_inner());
        resolved.insert(build.clone(), Arc::new(Resolved { layouts, origin }));
    }

    /// The cache's entry for the build, when it answers every question the
    /// decoder cannot do without and every other object it was made from
    /// is loaded in the same build.
    fn cached(
        &self,
        found: &Identified,
        build: &LibraryBuild,
        objects: &dyn LoadedObjects,
    ) -> Option<(LayoutProfile, PathBuf)> {
        let cache = self.cache.as_ref()?;
        if build.id.is_empty() {
            return None;
        }
        let (profile, path) = match cache.get(&build.id) {
            CacheLookup::Hit { profile, path } => (profile, path),
            CacheLookup::Miss => return None,
            CacheLookup::Unusable { path, reason } => {
                self.warn(format!(
                    "ignoring the layout cache entry {}: {reason}; it will be rebuilt",
                    path.display()
                ));
                return None;
            }
        };
        let companions: Vec<(String, Option<Vec<u8>>)> = objects
            .loaded_objects()
            .into_iter()
            .filter(|o| o.name != found.library && profile.mentions(&o.name))
            .map(|o| {
                let id = self.file_build_id(o).and_then(|(id, ..)| id);
                (o.name.clone(), id)
            })
            .collect();
        if profile.companion_mismatch(&companions).is_some() {
            // Made beside other builds of a plugin: not wrong, only not
            // for this process. Resolved again, and replaced.
            return None;
        }
        let missing = found.kind.missing_layouts(&profile.layouts);
        if let Some(first) = missing.first() {
            self.warn(format!(
                "ignoring the layout cache entry {}: it does not answer {} question(s) \
                 this decoder asks (first: {first}); it will be rebuilt",
                path.display(),
                missing.len()
            ));
            return None;
        }
        Some((profile, path))
    }

    /// Keeps what `oracle` answered for the build: in memory, and in the
    /// cache when the library and every other object that answered have a
    /// build-id to check an entry by.
    fn remember(
        &self,
        found: &Identified,
        build: &LibraryBuild,
        oracle: &TypeOracle,
        layouts: LayoutTable,
    ) {
        // Questions the decoder can do without may stay unanswered: the
        // table then lacks them as the DWARF did.
        if !found.kind.missing_layouts(&layouts).is_empty() {
            return;
        }
        let layouts = match (&self.cache, entry_objects(found, build, oracle)) {
            (Some(cache), Some(objects)) => {
                let identity = ProfileIdentity {
                    implementation: found.kind.implementation().to_string(),
                    version: found.version.clone(),
                    build: format!(
                        "cached by mpidd {} from the DWARF of {}",
                        env!("CARGO_PKG_VERSION"),
                        build.path.display()
                    ),
                    arch: mpidd_read::object_arch(&build.path).unwrap_or_default(),
                    objects,
                };
                let entry = LayoutProfile::cached(identity, layouts);
                if let Err(e) = cache.put(&build.id, &entry) {
                    self.warn(format!("{e}; the layouts are not kept for the next run"));
                }
                entry.layouts
            }
            _ => layouts,
        };
        self.keep(build, layouts, LayoutOrigin::Dwarf);
    }
}

/// The DWARF of a process's objects as the MPI library's source, less the
/// types a companion's profile describes (UCX's, under CH4 or Open MPI's
/// UCX PML). Those profiles were chosen by the build-id of the library
/// loaded beside, so they describe its very build; asked of the DWARF
/// instead, each such type (which no object's DWARF defines when UCX is
/// stripped) meant a scan of every unit of every object, libc's compressed
/// debug file among them, before the profile beneath answered. A debug
/// build of UCX has no profile, so its DWARF still answers.
///
/// The same holds for the MPI library's own types when the library has no
/// DWARF and a profile of its build describes it (`profiled`): no other
/// object's DWARF defines a stripped library's private types, so only the
/// types of the libraries beneath it are asked of the DWARF then.
struct LibraryDwarf<'a> {
    oracle: &'a TypeOracle,
    beside: &'a [&'a LayoutTable],
    profiled: Option<&'a LayoutTable>,
    profiles: &'a [LayoutProfile],
}

impl LibraryDwarf<'_> {
    fn ask<T>(
        &self,
        type_name: &str,
        path: Option<&str>,
        ask: impl FnOnce(&TypeOracle) -> Result<T, mpidd_read::LayoutError>,
    ) -> Result<T, mpidd_read::LayoutError> {
        if self.beside.iter().any(|t| t.has_type(type_name)) {
            return Err(mpidd_read::LayoutError::new(
                type_name,
                path,
                "the profile of a library loaded beside the MPI library describes it",
            ));
        }
        if let Some(own) = self.profiled {
            // Only a library beneath (UCX, even a debug build of it with no
            // profile) can have DWARF for what the profile lacks: the
            // other profiles say which types are such a library's.
            // The implementation whose build the own profile is of (its
            // own family's layouts or a variant's): a type another build
            // of it has is not one of a library beneath, but one this
            // build lacks (MPICH's debugger-support `MPIR_Sendq`).
            let own_implementation = self
                .profiles
                .iter()
                .find(|p| {
                    std::ptr::eq(&p.layouts, own)
                        || p.family_variants
                            .iter()
                            .any(|v| std::ptr::eq(v.layouts(), own))
                })
                .map(|p| p.identity.implementation.as_str());
            let describes = |p: &&LayoutProfile| {
                Some(p.identity.implementation.as_str()) != own_implementation
                    && p.layouts.has_type(type_name)
            };
            let beneath = self.profiles.iter().any(|p| describes(&p));
            // A library beneath whose own profile is loaded beside (UCX's,
            // by its build or family) is described by that profile alone:
            // a type another release of it has (UCX 1.14's
            // `ucp_ep_ext_t`) and this one's profile lacks is not in this
            // build, and no DWARF (libc's, searched whole) can say more.
            let beside_implementations: Vec<&str> = self
                .profiles
                .iter()
                .filter(|q| self.beside.iter().any(|b| std::ptr::eq(&q.layouts, *b)))
                .map(|q| q.identity.implementation.as_str())
                .collect();
            let described_beside = self
                .profiles
                .iter()
                .filter(describes)
                .any(|p| beside_implementations.contains(&p.identity.implementation.as_str()));
            if own.has_type(type_name) || !beneath || described_beside {
                return Err(mpidd_read::LayoutError::new(
                    type_name,
                    path,
                    "the MPI library has no DWARF, and a profile of its build is what describes it",
                ));
            }
        }
        ask(self.oracle)
    }
}

impl Layouts for LibraryDwarf<'_> {
    fn size_of(&self, type_name: &str) -> Result<u64, mpidd_read::LayoutError> {
        self.ask(type_name, None, |o| o.size_of(type_name))
    }
    fn member(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<mpidd_read::Member, mpidd_read::LayoutError> {
        self.ask(type_name, Some(path), |o| o.member(type_name, path))
    }
    fn member_offset(&self, type_name: &str, path: &str) -> Result<u64, mpidd_read::LayoutError> {
        self.ask(type_name, Some(path), |o| o.member_offset(type_name, path))
    }
    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, mpidd_read::LayoutError> {
        self.ask(type_name, None, |o| o.enumerators(type_name))
    }
    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, mpidd_read::LayoutError> {
        self.ask(type_name, Some(path), |o| {
            o.member_enumerators(type_name, path)
        })
    }
    fn member_fields(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, mpidd_read::Member)>, mpidd_read::LayoutError> {
        self.ask(type_name, Some(path), |o| o.member_fields(type_name, path))
    }
    fn origin(&self) -> Option<LayoutOrigin> {
        self.oracle.origin()
    }
}

/// The objects a cache entry of `oracle`'s answers is valid for, the
/// library first (an entry is found by its build key: the build-id, else
/// the digest of the code): `None` when one of them has neither, since the
/// entry could not be checked against it.
fn entry_objects(
    found: &Identified,
    build: &LibraryBuild,
    oracle: &TypeOracle,
) -> Option<Vec<ProfileObject>> {
    let object = |name: &str, id: &[u8]| ProfileObject {
        name: name.rsplit('/').next().unwrap_or(name).to_string(),
        source_build_id: Some(hex(id)),
        build_ids: vec![hex(id)],
        code_digests: Vec::new(),
    };
    if build.id.is_empty() {
        return None;
    }
    let mut objects = vec![object(&found.library, &build.id)];
    for name in oracle.answering_objects() {
        if name == found.library {
            continue;
        }
        let key = mpidd_read::build_key(oracle.object_path(&name)?).ok()??;
        objects.push(object(&name, key.bytes()));
    }
    Some(objects)
}

/// The layouts of the release family that holds the version `found`
/// states, for its library's architecture (a profile's own family or
/// one of its variants): what the chooser falls back to when no
/// profile names the build.
fn family_layouts<'p>(
    found: &Identified,
    build: &LibraryBuild,
    profiles: &'p [LayoutProfile],
) -> Option<&'p LayoutTable> {
    if found.version.is_empty() || !profiles.iter().any(LayoutProfile::declares_family) {
        return None;
    }
    let arch = mpidd_read::object_arch(&build.path).ok()?;
    let stated = StatedBuild {
        implementation: found.kind.implementation(),
        version: &found.version,
        arch: &arch,
        device: (!found.device.is_empty()).then_some(found.device.as_str()),
    };
    profiles
        .iter()
        .filter(|p| p.mentions(&found.library))
        .find_map(|p| p.family_holding(&stated))
        .map(|(_, layouts)| layouts)
}

/// The names and build keys of loaded `files`.
fn keys_of(files: &[(String, PathBuf, Option<Vec<u8>>)]) -> Vec<(String, Option<Vec<u8>>)> {
    files
        .iter()
        .map(|(name, _, id)| (name.clone(), id.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(layouts: LayoutTable) -> LayoutProfile {
        LayoutProfile {
            format: mpidd_read::PROFILE_FORMAT.to_string(),
            identity: ProfileIdentity::default(),
            layouts,
            symbols: Default::default(),
            family: None,
            family_variants: Vec::new(),
        }
    }

    /// The MPI library of a stripped build that a profile describes: its
    /// own types and the ones no profile knows are not asked of the other
    /// objects' DWARF (an object that cannot be opened, here, whose error
    /// would show if it were asked), nor are the types another build of
    /// the same MPI has; a type a profile of a library beneath describes
    /// still is.
    #[test]
    fn a_stripped_librarys_types_are_not_asked_of_other_objects() {
        let mut oracle = TypeOracle::new();
        oracle.add_object(
            "libc.so.6",
            std::path::Path::new("/nonexistent/libc.so.6"),
            None,
        );
        let mut own = LayoutTable::default();
        own.add_type("MPIR_Request", 400);
        let mut ucx = LayoutTable::default();
        ucx.add_type("ucp_request_t", 216);
        let mut sendq = LayoutTable::default();
        sendq
            .add_type("MPIR_Request", 408)
            .add_type("MPIR_Sendq", 48);
        let of = |implementation: &str, layouts| {
            let mut p = profile(layouts);
            p.identity.implementation = implementation.to_string();
            p
        };
        // Another MPICH build's profile (with debugger support) has
        // MPIR_Sendq: this build lacks it, and no DWARF is asked.
        let profiles = vec![of("MPICH", own), of("UCX", ucx), of("MPICH", sendq)];
        let dwarf = LibraryDwarf {
            oracle: &oracle,
            beside: &[],
            profiled: Some(&profiles[0].layouts),
            profiles: &profiles,
        };
        for name in ["MPIR_Request", "MPIR_Sendq"] {
            let e = dwarf.size_of(name).unwrap_err().to_string();
            assert!(e.contains("has no DWARF"), "{name}: {e}");
        }
        let e = dwarf.size_of("ucp_request_t").unwrap_err().to_string();
        assert!(!e.contains("has no DWARF"), "{e}");
        // Without a profile of its build, every question goes to the DWARF.
        let unprofiled = LibraryDwarf {
            profiled: None,
            ..dwarf
        };
        let e = unprofiled.size_of("MPIR_Sendq").unwrap_err().to_string();
        assert!(!e.contains("has no DWARF"), "{e}");
    }
}
