//! Call stacks of threads, from their registers and their stack memory.
//!
//! The unwinding itself is framehop's (DWARF CFI from `.eh_frame`, with
//! `.eh_frame_hdr` as its index, or `.debug_frame`; frame pointers where an
//! address has no unwind information). This module feeds it each loaded
//! object's sections and reads the stack through a [`TargetMemory`], so a
//! core and a live process unwind the same way, then names each frame with
//! [`symbolize`](crate::symbols::symbolize)'s symbol tables and DWARF.
//!
//! A job of many ranks runs a few builds: [`StackUnwinder`] keeps what
//! depends only on an object (its mapping, unwind sections, symbol table
//! and DWARF context) once per object, keyed by build-id, and shares it
//! across every process and thread it unwinds, from any number of threads.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use framehop::aarch64::{CacheAarch64, PtrAuthMask, UnwindRegsAarch64, UnwinderAarch64};
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{FrameAddress, Module, Unwinder};
use mpidd_types::{AddressWidth, ByteOrder, TargetAddr};
use serde::{Deserialize, Serialize};

#[cfg(all(feature = "live", target_os = "linux"))]
use crate::backend::attach_guard::{AttachError, AttachGuard};
use crate::backend::memory::{decode_unsigned, TargetMemory};
use crate::backend::thread_registers::{StackArch, ThreadRegisters};
use crate::stacks::unwind_object::{
    CachedObject, FileId, ObjectCell, ObjectKey, Placed, SectionBytes,
};
use crate::stacks::vdso_image::VdsoCache;
use crate::symbols::elf_symbols::ObjectInfo;
use crate::symbols::loaded_objects::LoadedObjects;
use crate::targets::core_target::CoreTarget;
#[cfg(all(feature = "live", target_os = "linux"))]
use crate::targets::live_target::LiveTarget;

/// Bounds on one thread's walk, whatever its stack memory says.
///
/// ```
/// use mpidd_read::StackLimits;
///
/// let shallow = StackLimits { max_frames: 16, ..StackLimits::default() };
/// assert_eq!(shallow.max_stack_bytes, StackLimits::default().max_stack_bytes);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackLimits {
    /// Most frames in one stack, the first (the thread's pc) included.
    /// Default 256: deeper stacks are recursion, and their top is what a
    /// reader wants. A stack cut here has [`ThreadStack::truncated`] set.
    pub max_frames: usize,
    /// Most bytes above the thread's stack pointer the walk may read.
    /// Default 256 MiB: HPC codes run with `ulimit -s unlimited` and put
    /// large arrays on the stack, while a corrupt frame pointer still
    /// cannot send the walk across the address space.
    pub max_stack_bytes: u64,
}

impl Default for StackLimits {
    fn default() -> Self {
        StackLimits {
            max_frames: 256,
            max_stack_bytes: 256 << 20,
        }
    }
}

/// One frame of a call stack.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// The thread's pc for the first frame; a return address for the
    /// others (names are looked up at `pc - 1`, inside the call).
    pub pc: u64,
    /// The function: the outermost one of an inlining chain from DWARF
    /// when the object has DWARF, else the ELF symbol (`.symtab`,
    /// `.dynsym`, or the separate debug file's `.symtab`) containing the
    /// address. Names are as stored (C++ and Rust names are not
    /// demangled). When neither covers the address, the closest function
    /// symbol below it in the same code section (gdb names code after a
    /// symbol without a size so, but leaves code past a sized symbol's end
    /// unnamed), with [`name_guessed`](Self::name_guessed) set. `None`
    /// when there is none either.
    pub function: Option<String>,
    /// `function` is a guess: no DWARF function and no sized ELF symbol
    /// contains the lookup address, and the name is that of the closest
    /// function symbol before it in the same section, either one without
    /// a size (hand-written assembly) or one that ends before the address.
    /// Intel MPI's `PMPI_Recv`, for one, is a 2-byte jump stub into an
    /// unnamed local function: frames in that function are named
    /// `PMPI_Recv`, guessed. Absent from JSON when false, so output
    /// without the field still reads.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub name_guessed: bool,
    /// `pc` minus the start of the ELF symbol that names the frame (the
    /// guessed one too, when `name_guessed`); 0 when no symbol does, or
    /// when DWARF names a function that no ELF symbol covers.
    pub offset: u64,
    /// The file name (no directory) of the object containing the address;
    /// `None` for an address in no loaded object (JIT code, the vDSO, a
    /// corrupt return address).
    pub object: Option<String>,
    /// The source file from DWARF, with the directory DWARF gives.
    pub file: Option<String>,
    /// The source line from DWARF.
    pub line: Option<u32>,
    /// A frame of Python code, read from the interpreter's memory
    /// ([`mix_python_frames`](crate::mix_python_frames)): `function` is the
    /// Python function's qualified name, `file` and `line` its source, and
    /// `pc`, `offset` and `object` are empty. Absent from JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub python: bool,
}

/// The call stack of one thread, innermost frame first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadStack {
    /// The thread.
    pub tid: i32,
    /// The frames, innermost first.
    pub frames: Vec<Frame>,
    /// The walk stopped at [`StackLimits::max_frames`]; outer frames are
    /// missing.
    pub truncated: bool,
    /// Why the walk stopped before the outermost frame, if it did not
    /// stop there normally: stack memory that could not be read, a stack
    /// pointer that did not move up, an unwinding rule that failed.
    pub error: Option<String>,
}

/// Why the stacks of a live process could not be taken.
#[cfg(all(feature = "live", target_os = "linux"))]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StackError {
    /// The registers of a thread could not be read.
    #[error("cannot read the registers of thread {tid}: {cause}")]
    Registers {
        /// The thread.
        tid: i32,
        /// What ptrace said: shown in the message, so not also as `source()`.
        cause: AttachError,
    },
    /// The guard stops another process than the target reads.
    #[error("the attach guard stops process {guard_pid}, but the target is process {target_pid}")]
    WrongProcess {
        /// The process the guard stopped.
        guard_pid: i32,
        /// The process the target reads.
        target_pid: i32,
    },
    /// Stacks of this process cannot be taken here: only 64-bit x86_64
    /// and aarch64 processes, read from a Linux host of the same CPU.
    #[error("cannot unwind process {pid}: {reason}")]
    Unsupported {
        /// The process.
        pid: i32,
        /// What is missing.
        reason: &'static str,
    },
}

/// Unwinds and symbolizes thread stacks; one serves a whole job.
///
/// Per-object work (mapping the file, finding its unwind sections, reading
/// its symbol tables, parsing its DWARF) happens once per object, however
/// many processes map it and wherever each loads it: objects are keyed by
/// build-id and size, else by path, size and modification time. The unwinder is
/// `Send` and `Sync`; its methods take `&self`, so threads unwinding
/// different ranks share one.
///
/// Per call, only the framehop module list of the process (cheap: it
/// points at the cached sections) and the reads of the stack are new.
/// Objects whose CFI is only in `.debug_frame`, or `.eh_frame` without
/// `.eh_frame_hdr`, have their CFI index rebuilt per call by framehop.
///
/// ```no_run
/// use mpidd_read::{core_stacks, CoreTarget, StackLimits, StackUnwinder};
/// use std::path::Path;
///
/// let unwinder = StackUnwinder::new(StackLimits::default());
/// let core = CoreTarget::open(Path::new("core.1234"), None, None)?;
/// for stack in core_stacks(&core, &unwinder) {
///     println!("thread {}", stack.tid);
///     for f in &stack.frames {
///         println!("  {:#x} {}", f.pc, f.function.as_deref().unwrap_or("??"));
///     }
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct StackUnwinder {
    limits: StackLimits,
    /// Files already identified, so a build-id is read once per file.
    keys: Mutex<HashMap<FileId, ObjectKey>>,
    /// One cell per object; the cell, not the map's lock, is held while an
    /// object loads, so two threads never load the same object twice and
    /// never wait for other objects.
    objects: Mutex<HashMap<ObjectKey, ObjectCell>>,
    /// How many objects were loaded, for measuring the per-object cost.
    loads: AtomicUsize,
    /// The vDSO images seen, read from the processes themselves.
    vdsos: VdsoCache,
}

impl std::fmt::Debug for StackUnwinder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StackUnwinder")
            .field("limits", &self.limits)
            .field("objects_loaded", &self.objects_loaded())
            .finish_non_exhaustive()
    }
}

impl Default for StackUnwinder {
    fn default() -> Self {
        Self::new(StackLimits::default())
    }
}

impl StackUnwinder {
    /// An unwinder with no objects cached yet.
    pub fn new(limits: StackLimits) -> Self {
        StackUnwinder {
            limits,
            keys: Mutex::new(HashMap::new()),
            objects: Mutex::new(HashMap::new()),
            loads: AtomicUsize::new(0),
            vdsos: VdsoCache::default(),
        }
    }

    /// The limits every walk applies.
    pub fn limits(&self) -> StackLimits {
        self.limits
    }

    /// How many distinct objects this unwinder has loaded so far. It grows
    /// with the builds of a job, not with its ranks.
    pub fn objects_loaded(&self) -> usize {
        self.loads.load(Ordering::Relaxed)
    }

    /// The stack of one thread. `memory` reads the process (a core, a live
    /// process stopped by an [`AttachGuard`]); `objects` are its loaded
    /// objects with their load biases.
    ///
    /// Never fails: a stack whose memory cannot be read, or whose walk goes
    /// wrong, ends early with [`ThreadStack::error`] saying why.
    pub fn unwind(
        &self,
        memory: &dyn TargetMemory,
        objects: &dyn LoadedObjects,
        regs: &ThreadRegisters,
    ) -> ThreadStack {
        self.unwind_all(memory, objects, std::slice::from_ref(regs))
            .pop()
            .unwrap_or_else(|| ThreadStack {
                tid: regs.tid,
                frames: Vec::new(),
                truncated: false,
                error: None,
            })
    }

    /// The stacks of several threads of one process, in the order of
    /// `threads`; the process's object list is set up once for all.
    pub fn unwind_all(
        &self,
        memory: &dyn TargetMemory,
        objects: &dyn LoadedObjects,
        threads: &[ThreadRegisters],
    ) -> Vec<ThreadStack> {
        let placed = self.place(objects, memory);
        let mut x86_64: Option<(UnwinderX86_64<SectionBytes>, CacheX86_64)> = None;
        let mut aarch64: Option<(UnwinderAarch64<SectionBytes>, CacheAarch64)> = None;
        threads
            .iter()
            .map(|regs| {
                let walk = match regs.arch {
                    StackArch::X86_64 => {
                        let (unwinder, cache) = x86_64.get_or_insert_with(|| {
                            (
                                with_modules(UnwinderX86_64::new(), &placed),
                                CacheX86_64::new(),
                            )
                        });
                        walk(
                            unwinder,
                            cache,
                            UnwindRegsX86_64::new(regs.pc, regs.sp, regs.fp),
                            UnwindRegsX86_64::sp,
                            regs,
                            memory,
                            self.limits,
                        )
                    }
                    StackArch::Aarch64 => {
                        let (unwinder, cache) = aarch64.get_or_insert_with(|| {
                            (
                                with_modules(UnwinderAarch64::new(), &placed),
                                CacheAarch64::new(),
                            )
                        });
                        let mask = return_address_mask(unwinder.max_known_code_address());
                        walk(
                            unwinder,
                            cache,
                            UnwindRegsAarch64::new_with_ptr_auth_mask(
                                mask,
                                regs.lr.unwrap_or(0),
                                regs.sp,
                                regs.fp,
                            ),
                            UnwindRegsAarch64::sp,
                            regs,
                            memory,
                            self.limits,
                        )
                    }
                };
                ThreadStack {
                    tid: regs.tid,
                    frames: walk
                        .addresses
                        .iter()
                        .map(|&(pc, is_return)| symbolize(&placed, pc, is_return))
                        .collect(),
                    truncated: walk.truncated,
                    error: walk.error,
                }
            })
            .collect()
    }

    /// The objects of one process with their cached data, and its vDSO
    /// read from `memory`, sorted by address. Objects that cannot be read
    /// are left out: their addresses then unwind by frame pointer and have
    /// no names.
    fn place(&self, objects: &dyn LoadedObjects, memory: &dyn TargetMemory) -> Vec<Placed> {
        let mut placed: Vec<Placed> = objects
            .loaded_objects()
            .into_iter()
            .filter_map(|info| {
                let object = self.object(info)?;
                Some(Placed {
                    avma: object.avma(info.bias),
                    bias: info.bias,
                    name: file_name(&info.name),
                    object,
                })
            })
            .collect();
        if let Some(vdso) = objects.vdso().and_then(|at| self.vdsos.place(memory, at)) {
            placed.push(vdso);
        }
        placed.sort_by_key(|p| p.avma.start);
        // The same object listed twice at one address would confuse the
        // lookups; the first listing wins.
        placed.dedup_by_key(|p| p.avma.start);
        placed
    }

    /// The cached data of one object, loaded on first use.
    fn object(&self, info: &ObjectInfo) -> Option<Arc<CachedObject>> {
        // The file as its symbols were read, when they were read for this
        // run: looked at once then, not again for every process. Known by
        // device and inode where the host has them, since each live rank
        // names its files through its own `/proc/PID/root`.
        let id = match &info.stamp {
            Some(stamp) => FileId {
                path: stamp.file.is_none().then(|| stamp.path.clone()),
                file: stamp.file.clone(),
                size: stamp.len,
                modified: stamp.modified,
            },
            None => {
                let meta = std::fs::metadata(&info.path).ok()?;
                let file = crate::backend::file_identity::file_key(&info.path, &meta);
                FileId {
                    path: file.is_none().then(|| info.path.clone()),
                    file,
                    size: meta.len(),
                    modified: meta.modified().ok(),
                }
            }
        };
        let known = lock(&self.keys).get(&id).cloned();
        let key = match known {
            Some(key) => key,
            None => {
                let key = match crate::symbols::debug_files::build_id(&info.path) {
                    Ok(Some(build)) if !build.is_empty() => ObjectKey::BuildId(build, id.size),
                    _ => ObjectKey::File(id.clone()),
                };
                lock(&self.keys).insert(id, key.clone());
                key
            }
        };
        let cell = lock(&self.objects).entry(key).or_default().clone();
        cell.get_or_init(|| {
            self.loads.fetch_add(1, Ordering::Relaxed);
            let debug = info.debug_file.as_ref().map(|d| d.path.as_path());
            CachedObject::load(&info.path, debug).map(Arc::new)
        })
        .clone()
    }
}

/// Locks a cache; a panic elsewhere cannot leave a map of finished entries
/// inconsistent, so a poisoned lock is used as it is.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// The bits of an aarch64 return address that are address: code built
/// with `-mbranch-protection` signs return addresses in the bits above the
/// virtual address size (48 bits on Linux unless a process asks for more),
/// and framehop strips them with this mask.
fn return_address_mask(max_known_code_address: u64) -> PtrAuthMask {
    if max_known_code_address >> 48 != 0 {
        PtrAuthMask::from_max_known_address(max_known_code_address)
    } else {
        PtrAuthMask(u64::MAX >> 16)
    }
}

fn with_modules<U>(mut unwinder: U, placed: &[Placed]) -> U
where
    U: Unwinder<Module = Module<SectionBytes>>,
{
    for p in placed {
        unwinder.add_module(p.object.module(&p.name, p.bias));
    }
    unwinder
}

/// The addresses one walk found, and how it ended.
struct Walk {
    /// (pc, whether it is a return address).
    addresses: Vec<(u64, bool)>,
    truncated: bool,
    error: Option<String>,
}

/// Walks one thread's stack with `unwinder`, reading memory through
/// `memory` within the limits.
fn walk<U>(
    unwinder: &U,
    cache: &mut U::Cache,
    mut uregs: U::UnwindRegs,
    sp_of: fn(&U::UnwindRegs) -> u64,
    regs: &ThreadRegisters,
    memory: &dyn TargetMemory,
    limits: StackLimits,
) -> Walk
where
    U: Unwinder,
{
    let mut out = Walk {
        addresses: vec![(regs.pc, false)],
        truncated: false,
        error: None,
    };
    let stack = RefCell::new(StackReader::new(memory, regs.sp, limits.max_stack_bytes));
    let mut read = |addr: u64| stack.borrow_mut().word(addr);
    let mut address = FrameAddress::from_instruction_pointer(regs.pc);
    let mut prev_sp = regs.sp;
    loop {
        if out.addresses.len() >= limits.max_frames.max(1) {
            out.truncated = true;
            break;
        }
        match unwinder.unwind_frame(address, &mut uregs, cache, &mut read) {
            Ok(Some(return_address)) => {
                let sp = sp_of(&uregs);
                // Each caller's frame lies above its callee's. Only the first
                // step may keep the stack pointer: an aarch64 leaf function
                // that saved nothing returns through the link register.
                let first = out.addresses.len() == 1;
                if sp < prev_sp || (sp == prev_sp && !first) {
                    out.error = Some(format!(
                        "the stack pointer did not move up (from {prev_sp:#x} to {sp:#x}) \
                         unwinding the frame at {:#x}; the stack is corrupt or the unwind \
                         information wrong",
                        address.address()
                    ));
                    break;
                }
                prev_sp = sp;
                let Some(next) = FrameAddress::from_return_address(return_address) else {
                    // A zero return address is how thread entry points and
                    // frame-pointer chains end.
                    break;
                };
                out.addresses.push((return_address, true));
                address = next;
            }
            // framehop found the outermost frame.
            Ok(None) => break,
            Err(e) => {
                out.error = Some(match (e, stack.borrow_mut().error.take()) {
                    (framehop::Error::CouldNotReadStack(_), Some(why)) => why,
                    (e, _) => format!("unwinding the frame at {:#x}: {e}", address.address()),
                });
                break;
            }
        }
    }
    out
}

/// Bytes per page the stack reader fetches at once.
const PAGE: u64 = 4096;

/// Most pages kept: a walk of 256 frames rarely touches more than a few.
const MAX_PAGES: usize = 256;

/// Pages read at once, from the first one a walk touches upwards: a
/// thread blocked in MPI has a few pages of frames above its stack
/// pointer.
const READ_AHEAD_PAGES: usize = 4;

/// Reads words of one thread's stack, a page at a time, only within
/// `[low, high)`.
struct StackReader<'a> {
    memory: &'a dyn TargetMemory,
    order: ByteOrder,
    width: AddressWidth,
    low: u64,
    high: u64,
    pages: HashMap<u64, Option<Box<[u8]>>>,
    /// Why the last read failed.
    error: Option<String>,
}

impl<'a> StackReader<'a> {
    fn new(memory: &'a dyn TargetMemory, sp: u64, max_bytes: u64) -> Self {
        let abi = memory.abi();
        StackReader {
            memory,
            order: abi.byte_order,
            width: abi.address_width,
            low: sp,
            high: sp.saturating_add(max_bytes),
            pages: HashMap::new(),
            error: None,
        }
    }

    /// The 8-byte word at `addr`, in the target's byte order.
    fn word(&mut self, addr: u64) -> Result<u64, ()> {
        let end = addr.checked_add(8);
        if addr < self.low || end.is_none_or(|e| e > self.high) {
            self.error = Some(format!(
                "the stack read at {addr:#x} is outside [{:#x}, {:#x}), the stack pointer and \
                 StackLimits::max_stack_bytes above it",
                self.low, self.high
            ));
            return Err(());
        }
        let mut bytes = [0u8; 8];
        for (i, b) in bytes.iter_mut().enumerate() {
            let at = addr + i as u64;
            match self.page(at & !(PAGE - 1)) {
                Some(page) => *b = page[(at % PAGE) as usize],
                None => {
                    // The page as a whole failed; the word alone says where
                    // and why, for the error.
                    let mut word = [0u8; 8];
                    let why = match self.memory.read_exact(TargetAddr(addr), &mut word, "stack") {
                        Ok(()) => return Ok(decode_unsigned(self.order, &word)),
                        Err(e) => e.to_string(),
                    };
                    self.error = Some(why);
                    return Err(());
                }
            }
        }
        Ok(decode_unsigned(self.order, &bytes))
    }

    fn page(&mut self, base: u64) -> Option<&[u8]> {
        if !self.pages.contains_key(&base) {
            if self.pages.len() + READ_AHEAD_PAGES >= MAX_PAGES {
                self.pages.clear();
            }
            self.read_ahead(base);
        }
        if !self.pages.contains_key(&base) {
            let mut buf = vec![0u8; PAGE as usize].into_boxed_slice();
            let ok = self.fits(base, PAGE)
                && self
                    .memory
                    .read_exact(TargetAddr(base), &mut buf, "stack")
                    .is_ok();
            self.pages.insert(base, ok.then_some(buf));
        }
        self.pages.get(&base)?.as_deref()
    }

    /// Whether `[base, base + len)` is an address range of the target.
    fn fits(&self, base: u64, len: u64) -> bool {
        base.checked_add(len)
            .is_some_and(|e| self.width == AddressWidth::W64 || e <= self.width.max_address() + 1)
    }

    /// Reads the page at `base` and the pages above it, up to
    /// [`READ_AHEAD_PAGES`] and never past the walk's bound, in one read:
    /// a walk goes up the stack, and each read of a live process is a
    /// system call. Keeps the pages read whole; one that is not is left
    /// for `page` to read alone.
    fn read_ahead(&mut self, base: u64) {
        let room = self.high.saturating_sub(base).div_ceil(PAGE);
        let pages = room.clamp(1, READ_AHEAD_PAGES as u64);
        let len = pages * PAGE;
        if !self.fits(base, len) {
            return;
        }
        let mut buf = vec![0u8; len as usize];
        let Ok(got) = self.memory.read_into(TargetAddr(base), &mut buf) else {
            return;
        };
        for (i, chunk) in buf[..got.min(buf.len())]
            .chunks_exact(PAGE as usize)
            .enumerate()
        {
            let at = base + i as u64 * PAGE;
            self.pages
                .entry(at)
                .or_insert_with(|| Some(Box::from(chunk)));
        }
    }
}

/// Names the frame at `pc` from the objects of its process.
fn symbolize(placed: &[Placed], pc: u64, is_return: bool) -> Frame {
    let lookup = if is_return { pc.wrapping_sub(1) } else { pc };
    let mut frame = Frame {
        pc,
        function: None,
        name_guessed: false,
        offset: 0,
        object: None,
        file: None,
        line: None,
        python: false,
    };
    let i = placed.partition_point(|p| p.avma.start <= lookup);
    let Some(p) = i.checked_sub(1).map(|i| &placed[i]) else {
        return frame;
    };
    if lookup >= p.avma.end {
        return frame;
    }
    frame.object = Some(p.name.clone());
    let svma = lookup.wrapping_sub(p.bias);
    if let Some(found) = p.object.symbols.function_at(svma) {
        frame.function = Some(found.name.to_string());
        frame.name_guessed = found.guessed;
        frame.offset = pc.wrapping_sub(found.start.wrapping_add(p.bias));
    }
    if let Some(source) = p.object.symbols.source_frame(svma) {
        if source.function.is_some() {
            frame.function = source.function;
            // DWARF knows the function: the guess, and its offset from
            // another symbol, go.
            if frame.name_guessed {
                frame.name_guessed = false;
                frame.offset = 0;
            }
        }
        frame.file = source.file;
        frame.line = source.line;
    }
    frame
}

/// The stack of every thread in a core (those whose registers the core's
/// machine has a decoder for: x86_64 and aarch64), in note order.
pub fn core_stacks(core: &CoreTarget, unwinder: &StackUnwinder) -> Vec<ThreadStack> {
    unwinder.unwind_all(core, core.symbols(), core.core().threads())
}

/// The stack of every thread of a live process that `guard` holds stopped,
/// in increasing tid order. Reads registers through ptrace (so this must
/// run on the thread that attached, which the guard's `!Send` ensures) and
/// memory through `target`; writes nothing.
#[cfg(all(feature = "live", target_os = "linux"))]
pub fn live_stacks(
    guard: &AttachGuard,
    target: &LiveTarget,
    unwinder: &StackUnwinder,
) -> Result<Vec<ThreadStack>, StackError> {
    let pid = target.process().pid();
    if guard.pid() != pid {
        return Err(StackError::WrongProcess {
            guard_pid: guard.pid(),
            target_pid: pid,
        });
    }
    if target.abi().address_width != AddressWidth::W64 {
        return Err(StackError::Unsupported {
            pid,
            reason: "it is a 32-bit process; only 64-bit x86_64 and aarch64 processes are unwound",
        });
    }
    let regs = live_registers(guard)?;
    Ok(unwinder.unwind_all(target, target.symbols(), &regs))
}

#[cfg(all(
    feature = "live",
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    any(target_env = "gnu", target_env = "musl")
))]
fn live_registers(guard: &AttachGuard) -> Result<Vec<ThreadRegisters>, StackError> {
    guard
        .thread_registers()
        .map_err(|source| StackError::Registers {
            tid: match &source {
                AttachError::Ptrace { tid, .. } | AttachError::StopTimeout { tid, .. } => *tid,
                _ => guard.pid(),
            },
            cause: source,
        })
}

#[cfg(all(
    feature = "live",
    target_os = "linux",
    not(all(
        any(target_arch = "x86_64", target_arch = "aarch64"),
        any(target_env = "gnu", target_env = "musl")
    ))
))]
fn live_registers(guard: &AttachGuard) -> Result<Vec<ThreadRegisters>, StackError> {
    Err(StackError::Unsupported {
        pid: guard.pid(),
        reason: "live registers are read only on x86_64 and aarch64 Linux hosts",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unwinder_is_shareable() {
        fn shared<T: Send + Sync>() {}
        shared::<StackUnwinder>();
        shared::<ThreadStack>();
    }

    #[test]
    fn a_guessed_name_is_in_json_only_when_guessed() {
        let mut frame = Frame {
            pc: 0x401202,
            function: Some("PMPI_Recv".into()),
            name_guessed: false,
            offset: 2,
            object: Some("libmpi.so.12".into()),
            file: None,
            line: None,
            python: false,
        };
        let plain = serde_json::to_value(&frame).unwrap();
        assert!(plain.get("name_guessed").is_none(), "{plain}");
        frame.name_guessed = true;
        let guessed = serde_json::to_string(&frame).unwrap();
        assert!(guessed.contains("\"name_guessed\":true"), "{guessed}");
        assert_eq!(serde_json::from_str::<Frame>(&guessed).unwrap(), frame);
        // JSON written before the field existed still reads, as not guessed.
        let old = r#"{"pc":4198914,"function":"PMPI_Recv","offset":2,
                      "object":"libmpi.so.12","file":null,"line":null}"#;
        let read: Frame = serde_json::from_str(old).unwrap();
        assert!(!read.name_guessed);
        assert_eq!(read.function.as_deref(), Some("PMPI_Recv"));
    }
}
