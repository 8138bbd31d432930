//! The vDSO as the stack unwinder sees it: the kernel maps this small ELF
//! image into every process with no file behind it, so its unwind tables
//! are read from the process (live, or the pages a core holds). A thread
//! caught inside `clock_gettime` or `gettimeofday`, where MPI progress
//! loops that check the time spend much of theirs, unwinds only through
//! them: frame pointers alone lose the caller there.

use std::sync::{Arc, Mutex};

use mpidd_types::TargetAddr;
use object::read::elf::{FileHeader, ProgramHeader};
use object::{elf, Endianness, FileKind, Object, ObjectSection};

use crate::backend::memory::TargetMemory;
use crate::stacks::unwind_object::{
    load_extent, section_svma, CachedObject, Placed, Section, SectionBytes,
};
use crate::symbols::symbolize::ObjectSymbols;

/// The name the dynamic linker gives the vDSO (x86_64 and aarch64 alike
/// are `linux-vdso.so.1`), which its frames carry.
pub(crate) const VDSO_NAME: &str = "linux-vdso.so.1";

/// Most bytes of a vDSO image read from a process: the kernel's is two to
/// four pages; anything larger is not one.
const MAX_VDSO_BYTES: u64 = 64 * 1024;

/// Bytes read first: the ELF header and the program headers.
const HEADER_BYTES: usize = 4096;

/// Most distinct vDSO images kept: one per kernel the cores came from.
const MAX_KEPT: usize = 4;

/// vDSO images already parsed, by their bytes: every process of one
/// kernel maps the same image, at addresses of its own.
#[derive(Default)]
pub(crate) struct VdsoCache {
    kept: Mutex<Vec<KeptImage>>,
}

/// An image's bytes and what the unwinder made of them.
type KeptImage = (Arc<[u8]>, Arc<CachedObject>);

impl VdsoCache {
    /// The vDSO of a process whose ELF header is at `at`, placed where the
    /// process has it; `None` when its image cannot be read or is not an
    /// ELF object with unwind tables (its frames then unwind by frame
    /// pointer).
    pub(crate) fn place(&self, memory: &dyn TargetMemory, at: u64) -> Option<Placed> {
        let image = read_image(memory, at)?;
        let object = self.parsed(image)?;
        let first_page = object.load_svma.start & !0xfff;
        let bias = at.wrapping_sub(first_page);
        Some(Placed {
            avma: object.avma(bias),
            bias,
            name: VDSO_NAME.to_string(),
            object,
        })
    }

    fn parsed(&self, image: Vec<u8>) -> Option<Arc<CachedObject>> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, object)) = kept.iter().find(|(bytes, _)| **bytes == *image) {
            return Some(object.clone());
        }
        let object = Arc::new(from_image(&image)?);
        if kept.len() >= MAX_KEPT {
            kept.remove(0);
        }
        kept.push((Arc::from(image), object.clone()));
        Some(object)
    }
}

/// The image's bytes: the header page first, then as far as its loaded
/// segments and its section headers reach (the vDSO's file image is laid
/// out in memory as it would be in a file), at most [`MAX_VDSO_BYTES`].
fn read_image(memory: &dyn TargetMemory, at: u64) -> Option<Vec<u8>> {
    let mut head = vec![0u8; HEADER_BYTES];
    let n = memory.read_into(TargetAddr(at), &mut head).ok()?;
    head.truncate(n);
    let len = match FileKind::parse(&*head).ok()? {
        FileKind::Elf64 => image_len::<elf::FileHeader64<Endianness>>(&head)?,
        FileKind::Elf32 => image_len::<elf::FileHeader32<Endianness>>(&head)?,
        _ => return None,
    };
    if len == 0 || len > MAX_VDSO_BYTES {
        return None;
    }
    let mut image = vec![0u8; len as usize];
    let n = memory.read_into(TargetAddr(at), &mut image).ok()?;
    (n == image.len()).then_some(image)
}

/// How far the image's loaded segments and section headers reach from its
/// start.
fn image_len<H: FileHeader<Endian = Endianness>>(head: &[u8]) -> Option<u64> {
    let header = H::parse(head).ok()?;
    let endian = header.endian().ok()?;
    let shoff: u64 = header.e_shoff(endian).into();
    let sections = u64::from(header.e_shnum(endian)) * u64::from(header.e_shentsize(endian));
    let mut end = shoff.checked_add(sections)?;
    for ph in header.program_headers(endian, head).ok()? {
        if ph.p_type(endian) == elf::PT_LOAD {
            let offset: u64 = ph.p_offset(endian).into();
            let size: u64 = ph.p_filesz(endian).into();
            end = end.max(offset.checked_add(size)?);
        }
    }
    Some(end)
}

/// What the unwinder keeps of an object whose image it has in memory.
fn from_image(image: &[u8]) -> Option<CachedObject> {
    let file = object::File::parse(image).ok()?;
    let load_svma = load_extent(&file)?;
    let svma = |name: &str| section_svma(&file, name);
    let section = |name: &str| {
        let s = file.section_by_name(name)?;
        Some(Section {
            svma: section_svma(&file, name)?,
            bytes: SectionBytes::Owned(Arc::from(s.data().ok()?)),
        })
    };
    let eh_frame = section(".eh_frame");
    eh_frame.as_ref()?;
    Some(CachedObject {
        load_svma,
        text_svma: svma(".text"),
        got_svma: svma(".got"),
        eh_frame_hdr: section(".eh_frame_hdr"),
        eh_frame,
        debug_frame: None,
        symbols: ObjectSymbols::new(&file, std::path::Path::new(VDSO_NAME), None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process's own vDSO, as the kernel mapped it, found and read
    /// as a live rank's is: `AT_SYSINFO_EHDR` from `/proc/self/auxv` in
    /// the process's own ABI, the image through its memory.
    #[cfg(all(feature = "live", target_os = "linux"))]
    #[test]
    fn this_kernel_s_vdso_has_unwind_tables_and_names_clock_gettime() {
        let me = crate::backend::live_process::LiveProcess::open(std::process::id() as i32)
            .expect("open this process");
        let at = me.vdso().expect("the kernel gives this process a vDSO");
        let placed = VdsoCache::default()
            .place(&me, at)
            .expect("the vDSO reads and parses, with .eh_frame");
        assert_eq!(placed.name, VDSO_NAME);
        assert_eq!(placed.avma.start & !0xfff, at);
        let object = &placed.object;
        assert!(object
            .eh_frame
            .as_ref()
            .is_some_and(|s| !s.bytes.is_empty()));
        let text = object.text_svma.clone().expect(".text");
        let named = (text.start..text.end)
            .step_by(16)
            .filter_map(|pc| object.symbols.function_at(pc))
            .any(|m| m.name.contains("clock_gettime"));
        assert!(named, "no function of the vDSO is named clock_gettime");
        let image = read_image(&me, at).expect("the image");
        assert!(from_image(&image[..64]).is_none());
    }

    #[test]
    fn a_header_claiming_more_than_the_bound_is_not_read() {
        // An ELF64 header whose section headers would lie 1 GiB in.
        let mut head = vec![0u8; 64];
        head[..4].copy_from_slice(b"\x7fELF");
        head[4] = 2; // ELFCLASS64
        head[5] = 1; // little-endian
        head[6] = 1; // EV_CURRENT
        head[16] = 3; // ET_DYN
        head[40..48].copy_from_slice(&(1u64 << 30).to_le_bytes()); // e_shoff
        head[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
        head[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
        head[60..62].copy_from_slice(&1u16.to_le_bytes()); // e_shnum
        let len = image_len::<elf::FileHeader64<Endianness>>(&head).unwrap();
        assert!(len > MAX_VDSO_BYTES);
    }
}
