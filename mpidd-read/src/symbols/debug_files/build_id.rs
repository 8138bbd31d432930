//! Build-ids: the `NT_GNU_BUILD_ID` note of an ELF file on disk, in
//! memory, or mapped in a target (where only its first page of headers
//! and notes is read).

use std::path::Path;

use object::Object;

use crate::backend::core_file::map_file;
use crate::symbols::symbol_error::SymbolError;

/// Build-ids are 8 (xxhash), 16 (md5, uuid) or 20 (sha1) bytes; anything
/// outside this range is not a build-id a debug directory indexes.
pub(super) const BUILD_ID_LEN: std::ops::RangeInclusive<usize> = 2..=64;

/// The build-id of the ELF file at `path`: the `NT_GNU_BUILD_ID` note's
/// bytes, or `None` when it has none.
pub fn build_id(path: &Path) -> Result<Option<Vec<u8>>, SymbolError> {
    let shown = || path.display().to_string();
    let data = map_file(path).map_err(|cause| SymbolError::Io {
        path: shown(),
        cause,
    })?;
    build_id_from_bytes(&data)
        .map(|id| id.map(<[u8]>::to_vec))
        .map_err(|e| match e {
            SymbolError::Malformed { reason } => SymbolError::Parse {
                path: shown(),
                reason,
            },
            other => other,
        })
}

/// The build-id of an ELF file held in memory.
///
/// ```
/// use mpidd_read::build_id_from_bytes;
///
/// assert!(build_id_from_bytes(b"not an ELF file").is_err());
/// ```
pub fn build_id_from_bytes(data: &[u8]) -> Result<Option<&[u8]>, SymbolError> {
    let malformed = |e: object::Error| SymbolError::Malformed {
        reason: e.to_string(),
    };
    object::File::parse(data)
        .map_err(malformed)?
        .build_id()
        .map_err(malformed)
}

/// The build-id note of an ELF image whose first bytes are `image`, as
/// the object is mapped: the ELF header, the program headers and the
/// notes sit in the first page of a typical object, at file offsets equal
/// to their addresses from the object's base. `None` when the bytes are
/// not an ELF header or hold no such note (section headers, which a
/// mapped image lacks, are not needed).
///
/// ```
/// assert_eq!(mpidd_read::build_id_in_headers(b"not an ELF image"), None);
/// ```
pub fn build_id_in_headers(image: &[u8]) -> Option<Vec<u8>> {
    match object::FileKind::parse(image).ok()? {
        object::FileKind::Elf64 => {
            build_id_in::<object::elf::FileHeader64<object::Endianness>>(image)
        }
        object::FileKind::Elf32 => {
            build_id_in::<object::elf::FileHeader32<object::Endianness>>(image)
        }
        _ => None,
    }
}

fn build_id_in<Elf: object::read::elf::FileHeader<Endian = object::Endianness>>(
    image: &[u8],
) -> Option<Vec<u8>> {
    use object::read::elf::ProgramHeader;
    let header = Elf::parse(image).ok()?;
    let endian = header.endian().ok()?;
    for ph in header.program_headers(endian, image).ok()? {
        let Ok(Some(mut notes)) = ph.notes(endian, image) else {
            continue;
        };
        while let Ok(Some(note)) = notes.next() {
            if note.name() == object::elf::ELF_NOTE_GNU
                && note.n_type(endian) == object::elf::NT_GNU_BUILD_ID
            {
                return Some(note.desc().to_vec());
            }
        }
    }
    None
}
