//! The DWARF type oracle: finds a struct, union or typedef by name in the
//! objects a target loaded, and answers its size and its members' offsets.
//!
//! Objects are opened and indexed lazily, on the first question that needs
//! them, and kept for the next. Searches go through the objects in the
//! order they were added (or with one object first, the MPI library once
//! it is known: [`TypeOracle::search_first`]) and take the first
//! definition: a declaration
//! (`DW_AT_declaration`, an opaque `struct X;`) never answers, and a
//! typedef of one sends the search on for the tag's definition, in the same
//! object first and then in the others.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::dwarf::absent_names::{AbsentNameStore, AbsentNames};
use crate::dwarf::dwarf_file::DwarfFile;
use crate::dwarf::dwarf_index::{IndexStats, NameIndex, TagClass};
use crate::dwarf::dwarf_layout::{Resolved, TypeReader};
use crate::dwarf::dwarf_units::UnitDirectory;
use crate::dwarf::type_error::{SearchedObject, TypeError};
use crate::dwarf::type_layout::{BaseTypeSizes, MemberLayout, TypeKind, TypeLayout};
use crate::symbols::elf_symbols::ElfSymbols;

/// Answers questions about the C types of a target's objects from their
/// DWARF.
///
/// ```no_run
/// use std::path::Path;
/// use mpidd_read::TypeOracle;
///
/// let mut oracle = TypeOracle::new();
/// oracle.add_object(
///     "/usr/lib/x86_64-linux-gnu/libmpi.so.12",
///     Path::new("/usr/lib/x86_64-linux-gnu/libmpi.so.12"),
///     None,
/// );
/// let comm = oracle.find_type("MPIR_Comm")?;
/// let tag = oracle.offset_of("MPIR_Request", "dev.match.parts.tag")?;
/// println!("sizeof(MPIR_Comm) = {}, tag at {}", comm.size, tag.offset);
/// # Ok::<(), mpidd_read::TypeError>(())
/// ```
#[derive(Default)]
pub struct TypeOracle {
    objects: Vec<Slot>,
    /// Every type [`TypeOracle::find_type`] found, by the name asked. The
    /// DWARF under an oracle never changes, and a debugger asks the same
    /// few types at every refresh, some of which (MPICH's `MPIDI_VCRT`)
    /// hundreds of units declare and one defines, at milliseconds a
    /// search. Failures are not kept: they are rare and cheap to repeat.
    found: Mutex<HashMap<String, TypeLayout>>,
    /// The objects whose DWARF gave the members' types asked through
    /// [`TypeOracle::member_type`], which the map above does not hold.
    member_objects: Mutex<BTreeSet<String>>,
    /// The object searched before the others (see
    /// [`TypeOracle::search_first`]), by its index.
    first: Mutex<Option<usize>>,
    /// Where the names each object's DWARF lacks are kept between runs.
    absent_store: Option<Arc<dyn AbsentNameStore>>,
}

struct Slot {
    name: String,
    path: PathBuf,
    debug_file: Option<PathBuf>,
    loaded: OnceLock<Result<Loaded, TypeError>>,
}

struct Loaded {
    file: DwarfFile,
    index: NameIndex,
    directory: OnceLock<UnitDirectory>,
    /// The names this DWARF is known not to define.
    absent: AbsentNames,
}

/// A name as asked: `struct X`, `union X`, `enum X` or a bare `X`.
struct Query<'q> {
    name: &'q str,
    classes: &'static [TagClass],
}

const ANY: &[TagClass] = &[
    TagClass::Typedef,
    TagClass::Struct,
    TagClass::Union,
    TagClass::Enum,
    TagClass::Base,
];

impl<'q> Query<'q> {
    fn parse(asked: &'q str) -> Self {
        let asked = asked.trim();
        for (keyword, classes) in [
            ("struct", &[TagClass::Struct][..]),
            ("class", &[TagClass::Struct][..]),
            ("union", &[TagClass::Union][..]),
            ("enum", &[TagClass::Enum][..]),
        ] {
            if let Some(rest) = asked.strip_prefix(keyword) {
                if rest.starts_with(char::is_whitespace) {
                    return Query {
                        name: rest.trim_start(),
                        classes,
                    };
                }
            }
        }
        Query {
            name: asked,
            classes: ANY,
        }
    }
}

/// What one object's search saw besides an answer.
#[derive(Default)]
struct Notes {
    declared: bool,
    problems: Vec<String>,
}

impl fmt::Debug for TypeOracle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.objects.iter().map(|o| (&o.name, &o.path)))
            .finish()
    }
}

impl TypeOracle {
    /// An oracle with no objects.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an object, searched after those added before. `name` is the
    /// object's name as the target knows it, `path` where its ELF file is
    /// read, and `debug_file` a separate debug file, read when the object
    /// itself has no `.debug_info`. Nothing is read until a question needs
    /// the object.
    pub fn add_object(&mut self, name: &str, path: &Path, debug_file: Option<&Path>) {
        // Answers stay first in search order, as the new object is searched
        // last; dropped anyway, so no answer outlives the objects it saw.
        self.found
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.objects.push(Slot {
            name: name.to_string(),
            path: path.to_path_buf(),
            debug_file: debug_file.map(Path::to_path_buf),
            loaded: OnceLock::new(),
        });
    }

    /// Recalls from `store`, for each object as it is opened, the names
    /// its DWARF (of that very build) is known not to define, and searches
    /// it no more for them; [`TypeOracle::keep_absent_names`] adds the
    /// names found missing in this run. A name is taken as missing only
    /// after every unit of the object was read without a problem and
    /// nothing offered a candidate for it.
    pub fn with_absent_name_store(mut self, store: Arc<dyn AbsentNameStore>) -> Self {
        self.absent_store = Some(store);
        self
    }

    /// Hands the store given to [`TypeOracle::with_absent_name_store`]
    /// every object's absent names, for those objects where this run found
    /// new ones. Returns what could not be kept, a line each (nothing
    /// depends on it).
    pub fn keep_absent_names(&self) -> Vec<String> {
        let Some(store) = &self.absent_store else {
            return Vec::new();
        };
        let mut problems = Vec::new();
        for slot in &self.objects {
            let Some(Ok(loaded)) = slot.loaded.get() else {
                continue;
            };
            let (Some(identity), Some(names)) = (loaded.file.identity(), loaded.absent.to_keep())
            else {
                continue;
            };
            match store.keep(&identity, &names) {
                Ok(()) => loaded.absent.kept(),
                Err(e) => problems.push(format!(
                    "the names {} does not define were not kept: {e}",
                    slot.name
                )),
            }
        }
        problems
    }

    /// An oracle over every object of `symbols`, in its order, with the
    /// debug files its search matched.
    pub fn from_symbols(symbols: &ElfSymbols) -> Self {
        Self::from_objects(symbols)
    }

    /// An oracle over every object of `objects` (a debugger's own list,
    /// say), in its order, with the debug file each names.
    pub fn from_objects(objects: &dyn crate::symbols::loaded_objects::LoadedObjects) -> Self {
        let mut oracle = Self::new();
        for object in objects.loaded_objects() {
            oracle.add_object(
                &object.name,
                &object.path,
                object.debug_file.as_ref().map(|d| d.path.as_path()),
            );
        }
        oracle
    }

    /// The type called `name` (a typedef, or a struct, union or enum tag;
    /// `struct X`, `union X` and `enum X` ask for tags only), from the first
    /// object that defines it. Typedefs and qualifiers are resolved to the
    /// type beneath. An answer is kept for the next question by the same
    /// name.
    pub fn find_type(&self, name: &str) -> Result<TypeLayout, TypeError> {
        let found = || self.found.lock().unwrap_or_else(|e| e.into_inner());
        // The lock is held for the map only, never across a search.
        let known = found().get(name).cloned();
        if let Some(layout) = known {
            return Ok(layout);
        }
        let layout = self.search_type(name)?;
        found().insert(name.to_string(), layout.clone());
        Ok(layout)
    }

    /// Searches the object added as `object` before the others from now
    /// on; the others keep their order. A decoder that has identified the
    /// MPI library asks it of that library's private types: the library's
    /// own definition is the one its memory was laid out by, and a search
    /// that starts with it never opens, inflates or scans the DWARF of
    /// the dozen objects mapped before it (libc's debug file among them).
    /// Answers kept from the earlier order are dropped. Returns whether
    /// the oracle has that object.
    pub fn search_first(&self, object: &str) -> bool {
        let Ok(index) = self.object_index(object) else {
            return false;
        };
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if *first != Some(index) {
            *first = Some(index);
            self.found.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
        true
    }

    /// The objects' indexes in search order.
    fn search_order(&self) -> impl Iterator<Item = usize> {
        let first = *self.first.lock().unwrap_or_else(|e| e.into_inner());
        first
            .into_iter()
            .chain((0..self.objects.len()).filter(move |&i| Some(i) != first))
    }

    fn search_type(&self, name: &str) -> Result<TypeLayout, TypeError> {
        let query = Query::parse(name);
        let mut searched = Vec::new();
        for index in self.search_order() {
            let mut notes = Notes::default();
            match self.find_in_object(index, &query, name, true, &mut notes) {
                Ok(Some(layout)) => return Ok(layout),
                Ok(None) => {}
                // An unreadable object does not hide the others.
                Err(e @ (TypeError::Io { .. } | TypeError::Object { .. })) => {
                    notes.problems.push(e.to_string());
                }
                Err(e) => return Err(e),
            }
            searched.push(self.searched(index, notes));
        }
        Err(TypeError::NotFound {
            name: name.to_string(),
            searched,
        })
    }

    /// Like [`find_type`](Self::find_type), in the object added as
    /// `object` only (mqs's `find_type` is per image). A typedef of a
    /// struct that object only declares is not followed into other objects.
    pub fn find_type_in(&self, object: &str, name: &str) -> Result<TypeLayout, TypeError> {
        let index = self.object_index(object)?;
        let query = Query::parse(name);
        let mut notes = Notes::default();
        if let Some(layout) = self.find_in_object(index, &query, name, false, &mut notes)? {
            return Ok(layout);
        }
        Err(TypeError::NotFound {
            name: name.to_string(),
            searched: vec![self.searched(index, notes)],
        })
    }

    /// The member at a dotted path inside a type, e.g.
    /// `offset_of("MPIR_Request", "dev.match.parts.tag")`. Each step may go
    /// through typedefs and through anonymous struct and union members (a
    /// C11 path names only the named members). The field's offset is from
    /// the start of `type_name`.
    pub fn offset_of(&self, type_name: &str, path: &str) -> Result<MemberLayout, TypeError> {
        let layout = self.find_type(type_name)?;
        self.descend(layout, path)
    }

    fn descend(&self, mut layout: TypeLayout, path: &str) -> Result<MemberLayout, TypeError> {
        let mut base = 0u64;
        let mut label = layout.name.clone();
        let mut parts = path.split('.').peekable();
        while let Some(part) = parts.next() {
            let Some(field) = layout.field(part).cloned() else {
                return Err(TypeError::NoSuchMember {
                    type_name: label,
                    member: part.to_string(),
                    object: layout.object,
                });
            };
            let Some(offset) = base.checked_add(field.offset) else {
                return Err(TypeError::LimitExceeded {
                    what: format!("offset of {path} in {}", layout.name),
                    limit: u64::MAX,
                });
            };
            if parts.peek().is_none() {
                return Ok(shifted(field, base));
            }
            label = field.type_name.clone().unwrap_or_else(|| part.to_string());
            layout = self.member_type(&field)?;
            base = offset;
        }
        unreachable!("split yields at least one part")
    }

    /// The type of a member, typedefs and qualifiers resolved, as a full
    /// layout whose offsets start from the member. `field` must come from
    /// this oracle.
    pub fn member_type(&self, field: &MemberLayout) -> Result<TypeLayout, TypeError> {
        let no_type = || TypeError::NoType {
            field: field.name.clone().unwrap_or_else(|| "<anonymous>".into()),
        };
        let handle = field.ty.ok_or_else(no_type)?;
        let label = field.type_name.clone().unwrap_or_default();
        let loaded = self.load(handle.object)?;
        let reader = self.reader(handle.object, loaded)?;
        let layout = match reader.resolve(handle.die)? {
            Resolved::Void => Ok(self.void(handle.object, &label)),
            Resolved::Type(at) => reader.layout(at, &label),
            Resolved::Declaration { class, name } => self
                .find_definition(handle.object, class, &name, &label, true)?
                .ok_or_else(|| TypeError::NotFound {
                    name: label.clone(),
                    searched: self
                        .search_order()
                        .map(|i| self.searched(i, Notes::default()))
                        .collect(),
                }),
        }?;
        self.member_objects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(layout.object.clone());
        Ok(layout)
    }

    /// Whether the object added as `object` has DWARF, in itself or in
    /// its debug file: opens it (inflating nothing) the first time.
    /// `false` for an object the oracle does not have.
    pub fn has_dwarf(&self, object: &str) -> bool {
        self.object_index(object)
            .and_then(|index| self.load(index))
            .is_ok_and(|loaded| loaded.file.has_debug_info())
    }

    /// The file the object added as `object` is read from.
    pub fn object_path(&self, object: &str) -> Option<&Path> {
        self.objects
            .iter()
            .find(|o| o.name == object)
            .map(|o| o.path.as_path())
    }

    /// The objects whose DWARF answered the questions asked so far, by the
    /// names they were added under: what those answers depend on (a cache
    /// of them is valid while these objects are the same builds).
    pub fn answering_objects(&self) -> Vec<String> {
        let mut objects = self
            .member_objects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        objects.extend(found.values().map(|l| l.object.clone()));
        objects.into_iter().collect()
    }

    /// Base-type sizes from the first objects that describe them.
    pub fn base_type_sizes(&self) -> Result<BaseTypeSizes, TypeError> {
        let mut sizes = BaseTypeSizes::default();
        let mut any = false;
        for index in 0..self.objects.len() {
            match self.base_sizes(index) {
                Ok(Some(found)) => {
                    any = true;
                    sizes = sizes.or(found);
                }
                Ok(None) | Err(TypeError::Io { .. } | TypeError::Object { .. }) => {}
                Err(e) => return Err(e),
            }
            if sizes.is_complete() {
                break;
            }
        }
        if !any {
            return Err(self.no_base_types(0..self.objects.len()));
        }
        Ok(sizes)
    }

    /// Base-type sizes from one object's DWARF.
    pub fn base_type_sizes_in(&self, object: &str) -> Result<BaseTypeSizes, TypeError> {
        let index = self.object_index(object)?;
        self.base_sizes(index)?
            .ok_or_else(|| self.no_base_types(index..index + 1))
    }

    /// Which name index the object added as `object` has, and how much of
    /// its DWARF the questions so far have scanned (opening the object if
    /// need be): for a user wondering about speed, and for tests that must
    /// know which path answered.
    pub fn index_stats(&self, object: &str) -> Result<IndexStats, TypeError> {
        let index = self.object_index(object)?;
        Ok(self.load(index)?.index.stats())
    }

    fn no_base_types(&self, objects: std::ops::Range<usize>) -> TypeError {
        TypeError::NotFound {
            name: "base types (int, long, ...)".into(),
            searched: objects
                .map(|i| self.searched(i, Notes::default()))
                .collect(),
        }
    }

    fn base_sizes(&self, index: usize) -> Result<Option<BaseTypeSizes>, TypeError> {
        let loaded = self.load(index)?;
        if !loaded.file.has_debug_info() {
            return Ok(None);
        }
        let size = |names: &[&str], class: TagClass| -> Result<Option<u64>, TypeError> {
            for &name in names {
                let query = Query {
                    name,
                    classes: std::slice::from_ref(match class {
                        TagClass::Typedef => &TagClass::Typedef,
                        _ => &TagClass::Base,
                    }),
                };
                let found =
                    self.find_in_object(index, &query, name, false, &mut Notes::default())?;
                if let Some(layout) = found {
                    return Ok(Some(layout.size));
                }
            }
            Ok(None)
        };
        let base = TagClass::Base;
        Ok(Some(BaseTypeSizes {
            short: size(
                &["short int", "short", "short unsigned int", "unsigned short"],
                base,
            )?,
            int: size(&["int", "unsigned int"], base)?,
            long: size(
                &["long int", "long", "long unsigned int", "unsigned long"],
                base,
            )?,
            long_long: size(
                &[
                    "long long int",
                    "long long",
                    "long long unsigned int",
                    "unsigned long long",
                ],
                base,
            )?,
            pointer: self.reader(index, loaded)?.address_size(),
            bool: size(&["_Bool", "bool"], base)?,
            size_t: size(&["size_t"], TagClass::Typedef)?,
        }))
    }

    fn object_index(&self, object: &str) -> Result<usize, TypeError> {
        self.objects
            .iter()
            .position(|o| o.name == object)
            .ok_or_else(|| TypeError::UnknownObject {
                object: object.to_string(),
            })
    }

    /// Opens and indexes an object the first time it is asked for.
    fn load(&self, index: usize) -> Result<&Loaded, TypeError> {
        let slot = self
            .objects
            .get(index)
            .ok_or_else(|| TypeError::UnknownObject {
                object: format!("#{index}"),
            })?;
        slot.loaded
            .get_or_init(|| {
                let file = DwarfFile::open(&slot.path, slot.debug_file.as_deref())?;
                let absent = match (&self.absent_store, file.identity()) {
                    (Some(store), Some(identity)) => store
                        .recall(&identity)
                        .map(AbsentNames::recalled)
                        .unwrap_or_default(),
                    _ => AbsentNames::default(),
                };
                let index = NameIndex::new(&file);
                Ok(Loaded {
                    file,
                    index,
                    directory: OnceLock::new(),
                    absent,
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn reader<'a>(&'a self, index: usize, loaded: &'a Loaded) -> Result<TypeReader<'a>, TypeError> {
        let slot = &self.objects[index];
        let directory = loaded
            .directory
            .get_or_init(|| UnitDirectory::build(&loaded.file.dwarf()));
        Ok(TypeReader::new(&slot.name, index, &loaded.file, directory))
    }

    /// Searches one object. `global` lets a typedef of a declared-only tag
    /// find the tag's definition in other objects.
    fn find_in_object(
        &self,
        index: usize,
        query: &Query<'_>,
        asked: &str,
        global: bool,
        notes: &mut Notes,
    ) -> Result<Option<TypeLayout>, TypeError> {
        let loaded = self.load(index)?;
        if !loaded.file.has_debug_info() || loaded.absent.contains(query.name) {
            return Ok(None);
        }
        let reader = self.reader(index, loaded)?;
        let mut offered = 0;
        let found = loaded
            .index
            .search(&loaded.file, query.name, &mut offered, |candidate| {
                let die = match reader.check(candidate, query.name) {
                    Ok(Some((die, class))) if query.classes.contains(&class) => die,
                    Ok(_) => return Ok(None),
                    Err(e) => {
                        // A stale or corrupt index entry: others may do.
                        notes.problems.push(e.to_string());
                        return Ok(None);
                    }
                };
                if TypeReader::is_declaration(&die) {
                    notes.declared = true;
                    return Ok(None);
                }
                match reader.resolve(die.at)? {
                    Resolved::Void => Ok(Some(self.void(index, asked))),
                    Resolved::Type(at) => reader.layout(at, asked).map(Some),
                    Resolved::Declaration { class, name } => {
                        let found = self.find_definition(index, class, &name, asked, global)?;
                        if found.is_none() {
                            notes.declared = true;
                        }
                        Ok(found)
                    }
                }
            })?;
        let whole = found.is_none()
            && offered == 0
            && loaded.index.scanned_whole()
            && loaded.file.problems().is_empty();
        if whole {
            loaded.absent.learn(query.name);
        }
        Ok(found)
    }

    /// The definition of a tag that `origin` only declares: in `origin`
    /// first, then (if `global`) in every other object in order.
    fn find_definition(
        &self,
        origin: usize,
        class: TagClass,
        tag: &str,
        asked: &str,
        global: bool,
    ) -> Result<Option<TypeLayout>, TypeError> {
        let classes = match class {
            TagClass::Union => &[TagClass::Union][..],
            TagClass::Enum => &[TagClass::Enum][..],
            _ => &[TagClass::Struct][..],
        };
        let query = Query { name: tag, classes };
        let others = self.search_order().filter(|&i| i != origin && global);
        for index in std::iter::once(origin).chain(others) {
            match self.find_in_object(index, &query, asked, false, &mut Notes::default()) {
                Ok(Some(layout)) => return Ok(Some(layout)),
                Ok(None) | Err(TypeError::Io { .. } | TypeError::Object { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    fn void(&self, index: usize, name: &str) -> TypeLayout {
        TypeLayout {
            name: name.to_string(),
            kind: TypeKind::Other,
            size: 0,
            object: self.objects[index].name.clone(),
            members: Vec::new(),
            enumerators: Vec::new(),
        }
    }

    /// How object `index` looked to a search that found nothing there.
    fn searched(&self, index: usize, notes: Notes) -> SearchedObject {
        let slot = &self.objects[index];
        let mut problems = notes.problems;
        let mut has_debug_info = false;
        match slot.loaded.get() {
            Some(Ok(loaded)) => {
                has_debug_info = loaded.file.has_debug_info();
                problems.extend(loaded.file.problems());
                problems.extend(loaded.index.problems());
                if let Some(problem) = loaded.directory.get().and_then(|d| d.problem.clone()) {
                    problems.push(problem);
                }
            }
            Some(Err(e)) => {
                let text = e.to_string();
                if !problems.contains(&text) {
                    problems.push(text);
                }
            }
            None => {}
        }
        SearchedObject {
            name: slot.name.clone(),
            path: slot.path.clone(),
            has_debug_info,
            debug_file: slot.debug_file.clone(),
            declared_only: notes.declared,
            problem: (!problems.is_empty()).then(|| problems.join("; ")),
        }
    }
}

/// `field` with `delta` added to its offset and its anonymous members'.
fn shifted(mut field: MemberLayout, delta: u64) -> MemberLayout {
    field.offset = field.offset.saturating_add(delta);
    field.members = field
        .members
        .into_iter()
        .map(|m| shifted(m, delta))
        .collect();
    field
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_name_tags_or_anything() {
        let q = Query::parse("struct MPIR_Comm");
        assert_eq!((q.name, q.classes), ("MPIR_Comm", &[TagClass::Struct][..]));
        let q = Query::parse("  union   u ");
        assert_eq!((q.name, q.classes), ("u", &[TagClass::Union][..]));
        let q = Query::parse("structure");
        assert_eq!((q.name, q.classes), ("structure", ANY));
        let q = Query::parse("MPIR_Comm");
        assert_eq!((q.name, q.classes), ("MPIR_Comm", ANY));
    }

    #[test]
    fn unknown_objects_are_named() {
        let oracle = TypeOracle::new();
        assert_eq!(
            oracle.find_type_in("libx.so", "int").unwrap_err(),
            TypeError::UnknownObject {
                object: "libx.so".into()
            }
        );
    }

    #[test]
    fn an_empty_oracle_finds_nothing_and_says_so() {
        let err = TypeOracle::new().find_type("int").unwrap_err();
        assert!(matches!(&err, TypeError::NotFound { searched, .. } if searched.is_empty()));
    }

    #[test]
    fn the_oracle_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<TypeOracle>();
    }
}
