//! [`LiveTarget`]: a running Linux process (a [`LiveProcess`]) with the
//! symbols and types of every ELF file it has mapped.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mpidd_types::{TargetAbi, TargetAddr};

use crate::backend::core_file::MappedFile;
use crate::backend::live_process::{LiveError, LiveProcess};
use crate::backend::memory::TargetMemory;
use crate::error::ReadError;
use crate::symbols::elf_symbols::ElfSymbols;
use crate::symbols::{Symbol, SymbolSource};

/// A live process and the symbols of every ELF file it has mapped.
///
/// ```no_run
/// use mpidd_read::{mpir, Limits, LiveTarget};
///
/// let mpirun = LiveTarget::open(12345)?;
/// let state = mpir::read_state(&mpirun, &Limits::default())?;
/// for p in &state.proctable {
///     println!("{} {} {}", p.host_name, p.pid, p.executable_name);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LiveTarget {
    process: LiveProcess,
    symbols: ElfSymbols,
    /// The file mappings the symbols were read from, to tell at a
    /// [`refresh`](Self::refresh) whether the process loaded or unloaded
    /// an object since.
    mapped: Vec<MappedFile>,
    types: std::sync::OnceLock<crate::layouts::loaded_layouts::LoadedLayouts>,
}

impl LiveTarget {
    /// Opens process `pid` and loads the symbols of its mapped objects.
    pub fn open(pid: i32) -> Result<Self, LiveError> {
        let process = LiveProcess::open(pid)?;
        let mapped = process.mappings()?;
        let mut symbols = symbols_of(pid, &mapped);
        symbols.set_vdso(process.vdso());
        Ok(LiveTarget {
            symbols,
            process,
            mapped,
            types: std::sync::OnceLock::new(),
        })
    }

    /// Opens process `pid` as [`open`](Self::open) does, taking the
    /// symbols of its objects from `shared` when an earlier process mapped
    /// the very same files (same paths, devices, inodes, sizes and
    /// modification times): only where they are mapped is new. The ranks
    /// of a job run a few builds, so all but the first of each build open
    /// without reading any object file.
    pub fn open_shared(pid: i32, shared: &SharedLiveSymbols) -> Result<Self, LiveError> {
        let process = LiveProcess::open(pid)?;
        let mapped = process.mappings()?;
        let mut symbols = shared.symbols_of(pid, &mapped);
        symbols.set_vdso(process.vdso());
        Ok(LiveTarget {
            symbols,
            process,
            mapped,
            types: std::sync::OnceLock::new(),
        })
    }

    /// Reads the process's mappings again and, if the files it maps
    /// changed since the target was opened or last refreshed (the program
    /// opened or closed a library: `dlopen`, an MPI component), reads its
    /// symbols anew and forgets its types, so the next question reads the
    /// new objects' DWARF or profiles. Returns whether anything changed.
    ///
    /// Costs one read of `/proc/PID/maps` when nothing changed: a debugger
    /// calls it at every stop. Symbol tables of files read before are
    /// shared, not read again.
    pub fn refresh(&mut self) -> Result<bool, LiveError> {
        let mapped = self.process.mappings()?;
        if mapped == self.mapped {
            return Ok(false);
        }
        self.symbols = symbols_of(self.process.pid(), &mapped);
        self.symbols.set_vdso(self.process.vdso());
        self.mapped = mapped;
        self.types = std::sync::OnceLock::new();
        Ok(true)
    }

    /// The process.
    pub fn process(&self) -> &LiveProcess {
        &self.process
    }

    /// The process, for explicit writes.
    pub fn process_mut(&mut self) -> &mut LiveProcess {
        &mut self.process
    }

    /// The symbols.
    pub fn symbols(&self) -> &ElfSymbols {
        &self.symbols
    }

    /// The C types of its loaded objects, from their DWARF (or their
    /// debug files'), read on first use.
    pub fn types(&self) -> &crate::dwarf::type_oracle::TypeOracle {
        self.loaded_layouts().dwarf()
    }

    /// Its layouts as a [`Target`](crate::Target): the DWARF of
    /// [`types`](Self::types), and for what that lacks, the shipped
    /// profiles made for the builds it has loaded.
    pub fn loaded_layouts(&self) -> &crate::layouts::loaded_layouts::LoadedLayouts {
        self.types
            .get_or_init(|| crate::layouts::loaded_layouts::LoadedLayouts::new(&self.symbols))
    }
}

/// The symbols of the objects of live processes, kept per set of mapped
/// ELF files, so that processes of one build share them (see
/// [`LiveTarget::open_shared`]). One serves a whole job, from any number of
/// threads; it holds at most 64 sets of files and the kinds of 16,384
/// files.
#[derive(Debug, Default)]
pub struct SharedLiveSymbols {
    state: Mutex<SharedState>,
}

#[derive(Debug, Default)]
struct SharedState {
    /// Symbols by the sorted identities of the ELF files they were read
    /// from.
    sets: HashMap<Vec<MappedIdentity>, Arc<ElfSymbols>>,
    /// Files mapped at offset 0 that are not objects (shared-memory
    /// segments, data files): each rank may map ones of its own, which
    /// must not keep it from sharing its build's symbols.
    not_objects: HashSet<MappedIdentity>,
    /// Files known to be objects.
    objects: HashSet<MappedIdentity>,
}

/// Distinct sets of mapped files kept (the figure [`SharedLiveSymbols`]'s
/// docs give): the builds of one job, with room
/// for ranks that loaded a component or two more than the others.
const SHARED_SETS: usize = 64;

/// Files whose kind (object or not) is kept (as [`SHARED_SETS`]).
const SHARED_FILES: usize = 1 << 14;

/// One mapped file as it is on disk now.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct MappedIdentity {
    path: String,
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl SharedLiveSymbols {
    /// No sets yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn symbols_of(&self, pid: i32, mapped: &[MappedFile]) -> ElfSymbols {
        let on_disk = |p: &str| seen_from_here(pid, p);
        // The files add_mapped_objects looks at: those with a first page
        // mapped.
        let mut firsts: Vec<&MappedFile> = Vec::new();
        let mut seen = HashSet::new();
        for f in mapped {
            if f.file_offset == 0 && seen.insert(f.path.as_str()) {
                firsts.push(f);
            }
        }
        let ids: Option<Vec<MappedIdentity>> = firsts
            .iter()
            .map(|f| {
                let meta = std::fs::metadata(on_disk(&f.path)).ok()?;
                Some(MappedIdentity {
                    path: f.path.clone(),
                    device: meta.dev(),
                    inode: meta.ino(),
                    len: meta.len(),
                    modified: meta.modified().ok(),
                })
            })
            .collect();
        // A file that cannot be looked at now is read the long way, and
        // its set is not kept.
        let Some(ids) = ids else {
            return symbols_of(pid, mapped);
        };
        let place = |name: &str| {
            let i = firsts.iter().position(|f| f.path == name)?;
            Some((i, firsts[i].start.0, on_disk(name)))
        };
        let (mut key, unknown) = {
            let state = self.lock();
            let mut key = Vec::with_capacity(ids.len());
            let mut unknown = Vec::new();
            for id in &ids {
                if state.objects.contains(id) {
                    key.push(id.clone());
                } else if !state.not_objects.contains(id) {
                    unknown.push(id.clone());
                }
            }
            // Before any set is known, every file is new: read the long
            // way below, which tells objects from the others.
            if state.sets.is_empty() {
                key.append(&mut unknown);
            }
            (key, unknown)
        };
        // Files this job has not seen: the ranks' own segments are not
        // objects and are set aside; a new object makes a set of its own.
        for id in unknown {
            if is_elf(&on_disk(&id.path)) {
                key.push(id);
            } else {
                let mut state = self.lock();
                if state.not_objects.len() >= SHARED_FILES {
                    state.not_objects.clear();
                }
                state.not_objects.insert(id);
            }
        }
        key.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let known = self.lock().sets.get(&key).cloned();
        if let Some(placed) = known.and_then(|k| k.placed_again(place)) {
            return placed;
        }
        let symbols = symbols_of(pid, mapped);
        let placed: HashSet<&str> = symbols.objects().map(|o| o.name.as_str()).collect();
        let (objects, others): (Vec<MappedIdentity>, Vec<MappedIdentity>) = ids
            .into_iter()
            .partition(|id| placed.contains(id.path.as_str()));
        let mut state = self.lock();
        if state.sets.len() >= SHARED_SETS {
            state.sets.clear();
        }
        if state.objects.len() + state.not_objects.len() >= SHARED_FILES {
            state.objects.clear();
            state.not_objects.clear();
        }
        if let Some(template) = symbols.placed_again(place) {
            let mut key = objects.clone();
            key.sort_unstable_by(|a, b| a.path.cmp(&b.path));
            state.sets.insert(key, Arc::new(template));
        }
        state.objects.extend(objects);
        state.not_objects.extend(others);
        symbols
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SharedState> {
        // A panic elsewhere cannot leave a map of finished entries
        // inconsistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether the file at `path` starts as an ELF file does.
fn is_elf(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == *b"\x7fELF")
}

/// The symbols of the objects `mapped` names, each opened where
/// [`seen_from_here`] finds it.
fn symbols_of(pid: i32, mapped: &[MappedFile]) -> ElfSymbols {
    let mut symbols = ElfSymbols::new();
    symbols.add_mapped_objects(mapped, "", |p| seen_from_here(pid, p));
    symbols
}

/// Where this process opens a file that process `pid` maps as `recorded`
/// (its name in `/proc/PID/maps`). The kernel names a mapped file from
/// the reader's root when the reader can reach it, and from the process's
/// own root otherwise: a rank in a chroot below ours is named by our path
/// (`/srv/root/usr/lib/...`), one in a container's mount namespace by its
/// own (`/usr/lib/...`), which only `/proc/PID/root` leads to. The
/// process's own root is tried first; the build-id check of every object
/// opened guards against a same-named file of another build.
///
/// A file under a mount of the process's own namespace below its chroot
/// (a directory bound into it) is named by our path, where our side of
/// the mount holds nothing: the path under the process's root, reached
/// through `/proc/PID/root`, leads to it.
pub(crate) fn seen_from_here(pid: i32, recorded: &str) -> PathBuf {
    let own_root = Path::new("/proc").join(pid.to_string()).join("root");
    let inside = own_root.join(recorded.trim_start_matches('/'));
    if inside.exists() {
        return inside;
    }
    if !Path::new(recorded).exists() {
        let below_root = std::fs::read_link(&own_root).ok().and_then(|r| {
            let rest = Path::new(recorded).strip_prefix(r).ok()?;
            Some(own_root.join(rest))
        });
        return below_root.filter(|p| p.exists()).unwrap_or(inside);
    }
    PathBuf::from(recorded)
}

impl TargetMemory for LiveTarget {
    fn abi(&self) -> TargetAbi {
        self.process.abi()
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        self.process.read_into(addr, buf)
    }

    fn read_many(&self, requests: &mut [(TargetAddr, &mut [u8])]) -> Vec<Result<usize, ReadError>> {
        self.process.read_many(requests)
    }
}

impl SymbolSource for LiveTarget {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        self.symbols.lookup(name)
    }

    fn searched_objects(&self) -> Vec<String> {
        self.symbols.searched_objects()
    }
}

impl crate::targets::Target for LiveTarget {
    fn memory(&self) -> &dyn TargetMemory {
        self
    }

    fn symbols(&self) -> &dyn SymbolSource {
        self
    }

    fn layouts(&self) -> &dyn crate::layouts::Layouts {
        self.loaded_layouts()
    }
}
