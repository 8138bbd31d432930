//! The bytes of one section of a mapped object file, shared: where the
//! file holds them as they are, a range of its mapping (no copy); a
//! compressed section, inflated once. The unwinder's CFI and the DWARF
//! that names frames both read sections this way.

use std::ops::{Deref, Range};
use std::sync::Arc;

use memmap2::Mmap;
use object::{CompressionFormat, ObjectSection};

/// Bytes of one section: a range of a mapped file, or an inflated copy.
/// Cloning shares them.
#[derive(Clone, Debug)]
pub(crate) enum SectionBytes {
    Mapped(Arc<Mmap>, Range<usize>),
    Owned(Arc<[u8]>),
}

impl SectionBytes {
    /// The bytes of `section` of the file mapped at `map`: in place when
    /// uncompressed, else inflated. `None` when its range lies outside
    /// the file or it cannot be inflated.
    pub(crate) fn of<'data>(
        map: &Arc<Mmap>,
        section: &impl ObjectSection<'data>,
    ) -> Option<SectionBytes> {
        let range = section.compressed_file_range().ok()?;
        if range.format == CompressionFormat::None {
            let start = usize::try_from(range.offset).ok()?;
            let end = start.checked_add(usize::try_from(range.compressed_size).ok()?)?;
            map.get(start..end)?;
            return Some(SectionBytes::Mapped(map.clone(), start..end));
        }
        Some(SectionBytes::Owned(Arc::from(
            &*section.uncompressed_data().ok()?,
        )))
    }
}

/// framehop's section table wants a default for the sections it has not
/// been given, and a DWARF section that is absent reads as empty.
impl Default for SectionBytes {
    fn default() -> Self {
        SectionBytes::Owned(Arc::from(&[][..]))
    }
}

impl Deref for SectionBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            SectionBytes::Mapped(map, range) => &map[range.clone()],
            SectionBytes::Owned(bytes) => bytes,
        }
    }
}

// SAFETY: both kinds keep their bytes behind an `Arc` (a mapping, or a
// buffer), which a clone shares and nothing moves or frees while a clone
// lives; `deref` returns the same address for every clone, as gimli's
// readers require.
#[allow(unsafe_code)]
unsafe impl gimli::StableDeref for SectionBytes {}
// SAFETY: as above: a clone derefs to the very same bytes.
#[allow(unsafe_code)]
unsafe impl gimli::CloneStableDeref for SectionBytes {}
