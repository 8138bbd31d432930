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

use std::path::Path;

use mpidd_types::{AddressWidth, TargetAbi, TargetAddr};
use object::elf;
use object::write::elf::{FileHeader, ProgramHeader, Writer};

use crate::backend::thread_registers::{StackArch, ThreadRegisters};
use crate::synthetic::synthetic_elf::{
    endianness, machine, Bytes, WriteError, AT_ENTRY, AT_NULL, AT_PAGESZ, PAGE,
};
use crate::synthetic::synthetic_job::push_uint;
use crate::synthetic::synthetic_memory::SyntheticMemory;

pub use crate::synthetic::synthetic_object::{
    BuiltObject, SyntheticFunction, SyntheticGlobal, SyntheticObject, CALL_RETURN_OFFSET,
    FUNCTION_SIZE, STOPPED_PC_OFFSET,
};
use crate::synthetic::synthetic_object::{Segment, AT_PHDR};

/// The x86-64 general register set (`user_regs_struct`) in words, and the
/// indices of `rbp`, `rip` and `rsp` in it (the kernel's order).
const X86_64_REGS: usize = 27;
const X86_64_RBP: usize = 4;
const X86_64_RIP: usize = 16;
const X86_64_RSP: usize = 19;
/// Where `pr_reg` starts in a 64-bit `struct elf_prstatus`, and the bytes
/// after it (`pr_fpvalid` and padding).
const PR_REG_OFFSET_64: usize = 112;

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
