//! Finds DWARF units: by where they start, by an offset inside one (for
//! `DW_FORM_ref_addr`), and by type signature (for `DW_FORM_ref_sig8`).
//!
//! Units are opened without their line programs: the type oracle never needs
//! them, and a query should not pay for parsing (or inflating) `.debug_line`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use gimli::{
    AttributeValue, DebugAddrBase, DebugInfoOffset, DebugLocListsBase, DebugRngListsBase,
    DebugStrOffsetsBase, DebugTypes, DwarfFileType, Reader, UnitHeader, UnitOffset, UnitType,
};

use crate::dwarf::dwarf_file::DwarfReader;

/// Which section a unit lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum UnitSection {
    /// `.debug_info` (every unit of DWARF 5, and compile units before).
    Info,
    /// `.debug_types` (DWARF 4 type units).
    Types,
}

/// A DIE: its unit's section and start, and its offset inside the unit.
///
/// Offsets are host `usize` because they index bytes mapped into this
/// process, not addresses of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct DieRef {
    pub(crate) section: UnitSection,
    pub(crate) unit: usize,
    pub(crate) die: usize,
}

impl DieRef {
    /// Where it is, as readelf and gdb show it.
    pub(crate) fn describe(&self) -> String {
        let section = match self.section {
            UnitSection::Info => ".debug_info",
            UnitSection::Types => ".debug_types",
        };
        format!("DIE {section}+{:#x}", self.unit.saturating_add(self.die))
    }
}

/// The unit header at `offset` of `section`.
pub(crate) fn header_at<'a>(
    dwarf: &gimli::Dwarf<DwarfReader<'a>>,
    section: UnitSection,
    offset: usize,
) -> gimli::Result<UnitHeader<DwarfReader<'a>>> {
    match section {
        UnitSection::Info => dwarf.debug_info.header_from_offset(DebugInfoOffset(offset)),
        UnitSection::Types => {
            // gimli reads .debug_types headers only by iterating; a section
            // that starts at the unit gives the same header, and DIE offsets
            // are relative to the unit anyway.
            let mut reader = *gimli::Section::reader(&dwarf.debug_types);
            reader.skip(offset)?;
            DebugTypes::from(reader)
                .units()
                .next()?
                .ok_or(gimli::Error::UnexpectedEof(reader.offset_id()))
        }
    }
}

/// The parsed abbreviation tables of one object, by their offset in
/// `.debug_abbrev`: the name scan parses each unit's table once, and a
/// query that then reads a candidate's DIE in that unit (hundreds of units
/// declare MPICH's `MPIDI_VCRT`) takes it from here instead of parsing it
/// again.
#[derive(Default)]
pub(crate) struct AbbrevCache {
    tables: Mutex<HashMap<usize, Arc<gimli::Abbreviations>>>,
}

/// Tables kept at most per object; past this they are parsed each time.
const MAX_ABBREV_TABLES: usize = 16_384;

impl AbbrevCache {
    fn get(
        &self,
        dwarf: &gimli::Dwarf<DwarfReader<'_>>,
        header: &UnitHeader<DwarfReader<'_>>,
    ) -> gimli::Result<Arc<gimli::Abbreviations>> {
        let offset = header.debug_abbrev_offset().0;
        let lock = || self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(table) = lock().get(&offset) {
            return Ok(table.clone());
        }
        // Parsed without the lock: another thread may parse it too.
        let table = Arc::new(header.abbreviations(&dwarf.debug_abbrev)?);
        let mut tables = lock();
        if tables.len() < MAX_ABBREV_TABLES {
            tables.insert(offset, table.clone());
        }
        Ok(table)
    }
}

/// Opens a unit: its abbreviations (from `abbrevs` when parsed before)
/// and the string-offsets base from its root DIE, which `DW_FORM_strx`
/// names need.
pub(crate) fn open_unit<'a>(
    dwarf: &gimli::Dwarf<DwarfReader<'a>>,
    header: UnitHeader<DwarfReader<'a>>,
    abbrevs: &AbbrevCache,
) -> gimli::Result<gimli::Unit<DwarfReader<'a>>> {
    let abbreviations = abbrevs.get(dwarf, &header)?;
    let encoding = header.encoding();
    let mut unit = gimli::Unit {
        abbreviations,
        name: None,
        comp_dir: None,
        low_pc: 0,
        str_offsets_base: DebugStrOffsetsBase::default_for_encoding_and_file(
            encoding,
            DwarfFileType::Main,
        ),
        addr_base: DebugAddrBase(0),
        loclists_base: DebugLocListsBase::default_for_encoding_and_file(
            encoding,
            DwarfFileType::Main,
        ),
        rnglists_base: DebugRngListsBase::default_for_encoding_and_file(
            encoding,
            DwarfFileType::Main,
        ),
        line_program: None,
        dwo_id: None,
        header,
    };
    let root = unit
        .header
        .entry(&unit.abbreviations, unit.header.root_offset())?;
    if let Some(AttributeValue::DebugStrOffsetsBase(base)) =
        root.attr_value(gimli::DW_AT_str_offsets_base)
    {
        unit.str_offsets_base = base;
    }
    Ok(unit)
}

/// Every unit's start, and where each type signature is defined. Built once
/// per object from the unit headers alone, which is cheap.
#[derive(Default)]
pub(crate) struct UnitDirectory {
    /// Starts of the `.debug_info` units, ascending.
    info_starts: Vec<usize>,
    signatures: HashMap<u64, DieRef>,
    /// Why the walk stopped early, if it did.
    pub(crate) problem: Option<String>,
}

impl UnitDirectory {
    /// Walks the unit headers of `.debug_info` and `.debug_types`.
    pub(crate) fn build(dwarf: &gimli::Dwarf<DwarfReader<'_>>) -> Self {
        let mut this = UnitDirectory::default();
        let mut units = dwarf.units();
        loop {
            match units.next() {
                Ok(Some(header)) => {
                    let Some(start) = header.debug_info_offset() else {
                        continue;
                    };
                    this.info_starts.push(start.0);
                    this.note_type_unit(UnitSection::Info, start.0, &header);
                }
                Ok(None) => break,
                Err(e) => {
                    this.problem = Some(format!("unit headers of .debug_info: {e}"));
                    break;
                }
            }
        }
        let mut types = dwarf.type_units();
        loop {
            match types.next() {
                Ok(Some(header)) => {
                    if let Some(start) = header.debug_types_offset() {
                        this.note_type_unit(UnitSection::Types, start.0, &header);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    this.problem
                        .get_or_insert_with(|| format!("unit headers of .debug_types: {e}"));
                    break;
                }
            }
        }
        this
    }

    fn note_type_unit(
        &mut self,
        section: UnitSection,
        start: usize,
        header: &UnitHeader<DwarfReader<'_>>,
    ) {
        if let UnitType::Type {
            type_signature,
            type_offset,
        }
        | UnitType::SplitType {
            type_signature,
            type_offset,
        } = header.type_()
        {
            self.signatures.entry(type_signature.0).or_insert(DieRef {
                section,
                unit: start,
                die: type_offset.0,
            });
        }
    }

    /// The DIE at a `.debug_info` section offset (`DW_FORM_ref_addr`).
    pub(crate) fn at_info_offset(&self, offset: usize) -> Option<DieRef> {
        let index = self.info_starts.partition_point(|&s| s <= offset);
        let unit = *self.info_starts.get(index.checked_sub(1)?)?;
        Some(DieRef {
            section: UnitSection::Info,
            unit,
            die: offset - unit,
        })
    }

    /// The DIE a type signature names (`DW_FORM_ref_sig8`).
    pub(crate) fn by_signature(&self, signature: u64) -> Option<DieRef> {
        self.signatures.get(&signature).copied()
    }

    /// The first `.debug_info` unit's start, if there is one.
    pub(crate) fn first_info_unit(&self) -> Option<usize> {
        self.info_starts.first().copied()
    }
}

/// A DIE offset inside the same unit, as a reference.
pub(crate) fn same_unit(at: DieRef, offset: UnitOffset<usize>) -> DieRef {
    DieRef {
        die: offset.0,
        ..at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_offsets_map_to_the_unit_that_holds_them() {
        let dir = UnitDirectory {
            info_starts: vec![0, 0x100, 0x250],
            ..UnitDirectory::default()
        };
        let at = |o| dir.at_info_offset(o).map(|d| (d.unit, d.die));
        assert_eq!(at(0x0c), Some((0, 0x0c)));
        assert_eq!(at(0x100), Some((0x100, 0)));
        assert_eq!(at(0x2ff), Some((0x250, 0xaf)));
        assert_eq!(UnitDirectory::default().at_info_offset(5), None);
    }
}
