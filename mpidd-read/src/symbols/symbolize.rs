//! Addresses to names: the function symbol that contains an address, and,
//! where the object (or its separate debug file) has DWARF, the function,
//! file and line that `addr2line` finds.
//!
//! Everything here is in the object's link-time addresses (SVMAs): the
//! caller subtracts the load bias first, so one [`ObjectSymbols`] serves
//! every process that maps the object, wherever it was loaded.

use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use gimli::RunTimeEndian;
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SectionKind, SymbolKind};

use crate::backend::core_file::map_file;
use crate::backend::section_bytes::SectionBytes;
use crate::symbols::kept_frames::KeptFrames;

/// How addr2line reads DWARF here: shared bytes, so the context can move
/// between threads and outlive the function that loaded it.
type Reader = gimli::EndianReader<RunTimeEndian, SectionBytes>;

/// One function symbol, at its link-time address.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FunctionSymbol {
    start: u64,
    /// 0 when the symbol has no size (hand-written assembly often has
    /// none): it then covers up to the next symbol.
    size: u64,
    name: String,
    /// Lower is preferred among aliases at the same address.
    rank: u8,
}

/// The function symbol [`ObjectSymbols::function_at`] names an address
/// after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FunctionMatch<'a> {
    /// The symbol's name.
    pub(crate) name: &'a str,
    /// Its link-time address.
    pub(crate) start: u64,
    /// No symbol's size covers the address: this is only the closest
    /// function symbol before it in the same section (a symbol without a
    /// size, or a sized one that ends before the address, such as a jump
    /// stub in front of an unnamed local function).
    pub(crate) guessed: bool,
}

/// What DWARF says about one address: the outermost function of the
/// inlining chain there, and where in its source that address is.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SourceFrame {
    /// The function's name (its linkage name where DWARF has one).
    pub(crate) function: Option<String>,
    /// The source file, with its directory when DWARF gives one.
    pub(crate) file: Option<String>,
    /// The line.
    pub(crate) line: Option<u32>,
}

/// The symbol tables and the DWARF line and function information of one
/// object, for address lookups. Built once per object; `Sync`, so every
/// rank and thread of a job looks up in the same one.
pub(crate) struct ObjectSymbols {
    /// Function symbols sorted by address, one per address.
    functions: Vec<FunctionSymbol>,
    /// The link-time address ranges of the object's code sections
    /// (SHF_EXECINSTR; its executable PT_LOAD segments when it has no
    /// section headers), sorted and disjoint: a name is guessed only from
    /// a symbol of the section the address is in.
    code: Vec<Range<u64>>,
    /// Jump stubs: (the address a small exported function jumps to, the
    /// index of that function in `functions`), sorted by target. An
    /// unnamed function that an entry point's stub jumps into (MPICH 4's
    /// `PMPI_Waitany`, Intel MPI's `PMPI_Recv`) is named after the stub,
    /// not after whatever symbol happens to precede it.
    stubs: Vec<(u64, usize)>,
    /// Where the DWARF is: the object itself or its separate debug file.
    dwarf_path: Option<PathBuf>,
    /// The addr2line context, made on the first lookup that needs it
    /// (parsing DWARF costs far more than reading symbols). `None` inside
    /// when the DWARF cannot be read. The context caches what it parsed in
    /// cells that are not `Sync`, hence the mutex.
    dwarf: OnceLock<Option<Mutex<addr2line::Context<Reader>>>>,
    /// What an earlier run's DWARF said of the addresses it named, and
    /// what this run's adds, kept for the next run (written when the
    /// table is dropped).
    kept: OnceLock<Mutex<KeptFrames>>,
}

impl Drop for ObjectSymbols {
    fn drop(&mut self) {
        if let Some(kept) = self.kept.get_mut() {
            kept.get_mut().unwrap_or_else(|p| p.into_inner()).write();
        }
    }
}

impl std::fmt::Debug for ObjectSymbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectSymbols")
            .field("functions", &self.functions.len())
            .field("code", &self.code)
            .field("dwarf_path", &self.dwarf_path)
            .finish_non_exhaustive()
    }
}

/// Whether the parsed file carries DWARF debug info with bytes (a stripped
/// object keeps `.debug_info` headers as SHT_NOBITS in some tools).
fn has_dwarf(file: &object::File<'_>) -> bool {
    file.section_by_name(".debug_info")
        .and_then(|s| s.file_range())
        .is_some_and(|(_, size)| size > 0)
}

impl ObjectSymbols {
    /// Reads the function symbols of `file` (`.symtab` and `.dynsym`) and
    /// of its separate debug file, if any, and notes where its DWARF is.
    pub(crate) fn new(file: &object::File<'_>, path: &Path, debug_file: Option<&Path>) -> Self {
        let mut functions = Vec::new();
        collect_functions(file.symbols(), &mut functions);
        collect_functions(file.dynamic_symbols(), &mut functions);
        let mut dwarf_path = has_dwarf(file).then(|| path.to_path_buf());
        if let Some(debug) = debug_file {
            // The debug file was matched by build-id or CRC when the object's
            // symbols were loaded; one that no longer parses adds nothing.
            if let Ok(map) = map_file(debug) {
                if let Ok(debug_elf) = object::File::parse(&*map) {
                    collect_functions(debug_elf.symbols(), &mut functions);
                    if dwarf_path.is_none() && has_dwarf(&debug_elf) {
                        dwarf_path = Some(debug.to_path_buf());
                    }
                }
            }
        }
        let mut table = Self::from_parts(functions, code_ranges(file), dwarf_path);
        table.find_stubs(file);
        table
    }

    /// Notes every function of at most [`MAX_STUB`] bytes whose code is a
    /// single unconditional jump, and where it jumps.
    fn find_stubs(&mut self, file: &object::File<'_>) {
        let arch = file.architecture();
        let mut stubs = Vec::new();
        for (i, f) in self.functions.iter().enumerate() {
            if f.size == 0 || f.size > MAX_STUB {
                continue;
            }
            let Some(code) = code_bytes(file, f.start, f.size) else {
                continue;
            };
            if let Some(target) = jump_target(arch, f.start, &code) {
                stubs.push((target, i));
            }
        }
        stubs.sort_unstable();
        self.stubs = stubs;
    }

    /// The table of `functions` (in any order, aliases included) in the
    /// code ranges `code` (in any order), with DWARF at `dwarf_path`.
    fn from_parts(
        mut functions: Vec<FunctionSymbol>,
        mut code: Vec<Range<u64>>,
        dwarf_path: Option<PathBuf>,
    ) -> Self {
        // One symbol per address: the preferred alias, the sized one first.
        functions.sort_by(|a, b| {
            (a.start, a.rank, a.size == 0, a.name.len(), &a.name).cmp(&(
                b.start,
                b.rank,
                b.size == 0,
                b.name.len(),
                &b.name,
            ))
        });
        let mut merged: Vec<FunctionSymbol> = Vec::with_capacity(functions.len());
        for f in functions {
            match merged.last_mut() {
                Some(last) if last.start == f.start => {
                    // An alias without a size takes the size of a sized one.
                    if last.size == 0 {
                        last.size = f.size;
                    }
                }
                _ => merged.push(f),
            }
        }
        code.retain(|r| r.start < r.end);
        code.sort_by_key(|r| (r.start, r.end));
        // Overlapping ranges (sections of a relocatable file all at 0) are
        // merged: the boundary check then errs towards a name.
        let mut disjoint: Vec<Range<u64>> = Vec::with_capacity(code.len());
        for r in code {
            match disjoint.last_mut() {
                Some(last) if r.start < last.end => last.end = last.end.max(r.end),
                _ => disjoint.push(r),
            }
        }
        ObjectSymbols {
            functions: merged,
            code: disjoint,
            stubs: Vec::new(),
            dwarf_path,
            dwarf: OnceLock::new(),
            kept: OnceLock::new(),
        }
    }

    /// The function symbol that names link-time address `svma`: the sized
    /// symbol that contains it, else (a guess, as debuggers make) the
    /// closest function symbol below it in the same code section, sized
    /// or not. An address in no code section, or with no symbol between
    /// its section's start and itself, has none. Costs a binary search
    /// and a few steps back, whatever the table's size.
    pub(crate) fn function_at(&self, svma: u64) -> Option<FunctionMatch<'_>> {
        let end = self.functions.partition_point(|f| f.start <= svma);
        // A sized symbol contains the address; symbols nest rarely (a local
        // label inside a function), so a few steps back suffice.
        for f in self.functions[..end].iter().rev().take(8) {
            if f.size > 0 && svma < f.start.saturating_add(f.size) {
                return Some(FunctionMatch {
                    name: &f.name,
                    start: f.start,
                    guessed: false,
                });
            }
        }
        // Else the body a jump stub leads into, when no symbol starts
        // between that body's start and the address.
        let section = self.code_section(svma)?;
        let below = self.functions[..end].last();
        let s = self.stubs.partition_point(|&(t, _)| t <= svma);
        if let Some(&(target, i)) = s.checked_sub(1).and_then(|s| self.stubs.get(s)) {
            let no_symbol_between = below.is_none_or(|f| f.start <= target);
            if target >= section.start && no_symbol_between {
                return Some(FunctionMatch {
                    name: &self.functions[i].name,
                    start: target,
                    guessed: true,
                });
            }
        }
        // Else the closest symbol below, if it is in the address's section.
        let f = below?;
        (f.start >= section.start).then_some(FunctionMatch {
            name: &f.name,
            start: f.start,
            guessed: true,
        })
    }

    /// The code section containing `svma`.
    fn code_section(&self, svma: u64) -> Option<&Range<u64>> {
        let i = self.code.partition_point(|r| r.start <= svma);
        let r = self.code.get(i.checked_sub(1)?)?;
        r.contains(&svma).then_some(r)
    }

    /// What DWARF says about link-time address `svma`, if the object has
    /// DWARF that covers it.
    pub(crate) fn source_frame(&self, svma: u64) -> Option<SourceFrame> {
        let path = self.dwarf_path.as_deref()?;
        let kept = self.kept.get_or_init(|| Mutex::new(KeptFrames::of(path)));
        if let Some(frame) = kept.lock().unwrap_or_else(|p| p.into_inner()).get(svma) {
            return frame;
        }
        let frame = self.dwarf_frame(svma);
        kept.lock()
            .unwrap_or_else(|p| p.into_inner())
            .add(svma, frame.clone());
        frame
    }

    /// What the DWARF itself says of `svma`.
    fn dwarf_frame(&self, svma: u64) -> Option<SourceFrame> {
        let context = self
            .dwarf
            .get_or_init(|| {
                let path = self.dwarf_path.as_deref()?;
                load_context(path).map(Mutex::new)
            })
            .as_ref()?;
        // A panic in another lookup cannot leave addr2line's caches half
        // written in a way that matters: they are fill-once cells.
        let context = context.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = SourceFrame::default();
        let mut frames = context.find_frames(svma).skip_all_loads().ok()?;
        // The innermost frame comes first; the last one is the function the
        // code was compiled into, the one a return address belongs to.
        let mut any = false;
        while let Ok(Some(frame)) = frames.next() {
            any = true;
            out.function = frame
                .function
                .as_ref()
                .and_then(|f| f.raw_name().ok())
                .map(Cow::into_owned);
            out.file = frame
                .location
                .as_ref()
                .and_then(|l| l.file)
                .map(str::to_string);
            out.line = frame.location.as_ref().and_then(|l| l.line);
        }
        if !any {
            return None;
        }
        Some(out)
    }
}

/// The link-time address ranges of `file`'s code: its sections of
/// executable code, or, in a file without section headers, its executable
/// PT_LOAD segments.
fn code_ranges(file: &object::File<'_>) -> Vec<Range<u64>> {
    let sections: Vec<Range<u64>> = file
        .sections()
        .filter(|s| s.kind() == SectionKind::Text && s.size() > 0)
        .map(|s| s.address()..s.address().saturating_add(s.size()))
        .collect();
    if !sections.is_empty() {
        return sections;
    }
    file.segments()
        .filter(|s| {
            matches!(s.flags(), object::SegmentFlags::Elf { p_flags, .. }
                if p_flags.0 & object::elf::PF_X.0 != 0)
        })
        .map(|s| s.address()..s.address().saturating_add(s.size()))
        .collect()
}

/// Longest function taken for a jump stub: a jump, maybe behind an
/// `endbr64`, and the padding of a small alignment.
const MAX_STUB: u64 = 16;

/// The bytes of the file at link-time address `addr`, when a section
/// holds them.
fn code_bytes(file: &object::File<'_>, addr: u64, size: u64) -> Option<Vec<u8>> {
    file.sections()
        .filter(|s| s.kind() == SectionKind::Text)
        .find(|s| addr >= s.address() && addr.saturating_add(size) <= s.address() + s.size())
        .and_then(|s| s.data_range(addr, size).ok().flatten())
        .map(<[u8]>::to_vec)
}

/// Where the code at `at` jumps, when it starts with an unconditional
/// direct jump: x86's `jmp rel8`/`jmp rel32` (after an optional
/// `endbr64`), AArch64's `b`.
fn jump_target(arch: object::Architecture, at: u64, code: &[u8]) -> Option<u64> {
    use object::Architecture;
    match arch {
        Architecture::X86_64 | Architecture::X86_64_X32 | Architecture::I386 => {
            let (skip, code) = match code {
                [0xf3, 0x0f, 0x1e, 0xfa | 0xfb, rest @ ..] => (4u64, rest),
                _ => (0, code),
            };
            let at = at.wrapping_add(skip);
            match code {
                [0xeb, rel, ..] => Some(at.wrapping_add(2).wrapping_add(*rel as i8 as i64 as u64)),
                [0xe9, a, b, c, d, ..] => {
                    let rel = i32::from_le_bytes([*a, *b, *c, *d]);
                    Some(at.wrapping_add(5).wrapping_add(rel as i64 as u64))
                }
                _ => None,
            }
        }
        Architecture::Aarch64 => {
            let insn = u32::from_le_bytes(code.get(..4)?.try_into().ok()?);
            if insn & 0xfc00_0000 != 0x1400_0000 {
                return None;
            }
            // imm26, in words, signed.
            let words = ((insn & 0x03ff_ffff) << 6) as i32 >> 6;
            Some(at.wrapping_add((i64::from(words) * 4) as u64))
        }
        _ => None,
    }
}

/// Adds the defined function symbols among `symbols`.
fn collect_functions<'data>(
    symbols: impl Iterator<Item = object::Symbol<'data, 'data>>,
    out: &mut Vec<FunctionSymbol>,
) {
    for sym in symbols {
        if sym.is_undefined() || sym.kind() != SymbolKind::Text || sym.address() == 0 {
            continue;
        }
        let Ok(name) = sym.name() else { continue };
        if name.is_empty() {
            continue;
        }
        // Global over weak over local, as a reader expects the exported
        // name (`pause`, not `__libc_pause`, unless only that one exists).
        let rank = if sym.is_weak() {
            1
        } else if sym.is_global() {
            0
        } else {
            2
        };
        out.push(FunctionSymbol {
            start: sym.address(),
            size: sym.size(),
            name: name.to_string(),
            rank,
        });
    }
}

/// An addr2line context over the DWARF of the file at `path`: its sections
/// read in place from the file's mapping, or inflated when compressed.
fn load_context(path: &Path) -> Option<addr2line::Context<Reader>> {
    let map = Arc::new(map_file(path).ok()?);
    let file = object::File::parse(&**map).ok()?;
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
        // Names and lines never read the location lists or macros, and
        // inflating a compressed debug file's (libc's) cost a fifth of a
        // whole job's reading. A section that is absent, lies outside the
        // file or cannot be inflated reads as empty: the lookups that need
        // it find nothing rather than fail all.
        let unread = matches!(
            id,
            gimli::SectionId::DebugLoc
                | gimli::SectionId::DebugLocLists
                | gimli::SectionId::DebugMacinfo
                | gimli::SectionId::DebugMacro
        );
        let bytes = match file.section_by_name(id.name()) {
            Some(section) if !unread => SectionBytes::of(&map, &section).unwrap_or_default(),
            _ => SectionBytes::default(),
        };
        Ok(gimli::EndianReader::new(bytes, endian))
    };
    let dwarf = gimli::Dwarf::load(load).ok()?;
    addr2line::Context::from_dwarf(dwarf).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, start: u64, size: u64) -> FunctionSymbol {
        FunctionSymbol {
            start,
            size,
            name: name.to_string(),
            rank: 0,
        }
    }

    /// Two code sections, `.text` at 0x1000..0x2000 and `.fini` at
    /// 0x3000..0x3010, with the layout of Intel MPI's `PMPI_Recv`: a
    /// 2-byte jump stub in front of an unnamed function.
    fn table() -> ObjectSymbols {
        ObjectSymbols::from_parts(
            vec![
                sym("unsized", 0x1400, 0),
                sym("sized", 0x1100, 0x10),
                sym("PMPI_Recv", 0x1200, 2),
                sym("_fini", 0x3000, 0x10),
                // An alias without a size takes its sized twin's.
                sym("sized_alias", 0x1100, 0),
            ],
            vec![0x3000..0x3010, 0x1000..0x2000],
            None,
        )
    }

    fn at(t: &ObjectSymbols, svma: u64) -> Option<(&str, u64, bool)> {
        t.function_at(svma).map(|m| (m.name, m.start, m.guessed))
    }

    #[test]
    fn a_sized_symbol_names_what_it_covers() {
        let t = table();
        assert_eq!(at(&t, 0x1100), Some(("sized", 0x1100, false)));
        assert_eq!(at(&t, 0x110f), Some(("sized", 0x1100, false)));
        assert_eq!(at(&t, 0x1201), Some(("PMPI_Recv", 0x1200, false)));
        assert_eq!(at(&t, 0x300f), Some(("_fini", 0x3000, false)));
    }

    #[test]
    fn a_body_a_stub_jumps_into_is_named_after_the_stub() {
        // MPICH 4's layout: PMPI_Waitall (sized), then the unnamed body of
        // PMPI_Waitany, then PMPI_Waitany itself, a 5-byte jump back.
        let mut t = ObjectSymbols::from_parts(
            vec![
                sym("PMPI_Waitall", 0x1000, 0x100),
                sym("PMPI_Waitany", 0x1800, 5),
            ],
            std::iter::once(0x1000..0x2000).collect(),
            None,
        );
        t.stubs = vec![(0x1200, 1)];
        assert_eq!(at(&t, 0x1250), Some(("PMPI_Waitany", 0x1200, true)));
        // Between PMPI_Waitall's end and the body: the nearest symbol.
        assert_eq!(at(&t, 0x1150), Some(("PMPI_Waitall", 0x1000, true)));
        // Past the stub itself, a stub no longer explains it.
        assert_eq!(at(&t, 0x1900), Some(("PMPI_Waitany", 0x1800, true)));
    }

    #[test]
    fn jumps_are_decoded_for_x86_and_aarch64() {
        use object::Architecture::{Aarch64, X86_64};
        // jmp rel32 back by 0x600 from a stub at 0x1800.
        let rel = (-0x605i32).to_le_bytes();
        let code = [0xe9, rel[0], rel[1], rel[2], rel[3]];
        assert_eq!(jump_target(X86_64, 0x1800, &code), Some(0x1200));
        // endbr64; jmp rel8 +0x10.
        let code = [0xf3, 0x0f, 0x1e, 0xfa, 0xeb, 0x10];
        assert_eq!(jump_target(X86_64, 0x1000, &code), Some(0x1016));
        assert_eq!(jump_target(X86_64, 0x1000, &[0xc3]), None);
        // b -0x100
        let insn: u32 = 0x1400_0000 | ((-0x40i32 as u32) & 0x03ff_ffff);
        assert_eq!(
            jump_target(Aarch64, 0x2000, &insn.to_le_bytes()),
            Some(0x1f00)
        );
        // bl is a call, not a jump.
        let bl: u32 = 0x9400_0001;
        assert_eq!(jump_target(Aarch64, 0x2000, &bl.to_le_bytes()), None);
    }

    #[test]
    fn past_a_sized_symbol_the_name_is_a_guess() {
        let t = table();
        // The unnamed function behind the stub.
        assert_eq!(at(&t, 0x1202), Some(("PMPI_Recv", 0x1200, true)));
        assert_eq!(at(&t, 0x13ff), Some(("PMPI_Recv", 0x1200, true)));
        assert_eq!(at(&t, 0x1110), Some(("sized", 0x1100, true)));
        // A symbol without a size never covers: it too is a guess.
        assert_eq!(at(&t, 0x1400), Some(("unsized", 0x1400, true)));
        assert_eq!(at(&t, 0x1fff), Some(("unsized", 0x1400, true)));
    }

    #[test]
    fn a_guess_stays_inside_its_section() {
        let t = table();
        // Before the first symbol of .text.
        assert_eq!(at(&t, 0x1000), None);
        assert_eq!(at(&t, 0x10ff), None);
        // Past the end of .text: between sections, and in no section.
        assert_eq!(at(&t, 0x2000), None);
        assert_eq!(at(&t, 0x2fff), None);
        // Past the end of .fini, whose symbol is the closest below.
        assert_eq!(at(&t, 0x3010), None);
        assert_eq!(at(&t, u64::MAX), None);
        assert_eq!(at(&t, 0), None);
    }

    #[test]
    fn a_table_without_sections_guesses_nothing() {
        let t = ObjectSymbols::from_parts(vec![sym("f", 0x1000, 4)], Vec::new(), None);
        assert_eq!(at(&t, 0x1003), Some(("f", 0x1000, false)));
        assert_eq!(at(&t, 0x1004), None);
    }

    #[test]
    fn overlapping_code_ranges_are_merged() {
        let t = ObjectSymbols::from_parts(
            vec![sym("a", 0x10, 1), sym("b", 0x40, 1)],
            vec![0..0x20, 0x10..0x50, 0x60..0x60],
            None,
        );
        assert_eq!(t.code, vec![0..0x50]);
        assert_eq!(at(&t, 0x4f), Some(("b", 0x40, true)));
        assert_eq!(at(&t, 0x50), None);
    }
}
