//! Synthetic ELF objects with code in them: an executable or a shared
//! library holding functions (x86-64 code shaped like a compiled function
//! with frame pointers, an `.eh_frame` FDE for each, optionally DWARF lines)
//! beside data globals. The public items are re-exported by
//! [`synthetic_process`](crate::synthetic_process), which also lays out the
//! cores of processes that map these objects.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use gimli::write::{
    Address, AttributeValue, CallFrameInstruction, CommonInformationEntry, DwarfUnit, EhFrame,
    EndianVec, FrameDescriptionEntry, FrameTable, LineProgram, LineString, Sections,
};
use gimli::{Encoding, Format, LineEncoding, RunTimeEndian, X86_64};
use mpidd_types::{AddressWidth, ByteOrder, TargetAbi};
use object::elf;
use object::write::elf::{FileHeader, ProgramHeader, SectionHeader, Sym, Writer};

use crate::synthetic::synthetic_elf::{endianness, machine, WriteError, PAGE};
use crate::synthetic::synthetic_job::push_uint;

/// Bytes of code per function.
pub const FUNCTION_SIZE: u64 = 64;
/// Where, from its start, a function's call returns to: the instruction
/// after its `call`.
pub const CALL_RETURN_OFFSET: u64 = 0x20;
/// Where, from its start, a thread stopped in a function stopped: past the
/// prologue, so the frame pointer is set up.
pub const STOPPED_PC_OFFSET: u64 = 0x10;
/// Link-time address of the first function.
const TEXT_VADDR: u64 = PAGE;
/// `AT_PHDR`: the address of the program headers.
pub(crate) const AT_PHDR: u64 = 3;
/// A function of a synthetic object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntheticFunction {
    /// Its symbol.
    pub name: String,
    /// The source file and line DWARF gives for all of its code, if any.
    pub source: Option<(String, u32)>,
}

/// A data global of a synthetic object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntheticGlobal {
    /// Its symbol.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its alignment (a power of two).
    pub align: u64,
    /// A local (`static`) symbol: only in `.symtab`, as MPICH keeps its
    /// receive-queue heads.
    pub local: bool,
}

/// An ELF object being described: its functions and its data globals.
#[derive(Clone, Debug)]
pub struct SyntheticObject {
    abi: TargetAbi,
    executable: bool,
    functions: Vec<SyntheticFunction>,
    globals: Vec<SyntheticGlobal>,
}

impl SyntheticObject {
    /// A position-independent executable; its entry point is `_start` if
    /// it has one.
    pub fn executable(abi: TargetAbi) -> Self {
        SyntheticObject {
            abi,
            executable: true,
            functions: Vec::new(),
            globals: Vec::new(),
        }
    }

    /// A shared library.
    pub fn library(abi: TargetAbi) -> Self {
        SyntheticObject {
            executable: false,
            ..SyntheticObject::executable(abi)
        }
    }

    /// Adds a function (once: a name already there is kept as it was),
    /// with the source file and line of its code if given.
    pub fn function(mut self, name: &str, source: Option<(&str, u32)>) -> Self {
        if !self.functions.iter().any(|f| f.name == name) {
            self.functions.push(SyntheticFunction {
                name: name.to_string(),
                source: source.map(|(f, l)| (f.to_string(), l)),
            });
        }
        self
    }

    /// Adds a global data symbol of `size` bytes.
    pub fn global(mut self, name: &str, size: u64, align: u64, local: bool) -> Self {
        self.globals.push(SyntheticGlobal {
            name: name.to_string(),
            size,
            align: align.max(1),
            local,
        });
        self
    }

    /// Lays the object out as an ELF file.
    pub fn build(&self) -> Result<BuiltObject, WriteError> {
        let x86_64 = machine(self.abi) == elf::EM_X86_64;
        let mut functions = HashMap::new();
        let mut text = Vec::new();
        for (i, f) in self.functions.iter().enumerate() {
            let start = TEXT_VADDR + i as u64 * FUNCTION_SIZE;
            functions.insert(f.name.clone(), start..start + FUNCTION_SIZE);
            text.extend(function_code(x86_64));
        }
        let eh_frame = if x86_64 {
            eh_frame(self.abi, self.functions.len())?
        } else {
            Vec::new()
        };
        let debug = if self.functions.iter().any(|f| f.source.is_some()) {
            dwarf(self.abi, &self.functions)?
        } else {
            Vec::new()
        };
        let mut globals = HashMap::new();
        let mut data_len = 0u64;
        for g in &self.globals {
            data_len = data_len.div_ceil(g.align) * g.align;
            globals.insert(g.name.clone(), (data_len, g.size));
            data_len += g.size;
        }
        // Never empty, so the object always has a writable segment.
        let data_len = data_len.max(8);
        let text_end = TEXT_VADDR + text.len() as u64;
        let eh_vaddr = text_end.div_ceil(8) * 8;
        let data_vaddr = (eh_vaddr + eh_frame.len() as u64).div_ceil(PAGE) * PAGE;
        for v in globals.values_mut() {
            v.0 += data_vaddr;
        }
        let entry = match (self.executable, functions.get("_start")) {
            (true, Some(r)) => r.start,
            (true, None) => TEXT_VADDR,
            (false, _) => 0,
        };
        let mut built = BuiltObject {
            abi: self.abi,
            bytes: Vec::new(),
            functions,
            globals,
            segments: vec![
                Segment {
                    vaddr: 0,
                    offset: 0,
                    size: eh_vaddr + eh_frame.len() as u64,
                    writable: false,
                },
                Segment {
                    vaddr: data_vaddr,
                    offset: data_vaddr,
                    size: data_len,
                    writable: true,
                },
            ],
            entry,
        };
        built.bytes = self.elf(&built, &text, &eh_frame, &debug)?;
        Ok(built)
    }

    /// A GNU build-id note, as linkers write one: 20 bytes that depend on
    /// everything the object is made of, so that two objects of different
    /// contents never share one and a layout profile can name the object.
    fn build_id_note(&self) -> Vec<u8> {
        let mut described = format!("{:?}|{}", self.abi, self.executable);
        for f in &self.functions {
            described.push_str(&format!("|f:{}:{:?}", f.name, f.source));
        }
        for g in &self.globals {
            described.push_str(&format!("|g:{}:{}:{}:{}", g.name, g.size, g.align, g.local));
        }
        let mut id = Vec::with_capacity(20);
        for salt in 0u8..5 {
            let mut h = crc32fast::Hasher::new();
            h.update(&[salt]);
            h.update(described.as_bytes());
            id.extend(h.finalize().to_be_bytes());
        }
        let mut note = Vec::new();
        push_uint(&mut note, self.abi.byte_order, 4, 4); // namesz: "GNU\0"
        push_uint(&mut note, self.abi.byte_order, id.len() as u64, 4);
        push_uint(
            &mut note,
            self.abi.byte_order,
            u64::from(elf::NT_GNU_BUILD_ID.0),
            4,
        );
        note.extend(b"GNU\0");
        note.extend(&id);
        note
    }

    fn elf(
        &self,
        built: &BuiltObject,
        text: &[u8],
        eh_frame: &[u8],
        debug: &[(&'static str, Vec<u8>)],
    ) -> Result<Vec<u8>, WriteError> {
        let fail = |e: object::write::Error| WriteError::Elf {
            file: "object",
            message: e.to_string(),
        };
        let abi = self.abi;
        let data = vec![0u8; built.segments[1].size as usize];
        let mut buf = Vec::new();
        let mut w = Writer::new(
            endianness(abi),
            abi.address_width == AddressWidth::W64,
            &mut buf,
        );
        w.reserve_file_header();
        w.reserve_program_headers(built.segments.len() as u32);
        w.reserve_null_section_index();
        let text_name = w.add_section_name(b".text");
        let text_index = w.reserve_section_index();
        let eh_section = (!eh_frame.is_empty())
            .then(|| (w.add_section_name(b".eh_frame"), w.reserve_section_index()));
        let data_name = w.add_section_name(b".data");
        let data_index = w.reserve_section_index();
        let note = self.build_id_note();
        let note_name = w.add_section_name(b".note.gnu.build-id");
        w.reserve_section_index();
        let debug_sections: Vec<_> = debug
            .iter()
            .map(|(name, _)| {
                (
                    w.add_section_name(name.as_bytes()),
                    w.reserve_section_index(),
                )
            })
            .collect();

        // Local symbols come first in a symbol table.
        let mut symbols: Vec<(String, u64, u64, bool, bool)> = Vec::new();
        for g in self.globals.iter().filter(|g| g.local) {
            let (addr, size) = built.globals[&g.name];
            symbols.push((g.name.clone(), addr, size, false, true));
        }
        let locals = symbols.len();
        for f in &self.functions {
            let r = &built.functions[&f.name];
            symbols.push((f.name.clone(), r.start, FUNCTION_SIZE, true, false));
        }
        for g in self.globals.iter().filter(|g| !g.local) {
            let (addr, size) = built.globals[&g.name];
            symbols.push((g.name.clone(), addr, size, false, false));
        }
        w.reserve_null_symbol_index();
        let names: Vec<_> = symbols
            .iter()
            .map(|(name, _, _, is_function, _)| {
                w.reserve_symbol_index(Some(if *is_function { text_index } else { data_index }));
                w.add_string(name.as_bytes())
            })
            .collect();
        w.reserve_symtab_section_index();
        w.reserve_strtab_section_index();
        w.reserve_shstrtab_section_index();

        let text_offset = w.reserve(text.len() as u64, PAGE);
        debug_assert_eq!(text_offset, TEXT_VADDR);
        let eh_offset = w.reserve(eh_frame.len() as u64, 8);
        let data_offset = w.reserve(data.len() as u64, PAGE);
        debug_assert_eq!(data_offset, built.segments[1].offset);
        let note_offset = w.reserve(note.len() as u64, 4);
        let debug_offsets: Vec<_> = debug
            .iter()
            .map(|(_, bytes)| w.reserve(bytes.len() as u64, 1))
            .collect();
        w.reserve_symtab();
        w.reserve_strtab().map_err(fail)?;
        w.reserve_shstrtab().map_err(fail)?;
        w.reserve_section_headers();

        w.write_file_header(&FileHeader {
            os_abi: elf::ELFOSABI_NONE,
            abi_version: 0,
            e_type: elf::ET_DYN,
            e_machine: machine(abi),
            e_entry: built.entry,
            e_flags: elf::FileFlags(0),
        })
        .map_err(fail)?;
        w.write_align_program_headers();
        for s in &built.segments {
            w.write_program_header(&ProgramHeader {
                p_type: elf::PT_LOAD,
                p_flags: if s.writable {
                    elf::PF_R | elf::PF_W
                } else {
                    elf::PF_R | elf::PF_X
                },
                p_offset: s.offset,
                p_vaddr: s.vaddr,
                p_paddr: s.vaddr,
                p_filesz: s.size,
                p_memsz: s.size,
                p_align: PAGE,
            });
        }
        w.write_align(PAGE);
        w.write(text);
        w.write_align(8);
        w.write(eh_frame);
        w.write_align(PAGE);
        w.write(&data);
        w.write_align(4);
        w.write(&note);
        for (_, bytes) in debug {
            w.write(bytes);
        }
        w.write_null_symbol();
        for ((_, value, size, is_function, local), string) in symbols.iter().zip(&names) {
            w.write_symbol(&Sym {
                section: Some(if *is_function {
                    text_index.0
                } else {
                    data_index.0
                }),
                st_name: w.string_offset(Some(*string)),
                st_info: elf::SymbolInfo::new(
                    if *local {
                        elf::STB_LOCAL
                    } else {
                        elf::STB_GLOBAL
                    },
                    if *is_function {
                        elf::STT_FUNC
                    } else {
                        elf::STT_OBJECT
                    },
                ),
                st_other: elf::SymbolOther(elf::STV_DEFAULT.0),
                st_shndx: elf::SymbolSection(0),
                st_value: *value,
                st_size: *size,
            });
        }
        w.write_strtab();
        w.write_shstrtab();
        w.write_null_section_header();
        let mut sections = vec![(
            text_name,
            elf::SHT_PROGBITS,
            elf::SHF_ALLOC | elf::SHF_EXECINSTR,
            TEXT_VADDR,
            text_offset,
            text.len() as u64,
            16,
        )];
        if let Some((name, _)) = eh_section {
            sections.push((
                name,
                elf::SHT_PROGBITS,
                elf::SHF_ALLOC,
                eh_offset,
                eh_offset,
                eh_frame.len() as u64,
                8,
            ));
        }
        sections.push((
            data_name,
            elf::SHT_PROGBITS,
            elf::SHF_ALLOC | elf::SHF_WRITE,
            data_offset,
            data_offset,
            data.len() as u64,
            8,
        ));
        sections.push((
            note_name,
            elf::SHT_NOTE,
            elf::SectionFlags(0),
            0,
            note_offset,
            note.len() as u64,
            4,
        ));
        for (((name, _), (_, bytes)), offset) in
            debug_sections.iter().zip(debug).zip(&debug_offsets)
        {
            sections.push((
                *name,
                elf::SHT_PROGBITS,
                elf::SectionFlags(0),
                0,
                *offset,
                bytes.len() as u64,
                1,
            ));
        }
        for (name, sh_type, sh_flags, addr, offset, size, align) in sections {
            w.write_section_header(&SectionHeader {
                sh_name: w.section_name_offset(Some(name)),
                sh_type,
                sh_flags,
                sh_addr: addr,
                sh_offset: offset,
                sh_size: size,
                sh_link: 0,
                sh_info: 0,
                sh_addralign: align,
                sh_entsize: 0,
            });
        }
        w.write_symtab_section_header(1 + locals as u32);
        w.write_strtab_section_header();
        w.write_shstrtab_section_header();
        Ok(buf)
    }
}

/// One PT_LOAD segment of a built object, at link-time addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub(crate) vaddr: u64,
    pub(crate) offset: u64,
    pub(crate) size: u64,
    pub(crate) writable: bool,
}

/// A laid-out object: its file's bytes and where its functions and globals
/// are, at link-time addresses (add the load bias for run-time ones).
#[derive(Clone, Debug)]
pub struct BuiltObject {
    abi: TargetAbi,
    bytes: Vec<u8>,
    functions: HashMap<String, Range<u64>>,
    globals: HashMap<String, (u64, u64)>,
    pub(crate) segments: Vec<Segment>,
    pub(crate) entry: u64,
}

impl BuiltObject {
    /// The ELF file.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Its GNU build-id, read back from its note.
    pub fn build_id(&self) -> Option<Vec<u8>> {
        use object::Object;
        let file = object::File::parse(self.bytes.as_slice()).ok()?;
        file.build_id().ok().flatten().map(<[u8]>::to_vec)
    }

    /// Writes the ELF file to `path`.
    pub fn write(&self, path: &Path) -> Result<(), WriteError> {
        std::fs::write(path, &self.bytes).map_err(|cause| WriteError::Io {
            path: path.display().to_string(),
            cause,
        })
    }

    /// The link-time address range of a function's code.
    pub fn function(&self, name: &str) -> Option<Range<u64>> {
        self.functions.get(name).cloned()
    }

    /// The link-time address and size of a global.
    pub fn global(&self, name: &str) -> Option<(u64, u64)> {
        self.globals.get(name).copied()
    }

    /// The link-time address range of the writable data segment, which
    /// holds every global. A core gives its run-time contents.
    pub fn data(&self) -> Range<u64> {
        let d = &self.segments[1];
        d.vaddr..d.vaddr + d.size
    }

    /// The ABI it was built for.
    pub fn abi(&self) -> TargetAbi {
        self.abi
    }

    /// The link-time entry point (0 for a library).
    pub fn entry(&self) -> u64 {
        self.entry
    }
}

/// The code of one function: an x86-64 frame-pointer prologue, a call
/// whose return address is [`CALL_RETURN_OFFSET`], and the epilogue. The
/// bytes are never run; they are there for a disassembler's sake. Other
/// machines get zeros.
fn function_code(x86_64: bool) -> Vec<u8> {
    if !x86_64 {
        return vec![0; FUNCTION_SIZE as usize];
    }
    let mut code = vec![0x90; FUNCTION_SIZE as usize]; // nop
    code[..4].copy_from_slice(&[0x55, 0x48, 0x89, 0xe5]); // push %rbp; mov %rsp,%rbp
    let call = CALL_RETURN_OFFSET as usize - 5;
    code[call..call + 5].copy_from_slice(&[0xe8, 0, 0, 0, 0]); // call
    let end = FUNCTION_SIZE as usize;
    code[end - 2..].copy_from_slice(&[0x5d, 0xc3]); // pop %rbp; ret
    code
}

/// `.eh_frame` for `count` functions laid out by [`function_code`]: after
/// the prologue the CFA is `%rbp + 16`, the caller's `%rbp` is saved at
/// CFA − 16 and the return address at CFA − 8, as a compiler says it.
fn eh_frame(abi: TargetAbi, count: usize) -> Result<Vec<u8>, WriteError> {
    let fail = |e: gimli::write::Error| WriteError::Elf {
        file: ".eh_frame",
        message: e.to_string(),
    };
    let encoding = Encoding {
        format: Format::Dwarf32,
        version: 1,
        address_size: 8,
    };
    let mut table = FrameTable::default();
    let mut cie = CommonInformationEntry::new(encoding, 1, -8, X86_64::RA);
    cie.add_instruction(CallFrameInstruction::Cfa(X86_64::RSP, 8));
    cie.add_instruction(CallFrameInstruction::Offset(X86_64::RA, -8));
    let cie = table.add_cie(cie);
    for i in 0..count {
        let start = TEXT_VADDR + i as u64 * FUNCTION_SIZE;
        let mut fde = FrameDescriptionEntry::new(Address::Constant(start), FUNCTION_SIZE as u32);
        fde.add_instruction(1, CallFrameInstruction::CfaOffset(16));
        fde.add_instruction(1, CallFrameInstruction::Offset(X86_64::RBP, -16));
        fde.add_instruction(4, CallFrameInstruction::CfaRegister(X86_64::RBP));
        fde.add_instruction(
            FUNCTION_SIZE as u32 - 1,
            CallFrameInstruction::Cfa(X86_64::RSP, 8),
        );
        table.add_fde(cie, fde);
    }
    let mut out = EhFrame(EndianVec::new(run_time_endian(abi)));
    table.write_eh_frame(&mut out).map_err(fail)?;
    Ok(out.0.into_vec())
}

fn run_time_endian(abi: TargetAbi) -> RunTimeEndian {
    match abi.byte_order {
        ByteOrder::Little => RunTimeEndian::Little,
        ByteOrder::Big => RunTimeEndian::Big,
    }
}

/// DWARF for the functions that have a source line: one compilation unit
/// with a subprogram per function and a line program that gives all of
/// each function's code its line. Returns the non-empty sections.
fn dwarf(
    abi: TargetAbi,
    functions: &[SyntheticFunction],
) -> Result<Vec<(&'static str, Vec<u8>)>, WriteError> {
    let fail = |e: gimli::write::Error| WriteError::Elf {
        file: "DWARF",
        message: e.to_string(),
    };
    let encoding = Encoding {
        format: Format::Dwarf32,
        version: 4,
        address_size: abi.address_bytes() as u8,
    };
    let first_file = functions
        .iter()
        .find_map(|f| f.source.as_ref().map(|(file, _)| file.clone()))
        .unwrap_or_else(|| "synthetic.c".to_string());
    let mut dwarf = DwarfUnit::new(encoding);
    let mut program = LineProgram::new(
        encoding,
        LineEncoding::default(),
        LineString::String(b"/synthetic".to_vec()),
        None,
        LineString::String(first_file.clone().into_bytes()),
        None,
    );
    let dir = program.default_directory();
    let root = dwarf.unit.root();
    dwarf.unit.get_mut(root).set(
        gimli::DW_AT_name,
        AttributeValue::String(first_file.into_bytes()),
    );
    for (i, f) in functions.iter().enumerate() {
        let Some((file, line)) = &f.source else {
            continue;
        };
        let start = TEXT_VADDR + i as u64 * FUNCTION_SIZE;
        let file_id = program.add_file(LineString::String(file.clone().into_bytes()), dir, None);
        program.begin_sequence(Some(Address::Constant(start)));
        program.row().file = file_id;
        program.row().line = u64::from(*line);
        program.generate_row();
        program.end_sequence(FUNCTION_SIZE);
        let id = dwarf.unit.add(root, gimli::DW_TAG_subprogram);
        let entry = dwarf.unit.get_mut(id);
        entry.set(
            gimli::DW_AT_name,
            AttributeValue::String(f.name.clone().into_bytes()),
        );
        entry.set(
            gimli::DW_AT_low_pc,
            AttributeValue::Address(Address::Constant(start)),
        );
        entry.set(gimli::DW_AT_high_pc, AttributeValue::Udata(FUNCTION_SIZE));
    }
    dwarf.unit.line_program = program;
    let mut sections = Sections::new(EndianVec::new(run_time_endian(abi)));
    dwarf.write(&mut sections).map_err(fail)?;
    let mut out = Vec::new();
    sections
        .for_each(|id, data| {
            if !data.slice().is_empty() {
                out.push((id.name(), data.slice().to_vec()));
            }
            Ok::<(), gimli::write::Error>(())
        })
        .map_err(fail)?;
    Ok(out)
}
