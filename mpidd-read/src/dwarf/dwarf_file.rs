//! Opens an ELF object, or its separate debug file when the object has no
//! DWARF, and hands out the few DWARF sections the type oracle reads.
//!
//! The files are memory-mapped; only compressed sections are copied, when
//! inflated, and each is inflated only when a question first reads it.
//! Sections the oracle never reads (line tables, location lists) are not
//! touched, so a compressed library costs no more than it must, and one
//! opened only to be identified (see [`DwarfFile::identity`]) costs none.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gimli::{EndianSlice, RunTimeEndian, SectionId};
use memmap2::Mmap;
use object::{CompressedData, CompressionFormat, Object, ObjectKind, ObjectSection};

use crate::backend::core_file::map_file;
use crate::dwarf::absent_names::DwarfIdentity;
use crate::dwarf::dwarf_units::AbbrevCache;
use crate::dwarf::type_error::TypeError;

/// How gimli reads sections here: borrowed bytes in the file's byte order.
pub(crate) type DwarfReader<'a> = EndianSlice<'a, RunTimeEndian>;

/// The sections read, by their ELF names. `.gdb_index` has no gimli id.
const WANTED: &[&str] = &[
    ".debug_abbrev",
    ".debug_info",
    ".debug_str",
    ".debug_str_offsets",
    ".debug_line_str",
    ".debug_types",
    ".debug_addr",
    ".debug_names",
    GDB_INDEX,
];

/// The section gdb, gold and lld write as a name index.
pub(crate) const GDB_INDEX: &str = ".gdb_index";

/// A cap on one inflated section. The largest libraries have a few hundred
/// MB of DWARF; a compression header claiming more is corrupt.
const MAX_INFLATED: u64 = 4 << 30;

/// zlib cannot inflate more than about 1032 times; zstd's RLE blocks can go
/// far beyond, but not past this.
const MAX_RATIO_ZLIB: u64 = 1100;
const MAX_RATIO_ZSTD: u64 = 1 << 15;

enum Bytes {
    /// A range of one of the mapped files.
    Mapped {
        map: usize,
        start: usize,
        end: usize,
    },
    /// A compressed range of one of the mapped files, inflated on first
    /// read (or why it could not be).
    Compressed {
        map: usize,
        start: usize,
        end: usize,
        format: CompressionFormat,
        inflated_size: u64,
        inflated: OnceLock<Result<Vec<u8>, String>>,
    },
}

/// The DWARF of one object, ready for gimli.
pub(crate) struct DwarfFile {
    maps: Vec<Mmap>,
    sections: Vec<(&'static str, Bytes)>,
    endian: RunTimeEndian,
    /// The file the DWARF comes from, when there is DWARF.
    dwarf_path: Option<PathBuf>,
    /// That file's GNU build-id, if it has one.
    build_id: Option<Vec<u8>>,
    /// The abbreviation tables parsed so far.
    abbrevs: AbbrevCache,
}

impl DwarfFile {
    /// Opens `path`, and `debug_file` when `path` has no `.debug_info`.
    pub(crate) fn open(path: &Path, debug_file: Option<&Path>) -> Result<Self, TypeError> {
        let mut this = DwarfFile {
            maps: Vec::new(),
            sections: Vec::new(),
            endian: RunTimeEndian::Little,
            dwarf_path: None,
            build_id: None,
            abbrevs: AbbrevCache::default(),
        };
        if this.try_file(path)? {
            return Ok(this);
        }
        if let Some(debug) = debug_file {
            this.try_file(debug)?;
        }
        Ok(this)
    }

    /// Maps `path` and takes its sections if it has `.debug_info`. Returns
    /// whether it did.
    fn try_file(&mut self, path: &Path) -> Result<bool, TypeError> {
        let map = map_file(path).map_err(|e| TypeError::Io {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let bad = |reason: String| TypeError::Object {
            path: path.to_path_buf(),
            reason,
        };
        let file = object::File::parse(&*map).map_err(|e| bad(e.to_string()))?;
        if file.format() != object::BinaryFormat::Elf {
            return Err(bad(format!("it is {:?}, not ELF", file.format())));
        }
        let Some(info) = file.section_by_name(".debug_info") else {
            return Ok(false);
        };
        if info.file_range().is_none_or(|(_, size)| size == 0) {
            // SHT_NOBITS: a stripped object keeps the header, not the bytes.
            return Ok(false);
        }
        if file.kind() == ObjectKind::Relocatable && info.relocations().next().is_some() {
            return Err(bad(
                "a relocatable object (.o) whose DWARF still needs relocating; \
                 read the linked object instead"
                    .into(),
            ));
        }
        let map_index = self.maps.len();
        let mut sections = Vec::new();
        for &name in WANTED {
            let Some(section) = file.section_by_name(name) else {
                continue;
            };
            let range = section
                .compressed_file_range()
                .map_err(|e| bad(format!("section {name}: {e}")))?;
            let bytes = match range.format {
                CompressionFormat::None => {
                    let Some((offset, size)) = section.file_range() else {
                        continue;
                    };
                    let start = usize::try_from(offset)
                        .map_err(|_| bad(format!("section {name} lies beyond memory")))?;
                    let end = usize::try_from(size)
                        .ok()
                        .and_then(|s| start.checked_add(s))
                        .filter(|&e| e <= map.len())
                        .ok_or_else(|| bad(format!("section {name} runs past the end")))?;
                    Bytes::Mapped {
                        map: map_index,
                        start,
                        end,
                    }
                }
                format => {
                    let ratio = match format {
                        CompressionFormat::Zstandard => MAX_RATIO_ZSTD,
                        _ => MAX_RATIO_ZLIB,
                    };
                    let cap = range
                        .compressed_size
                        .saturating_mul(ratio)
                        .saturating_add(4096)
                        .min(MAX_INFLATED);
                    if range.uncompressed_size > cap {
                        return Err(bad(format!(
                            "section {name} claims {} bytes inflated from {}; \
                             more than {cap} is refused",
                            range.uncompressed_size, range.compressed_size
                        )));
                    }
                    let start = usize::try_from(range.offset)
                        .map_err(|_| bad(format!("section {name} lies beyond memory")))?;
                    let end = usize::try_from(range.compressed_size)
                        .ok()
                        .and_then(|s| start.checked_add(s))
                        .filter(|&e| e <= map.len())
                        .ok_or_else(|| bad(format!("section {name} runs past the end")))?;
                    Bytes::Compressed {
                        map: map_index,
                        start,
                        end,
                        format,
                        inflated_size: range.uncompressed_size,
                        inflated: OnceLock::new(),
                    }
                }
            };
            sections.push((name, bytes));
        }
        self.build_id = file.build_id().ok().flatten().map(<[u8]>::to_vec);
        self.endian = if file.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        drop(file);
        self.maps.push(map);
        self.sections = sections;
        self.dwarf_path = Some(path.to_path_buf());
        Ok(true)
    }

    /// Whether `.debug_info` was found in the object or its debug file.
    pub(crate) fn has_debug_info(&self) -> bool {
        self.dwarf_path.is_some()
    }

    /// The bytes of a section, inflated now if it is compressed; empty
    /// when it is absent or cannot be inflated ([`DwarfFile::problems`]
    /// says why).
    pub(crate) fn section(&self, name: &str) -> &[u8] {
        self.sections
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(&[], |(_, bytes)| match bytes {
                Bytes::Mapped { map, start, end } => &self.maps[*map][*start..*end],
                Bytes::Compressed {
                    map,
                    start,
                    end,
                    format,
                    inflated_size,
                    inflated,
                } => {
                    let inflated = inflated.get_or_init(|| {
                        let data = CompressedData {
                            format: *format,
                            data: &self.maps[*map][*start..*end],
                            uncompressed_size: *inflated_size,
                        };
                        data.decompress()
                            .map(|d| d.into_owned())
                            .map_err(|e| format!("section {name}: {e}"))
                    });
                    inflated.as_deref().unwrap_or_default()
                }
            })
    }

    /// The size of a section's bytes (inflated, for a compressed one),
    /// without inflating it; 0 when it is absent.
    pub(crate) fn section_size(&self, name: &str) -> u64 {
        self.sections
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, bytes)| match bytes {
                Bytes::Mapped { start, end, .. } => (end - start) as u64,
                Bytes::Compressed { inflated_size, .. } => *inflated_size,
            })
    }

    /// What identifies this DWARF to a store of absent names; `None`
    /// without DWARF or without a build-id to tell its build by.
    pub(crate) fn identity(&self) -> Option<DwarfIdentity> {
        self.dwarf_path.as_ref()?;
        let build_id = self.build_id.as_deref().filter(|id| !id.is_empty())?;
        Some(DwarfIdentity {
            build_id: build_id.iter().map(|b| format!("{b:02x}")).collect(),
            debug_info_bytes: self.section_size(".debug_info"),
            debug_abbrev_bytes: self.section_size(".debug_abbrev"),
            debug_str_bytes: self.section_size(".debug_str"),
            debug_types_bytes: self.section_size(".debug_types"),
        })
    }

    /// The sections that could not be inflated so far, and why.
    pub(crate) fn problems(&self) -> Vec<String> {
        self.sections
            .iter()
            .filter_map(|(_, bytes)| match bytes {
                Bytes::Compressed { inflated, .. } => inflated.get()?.as_ref().err().cloned(),
                Bytes::Mapped { .. } => None,
            })
            .collect()
    }

    /// A section as gimli reads it.
    pub(crate) fn reader(&self, name: &str) -> DwarfReader<'_> {
        EndianSlice::new(self.section(name), self.endian)
    }

    /// The abbreviation tables parsed so far, shared by every query.
    pub(crate) fn abbrevs(&self) -> &AbbrevCache {
        &self.abbrevs
    }

    /// The file's byte order.
    pub(crate) fn endian(&self) -> RunTimeEndian {
        self.endian
    }

    /// The sections as one gimli `Dwarf`. Building it only slices the
    /// sections, so each query builds its own rather than keeping one that
    /// would borrow from this struct.
    pub(crate) fn dwarf(&self) -> gimli::Dwarf<DwarfReader<'_>> {
        let load = |id: SectionId| -> Result<DwarfReader<'_>, std::convert::Infallible> {
            Ok(self.reader(id.name()))
        };
        let Ok(dwarf) = gimli::Dwarf::load(load);
        dwarf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_an_io_error_naming_it() {
        let path = Path::new("/nonexistent/libnothing.so");
        match DwarfFile::open(path, None) {
            Err(TypeError::Io { path: p, .. }) => assert_eq!(p, path),
            Err(other) => panic!("expected an Io error, got {other:?}"),
            Ok(_) => panic!("a missing file opened"),
        }
    }

    /// How many compressed sections have been inflated (or tried).
    fn inflated(file: &DwarfFile) -> usize {
        file.sections
            .iter()
            .filter(|(_, b)| matches!(b, Bytes::Compressed { inflated, .. } if inflated.get().is_some()))
            .count()
    }

    #[test]
    fn compressed_sections_are_inflated_one_at_a_time_when_read() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("z.c");
        // Enough DWARF that compressing it pays: gcc leaves a tiny section
        // as it is.
        let text: String = (0..200)
            .map(|i| format!("struct z{i} {{ int a; long b; char c[{i}]; }} z{i}_v;\n"))
            .collect();
        std::fs::write(&source, text).unwrap();
        let out = dir.path().join("libz.so");
        let status = std::process::Command::new("gcc")
            .args(["-shared", "-fPIC", "-g", "-gz=zlib", "-Wl,--build-id"])
            .arg(&source)
            .arg("-o")
            .arg(&out)
            .status()
            .expect("cannot run gcc: install the Debian package gcc");
        assert!(status.success());
        let file = DwarfFile::open(&out, None).unwrap();
        assert!(file
            .sections
            .iter()
            .any(|(n, b)| *n == ".debug_info" && matches!(b, Bytes::Compressed { .. })));
        // Identified without inflating anything.
        let identity = file.identity().expect("gcc gave it a build-id");
        assert_eq!(inflated(&file), 0);
        let info = file.section(".debug_info");
        assert_eq!(info.len() as u64, identity.debug_info_bytes);
        assert_eq!(inflated(&file), 1, "only .debug_info was read");
        assert!(file.problems().is_empty());
    }

    #[test]
    fn a_non_elf_file_is_an_object_error() {
        let dir = std::env::temp_dir().join(format!("mpidd-dwarf-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("not-elf");
        std::fs::write(&path, b"#!/bin/sh\necho hello\n").unwrap();
        let result = DwarfFile::open(&path, None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            matches!(result, Err(TypeError::Object { .. })),
            "{:?}",
            result.err()
        );
    }
}
