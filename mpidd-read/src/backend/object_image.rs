//! An object file on disk read as the memory of a process that has just
//! loaded it at its link-time addresses: the bytes of its loadable
//! segments that the file holds. What a library states of itself in its
//! constant and initialised data (MPICH's `MPII_Version_string`, Open
//! MPI's `ompi_version_string`) is then read by the same code that reads
//! it from a process, with no process.
//!
//! Nothing past a segment's file bytes is readable (`.bss`, and anything
//! relocated at load time holds what the file holds, not what a process
//! would): a reader asks only for what a build states before it runs.

use std::path::{Path, PathBuf};

use memmap2::Mmap;
use mpidd_types::{TargetAbi, TargetAddr};
use object::{Object, ObjectSegment};

use crate::backend::core_file::map_file;
use crate::backend::elf_ident::elf_abi;
use crate::backend::memory::TargetMemory;
use crate::error::ReadError;

/// Most loadable segments taken from one file; an ordinary object has a
/// handful.
const MAX_SEGMENTS: usize = 64;

/// Why a file could not be read as an [`ObjectImage`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ObjectImageError {
    /// The file could not be opened or mapped.
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// The file is not an ELF object whose segments can be read.
    #[error("{path}: not an ELF object: {reason}")]
    NotElf {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// One loadable segment: where it is loaded and where its file bytes are.
#[derive(Clone, Copy, Debug)]
struct Segment {
    /// Its link-time address.
    address: u64,
    /// Its bytes' offset in the file.
    offset: usize,
    /// How many bytes of it the file holds.
    len: usize,
}

/// An ELF object file's loadable segments as [`TargetMemory`], at their
/// link-time addresses, in the byte order and width the file declares.
///
/// ```no_run
/// use mpidd_read::{ObjectImage, TargetMemory};
/// use mpidd_types::TargetAddr;
/// use std::path::Path;
///
/// let image = ObjectImage::open(Path::new("/usr/lib/x86_64-linux-gnu/libmpich.so.12"))?;
/// // The link-time address of MPII_Version_string, from `nm -D`.
/// let version = image.read_string(TargetAddr(0x2472ebd), 64)?;
/// println!("MPICH {version}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ObjectImage {
    map: Mmap,
    abi: TargetAbi,
    segments: Vec<Segment>,
}

impl ObjectImage {
    /// Maps the ELF file at `path` and finds its loadable segments.
    pub fn open(path: &Path) -> Result<ObjectImage, ObjectImageError> {
        let not_elf = |reason: String| ObjectImageError::NotElf {
            path: path.to_path_buf(),
            reason,
        };
        let map = map_file(path).map_err(|cause| ObjectImageError::Io {
            path: path.to_path_buf(),
            cause,
        })?;
        let abi = elf_abi(&map).map_err(not_elf)?;
        let file = object::File::parse(&*map).map_err(|e| not_elf(e.to_string()))?;
        let mut segments = Vec::new();
        for segment in file.segments().take(MAX_SEGMENTS) {
            let (offset, len) = segment.file_range();
            // A range the file does not hold is left out, not trusted.
            let (Ok(offset), Ok(len)) = (usize::try_from(offset), usize::try_from(len)) else {
                continue;
            };
            if offset.checked_add(len).is_none_or(|end| end > map.len()) {
                continue;
            }
            segments.push(Segment {
                address: segment.address(),
                offset,
                len,
            });
        }
        Ok(ObjectImage { map, abi, segments })
    }
}

impl TargetMemory for ObjectImage {
    fn abi(&self) -> TargetAbi {
        self.abi
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        let held = self.segments.iter().find_map(|s| {
            let from = usize::try_from(addr.0.checked_sub(s.address)?).ok()?;
            (from < s.len).then(|| &self.map[s.offset + from..s.offset + s.len])
        });
        let Some(bytes) = held else {
            return Ok(0);
        };
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A little ELF64 file with one loadable segment of `data` at
    /// `address`, file offset 0x100.
    fn elf_with_segment(address: u64, data: &[u8]) -> Vec<u8> {
        let mut b = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
        b.resize(16, 0);
        b.extend(3u16.to_le_bytes()); // ET_DYN
        b.extend(62u16.to_le_bytes()); // EM_X86_64
        b.extend(1u32.to_le_bytes());
        b.extend(0u64.to_le_bytes()); // e_entry
        b.extend(64u64.to_le_bytes()); // e_phoff
        b.extend(0u64.to_le_bytes()); // e_shoff
        b.extend(0u32.to_le_bytes());
        for v in [64u16, 56, 1, 64, 0, 0] {
            b.extend(v.to_le_bytes());
        }
        b.extend(1u32.to_le_bytes()); // PT_LOAD
        b.extend(4u32.to_le_bytes()); // PF_R
        let len = data.len() as u64;
        for v in [0x100u64, address, address, len, len + 0x1000, 0x1000] {
            b.extend(v.to_le_bytes());
        }
        b.resize(0x100, 0);
        b.extend_from_slice(data);
        b
    }

    #[test]
    fn a_segment_reads_at_its_link_time_address_and_nothing_else_does() {
        let dir = std::env::temp_dir().join(format!("mpidd-object-image-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lib.so");
        std::fs::write(&path, elf_with_segment(0x4000, b"4.0.2\0rest")).unwrap();
        let image = ObjectImage::open(&path).unwrap();
        assert_eq!(image.read_string(TargetAddr(0x4000), 64).unwrap(), "4.0.2");
        // Past the file's bytes (the segment's .bss) and before it: unreadable.
        let mut buf = [0u8; 4];
        assert_eq!(image.read_into(TargetAddr(0x400a), &mut buf).unwrap(), 0);
        assert_eq!(image.read_into(TargetAddr(0x3fff), &mut buf).unwrap(), 0);
        // A read that runs off the end is short.
        assert_eq!(image.read_into(TargetAddr(0x4008), &mut buf).unwrap(), 2);
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        let e = ObjectImage::open(&path).unwrap_err().to_string();
        assert!(e.contains("not an ELF object"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
