//! Writes a [`SyntheticJob`] out as real ELF files: a core file of the
//! process and the PIE executable whose symbol table names its globals.
//!
//! The core has what a Linux kernel core has for this job: PT_LOAD segments
//! for the executable's data and the heap, and notes NT_PRSTATUS (the pid),
//! NT_AUXV (the entry point, which gives the load bias) and, unless asked
//! not to, NT_FILE (the executable's mapping). Leaving NT_FILE out gives a
//! core like those qemu-user writes.

use std::path::Path;

use mpidd_types::{AddressWidth, ByteOrder, TargetAbi};
use object::elf;
use object::write::elf::{FileHeader, ProgramHeader, Sym, Writer};
use object::Endianness;

use crate::backend::memory::TargetMemory;
use crate::synthetic::synthetic_job::{push_uint, SyntheticJob, DATA_LINK_VADDR, ENTRY_LINK_VADDR};

/// Auxiliary-vector keys written into synthetic cores.
pub(crate) const AT_NULL: u64 = 0;
pub(crate) const AT_PAGESZ: u64 = 6;
pub(crate) const AT_ENTRY: u64 = 9;

pub(crate) const PAGE: u64 = 4096;

/// Options for [`SyntheticJob::write_files`].
#[derive(Clone, Copy, Debug, Default)]
pub struct SyntheticCoreOptions {
    /// Leave NT_FILE out, as qemu-user does.
    pub omit_nt_file: bool,
}

/// Errors of writing the files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The ELF writer refused.
    #[error("cannot lay out {file}: {message}")]
    Elf {
        /// Which file.
        file: &'static str,
        /// What the writer said.
        message: String,
    },
    /// Writing to disk failed.
    #[error("cannot write {path}: {cause}")]
    Io {
        /// The path.
        path: String,
        /// The OS error: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
}

pub(crate) fn machine(abi: TargetAbi) -> elf::Machine {
    match (abi.byte_order, abi.address_width) {
        (ByteOrder::Little, AddressWidth::W64) => elf::EM_X86_64,
        (ByteOrder::Little, AddressWidth::W32) => elf::EM_386,
        (ByteOrder::Big, AddressWidth::W64) => elf::EM_S390,
        (ByteOrder::Big, AddressWidth::W32) => elf::EM_PPC,
    }
}

pub(crate) fn endianness(abi: TargetAbi) -> Endianness {
    match abi.byte_order {
        ByteOrder::Little => Endianness::Little,
        ByteOrder::Big => Endianness::Big,
    }
}

/// Target-order words and notes, written without the decoders' help.
pub(crate) struct Bytes {
    abi: TargetAbi,
    pub(crate) out: Vec<u8>,
}

impl Bytes {
    pub(crate) fn new(abi: TargetAbi) -> Self {
        Bytes {
            abi,
            out: Vec::new(),
        }
    }

    pub(crate) fn uint(&mut self, v: u64, size: usize) {
        push_uint(&mut self.out, self.abi.byte_order, v, size);
    }

    pub(crate) fn word(&mut self, v: u64) {
        self.uint(v, self.abi.address_bytes());
    }

    /// One ELF note: header, name and descriptor, each padded to 4 bytes.
    pub(crate) fn note(&mut self, name: &[u8], n_type: u32, desc: &[u8]) {
        self.uint(name.len() as u64 + 1, 4);
        self.uint(desc.len() as u64, 4);
        self.uint(u64::from(n_type), 4);
        self.out.extend_from_slice(name);
        self.out.push(0);
        self.pad4();
        self.out.extend_from_slice(desc);
        self.pad4();
    }

    fn pad4(&mut self) {
        while !self.out.len().is_multiple_of(4) {
            self.out.push(0);
        }
    }
}

impl SyntheticJob {
    /// Writes the job as `core` (an ELF core file) and `executable` (the
    /// PIE that defines its globals). The core records `executable`'s path
    /// as given here, so a reader finds it through NT_FILE.
    pub fn write_files(
        &self,
        core: &Path,
        executable: &Path,
        options: SyntheticCoreOptions,
    ) -> Result<(), WriteError> {
        let exe_path = executable.to_string_lossy().into_owned();
        let exe = self.executable_bytes()?;
        let core_bytes = self.core_bytes(&exe_path, options)?;
        for (path, bytes) in [(executable, &exe), (core, &core_bytes)] {
            std::fs::write(path, bytes).map_err(|cause| WriteError::Io {
                path: path.display().to_string(),
                cause,
            })?;
        }
        Ok(())
    }

    fn segment_bytes(&self, start: mpidd_types::TargetAddr) -> Vec<u8> {
        self.memory
            .segments()
            .find(|(a, _)| *a == start)
            .map(|(_, b)| b.to_vec())
            .unwrap_or_default()
    }

    fn executable_bytes(&self) -> Result<Vec<u8>, WriteError> {
        let abi = self.memory.abi();
        let bias = self.layout.bias;
        let data = self.segment_bytes(self.layout.data);
        let fail = |e: object::write::Error| WriteError::Elf {
            file: "executable",
            message: e.to_string(),
        };
        let mut buf = Vec::new();
        let mut w = Writer::new(
            endianness(abi),
            abi.address_width == AddressWidth::W64,
            &mut buf,
        );
        let symbols: Vec<_> = self.symbols.iter().cloned().collect();

        w.reserve_file_header();
        w.reserve_program_headers(1);
        w.reserve_null_section_index();
        let data_name = w.add_section_name(b".data");
        let data_index = w.reserve_section_index();
        let data_offset = w.reserve(data.len() as u64, PAGE);
        w.reserve_null_symbol_index();
        let names: Vec<_> = symbols
            .iter()
            .map(|s| {
                w.reserve_symbol_index(Some(data_index));
                w.add_string(s.name.as_bytes())
            })
            .collect();
        w.reserve_symtab_section_index();
        w.reserve_symtab();
        w.reserve_strtab_section_index();
        w.reserve_strtab().map_err(fail)?;
        w.reserve_shstrtab_section_index();
        w.reserve_shstrtab().map_err(fail)?;
        w.reserve_section_headers();

        w.write_file_header(&FileHeader {
            os_abi: elf::ELFOSABI_NONE,
            abi_version: 0,
            e_type: elf::ET_DYN,
            e_machine: machine(abi),
            e_entry: ENTRY_LINK_VADDR,
            e_flags: elf::FileFlags(0),
        })
        .map_err(fail)?;
        w.write_align_program_headers();
        w.write_program_header(&ProgramHeader {
            p_type: elf::PT_LOAD,
            p_flags: elf::PF_R | elf::PF_W,
            p_offset: data_offset,
            p_vaddr: DATA_LINK_VADDR,
            p_paddr: DATA_LINK_VADDR,
            p_filesz: data.len() as u64,
            p_memsz: data.len() as u64,
            p_align: PAGE,
        });
        w.write_align(PAGE);
        w.write(&data);
        w.write_null_symbol();
        for (s, name) in symbols.iter().zip(&names) {
            w.write_symbol(&Sym {
                section: Some(data_index.0),
                st_name: w.string_offset(Some(*name)),
                st_info: elf::SymbolInfo::new(elf::STB_GLOBAL, elf::STT_OBJECT),
                st_other: elf::SymbolOther(elf::STV_DEFAULT.0),
                st_shndx: elf::SymbolSection(0),
                st_value: s.addr.0 - bias,
                st_size: s.size,
            });
        }
        w.write_strtab();
        w.write_shstrtab();
        w.write_null_section_header();
        w.write_section_header(&object::write::elf::SectionHeader {
            sh_name: w.section_name_offset(Some(data_name)),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: elf::SHF_ALLOC | elf::SHF_WRITE,
            sh_addr: DATA_LINK_VADDR,
            sh_offset: data_offset,
            sh_size: data.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 8,
            sh_entsize: 0,
        });
        w.write_symtab_section_header(1);
        w.write_strtab_section_header();
        w.write_shstrtab_section_header();
        Ok(buf)
    }

    fn core_bytes(
        &self,
        exe_path: &str,
        options: SyntheticCoreOptions,
    ) -> Result<Vec<u8>, WriteError> {
        let abi = self.memory.abi();
        let ptr = abi.address_bytes();
        let bias = self.layout.bias;
        let segments: Vec<(u64, Vec<u8>)> = self
            .memory
            .segments()
            .map(|(a, b)| (a.0, b.to_vec()))
            .collect();

        let mut notes = Bytes::new(abi);
        // elf_prstatus: pr_pid sits after the siginfo (12 bytes), cursig and
        // padding (4) and two words of signal masks.
        let pid_offset = 16 + 2 * ptr;
        let mut prstatus = Bytes::new(abi);
        prstatus.out.resize(pid_offset, 0);
        prstatus.uint(self.layout.pid as u32 as u64, 4);
        prstatus.out.resize(pid_offset + 16, 0);
        notes.note(b"CORE", elf::NT_PRSTATUS.0, &prstatus.out);
        let mut auxv = Bytes::new(abi);
        for (k, v) in [
            (AT_PAGESZ, PAGE),
            (AT_ENTRY, bias + ENTRY_LINK_VADDR),
            (AT_NULL, 0),
        ] {
            auxv.word(k);
            auxv.word(v);
        }
        notes.note(b"CORE", elf::NT_AUXV.0, &auxv.out);
        if !options.omit_nt_file {
            let data_len = self.segment_bytes(self.layout.data).len() as u64;
            let mut file = Bytes::new(abi);
            file.word(1);
            file.word(PAGE);
            file.word(self.layout.data.0);
            file.word(self.layout.data.0 + data_len.div_ceil(PAGE) * PAGE);
            file.word(0); // file offset of the data segment, in pages
            file.out.extend_from_slice(exe_path.as_bytes());
            file.out.push(0);
            notes.note(b"CORE", elf::NT_FILE.0, &file.out);
        }

        let fail = |e: object::write::Error| WriteError::Elf {
            file: "core",
            message: e.to_string(),
        };
        let mut buf = Vec::new();
        let mut w = Writer::new(
            endianness(abi),
            abi.address_width == AddressWidth::W64,
            &mut buf,
        );
        w.reserve_file_header();
        w.reserve_program_headers(1 + segments.len() as u32);
        let notes_offset = w.reserve(notes.out.len() as u64, 4);
        let offsets: Vec<u64> = segments
            .iter()
            .map(|(_, b)| w.reserve(b.len() as u64, PAGE))
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
            p_filesz: notes.out.len() as u64,
            p_memsz: 0,
            p_align: 4,
        });
        for ((addr, bytes), off) in segments.iter().zip(&offsets) {
            w.write_program_header(&ProgramHeader {
                p_type: elf::PT_LOAD,
                p_flags: elf::PF_R | elf::PF_W,
                p_offset: *off,
                p_vaddr: *addr,
                p_paddr: 0,
                p_filesz: bytes.len() as u64,
                p_memsz: bytes.len() as u64,
                p_align: PAGE,
            });
        }
        w.write_align(4);
        w.write(&notes.out);
        for (_, bytes) in &segments {
            w.write_align(PAGE);
            w.write(bytes);
        }
        Ok(buf)
    }
}
