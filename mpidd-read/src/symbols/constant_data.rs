//! An object file's constant data (`.rodata` and its kin), mapped, for the
//! strings a build states about itself: MPICH's configure line and
//! version, Intel MPI's banner. Only those sections are searched, never
//! the whole file: a debug build of an MPI library is mostly DWARF
//! (86 MB for the reference MPICH, against 1 MB of constant data), and a
//! search of all of it on every rank's read was most of a read's time.

use std::ops::Range;
use std::path::Path;

use memmap2::Mmap;
use object::{Object, ObjectSection, ObjectSegment, SectionKind, SegmentFlags};

use crate::backend::core_file::map_file;
use crate::symbols::symbol_error::SymbolError;

/// Most bytes of constant data searched in one file: past this the file
/// is not an ordinary library, and nothing is claimed of it.
pub const MAX_CONSTANT_DATA: u64 = 256 << 20;

/// The constant data of one object file, mapped.
///
/// ```no_run
/// use mpidd_read::ConstantData;
/// use std::path::Path;
///
/// let data = ConstantData::open(Path::new("/usr/lib/x86_64-linux-gnu/libmpich.so.12"))?;
/// if let Some(found) = data.find(b"MPICH Version:") {
///     println!("at byte {} of a {}-byte section", found.at, found.section.len());
/// }
/// # Ok::<(), mpidd_read::SymbolError>(())
/// ```
#[derive(Debug)]
pub struct ConstantData {
    map: Mmap,
    /// The file ranges of its constant data, in file order.
    ranges: Vec<Range<usize>>,
}

/// Where a needle was found: the section (or segment) that holds it and
/// its offset there, so that a caller reads the strings around it
/// without crossing into other data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstantMatch<'a> {
    /// The bytes of the section that holds the match.
    pub section: &'a [u8],
    /// The match's offset in `section`.
    pub at: usize,
}

impl ConstantData {
    /// Maps the ELF file at `path` and finds its constant data: its
    /// read-only data sections, else (a file without section headers) its
    /// loaded segments that are neither writable nor executable.
    pub fn open(path: &Path) -> Result<ConstantData, SymbolError> {
        let shown = || path.display().to_string();
        let map = map_file(path).map_err(|cause| SymbolError::Io {
            path: shown(),
            cause,
        })?;
        let ranges = constant_ranges(&map).map_err(|reason| SymbolError::Parse {
            path: shown(),
            reason,
        })?;
        Ok(ConstantData { map, ranges })
    }

    /// The bytes of each range of constant data, in file order.
    pub fn sections(&self) -> impl Iterator<Item = &[u8]> {
        self.ranges.iter().map(|r| &self.map[r.clone()])
    }

    /// The first occurrence of `needle` in the constant data.
    pub fn find(&self, needle: &[u8]) -> Option<ConstantMatch<'_>> {
        let finder = memchr::memmem::Finder::new(needle);
        self.sections()
            .find_map(|section| finder.find(section).map(|at| ConstantMatch { section, at }))
    }
}

/// The file ranges of `data`'s constant data, bounded in all by
/// [`MAX_CONSTANT_DATA`].
fn constant_ranges(data: &[u8]) -> Result<Vec<Range<usize>>, String> {
    let file = object::File::parse(data).map_err(|e| e.to_string())?;
    let mut ranges: Vec<Range<usize>> = file
        .sections()
        .filter(|s| {
            matches!(
                s.kind(),
                SectionKind::ReadOnlyData | SectionKind::ReadOnlyString
            )
        })
        .filter_map(|s| s.file_range())
        .filter_map(|(at, len)| file_range(data, at, len))
        .collect();
    if ranges.is_empty() {
        // No section headers (an `sstrip`ped file): the loader's view.
        ranges = file
            .segments()
            .filter(|s| match s.flags() {
                SegmentFlags::Elf { p_flags, .. } => {
                    p_flags.0 & (object::elf::PF_W.0 | object::elf::PF_X.0) == 0
                }
                _ => false,
            })
            .map(|s| s.file_range())
            .filter_map(|(at, len)| file_range(data, at, len))
            .collect();
    }
    ranges.sort_by_key(|r| r.start);
    let total: u64 = ranges.iter().map(|r| (r.end - r.start) as u64).sum();
    if total > MAX_CONSTANT_DATA {
        return Err(format!(
            "{total} bytes of constant data, more than the {MAX_CONSTANT_DATA} searched"
        ));
    }
    Ok(ranges)
}

/// `at..at + len` when it lies inside `data` and is not empty.
fn file_range(data: &[u8], at: u64, len: u64) -> Option<Range<usize>> {
    let start = usize::try_from(at).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    (len > 0 && end <= data.len()).then_some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::write::{Object as Writer, StandardSection};

    fn object_with(rodata: &[u8], other: &[u8]) -> Vec<u8> {
        let mut w = Writer::new(
            object::BinaryFormat::Elf,
            object::Architecture::X86_64,
            object::Endianness::Little,
        );
        let text = w.section_id(StandardSection::Text);
        w.append_section_data(text, other, 16);
        let ro = w.section_id(StandardSection::ReadOnlyData);
        w.append_section_data(ro, rodata, 16);
        w.write().unwrap()
    }

    fn open(bytes: &[u8]) -> ConstantData {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lib.so");
        std::fs::write(&path, bytes).unwrap();
        ConstantData::open(&path).unwrap()
    }

    #[test]
    fn only_constant_data_is_searched() {
        let data = open(&object_with(b"\0banner %s\0x", b"code banner %s"));
        let found = data.find(b"banner %s").unwrap();
        assert_eq!(found.at, 1);
        assert_eq!(&found.section[..3], b"\0ba");
        assert!(data.find(b"code banner").is_none());
    }

    #[test]
    fn a_file_that_is_not_elf_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, b"MPICH Version: 4.3.2").unwrap();
        let err = ConstantData::open(&path).unwrap_err().to_string();
        assert!(err.contains("notes.txt"), "{err}");
    }

    #[test]
    fn ranges_outside_the_file_are_dropped() {
        assert_eq!(file_range(b"abcd", 2, 2), Some(2..4));
        assert_eq!(file_range(b"abcd", 2, 3), None);
        assert_eq!(file_range(b"abcd", 0, 0), None);
        assert_eq!(file_range(b"abcd", u64::MAX, 2), None);
    }
}
