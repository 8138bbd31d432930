//! Synthetic processes with code in them: ELF objects (an executable,
//! shared libraries) that hold functions with their unwind information and,
//! optionally, DWARF lines, beside data globals; and ELF cores of processes
//! that map those objects, with each thread's registers and stack.
//!
//! This is what a stack walk needs to be tested end to end on files: the
//! unwinder, the symbol tables and the DWARF reader see real sections. Like
//! the rest of the synthetic builders, nothing here calls the readers'
//! layout code; the bytes are laid out from the ELF, DWARF and kernel rules.
//!
//! Each function is [`FUNCTION_SIZE`] bytes of x86-64 code shaped like a
//! compiled function with frame pointers (`push %rbp; mov %rsp,%rbp; ...;
//! call; ...; pop %rbp; ret`), described by an `.eh_frame` FDE that says
//! so. A call from it returns to [`CALL_RETURN_OFFSET`]; a thread stopped in
//! it stops at [`STOPPED_PC_OFFSET`]. [`frame_pointer_stack`] lays out the
//! stack of a thread stopped in a chain of such calls.
//!
//! ```
//! use mpidd_read::synthetic_process::{frame_pointer_stack, SyntheticCore, SyntheticObject};
//! use mpidd_read::{core_stacks, CoreTarget, StackUnwinder};
//! use mpidd_types::TargetAbi;
//!
//! let dir = std::env::temp_dir().join(format!("mpidd-doc-process-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let exe = SyntheticObject::executable(TargetAbi::X86_64)
//!     .function("_start", None)
//!     .function("main", Some(("demo.c", 12)))
//!     .function("compute", Some(("demo.c", 42)))
//!     .build()?;
//! let exe_path = dir.join("app");
//! exe.write(&exe_path)?;
//!
//! let bias = 0x5555_5555_0000;
//! let at = |f: &str, off: u64| bias + exe.function(f).unwrap().start + off;
//! let stack = frame_pointer_stack(
//!     TargetAbi::X86_64,
//!     0x7ffe_0000_0000,
//!     at("compute", mpidd_read::synthetic_process::STOPPED_PC_OFFSET),
//!     &[
//!         at("main", mpidd_read::synthetic_process::CALL_RETURN_OFFSET),
//!         at("_start", mpidd_read::synthetic_process::CALL_RETURN_OFFSET),
//!     ],
//! );
//! let mut core = SyntheticCore::new(TargetAbi::X86_64, 77);
//! core.map_object(&exe_path.to_string_lossy(), &exe, bias);
//! core.map(stack.base, stack.bytes.clone());
//! core.thread(stack.registers(77));
//! let core_path = dir.join("core.77");
//! core.write(&core_path)?;
//!
//! let target = CoreTarget::open(&core_path, None, None)?;
//! let stacks = core_stacks(&target, &StackUnwinder::default());
//! let names: Vec<_> = stacks[0].frames.iter().map(|f| f.function.clone().unwrap()).collect();
//! assert_eq!(names, ["compute", "main", "_start"]);
//! assert_eq!(stacks[0].frames[0].line, Some(42));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use gimli::write::{
    Address, AttributeValue, CallFrameInstruction, CommonInformationEntry, DwarfUnit, EhFrame,
    EndianVec, FrameDescriptionEntry, FrameTable, LineProgram, LineString, Sections,
};
use gimli::{Encoding, Format, LineEncoding, RunTimeEndian, X86_64};
use mpidd_types::{AddressWidth, ByteOrder, TargetAbi, TargetAddr};
use object::elf;
use object::write::elf::{FileHeader, ProgramHeader, SectionHeader, Sym, Writer};

use crate::backend::thread_registers::{StackArch, ThreadRegisters};
use crate::synthetic::synthetic_elf::{
    endianness, machine, Bytes, WriteError, AT_ENTRY, AT_NULL, AT_PAGESZ, PAGE,
};
use crate::synthetic::synthetic_job::push_uint;
use crate::synthetic::synthetic_memory::SyntheticMemory;

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
const AT_PHDR: u64 = 3;
/// The x86-64 general register set (`user_regs_struct`) in words, and the
/// indices of `rbp`, `rip` and `rsp` in it (the kernel's order).
const X86_64_REGS: usize = 27;
const X86_64_RBP: usize = 4;
const X86_64_RIP: usize = 16;
const X86_64_RSP: usize = 19;
/// Where `pr_reg` starts in a 64-bit `struct elf_prstatus`, and the bytes
/// after it (`pr_fpvalid` and padding).
const PR_REG_OFFSET_64: usize = 112;

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
struct Segment {
    vaddr: u64,
    offset: u64,
    size: u64,
    writable: bool,
}

/// A laid-out object: its file's bytes and where its functions and globals
/// are, at link-time addresses (add the load bias for run-time ones).
#[derive(Clone, Debug)]
pub struct BuiltObject {
    abi: TargetAbi,
    bytes: Vec<u8>,
    functions: HashMap<String, Range<u64>>,
    globals: HashMap<String, (u64, u64)>,
    segments: Vec<Segment>,
    entry: u64,
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

/// The stack of a thread stopped in a chain of calls, laid out by
/// [`frame_pointer_stack`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameStack {
    /// Where the stack's bytes go.
    pub base: TargetAddr,
    /// The bytes: one page or more.
    pub bytes: Vec<u8>,
    /// The thread's pc.
    pub pc: u64,
    /// Its stack pointer.
    pub sp: u64,
    /// Its frame pointer.
    pub fp: u64,
}

impl FrameStack {
    /// The x86-64 registers of thread `tid` stopped on this stack.
    pub fn registers(&self, tid: i32) -> ThreadRegisters {
        x86_64_registers(tid, self.pc, self.sp, self.fp)
    }
}

/// The x86-64 registers of thread `tid` with this pc, stack pointer and
/// frame pointer (the others zero).
pub fn x86_64_registers(tid: i32, pc: u64, sp: u64, fp: u64) -> ThreadRegisters {
    let mut general = vec![0u64; X86_64_REGS];
    general[X86_64_RIP] = pc;
    general[X86_64_RSP] = sp;
    general[X86_64_RBP] = fp;
    ThreadRegisters {
        tid,
        arch: StackArch::X86_64,
        pc,
        sp,
        fp,
        lr: None,
        general,
    }
}

/// Bytes of locals each synthetic frame has below its saved frame
/// pointer, so frames are not packed back to back.
const FRAME_LOCALS: u64 = 0x20;

/// Lays out, from `base` up, the stack of an x86-64 thread stopped at
/// `pc` with `return_addresses` (innermost first) above it, as code built
/// with frame pointers leaves it: each frame holds the caller's `%rbp` and
/// the return address into the caller; the outermost frame's are 0, which
/// ends a walk as `_start`'s does.
pub fn frame_pointer_stack(
    abi: TargetAbi,
    base: u64,
    pc: u64,
    return_addresses: &[u64],
) -> FrameStack {
    let frames = return_addresses.len() as u64 + 1;
    let first_fp = base + FRAME_LOCALS;
    let frame = 16 + FRAME_LOCALS;
    let len = (first_fp + frames * frame - base).div_ceil(PAGE) * PAGE;
    let mut bytes = vec![0u8; len as usize];
    let mut put = |at: u64, v: u64| {
        let mut word = Vec::with_capacity(8);
        push_uint(&mut word, abi.byte_order, v, 8);
        let i = (at - base) as usize;
        bytes[i..i + 8].copy_from_slice(&word);
    };
    for i in 0..frames {
        let fp = first_fp + i * frame;
        let (caller_fp, ret) = match return_addresses.get(i as usize) {
            Some(&ret) => (fp + frame, ret),
            None => (0, 0),
        };
        put(fp, caller_fp);
        put(fp + 8, ret);
    }
    FrameStack {
        base: TargetAddr(base),
        bytes,
        pc,
        sp: base,
        fp: first_fp,
    }
}

/// An object as a process maps it.
#[derive(Clone, Debug)]
struct MappedObject {
    path: String,
    segments: Vec<Segment>,
    bias: u64,
    entry: u64,
}

/// The core of a synthetic process: the objects it maps (the first one
/// mapped is its executable), the memory the core holds, and its threads.
#[derive(Clone, Debug)]
pub struct SyntheticCore {
    abi: TargetAbi,
    pid: i32,
    objects: Vec<MappedObject>,
    memory: SyntheticMemory,
    threads: Vec<ThreadRegisters>,
}

impl SyntheticCore {
    /// A process `pid` of a target with this ABI, with nothing mapped.
    pub fn new(abi: TargetAbi, pid: i32) -> Self {
        SyntheticCore {
            abi,
            pid,
            objects: Vec::new(),
            memory: SyntheticMemory::new(abi),
            threads: Vec::new(),
        }
    }

    /// Maps `object`, whose file is at `path`, at load bias `bias`. The
    /// core names it in NT_FILE and does not hold its pages (as the kernel
    /// leaves out file-backed pages that were not written); map its data
    /// segment's run-time contents with [`Self::map`].
    pub fn map_object(&mut self, path: &str, object: &BuiltObject, bias: u64) {
        self.objects.push(MappedObject {
            path: path.to_string(),
            segments: object.segments.clone(),
            bias,
            entry: object.entry,
        });
    }

    /// Memory the core holds: `bytes` at `addr`.
    pub fn map(&mut self, addr: TargetAddr, bytes: Vec<u8>) {
        self.memory.map(addr, bytes);
    }

    /// Adds a thread. The first thread's tid should be the pid.
    pub fn thread(&mut self, registers: ThreadRegisters) {
        self.threads.push(registers);
    }

    /// Writes the core file.
    pub fn write(&self, path: &Path) -> Result<(), WriteError> {
        let bytes = self.bytes()?;
        std::fs::write(path, bytes).map_err(|cause| WriteError::Io {
            path: path.display().to_string(),
            cause,
        })
    }

    /// The core file's bytes.
    pub fn bytes(&self) -> Result<Vec<u8>, WriteError> {
        let abi = self.abi;
        let mut notes = Bytes::new(abi);
        let threads: Vec<(i32, Option<&ThreadRegisters>)> = if self.threads.is_empty() {
            vec![(self.pid, None)]
        } else {
            self.threads.iter().map(|t| (t.tid, Some(t))).collect()
        };
        for (tid, regs) in threads {
            notes.note(b"CORE", elf::NT_PRSTATUS.0, &self.prstatus(tid, regs));
        }
        let mut auxv = Bytes::new(abi);
        let mut aux = vec![(AT_PAGESZ, PAGE)];
        if let Some(exe) = self.objects.first() {
            let phoff = if abi.address_width == AddressWidth::W64 {
                64
            } else {
                52
            };
            aux.push((AT_PHDR, exe.bias + phoff));
            aux.push((AT_ENTRY, exe.bias + exe.entry));
        }
        aux.push((AT_NULL, 0));
        for (k, v) in aux {
            auxv.word(k);
            auxv.word(v);
        }
        notes.note(b"CORE", elf::NT_AUXV.0, &auxv.out);
        let mut file = Bytes::new(abi);
        let mappings: Vec<(u64, u64, u64, &str)> = self
            .objects
            .iter()
            .flat_map(|o| {
                o.segments.iter().map(move |s| {
                    let start = o.bias + s.vaddr;
                    let end = (start + s.size).div_ceil(PAGE) * PAGE;
                    (start, end, s.offset / PAGE, o.path.as_str())
                })
            })
            .collect();
        file.word(mappings.len() as u64);
        file.word(PAGE);
        for (start, end, offset, _) in &mappings {
            file.word(*start);
            file.word(*end);
            file.word(*offset);
        }
        for (_, _, _, path) in &mappings {
            file.out.extend_from_slice(path.as_bytes());
            file.out.push(0);
        }
        notes.note(b"CORE", elf::NT_FILE.0, &file.out);
        self.elf(&notes.out)
    }

    /// One NT_PRSTATUS descriptor: the pid, and the registers when given
    /// (in the kernel's `user_regs_struct` order, 64-bit layout).
    fn prstatus(&self, tid: i32, regs: Option<&ThreadRegisters>) -> Vec<u8> {
        let word = self.abi.address_bytes();
        // pr_pid sits after the siginfo (12 bytes), cursig and padding (4)
        // and two words of signal masks.
        let pid_offset = 16 + 2 * word;
        let mut d = Bytes::new(self.abi);
        d.out.resize(pid_offset, 0);
        d.uint(tid as u32 as u64, 4);
        match regs {
            Some(r) if word == 8 => {
                d.out.resize(PR_REG_OFFSET_64, 0);
                for &v in &r.general {
                    d.uint(v, 8);
                }
                d.out.extend([0; 8]); // pr_fpvalid and padding
            }
            _ => d.out.resize(pid_offset + 16, 0),
        }
        d.out
    }

    fn elf(&self, notes: &[u8]) -> Result<Vec<u8>, WriteError> {
        let abi = self.abi;
        let fail = |e: object::write::Error| WriteError::Elf {
            file: "core",
            message: e.to_string(),
        };
        let segments: Vec<(TargetAddr, &[u8])> = self.memory.segments().collect();
        let mut buf = Vec::new();
        let mut w = Writer::new(
            endianness(abi),
            abi.address_width == AddressWidth::W64,
            &mut buf,
        );
        w.reserve_file_header();
        w.reserve_program_headers(1 + segments.len() as u32);
        let notes_offset = w.reserve(notes.len() as u64, 4);
        // Segments are packed at 8-byte alignment rather than pages: the
        // reader does not map them, and a thousand-rank job stays small.
        let offsets: Vec<u64> = segments
            .iter()
            .map(|(_, b)| w.reserve(b.len() as u64, 8))
            .collect();
        w.write_file_header(&FileHeader {
            os_abi: elf::ELFOSABI_NONE,
            abi_version: 0,
            e_type: elf::ET_CORE,
            e_machine: machine(abi),
            e_entry: 0,
            e_flags: elf::FileFlags(0),
        })
        .map_err(fail)?;
        w.write_align_program_headers();
        w.write_program_header(&ProgramHeader {
            p_type: elf::PT_NOTE,
            p_flags: elf::ProgramFlags(0),
            p_offset: notes_offset,
            p_vaddr: 0,
            p_paddr: 0,
            p_filesz: notes.len() as u64,
            p_memsz: 0,
            p_align: 4,
        });
        for ((addr, bytes), off) in segments.iter().zip(&offsets) {
            w.write_program_header(&ProgramHeader {
                p_type: elf::PT_LOAD,
                p_flags: elf::PF_R | elf::PF_W,
                p_offset: *off,
                p_vaddr: addr.0,
                p_paddr: 0,
                p_filesz: bytes.len() as u64,
                p_memsz: bytes.len() as u64,
                p_align: 8,
            });
        }
        w.write_align(4);
        w.write(notes);
        for (_, bytes) in &segments {
            w.write_align(8);
            w.write(bytes);
        }
        Ok(buf)
    }
}
