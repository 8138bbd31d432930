//! The parts of a stripped x86-64 shared object the locator reads, taken
//! from the file as it is: its sections by name, the dynamic linker's
//! relative relocations into a few sections, and its exported functions.
//! Every read is bounded by the file: a hostile section header gives an
//! error, never an allocation its sizes ask for.

use std::collections::HashMap;

use object::{Object, ObjectSection, ObjectSymbol};

/// `R_X86_64_RELATIVE`: the word at the offset is the load bias plus the
/// addend.
const R_X86_64_RELATIVE: u32 = 8;
/// The size of an `Elf64_Rela`.
const RELA_SIZE: usize = 24;

/// A section: where it is loaded, how long it is, and its bytes in the
/// file (empty for `.bss`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SectionView<'a> {
    pub(crate) address: u64,
    pub(crate) size: u64,
    pub(crate) bytes: &'a [u8],
}

impl SectionView<'_> {
    /// Whether `[address, address + size)` lies inside the section.
    pub(crate) fn holds(&self, address: u64, size: u64) -> bool {
        address >= self.address
            && address
                .checked_add(size)
                .is_some_and(|end| end <= self.address.saturating_add(self.size))
    }
}

/// A stripped object file, parsed once for the locator.
pub(crate) struct ElfView<'a> {
    file: object::File<'a>,
    /// Exported functions by name: address and size, read when first
    /// asked (the version strings, which choose a family, need none).
    functions: std::sync::OnceLock<HashMap<String, (u64, u64)>>,
}

impl<'a> ElfView<'a> {
    /// Parses `data` as an x86-64 ELF object.
    pub(crate) fn parse(data: &'a [u8]) -> Result<Self, String> {
        let file = object::File::parse(data).map_err(|e| format!("not an object file: {e}"))?;
        if file.architecture() != object::Architecture::X86_64 || !file.is_little_endian() {
            return Err(format!(
                "built for {:?}: the locator reads x86-64 objects only",
                file.architecture()
            ));
        }
        Ok(ElfView {
            file,
            functions: std::sync::OnceLock::new(),
        })
    }

    /// The section called `name`, if the file has one.
    pub(crate) fn section(&self, name: &str) -> Option<SectionView<'a>> {
        let s = self.file.section_by_name(name)?;
        let bytes = match s.kind() {
            object::SectionKind::UninitializedData => &[][..],
            _ => s.data().ok()?,
        };
        Some(SectionView {
            address: s.address(),
            size: s.size(),
            bytes,
        })
    }

    /// An exported function's address and size.
    pub(crate) fn function(&self, name: &str) -> Option<(u64, u64)> {
        self.functions
            .get_or_init(|| {
                self.file
                    .dynamic_symbols()
                    .filter(|s| s.kind() == object::SymbolKind::Text && s.is_definition())
                    .filter_map(|s| Some((s.name().ok()?.to_string(), (s.address(), s.size()))))
                    .collect()
            })
            .get(name)
            .copied()
    }

    /// The instruction bytes of `[address, address + size)`, if a section
    /// of the file holds them.
    pub(crate) fn code(&self, address: u64, size: u64) -> Option<&'a [u8]> {
        let text = self.section(".text")?;
        if !text.holds(address, size) {
            return None;
        }
        let from = usize::try_from(address - text.address).ok()?;
        let to = from.checked_add(usize::try_from(size).ok()?)?;
        text.bytes.get(from..to)
    }

    /// The relative relocations whose place lies in `within`: place to
    /// the address it is given (the addend). At most one entry per word
    /// of `within` is kept, so a hostile table costs no more memory than
    /// the section's words.
    pub(crate) fn relative_relocations(&self, within: &SectionView<'_>) -> HashMap<u64, u64> {
        let mut out = HashMap::new();
        let Some(rela) = self.section(".rela.dyn") else {
            return out;
        };
        let room = usize::try_from(within.size / 8).unwrap_or(usize::MAX);
        for entry in rela.bytes.chunks_exact(RELA_SIZE) {
            let word = |i: usize| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&entry[i..i + 8]);
                u64::from_le_bytes(w)
            };
            let (place, info, addend) = (word(0), word(8), word(16));
            if (info & 0xffff_ffff) as u32 != R_X86_64_RELATIVE || !within.holds(place, 8) {
                continue;
            }
            if out.len() >= room {
                break;
            }
            out.insert(place, addend);
        }
        out
    }
}
