//! What the stack unwinder keeps of one object, whatever process maps it:
//! its unwind sections (mapped, or inflated once) and its symbols, keyed
//! by build-id or file; and an object as one process places it.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use framehop::{ExplicitModuleSectionInfo, Module};
use memmap2::Mmap;
use object::{Object, ObjectSection, ObjectSegment};

use crate::backend::core_file::map_file;
use crate::backend::file_identity::FileKey;
pub(crate) use crate::backend::section_bytes::SectionBytes;
use crate::symbols::symbolize::ObjectSymbols;

/// A section's link-time address range and its bytes.
#[derive(Clone)]
pub(crate) struct Section {
    pub(crate) svma: Range<u64>,
    pub(crate) bytes: SectionBytes,
}

/// What the unwinder keeps of one object, whatever process maps it.
pub(crate) struct CachedObject {
    /// The link-time extent of its PT_LOAD segments.
    pub(crate) load_svma: Range<u64>,
    pub(crate) text_svma: Option<Range<u64>>,
    pub(crate) got_svma: Option<Range<u64>>,
    pub(crate) eh_frame: Option<Section>,
    pub(crate) eh_frame_hdr: Option<Section>,
    pub(crate) debug_frame: Option<Section>,
    pub(crate) symbols: ObjectSymbols,
}

impl CachedObject {
    pub(crate) fn load(path: &Path, debug_file: Option<&Path>) -> Option<CachedObject> {
        let map = Arc::new(map_file(path).ok()?);
        let file = object::File::parse(&**map).ok()?;
        let load_svma = load_extent(&file)?;
        let svma = |name: &str| section_svma(&file, name);
        let section = |file: &object::File<'_>, map: &Arc<Mmap>, name: &str| {
            let s = file.section_by_name(name)?;
            let svma = s.address()..s.address().saturating_add(s.size());
            let bytes = SectionBytes::of(map, &s)?;
            Some(Section { svma, bytes })
        };
        let mut debug_frame = section(&file, &map, ".debug_frame");
        let eh_frame = section(&file, &map, ".eh_frame");
        if eh_frame.is_none() && debug_frame.is_none() {
            // Some toolchains keep CFI only in .debug_frame, which strip
            // moves to the debug file; its addresses are the object's.
            if let Some(debug) = debug_file {
                if let Ok(debug_map) = map_file(debug).map(Arc::new) {
                    if let Ok(debug_elf) = object::File::parse(&**debug_map) {
                        debug_frame = section(&debug_elf, &debug_map, ".debug_frame");
                    }
                }
            }
        }
        Some(CachedObject {
            load_svma,
            text_svma: svma(".text"),
            got_svma: svma(".got"),
            eh_frame_hdr: section(&file, &map, ".eh_frame_hdr"),
            eh_frame,
            debug_frame,
            symbols: ObjectSymbols::new(&file, path, debug_file),
        })
    }

    /// A framehop module for this object loaded at `bias`.
    pub(crate) fn module(&self, name: &str, bias: u64) -> Module<SectionBytes> {
        let info = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: self.text_svma.clone(),
            got_svma: self.got_svma.clone(),
            eh_frame_svma: self.eh_frame.as_ref().map(|s| s.svma.clone()),
            eh_frame: self.eh_frame.as_ref().map(|s| s.bytes.clone()),
            eh_frame_hdr_svma: self.eh_frame_hdr.as_ref().map(|s| s.svma.clone()),
            eh_frame_hdr: self.eh_frame_hdr.as_ref().map(|s| s.bytes.clone()),
            debug_frame: self.debug_frame.as_ref().map(|s| s.bytes.clone()),
            ..Default::default()
        };
        Module::new(name.to_string(), self.avma(bias), bias, info)
    }

    pub(crate) fn avma(&self, bias: u64) -> Range<u64> {
        self.load_svma.start.wrapping_add(bias)..self.load_svma.end.wrapping_add(bias)
    }
}

/// The link-time extent of an object's segments; `None` when it has none.
pub(crate) fn load_extent(file: &object::File<'_>) -> Option<Range<u64>> {
    let (lo, hi) = file
        .segments()
        .map(|s| (s.address(), s.address().saturating_add(s.size())))
        .fold((u64::MAX, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
    (lo < hi).then_some(lo..hi)
}

/// The link-time address range of the section `name`, if there is one.
pub(crate) fn section_svma(file: &object::File<'_>, name: &str) -> Option<Range<u64>> {
    file.section_by_name(name)
        .map(|s| s.address()..s.address().saturating_add(s.size()))
}

/// What identifies an object across processes: its build-id and file
/// size, else its file (path, size and modification time). The size keeps
/// a stripped copy of a build apart from the full one: they share the
/// build-id but not the symbols.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ObjectKey {
    BuildId(Vec<u8>, u64),
    File(FileId),
}

/// A file as `stat` sees it: a file replaced on disk is a new one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FileId {
    /// Its device and inode where the host has them: each live rank names
    /// its files through its own `/proc/PID/root`, so one file has as many
    /// paths as the job has ranks.
    pub(crate) file: Option<FileKey>,
    /// Its path, only where the host gives no device and inode.
    pub(crate) path: Option<PathBuf>,
    pub(crate) size: u64,
    pub(crate) modified: Option<SystemTime>,
}

pub(crate) type ObjectCell = Arc<OnceLock<Option<Arc<CachedObject>>>>;

/// An object of one process: where it is loaded, and its cached data.
pub(crate) struct Placed {
    pub(crate) avma: Range<u64>,
    pub(crate) bias: u64,
    /// The file name the target knows the object by.
    pub(crate) name: String,
    pub(crate) object: Arc<CachedObject>,
}
