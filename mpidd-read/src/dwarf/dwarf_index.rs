//! The name index of one object: which DIEs may define a type of a given
//! name.
//!
//! An accelerator table the producer wrote (`.debug_names`, else
//! `.gdb_index`) is asked first. When it has no answer the candidates come
//! from a scan of the units' top-level DIEs, which skips every subtree
//! (struct members, function bodies) by `DW_AT_sibling` where it can. The
//! scan is incremental: it stops at the first unit that yields a candidate
//! for the name asked and resumes there for the next question, so each unit
//! is scanned at most once per object and a type that the first units
//! define costs almost nothing. Indexes can be stale or wrong, so whoever
//! takes a candidate reads its DIE again and checks the tag and name; the
//! scan itself files its candidates under a hash of the name, not the
//! name, so it copies no string (a collision only offers a candidate that
//! check then refuses).

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use gimli::{AttributeValue, DwTag, NameTypeUnit, Reader};
use serde::Serialize;

use crate::dwarf::dwarf_file::{DwarfFile, DwarfReader, GDB_INDEX};
use crate::dwarf::dwarf_units::{header_at, open_unit, AbbrevCache, DieRef, UnitSection};
use crate::dwarf::gdb_index::GdbIndex;

/// Where an object's type names are looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum NameIndexKind {
    /// The DWARF 5 `.debug_names` table, then a scan for what it lacks.
    DebugNames,
    /// gdb's `.gdb_index` table, then a scan for what it lacks.
    GdbIndex,
    /// A scan of every unit's top-level DIEs.
    Scan,
    /// Nothing: the object has no DWARF.
    NoDebugInfo,
}

/// How an object's name index has been used so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct IndexStats {
    /// The accelerator table, or the scan alone.
    pub kind: NameIndexKind,
    /// Candidates the accelerator table offered (each checked against the
    /// DWARF before use).
    pub accelerated_candidates: u64,
    /// Units whose top-level DIEs the scan has read.
    pub units_scanned: u64,
    /// Whether the scan has read every unit.
    pub scan_complete: bool,
}

/// The kinds of DIE a type name can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TagClass {
    /// `DW_TAG_structure_type` or `DW_TAG_class_type`.
    Struct,
    /// `DW_TAG_union_type`.
    Union,
    /// `DW_TAG_enumeration_type`.
    Enum,
    /// `DW_TAG_typedef`.
    Typedef,
    /// `DW_TAG_base_type`.
    Base,
}

impl TagClass {
    /// The class of a tag, if it names a type.
    pub(crate) fn of(tag: DwTag) -> Option<Self> {
        Some(match tag {
            gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type => TagClass::Struct,
            gimli::DW_TAG_union_type => TagClass::Union,
            gimli::DW_TAG_enumeration_type => TagClass::Enum,
            gimli::DW_TAG_typedef => TagClass::Typedef,
            gimli::DW_TAG_base_type => TagClass::Base,
            _ => return None,
        })
    }
}

/// A DIE that may define the name asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) die: DieRef,
}

/// Where the scan goes on.
#[derive(Clone, Copy, Debug)]
enum ScanPos {
    Unit(UnitSection, usize),
    Done,
}

/// The hash a name is filed under: fixed, so the scan and a question agree.
fn name_key(name: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0).hash_one(name)
}

struct Scan {
    /// Candidates by [`name_key`] of their name.
    names: HashMap<u64, Vec<Candidate>, foldhash::fast::RandomState>,
    next: ScanPos,
    problems: Vec<String>,
    units_scanned: u64,
}

/// Caps the problems kept: a corrupt object could have one per unit.
const MAX_PROBLEMS: usize = 8;

impl Scan {
    fn note(&mut self, problem: String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(problem);
        }
    }

    /// Scans the next unit. Returns false when there is none.
    fn advance(&mut self, dwarf: &gimli::Dwarf<DwarfReader<'_>>, abbrevs: &AbbrevCache) -> bool {
        let ScanPos::Unit(section, start) = self.next else {
            return false;
        };
        let next_section = match section {
            UnitSection::Info => ScanPos::Unit(UnitSection::Types, 0),
            UnitSection::Types => ScanPos::Done,
        };
        let section_len = match section {
            UnitSection::Info => gimli::Section::reader(&dwarf.debug_info).len(),
            UnitSection::Types => gimli::Section::reader(&dwarf.debug_types).len(),
        };
        if start >= section_len {
            self.next = next_section;
            return true;
        }
        let header = match header_at(dwarf, section, start) {
            Ok(header) => header,
            Err(e) => {
                // Without a header there is no length, so no next unit.
                self.note(format!("unit header at {section:?}+{start:#x}: {e}"));
                self.next = next_section;
                return true;
            }
        };
        self.next = match start.checked_add(header.length_including_self()) {
            Some(end) if end > start => ScanPos::Unit(section, end),
            _ => next_section,
        };
        self.units_scanned += 1;
        let mut found = Vec::new();
        if let Err(e) = scan_unit(dwarf, abbrevs, section, start, header, &mut found) {
            self.note(format!("unit at {section:?}+{start:#x}: {e}"));
        }
        for (key, candidate) in found {
            self.names.entry(key).or_default().push(candidate);
        }
        true
    }
}

/// The type-name index of one object.
pub(crate) struct NameIndex {
    kind: NameIndexKind,
    accelerated: AtomicU64,
    scan: Mutex<Scan>,
}

impl NameIndex {
    /// Chooses the index; reads nothing beyond the accelerator's header.
    pub(crate) fn new(file: &DwarfFile) -> Self {
        let kind = if !file.has_debug_info() {
            NameIndexKind::NoDebugInfo
        } else if file
            .dwarf()
            .debug_names
            .headers()
            .next()
            .is_ok_and(|h| h.is_some())
        {
            NameIndexKind::DebugNames
        } else if GdbIndex::parse(file.section(GDB_INDEX)).is_ok() {
            NameIndexKind::GdbIndex
        } else {
            NameIndexKind::Scan
        };
        NameIndex {
            kind,
            accelerated: AtomicU64::new(0),
            scan: Mutex::new(Scan {
                names: HashMap::default(),
                next: ScanPos::Unit(UnitSection::Info, 0),
                problems: Vec::new(),
                units_scanned: 0,
            }),
        }
    }

    /// How the index has been used so far.
    pub(crate) fn stats(&self) -> IndexStats {
        let scan = self.lock();
        IndexStats {
            kind: self.kind,
            accelerated_candidates: self.accelerated.load(Ordering::Relaxed),
            units_scanned: scan.units_scanned,
            scan_complete: matches!(scan.next, ScanPos::Done),
        }
    }

    /// Whether every unit has been scanned and nothing went wrong on the
    /// way (no unreadable unit, no failed accelerator lookup): then a name
    /// the search offered no candidate for is defined nowhere in the
    /// object.
    pub(crate) fn scanned_whole(&self) -> bool {
        let scan = self.lock();
        matches!(scan.next, ScanPos::Done) && scan.problems.is_empty()
    }

    /// What went wrong while scanning, so far.
    pub(crate) fn problems(&self) -> Vec<String> {
        self.lock().problems.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Scan> {
        // A panic elsewhere leaves the scan state consistent: each unit's
        // names are added after the unit is read.
        self.scan.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Offers `visit` each candidate for `name` until it returns
    /// `Some`. Candidates may repeat (an accelerator's and then the
    /// scan's) and must be checked by reading their DIE.
    ///
    /// `offered` counts the candidates offered, so that a caller can tell
    /// a name nothing names from one whose candidates all failed.
    pub(crate) fn search<T, E>(
        &self,
        file: &DwarfFile,
        name: &str,
        offered: &mut u64,
        mut visit: impl FnMut(Candidate) -> Result<Option<T>, E>,
    ) -> Result<Option<T>, E> {
        if self.kind == NameIndexKind::NoDebugInfo {
            return Ok(None);
        }
        let dwarf = file.dwarf();
        let accelerated = match self.kind {
            NameIndexKind::DebugNames => debug_names_candidates(&dwarf, file.abbrevs(), name),
            NameIndexKind::GdbIndex => gdb_index_candidates(file, &dwarf, name),
            _ => Ok(Vec::new()),
        };
        match accelerated {
            Ok(candidates) => {
                self.accelerated
                    .fetch_add(candidates.len() as u64, Ordering::Relaxed);
                *offered += candidates.len() as u64;
                for candidate in candidates {
                    if let Some(found) = visit(candidate)? {
                        return Ok(Some(found));
                    }
                }
            }
            Err(problem) => self.lock().note(problem),
        }
        let key = name_key(name.as_bytes());
        let mut seen = 0;
        loop {
            let batch = {
                let mut scan = self.lock();
                while scan.names.get(&key).map_or(0, Vec::len) <= seen
                    && scan.advance(&dwarf, file.abbrevs())
                {}
                let list = scan.names.get(&key).map_or(&[][..], Vec::as_slice);
                list.get(seen..).unwrap_or_default().to_vec()
            };
            if batch.is_empty() {
                return Ok(None);
            }
            seen += batch.len();
            *offered += batch.len() as u64;
            // The lock is released: `visit` may search this index again.
            for candidate in batch {
                if let Some(found) = visit(candidate)? {
                    return Ok(Some(found));
                }
            }
        }
    }
}

/// Adds the top-level type DIEs of one unit to `out`; on error, `out` keeps
/// what was read before it.
fn scan_unit(
    dwarf: &gimli::Dwarf<DwarfReader<'_>>,
    abbrevs: &AbbrevCache,
    section: UnitSection,
    start: usize,
    header: gimli::UnitHeader<DwarfReader<'_>>,
    out: &mut Vec<(u64, Candidate)>,
) -> gimli::Result<()> {
    let unit = open_unit(dwarf, header, abbrevs)?;
    let mut raw = unit.header.entries_raw(&unit.abbreviations, None)?;
    let Some(root) = raw.read_abbreviation()? else {
        return Ok(());
    };
    raw.skip_attributes(root.attributes())?;
    if !root.has_children() {
        return Ok(());
    }
    // The depth of the next DIE is `base + raw.next_depth()`; it changes
    // when the cursor is restarted at a sibling.
    let mut base = 0isize;
    while !raw.is_empty() {
        let offset = raw.next_offset();
        let depth = base + raw.next_depth();
        let Some(abbrev) = raw.read_abbreviation()? else {
            if base + raw.next_depth() < 1 {
                break;
            }
            continue;
        };
        let is_type = TagClass::of(abbrev.tag()).is_some();
        if depth != 1 || (!is_type && !abbrev.has_children()) {
            raw.skip_attributes(abbrev.attributes())?;
            continue;
        }
        // Only the name (of a type) and the sibling are read; the runs of
        // attributes between them are skipped, which for fixed-size forms
        // is one jump, and what follows a sibling that will be jumped to
        // is not read at all.
        let specs = abbrev.attributes();
        let mut name = None;
        let mut sibling = None;
        let mut unread = 0;
        for (i, spec) in specs.iter().enumerate() {
            let wanted = match spec.name() {
                gimli::DW_AT_name => is_type,
                gimli::DW_AT_sibling => true,
                _ => false,
            };
            if !wanted {
                continue;
            }
            raw.skip_attributes(&specs[unread..i])?;
            let attr = raw.read_attribute(*spec)?;
            unread = i + 1;
            match attr.name() {
                gimli::DW_AT_name => name = Some(attr.value()),
                _ => {
                    if let AttributeValue::UnitRef(o) = attr.value() {
                        sibling = Some(o);
                    }
                }
            }
        }
        // Only forward jumps: a sibling pointing back would loop.
        let jump = sibling.filter(|s| abbrev.has_children() && s.0 > offset.0);
        if jump.is_none() {
            raw.skip_attributes(&specs[unread..])?;
        }
        if let Some(name) = name {
            if let Ok(name) = dwarf.attr_string(&unit, name) {
                let candidate = Candidate {
                    die: DieRef {
                        section,
                        unit: start,
                        die: offset.0,
                    },
                };
                // Declarations are kept: the visitor notes them, so that
                // a miss can say the type is declared but never defined.
                out.push((name_key(name.slice()), candidate));
            }
        }
        if let Some(sibling) = jump {
            raw = unit
                .header
                .entries_raw(&unit.abbreviations, Some(sibling))?;
            base = 1;
        }
    }
    Ok(())
}

/// The hash of `.debug_names`: DJB over the case-folded name, as gdb and
/// LLVM write it.
fn debug_names_hash(name: &str, fold: bool) -> u32 {
    name.bytes().fold(5381u32, |h, c| {
        let c = if fold { c.to_ascii_lowercase() } else { c };
        h.wrapping_mul(33).wrapping_add(u32::from(c))
    })
}

/// Candidates from `.debug_names`. Entries with a DIE offset are taken as
/// they are; entries without one (gdb 13 writes only the unit) send the
/// scan through their unit. The tags are not trusted either: gdb files
/// base types under `DW_TAG_structure_type`.
fn debug_names_candidates(
    dwarf: &gimli::Dwarf<DwarfReader<'_>>,
    abbrevs: &AbbrevCache,
    name: &str,
) -> Result<Vec<Candidate>, String> {
    let mut out = Vec::new();
    let mut units = Vec::new();
    let mut headers = dwarf.debug_names.headers();
    while let Some(header) = headers.next().map_err(|e| format!(".debug_names: {e}"))? {
        let index = header
            .index()
            .map_err(|e| format!(".debug_names header: {e}"))?;
        let mut hits = Vec::new();
        if index.has_hash_table() {
            for fold in [true, false] {
                let mut iter = index
                    .find_by_hash(debug_names_hash(name, fold))
                    .map_err(|e| format!(".debug_names hash table: {e}"))?;
                while let Ok(Some(hit)) = iter.next() {
                    if !hits.contains(&hit) {
                        hits.push(hit);
                    }
                }
            }
        } else {
            hits.extend(index.names());
        }
        for hit in hits {
            let matches = index
                .name_string(hit, &dwarf.debug_str)
                .is_ok_and(|s| s.slice() == name.as_bytes());
            if !matches {
                continue;
            }
            let Ok(mut entries) = index.name_entries(hit) else {
                continue;
            };
            while let Ok(Some(entry)) = entries.next() {
                if TagClass::of(entry.tag).is_none() {
                    continue;
                }
                let unit = match entry.type_unit(&index) {
                    Ok(Some(NameTypeUnit::Local(unit))) => Some(unit),
                    Ok(Some(NameTypeUnit::Foreign(_))) => None,
                    _ => match entry.compile_unit(&index) {
                        Ok(Some(unit)) => Some(unit),
                        _ => index.default_compile_unit().ok().flatten(),
                    },
                };
                let Some(unit) = unit else {
                    continue;
                };
                match entry.die_offset() {
                    Ok(Some(die)) => out.push(Candidate {
                        die: DieRef {
                            section: UnitSection::Info,
                            unit: unit.0,
                            die: die.0,
                        },
                    }),
                    _ => {
                        if !units.contains(&unit.0) {
                            units.push(unit.0);
                        }
                    }
                }
            }
        }
    }
    out.extend(unit_candidates(dwarf, abbrevs, units, name)?);
    Ok(out)
}

fn gdb_index_candidates(
    file: &DwarfFile,
    dwarf: &gimli::Dwarf<DwarfReader<'_>>,
    name: &str,
) -> Result<Vec<Candidate>, String> {
    let index = GdbIndex::parse(file.section(GDB_INDEX)).map_err(|e| format!(".gdb_index: {e}"))?;
    let units = index
        .type_units_of(name)
        .into_iter()
        .filter_map(|cu| index.compile_unit(cu))
        .filter_map(|offset| usize::try_from(offset).ok())
        .collect();
    unit_candidates(dwarf, file.abbrevs(), units, name)
}

/// The top-level DIEs called `name` in the given `.debug_info` units.
fn unit_candidates(
    dwarf: &gimli::Dwarf<DwarfReader<'_>>,
    abbrevs: &AbbrevCache,
    units: Vec<usize>,
    name: &str,
) -> Result<Vec<Candidate>, String> {
    let mut out = Vec::new();
    for start in units {
        let mut found = Vec::new();
        let scanned = header_at(dwarf, UnitSection::Info, start).and_then(|header| {
            scan_unit(dwarf, abbrevs, UnitSection::Info, start, header, &mut found)
        });
        if let Err(e) = scanned {
            return Err(format!("the unit at {start:#x} an index names: {e}"));
        }
        let key = name_key(name.as_bytes());
        out.extend(found.into_iter().filter(|(k, _)| *k == key).map(|(_, c)| c));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_names_hash_is_djb_and_folds_case() {
        assert_eq!(debug_names_hash("", true), 5381);
        // 5381 * 33 + 'a'
        assert_eq!(debug_names_hash("a", true), 5381 * 33 + 97);
        assert_eq!(debug_names_hash("A", true), debug_names_hash("a", true));
        assert_ne!(debug_names_hash("A", false), debug_names_hash("a", false));
    }

    #[test]
    fn tags_that_name_types_have_a_class() {
        assert_eq!(
            TagClass::of(gimli::DW_TAG_class_type),
            Some(TagClass::Struct)
        );
        assert_eq!(TagClass::of(gimli::DW_TAG_typedef), Some(TagClass::Typedef));
        assert_eq!(TagClass::of(gimli::DW_TAG_variable), None);
    }
}
