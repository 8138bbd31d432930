//! Symbols from the ELF files of a target's loaded objects.
//!
//! Both `.symtab` and `.dynsym` are read: MPICH keeps some of the globals a
//! debugger needs as local symbols that only `.symtab` has. Each object's
//! load bias is added, so addresses are run-time addresses. A stripped
//! object's separate debug file, when [`DebugSearch`] finds one that
//! matches, adds its `.symtab` (the local symbols the strip removed).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memmap2::Mmap;
use mpidd_types::TargetAddr;
use object::{Object, ObjectKind, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};

use crate::backend::core_file::{map_file, MappedFile};
use crate::backend::file_identity::FileStamp;
use crate::symbols::debug_files::{DebugFile, DebugLookup, DebugSearch, RejectReason, Rejection};
use crate::symbols::extra_symbols::ExtraSymbols;
use crate::symbols::name_index::index_key;
use crate::symbols::name_table::NameTable;
use crate::symbols::object_files::{kept, ObjectFile, ObjectFiles};
use crate::symbols::symbol_error::SymbolError;
use crate::symbols::{Symbol, SymbolSource};

/// What the loader needs to know about an ELF file to place it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfPlacement {
    /// `e_entry`.
    pub entry: u64,
    /// Whether it is position-independent (`ET_DYN`), so it has a bias.
    pub relocatable: bool,
    /// The lowest `p_vaddr` of its PT_LOAD segments.
    pub first_load_vaddr: u64,
    /// Its PT_LOAD segments' file-backed parts: (link-time address, file
    /// offset, size in the file).
    pub loads: Vec<(u64, u64, u64)>,
    /// The link-time address of its dynamic section (`PT_DYNAMIC`), if it
    /// has one.
    pub dynamic: Option<u64>,
    /// Its GNU build-id, if it has one.
    pub build_id: Option<Vec<u8>>,
}

/// One object whose symbols were read: what later readers (DWARF types)
/// need to find its files and place its addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectInfo {
    /// The name its symbols are reported under (the path the target used).
    pub name: String,
    /// Where its ELF file was read from.
    pub path: PathBuf,
    /// Its load bias: run-time minus link-time address.
    pub bias: u64,
    /// The separate debug file whose `.symtab` was read too, if one
    /// matched. It has the object's link-time addresses, so the same bias
    /// applies.
    pub debug_file: Option<DebugFile>,
    /// Debug-file candidates that exist but were refused, and why.
    pub debug_rejected: Vec<Rejection>,
    /// The file as it was when its symbols were read, when they were read
    /// here: later readers of the same run need not look at it again.
    pub(crate) stamp: Option<FileStamp>,
}

#[derive(Clone)]
struct LoadedObject {
    info: ObjectInfo,
    table: Arc<ObjectTable>,
    /// Symbols of this object's build that its tables lack, from the
    /// [`ExtraSymbols`] source: searched after its own, before its debug
    /// file's.
    extra: Arc<SymbolMap>,
    /// The separate debug file's `.symtab`, searched after the object's
    /// own symbols.
    debug: Option<Arc<ObjectTable>>,
}

/// What one ELF file gives, whoever loads it and wherever: its defined
/// symbols at link-time addresses. Shared by every target that maps the
/// same file (see [`shared_table`]).
pub(crate) struct ObjectTable {
    /// The link-time address of its first loadable segment.
    first_load_vaddr: u64,
    /// Its build-id, if it has one (objects only, not debug files).
    build_id: Option<Box<[u8]>>,
    symbols: NameTable,
}

/// What the search for an object's debug file gave, with the debug file's
/// table when one matched.
pub(crate) struct FoundDebug {
    file: Option<DebugFile>,
    rejected: Vec<Rejection>,
    table: Option<Arc<ObjectTable>>,
}

pub(crate) type SymbolMap = HashMap<Box<str>, (u64, u64), foldhash::fast::RandomState>;

/// Which symbols of a file a table holds.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum TableKind {
    /// An object as loaded: `.symtab` and `.dynsym`.
    Object,
    /// A separate debug file: its `.symtab` (its `.dynsym` is empty).
    DebugFile,
}

/// A file as it is on disk now: a table read from it holds while these
/// are unchanged.
#[derive(Clone, PartialEq, Eq, Hash)]
struct FileIdentity {
    stamp: FileStamp,
    kind: TableKind,
}

/// Tables kept for this many files at most: the objects of a few builds of
/// a job, many times over.
const SHARED_TABLES: usize = 512;

/// Symbols kept in all the tables at most (a debug build's `libmpi` has
/// about 20,000; each costs some 50 bytes).
const SHARED_SYMBOLS: usize = 4 << 20;

/// The symbol tables of the files this process has read, by file
/// identity. The ranks of a job map the same few files, and a debugger
/// opens the same process again at each refresh: each file is read once.
static TABLES: Mutex<Option<SharedTables>> = Mutex::new(None);

#[derive(Default)]
struct SharedTables {
    tables: HashMap<FileIdentity, Arc<ObjectTable>>,
    symbols: usize,
}

/// Lets go of the symbol tables this process keeps of the ELF files it
/// read (at most 512 files and 4 Mi symbols; see [`ElfSymbols::add_object`]).
/// Targets open now keep theirs; the next target reads its files again.
pub fn forget_shared_symbol_tables() {
    *TABLES.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// The table of the file at `path`, read now or earlier by this process.
fn shared_table(path: &Path, kind: TableKind) -> Result<Arc<ObjectTable>, SymbolError> {
    let identity = FileStamp::of(path).map(|stamp| FileIdentity { stamp, kind });
    if let Some(table) = identity.as_ref().and_then(known_table) {
        return Ok(table);
    }
    // Read outside the lock: two threads may read one file at once, and
    // the second table replaces the first, equal, one.
    let table = Arc::new(read_table(path, kind, identity.as_ref())?);
    if let Some(identity) = identity {
        keep_table(identity, &table);
    }
    Ok(table)
}

/// The table of an object file the run has mapped, read now or earlier by
/// this process.
fn object_table(object: &ObjectFile) -> Result<Arc<ObjectTable>, String> {
    let identity = FileIdentity {
        stamp: object.stamp.clone(),
        kind: TableKind::Object,
    };
    if let Some(table) = known_table(&identity) {
        return Ok(table);
    }
    let file = object::File::parse(&**object.map).map_err(|e| e.to_string())?;
    let table = Arc::new(table_of(
        &object.map,
        &file,
        TableKind::Object,
        Some(&identity),
    ));
    keep_table(identity, &table);
    Ok(table)
}

fn tables() -> std::sync::MutexGuard<'static, Option<SharedTables>> {
    TABLES.lock().unwrap_or_else(|e| e.into_inner())
}

fn known_table(identity: &FileIdentity) -> Option<Arc<ObjectTable>> {
    tables().as_ref()?.tables.get(identity).cloned()
}

fn keep_table(identity: FileIdentity, table: &Arc<ObjectTable>) {
    let mut guard = tables();
    let shared = guard.get_or_insert_with(SharedTables::default);
    if shared.tables.len() >= SHARED_TABLES || shared.symbols + table.symbols.len() > SHARED_SYMBOLS
    {
        *shared = SharedTables::default();
    }
    shared.symbols += table.symbols.len();
    if let Some(old) = shared.tables.insert(identity, table.clone()) {
        shared.symbols -= old.symbols.len();
    }
}

fn read_table(
    path: &Path,
    kind: TableKind,
    identity: Option<&FileIdentity>,
) -> Result<ObjectTable, SymbolError> {
    let data = Arc::new(map_file(path).map_err(|cause| SymbolError::Io {
        path: path.display().to_string(),
        cause,
    })?);
    let file = object::File::parse(&**data).map_err(|e| SymbolError::Parse {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    Ok(table_of(&data, &file, kind, identity))
}

/// The table of `file`, parsed from `map`, or the one an earlier run kept
/// for the file `identity` names ([`name_index`](super::name_index)).
fn table_of(
    map: &Arc<Mmap>,
    file: &object::File<'_>,
    kind: TableKind,
    identity: Option<&FileIdentity>,
) -> ObjectTable {
    let key = identity.and_then(|i| {
        let tag = match i.kind {
            TableKind::Object => 1,
            TableKind::DebugFile => 2,
        };
        index_key(&i.stamp, tag)
    });
    let stored = key
        .as_deref()
        .and_then(|key| NameTable::stored(map.clone(), key));
    let symbols = stored.unwrap_or_else(|| {
        // Room for every entry of the tables read, so that the table is
        // not grown (and every name hashed again) as it fills.
        let entry = if file.is_64() { 24 } else { 16 };
        let entries = |name: &str| file.section_by_name(name).map_or(0, |s| s.size() / entry);
        let built = match kind {
            TableKind::Object => collect_symbols(
                map,
                entries(".symtab") + entries(".dynsym"),
                file.symbols().chain(file.dynamic_symbols()),
            ),
            TableKind::DebugFile => collect_symbols(map, entries(".symtab"), file.symbols()),
        };
        if let Some(key) = &key {
            built.keep(key);
        }
        built
    });
    let build_id = match kind {
        TableKind::Object => file.build_id().ok().flatten().map(Box::from),
        TableKind::DebugFile => None,
    };
    ObjectTable {
        first_load_vaddr: file.segments().map(|s| s.address()).min().unwrap_or(0),
        build_id,
        symbols,
    }
}

// Its public constructors (`ElfSymbols::new` and `Default`) are in
// `layouts::shipped_profiles`, which hands in the shipped profiles' hidden
// symbols through `ExtraSymbols`: this folder does not know profiles.
/// Symbols of several loaded objects, searched in the order they were
/// added (the executable first, then libraries in load order).
pub struct ElfSymbols {
    objects: Vec<LoadedObject>,
    searched: Vec<String>,
    debug_search: DebugSearch,
    /// The run's object files, when this is one target of many; else each
    /// object is read alone.
    files: Option<ObjectFiles>,
    /// Symbols known for an object's build beyond its own tables.
    extra: &'static dyn ExtraSymbols,
    /// Where the process's vDSO is (see [`LoadedObjects::vdso`]).
    pub(crate) vdso: Option<u64>,
}

impl std::fmt::Debug for ElfSymbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElfSymbols")
            .field("searched", &self.searched)
            .field("debug_search", &self.debug_search)
            .finish_non_exhaustive()
    }
}

/// The defined data, code and TLS symbols among `symbols`, by name, at
/// their link-time addresses.
fn collect_symbols<'data>(
    map: &Arc<Mmap>,
    room: u64,
    symbols: impl Iterator<Item = object::Symbol<'data, 'data>>,
) -> NameTable {
    // The room asked is bounded by the file: a hostile section size
    // reserves no more than one entry per 16 bytes of it.
    let room = usize::try_from(room).unwrap_or(0).min(map.len() / 16);
    let mut out = NameTable::new(map.clone(), room);
    for sym in symbols {
        if sym.is_undefined()
            || !matches!(
                sym.kind(),
                SymbolKind::Data | SymbolKind::Text | SymbolKind::Unknown | SymbolKind::Tls
            )
        {
            continue;
        }
        // Names are compared as bytes: a lookup's name is text, so a
        // name that is not UTF-8 is never found, as before it was checked.
        let Ok(sym_name) = sym.name_bytes() else {
            continue;
        };
        if sym_name.is_empty() {
            continue;
        }
        // A global definition beats a local one of the same name.
        out.insert(sym_name, (sym.address(), sym.size()), sym.is_global());
    }
    out
}

/// Reads where an ELF file wants to be loaded.
pub fn elf_placement(path: &Path) -> Result<ElfPlacement, SymbolError> {
    let data = map_file(path).map_err(|cause| SymbolError::Io {
        path: path.display().to_string(),
        cause,
    })?;
    placement_of(&data).map_err(|e| SymbolError::Parse {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// Where the ELF file whose bytes are `data` wants to be loaded.
pub(crate) fn placement_of(data: &[u8]) -> Result<ElfPlacement, object::Error> {
    let file = object::File::parse(data)?;
    Ok(ElfPlacement {
        entry: file.entry(),
        relocatable: file.kind() == ObjectKind::Dynamic,
        first_load_vaddr: file.segments().map(|s| s.address()).min().unwrap_or(0),
        loads: file
            .segments()
            .map(|s| {
                let (offset, size) = s.file_range();
                (s.address(), offset, size)
            })
            .collect(),
        dynamic: file.section_by_name(".dynamic").map(|s| s.address()),
        build_id: file.build_id().ok().flatten().map(<[u8]>::to_vec),
    })
}

impl ElfSymbols {
    /// No objects yet; symbols that `extra` knows for an object's build
    /// are added with the object, where its own tables lack them.
    pub(crate) fn with_extra_symbols(extra: &'static dyn ExtraSymbols) -> Self {
        ElfSymbols {
            objects: Vec::new(),
            searched: Vec::new(),
            debug_search: DebugSearch::default(),
            files: None,
            extra,
            vdso: None,
        }
    }

    /// Records where the process's vDSO starts (the auxiliary vector's
    /// `AT_SYSINFO_EHDR`), so that the stack unwinder reads its unwind
    /// tables from the process: it is code with no file.
    pub fn set_vdso(&mut self, address: Option<u64>) {
        self.vdso = address;
    }

    /// Reads each object through `files`, the object files of a run
    /// shared by its targets: a file already read for another target
    /// (the same file on disk: path, device, inode, size and modification
    /// time) is not read, mapped or searched for its debug file again.
    pub fn with_object_files(mut self, files: ObjectFiles) -> Self {
        self.files = Some(files);
        self
    }

    /// The object files this reads through: the run's, else a fresh set
    /// for one object.
    fn files(&self) -> ObjectFiles {
        self.files.clone().unwrap_or_default()
    }

    /// Searches for separate debug files with `search` instead of
    /// [`DebugSearch::default`].
    pub fn with_debug_search(mut self, search: DebugSearch) -> Self {
        self.debug_search = search;
        self
    }

    /// Sets where objects added from now on have their debug files looked
    /// for.
    pub fn set_debug_search(&mut self, search: DebugSearch) {
        self.debug_search = search;
    }

    /// Where debug files are looked for.
    pub fn debug_search(&self) -> &DebugSearch {
        &self.debug_search
    }

    /// The objects whose symbols were read, in search order.
    pub fn objects(&self) -> impl Iterator<Item = &ObjectInfo> {
        self.objects.iter().map(|o| &o.info)
    }

    /// The separate debug file read for the object added as `name`.
    pub fn debug_file_of(&self, name: &str) -> Option<&Path> {
        self.objects
            .iter()
            .find(|o| o.info.name == name)
            .and_then(|o| o.info.debug_file.as_ref())
            .map(|d| d.path.as_path())
    }

    /// Reads the symbols of the ELF file at `path`, shown as `name` in
    /// results, loaded at `bias` (run-time minus link-time address).
    ///
    /// If the debug search finds the object's separate debug file, its
    /// `.symtab` is read too, at the same bias; the object's own
    /// definitions win over the debug file's. A debug file that cannot be
    /// used is not an error: [`objects`](Self::objects) says why.
    ///
    /// A file's table is read once per process and shared by every target
    /// that maps the same file (same path, device, inode, size and
    /// modification time, and the same debug search): the ranks of a job
    /// map the same few builds. [`forget_shared_symbol_tables`] lets them
    /// go.
    pub fn add_object(&mut self, path: &Path, name: &str, bias: u64) -> Result<(), SymbolError> {
        self.searched.push(name.to_string());
        let object = self.files().open(path)?;
        self.push_object(&object, name, bias)
    }

    /// [`add_object`](Self::add_object) of a file the caller opened
    /// through the run's [`ObjectFiles`].
    pub(crate) fn add_opened(
        &mut self,
        object: &ObjectFile,
        name: &str,
        bias: u64,
    ) -> Result<(), SymbolError> {
        self.searched.push(name.to_string());
        self.push_object(object, name, bias)
    }

    fn push_object(
        &mut self,
        object: &ObjectFile,
        name: &str,
        bias: u64,
    ) -> Result<(), SymbolError> {
        let table = object
            .table
            .get_or_init(|| object_table(object))
            .clone()
            .map_err(|reason| SymbolError::Parse {
                path: object.stamp.path.display().to_string(),
                reason,
            })?;
        self.push_table(object, name, bias, table);
        Ok(())
    }

    /// Adds an object whose table is read, with its debug file: searched
    /// once per object file, debug search and name for the run's targets
    /// (or for this target alone, without a run), since debug files come
    /// and go (a -dbgsym package installed) without the object changing.
    fn push_table(&mut self, object: &ObjectFile, name: &str, bias: u64, table: Arc<ObjectTable>) {
        let path = object.stamp.path.as_path();
        let key = (self.debug_search.clone(), name.to_string());
        let found = kept(&object.debug, key, || {
            search_debug(&self.debug_search, object, name)
        });
        // A stripped library's hidden globals, where another source knows
        // them for this very build; the file's own symbols win.
        let source = self.extra as *const dyn ExtraSymbols as *const () as usize;
        let extra = kept(&object.extra, source, || {
            let mut extra = SymbolMap::default();
            let known = match &table.build_id {
                Some(id) => self.extra.for_build(id),
                None => self.extra.for_file(&object.map),
            };
            {
                for s in known {
                    if !table.symbols.contains(&s.name) {
                        extra
                            .entry(s.name.into_boxed_str())
                            .or_insert((s.address, s.size));
                    }
                }
            }
            extra
        });
        self.objects.push(LoadedObject {
            info: ObjectInfo {
                name: name.to_string(),
                path: path.to_path_buf(),
                bias,
                debug_file: found.file.clone(),
                debug_rejected: found.rejected.clone(),
                stamp: Some(object.stamp.clone()),
            },
            table,
            extra,
            debug: found.table.clone(),
        });
    }

    /// Adds every ELF file among `mappings` (as NT_FILE or
    /// `/proc/PID/maps` list them) except `skip`. A file's bias is where its
    /// first page (file offset 0) was mapped, less its first segment's page.
    /// Files that are not ELF (devices, data, deleted files) are passed over.
    pub fn add_mapped_objects(
        &mut self,
        mappings: &[MappedFile],
        skip: &str,
        on_disk: impl Fn(&str) -> PathBuf,
    ) {
        let mut seen = vec![skip.to_string()];
        for f in mappings {
            if f.file_offset != 0 || f.path.is_empty() || seen.contains(&f.path) {
                continue;
            }
            seen.push(f.path.clone());
            let path = on_disk(&f.path);
            // Not ELF, unreadable or gone: passed over, as before it was
            // placed.
            let Ok(object) = self.files().open(&path) else {
                continue;
            };
            let Ok(table) = object.table.get_or_init(|| object_table(&object)).clone() else {
                continue;
            };
            let bias = f.start.0.wrapping_sub(table.first_load_vaddr & !0xfff);
            self.searched.push(f.path.clone());
            self.push_table(&object, &f.path, bias, table);
        }
    }

    /// The same objects, with the same tables and debug files, placed
    /// where another process of the same build maps them: `place(name)`
    /// gives, for the object added as `name`, its position in that
    /// process's list (its search order), where that process mapped its
    /// first page, and the path it is read by for that process (through
    /// the process's own root). `None` when one of the objects is not
    /// mapped there.
    ///
    /// The ranks of a job map the same files at addresses of their own
    /// (ASLR): placing the first rank's objects again costs no file
    /// access, where [`add_mapped_objects`](Self::add_mapped_objects)
    /// opens, maps and searches the debug files of every object.
    #[cfg(all(feature = "live", target_os = "linux"))]
    pub(crate) fn placed_again(
        &self,
        place: impl Fn(&str) -> Option<(usize, u64, PathBuf)>,
    ) -> Option<Self> {
        let mut objects = Vec::with_capacity(self.objects.len());
        for o in &self.objects {
            let (position, start, path) = place(&o.info.name)?;
            let mut o = o.clone();
            o.info.bias = start.wrapping_sub(o.table.first_load_vaddr & !0xfff);
            // The same file (device and inode), by this process's path.
            if let Some(stamp) = &mut o.info.stamp {
                stamp.path.clone_from(&path);
            }
            o.info.path = path;
            objects.push((position, o));
        }
        objects.sort_by_key(|(position, _)| *position);
        let objects: Vec<LoadedObject> = objects.into_iter().map(|(_, o)| o).collect();
        let mut searched: Vec<String> = objects.iter().map(|o| o.info.name.clone()).collect();
        // What was searched but not placed (not ELF, unreadable) is the
        // same for a process of the same files.
        searched.extend(
            self.searched
                .iter()
                .filter(|n| !objects.iter().any(|o| &o.info.name == *n))
                .cloned(),
        );
        Some(ElfSymbols {
            objects,
            searched,
            debug_search: self.debug_search.clone(),
            extra: self.extra,
            files: self.files.clone(),
            vdso: None,
        })
    }

    /// Records an object that was considered but could not be read, so
    /// error messages list it.
    pub fn note_searched(&mut self, name: &str) {
        self.searched.push(name.to_string());
    }
}

/// The search for `object`'s debug file, known to the target as `name`,
/// and the matching file's table.
fn search_debug(search: &DebugSearch, object: &ObjectFile, name: &str) -> FoundDebug {
    let path = object.stamp.path.as_path();
    let mut lookup = DebugLookup::default();
    if let Ok(file) = object::File::parse(&**object.map) {
        search.search_parsed(&file, path, Path::new(name), &mut lookup);
    }
    let (mut file, mut rejected) = lookup.into_parts();
    let mut table = None;
    if let Some(found) = &file {
        match shared_table(&found.path, TableKind::DebugFile) {
            Ok(t) => table = Some(t),
            // The file matched a moment ago; it changed under us.
            Err(e) => {
                let reason = match e {
                    SymbolError::Io { cause: source, .. } => RejectReason::Unreadable {
                        reason: source.to_string(),
                    },
                    other => RejectReason::NotElf {
                        reason: other.to_string(),
                    },
                };
                rejected.push(Rejection {
                    path: found.path.clone(),
                    reason,
                });
                file = None;
            }
        }
    }
    FoundDebug {
        file,
        rejected,
        table,
    }
}

impl SymbolSource for ElfSymbols {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        self.objects.iter().find_map(|o| {
            let own = o.table.symbols.get(name);
            own.or_else(|| o.extra.get(name).copied())
                .or_else(|| o.debug.as_ref()?.symbols.get(name))
                .map(|(addr, size)| Symbol {
                    name: name.to_string(),
                    addr: TargetAddr(addr.wrapping_add(o.info.bias)),
                    size,
                    object: o.info.name.clone(),
                })
        })
    }

    fn searched_objects(&self) -> Vec<String> {
        self.searched.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::extra_symbols::ExtraSymbol;
    use crate::synthetic::synthetic_process::SyntheticObject;
    use mpidd_types::TargetAbi;

    /// Knows two symbols for one build-id: one the object defines itself.
    struct Known(Vec<u8>);

    impl ExtraSymbols for Known {
        fn for_build(&self, build_id: &[u8]) -> Vec<ExtraSymbol> {
            if build_id != self.0 {
                return Vec::new();
            }
            let known = |name: &str, address| ExtraSymbol {
                name: name.to_string(),
                address,
                size: 8,
            };
            vec![known("hidden_global", 0x4242), known("visible", 0x1)]
        }
    }

    struct Nothing;

    impl ExtraSymbols for Nothing {
        fn for_build(&self, _: &[u8]) -> Vec<ExtraSymbol> {
            Vec::new()
        }
    }

    #[test]
    fn extra_symbols_of_the_build_are_added_and_the_objects_own_win() {
        let lib = SyntheticObject::library(TargetAbi::X86_64)
            .global("visible", 8, 8, false)
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libextra.so");
        lib.write(&path).unwrap();
        let id = lib.build_id().expect("synthetic objects carry a build-id");
        let known: &'static Known = Box::leak(Box::new(Known(id)));

        let mut symbols = ElfSymbols::with_extra_symbols(known);
        symbols.add_object(&path, "libextra.so", 0x1000).unwrap();
        let hidden = symbols.lookup("hidden_global").unwrap();
        assert_eq!(hidden.addr, TargetAddr(0x1000 + 0x4242));
        assert_eq!(hidden.object, "libextra.so");
        let own = lib.global("visible").unwrap().0;
        assert_eq!(
            symbols.lookup("visible").unwrap().addr,
            TargetAddr(0x1000 + own)
        );

        // The table read from the file is shared; what another source
        // knows is not part of it.
        let mut bare = ElfSymbols::with_extra_symbols(&Nothing);
        bare.add_object(&path, "libextra.so", 0x1000).unwrap();
        assert!(bare.lookup("hidden_global").is_none());
    }
}
