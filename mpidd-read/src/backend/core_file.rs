//! ELF core files as [`TargetMemory`]: 32- and 64-bit, either byte order.
//!
//! The file is memory-mapped and parsed with `object`. PT_LOAD segments give
//! the memory the core holds. The notes give the pids and, for x86_64 and
//! aarch64, the registers of each thread (NT_PRSTATUS), the
//! auxiliary vector (NT_AUXV, for the executable's load address) and the
//! mapped files (NT_FILE, decoded here with the target's word size), from
//! which pages the core omits are read back.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use memmap2::Mmap;
use mpidd_types::{AddressWidth, ByteOrder, TargetAbi, TargetAddr};
use object::read::elf::{FileHeader, ProgramHeader};
use object::{elf, Endianness, FileKind};

use crate::backend::file_maps::FileMaps;
use crate::backend::memory::{decode_unsigned, read_spanning, TargetMemory};
use crate::backend::thread_registers::{self, ThreadRegisters};
use crate::error::ReadError;

/// Why a core file could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CoreError {
    /// The file could not be opened or mapped.
    #[error("cannot open {path}: {cause}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
    /// The file is not an ELF file this reader understands.
    #[error("{path} is not an ELF core file: {reason}")]
    NotCore {
        /// The path.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// One PT_LOAD segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Load {
    vaddr: u64,
    memsz: u64,
    offset: u64,
    filesz: u64,
}

/// One NT_FILE entry: `[start, end)` maps `path` from byte `file_offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedFile {
    /// First address of the mapping.
    pub start: TargetAddr,
    /// One past its last address.
    pub end: TargetAddr,
    /// Offset in the file of the byte mapped at `start`.
    pub file_offset: u64,
    /// The file's path as the target saw it.
    pub path: String,
}

/// An opened ELF core file.
pub struct CoreFile {
    path: PathBuf,
    data: CoreBytes,
    abi: TargetAbi,
    machine: u16,
    loads: Vec<Load>,
    pids: Vec<i32>,
    threads: Vec<ThreadRegisters>,
    auxv: Vec<(u64, u64)>,
    files: Vec<MappedFile>,
    /// Where to look for mapped files that moved.
    search: FileSearch,
    /// Where each entry of `files` is on disk, mapped on first use.
    backing: Vec<Backing>,
    /// The run's located paths and mappings, when the core is one of many
    /// opened together: shared instead of found and mapped again.
    shared: Option<Arc<FileMaps>>,
    /// The index in `loads` of the segment the last lookup found: readers
    /// walk lists whose nodes mostly share a segment, and the binary search
    /// cost more than what it found. Only a hint (any index is checked
    /// before use), so threads sharing the core need no ordering on it.
    last_load: AtomicUsize,
}

/// A file that backs pages the core omits.
struct Backing {
    on_disk: PathBuf,
    map: OnceLock<Option<Arc<Mmap>>>,
}

impl Backing {
    fn new(on_disk: PathBuf) -> Self {
        Backing {
            on_disk,
            map: OnceLock::new(),
        }
    }
}

/// Where files named by a target (NT_FILE, `link_map`) are looked for on
/// this machine, as gdb's `sysroot` and `solib-search-path` do.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FileSearch {
    /// A recorded `/usr/lib/x.so` is read from `sysroot/usr/lib/x.so`; with
    /// no sysroot, from `/usr/lib/x.so` itself.
    pub sysroot: Option<PathBuf>,
    /// Directories tried next, each with the file's base name: for files
    /// whose recorded directory no longer exists.
    pub search_path: Vec<PathBuf>,
}

impl FileSearch {
    /// The places tried for `recorded`, in order.
    pub fn candidates(&self, recorded: &str) -> Vec<PathBuf> {
        let mut out = vec![match &self.sysroot {
            Some(root) => root.join(recorded.trim_start_matches('/')),
            None => PathBuf::from(recorded),
        }];
        if let Some(base) = Path::new(recorded).file_name() {
            out.extend(self.search_path.iter().map(|d| d.join(base)));
        }
        out
    }

    /// The first candidate that exists and, if it is an ELF file, was built
    /// for `machine` (so a sysroot miss never falls back on a host library
    /// of another CPU); else the first candidate, for error messages.
    pub fn locate(&self, recorded: &str, machine: u16) -> PathBuf {
        let candidates = self.candidates(recorded);
        candidates
            .iter()
            .find(|c| c.is_file() && elf_machine(c).is_none_or(|m| m == machine))
            .unwrap_or(&candidates[0])
            .clone()
    }
}

/// `e_machine` of an ELF file, `None` if it is not one.
pub(crate) fn elf_machine(path: &Path) -> Option<u16> {
    use std::io::Read;
    let mut head = [0u8; 20];
    File::open(path).ok()?.read_exact(&mut head).ok()?;
    if head[..4] != *b"\x7fELF" {
        return None;
    }
    let order = match head[5] {
        1 => ByteOrder::Little,
        2 => ByteOrder::Big,
        _ => return None,
    };
    Some(decode_unsigned(order, &head[18..20]) as u16)
}

impl std::fmt::Debug for CoreFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreFile")
            .field("path", &self.path)
            .field("abi", &self.abi)
            .field("segments", &self.loads.len())
            .field("pids", &self.pids)
            .finish_non_exhaustive()
    }
}

/// Cores up to this size are read whole rather than mapped.
const READ_WHOLE: u64 = 1 << 20;

/// The bytes of a core: a small one (a rank of a small or synthetic job,
/// which the decoders read nearly whole) read in one call, rather than
/// mapped, faulted in page by page and unmapped; a large one mapped.
enum CoreBytes {
    Read(Vec<u8>),
    Mapped(Mmap),
}

impl CoreBytes {
    fn open(path: &Path) -> Result<CoreBytes, std::io::Error> {
        use std::io::Read;
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        if len > READ_WHOLE {
            return map_open_file(&file).map(CoreBytes::Mapped);
        }
        // One read of the size just looked at (at most READ_WHOLE); a core
        // cut short meanwhile is an error, as a short map would be.
        let mut bytes = vec![0; len as usize];
        file.read_exact(&mut bytes)?;
        Ok(CoreBytes::Read(bytes))
    }
}

impl std::ops::Deref for CoreBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            CoreBytes::Read(bytes) => bytes,
            CoreBytes::Mapped(map) => map,
        }
    }
}

/// Maps a file read-only.
pub(crate) fn map_file(path: &Path) -> Result<Mmap, std::io::Error> {
    map_open_file(&File::open(path)?)
}

/// Maps an open file read-only.
pub(crate) fn map_open_file(file: &File) -> Result<Mmap, std::io::Error> {
    // SAFETY: the mapping is read-only and private to this process. If
    // another process truncates the file while it is mapped, reads of the
    // lost pages fault; debuggers accept that risk for core files, which are
    // not rewritten in place.
    #[allow(unsafe_code)]
    unsafe {
        Mmap::map(file)
    }
}

impl CoreFile {
    /// Opens and parses a core file.
    pub fn open(path: &Path) -> Result<Self, CoreError> {
        let data = CoreBytes::open(path).map_err(|cause| CoreError::Io {
            path: path.to_path_buf(),
            cause,
        })?;
        let not_core = |reason: String| CoreError::NotCore {
            path: path.to_path_buf(),
            reason,
        };
        let parsed = match FileKind::parse(&*data) {
            Ok(FileKind::Elf64) => parse::<elf::FileHeader64<Endianness>>(&data),
            Ok(FileKind::Elf32) => parse::<elf::FileHeader32<Endianness>>(&data),
            Ok(other) => Err(format!("it is {other:?}")),
            Err(e) => Err(e.to_string()),
        }
        .map_err(not_core)?;
        let backing = parsed
            .files
            .iter()
            .map(|f| Backing::new(PathBuf::from(&f.path)))
            .collect();
        Ok(CoreFile {
            path: path.to_path_buf(),
            data,
            abi: parsed.abi,
            machine: parsed.machine,
            loads: parsed.loads,
            pids: parsed.pids,
            threads: parsed.threads,
            auxv: parsed.auxv,
            files: parsed.files,
            search: FileSearch::default(),
            backing,
            shared: None,
            last_load: AtomicUsize::new(0),
        })
    }

    /// Looks for mapped files under `sysroot` (a path recorded as
    /// `/usr/lib/x.so` is read from `sysroot/usr/lib/x.so`).
    pub fn with_sysroot(self, sysroot: &Path) -> Self {
        let search = FileSearch {
            sysroot: Some(sysroot.to_path_buf()),
            ..self.search.clone()
        };
        self.with_search(search)
    }

    /// Looks for mapped files as `search` says.
    pub fn with_search(mut self, search: FileSearch) -> Self {
        self.search = search;
        self.backing = self
            .files
            .iter()
            .map(|f| Backing::new(self.resolve_path(&f.path)))
            .collect();
        self
    }

    /// Looks for mapped files as `search` says, through the located
    /// paths and mappings of the run `maps` keeps.
    pub(crate) fn with_search_in(mut self, search: FileSearch, maps: Arc<FileMaps>) -> Self {
        self.shared = Some(maps);
        self.with_search(search)
    }

    /// How mapped files are looked for.
    pub fn search(&self) -> &FileSearch {
        &self.search
    }

    /// Stops reading omitted pages from the file recorded as `recorded`:
    /// for a file found on disk that is not the one the target mapped.
    pub fn unback(&mut self, recorded: &str) {
        for (f, b) in self.files.iter().zip(self.backing.iter_mut()) {
            if f.path == recorded {
                *b = Backing::new(PathBuf::new());
            }
        }
    }

    /// Reads the pages the core omits of every mapped file found at
    /// `on_disk` from `map`, a mapping of that file the caller already
    /// holds, rather than map it again on first use.
    pub(crate) fn back_with(&self, on_disk: &Path, map: &Arc<Mmap>) {
        // The paths come from the same search: equal as bytes when they
        // name the same file. `Path`'s own equality compares component by
        // component, which for a core of a few hundred mappings and some
        // forty objects was a tenth of a warm read.
        let on_disk = on_disk.as_os_str();
        for b in self
            .backing
            .iter()
            .filter(|b| b.on_disk.as_os_str() == on_disk)
        {
            let _ = b.map.set(Some(map.clone()));
        }
    }

    /// Declares that `file` is mapped as described, with its bytes in the
    /// file at `on_disk`. Cores without NT_FILE (qemu-user's) omit the
    /// executable's read-only pages, so the caller who knows the executable
    /// adds its segments here.
    pub fn add_mapping(&mut self, file: MappedFile, on_disk: &Path) {
        self.files.push(file);
        self.backing.push(Backing::new(on_disk.to_path_buf()));
    }

    /// The path this core was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The ELF machine number (`EM_*`).
    pub fn machine(&self) -> u16 {
        self.machine
    }

    /// Pids of the threads, from NT_PRSTATUS, in note order (the first is
    /// the thread that dumped).
    pub fn pids(&self) -> &[i32] {
        &self.pids
    }

    /// The registers of each thread, from NT_PRSTATUS, in note order (the
    /// first is the thread that dumped). Empty for machines other than
    /// x86_64 and aarch64 (and for 32-bit cores), whose registers are not
    /// decoded: that is not an error, such cores just have no stacks.
    pub fn threads(&self) -> &[ThreadRegisters] {
        &self.threads
    }

    /// The auxiliary vector as (key, value) pairs.
    pub fn auxv(&self) -> &[(u64, u64)] {
        &self.auxv
    }

    /// The value of auxiliary-vector key `key` (`AT_ENTRY` is 9, `AT_PHDR`
    /// 3).
    pub fn auxv_value(&self, key: u64) -> Option<u64> {
        self.auxv.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// The NT_FILE entries; empty for cores without the note (qemu-user).
    pub fn mapped_files(&self) -> &[MappedFile] {
        &self.files
    }

    /// Where a path recorded in the core is found on this machine (see
    /// [`FileSearch::locate`]).
    pub fn resolve_path(&self, recorded: &str) -> PathBuf {
        match &self.shared {
            Some(maps) => maps.locate(&self.search, recorded, self.machine),
            None => self.search.locate(recorded, self.machine),
        }
    }

    /// Copies only what the core itself holds at `addr`, never bytes of a
    /// mapped file; returns the count. For checking a file on disk against
    /// what the target had mapped.
    pub fn read_dumped(&self, addr: TargetAddr, buf: &mut [u8]) -> usize {
        read_spanning(addr, buf, |at, out| self.copy_dumped(at, out))
    }

    /// The segment that holds `addr` if any does: the last one starting
    /// at or below it.
    fn load_at(&self, addr: u64) -> Option<Load> {
        let hint = self.last_load.load(Ordering::Relaxed);
        // The hint is that same segment when the next one starts above.
        if let Some(load) = self.loads.get(hint) {
            if load.vaddr <= addr && self.loads.get(hint + 1).is_none_or(|n| n.vaddr > addr) {
                return Some(*load);
            }
        }
        let i = self
            .loads
            .partition_point(|l| l.vaddr <= addr)
            .checked_sub(1)?;
        self.last_load.store(i, Ordering::Relaxed);
        Some(self.loads[i])
    }

    /// Copies what the core itself holds at `addr`; returns the count.
    fn copy_dumped(&self, addr: u64, buf: &mut [u8]) -> usize {
        let src = self.dumped(addr, buf.len());
        buf[..src.len()].copy_from_slice(src);
        src.len()
    }

    /// Up to `len` bytes the core itself holds from `addr` on, within one
    /// segment; empty where it holds none.
    fn dumped(&self, addr: u64, len: usize) -> &[u8] {
        let Some(load) = self.load_at(addr) else {
            return &[];
        };
        let off = addr - load.vaddr;
        if off >= load.filesz.min(load.memsz) {
            return &[];
        }
        let avail = (load.filesz.min(load.memsz) - off).min(len as u64);
        let start = load.offset.saturating_add(off);
        usize::try_from(start)
            .ok()
            .and_then(|s| self.data.get(s..s.saturating_add(avail as usize)))
            .unwrap_or(&[])
    }

    /// Copies bytes the core omits from the file mapped there, if any.
    fn copy_mapped_file(&self, addr: u64, buf: &mut [u8]) -> usize {
        let Some(i) = self
            .files
            .iter()
            .position(|f| f.start.0 <= addr && addr < f.end.0)
        else {
            return 0;
        };
        let f = &self.files[i];
        let backing = &self.backing[i];
        let map = backing.map.get_or_init(|| match &self.shared {
            Some(maps) => maps.map_path(&backing.on_disk),
            None => map_file(&backing.on_disk).ok().map(Arc::new),
        });
        let Some(map) = map else {
            return 0;
        };
        let avail = (f.end.0 - addr).min(buf.len() as u64);
        let Some(src) = f
            .file_offset
            .checked_add(addr - f.start.0)
            .and_then(|s| usize::try_from(s).ok())
            .and_then(|s| map.get(s..s.saturating_add(avail as usize).min(map.len())))
        else {
            return 0;
        };
        buf[..src.len()].copy_from_slice(src);
        src.len()
    }
}

impl TargetMemory for CoreFile {
    fn abi(&self) -> TargetAbi {
        self.abi
    }

    fn borrow_c_string(&self, addr: TargetAddr, max_len: usize) -> Option<&[u8]> {
        let bytes = self.dumped(addr.0, max_len.saturating_add(1));
        let nul = memchr::memchr(0, bytes)?;
        Some(&bytes[..nul])
    }

    /// Bytes of one segment the core holds; never bytes of a mapped file,
    /// which stays unmapped until a read needs it.
    fn mapped(&self, addr: TargetAddr, len: usize) -> Option<&[u8]> {
        // The same segment copy_dumped picks, so both see the same bytes.
        Some(self.dumped(addr.0, len)).filter(|b| b.len() == len)
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        // What the core holds wins; pages it omits come from the file mapped
        // there, if any.
        Ok(read_spanning(addr, buf, |at, out| {
            match self.copy_dumped(at, out) {
                0 => self.copy_mapped_file(at, out),
                n => n,
            }
        }))
    }
}

struct Parsed {
    abi: TargetAbi,
    machine: u16,
    loads: Vec<Load>,
    pids: Vec<i32>,
    threads: Vec<ThreadRegisters>,
    auxv: Vec<(u64, u64)>,
    files: Vec<MappedFile>,
}

fn parse<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<Parsed, String> {
    let header = Elf::parse(data).map_err(|e| e.to_string())?;
    let endian = header.endian().map_err(|e| e.to_string())?;
    if header.e_type(endian) != elf::ET_CORE {
        return Err(format!(
            "its ELF type is {}, not ET_CORE",
            header.e_type(endian).0
        ));
    }
    let abi = TargetAbi::new(
        match endian {
            Endianness::Little => ByteOrder::Little,
            Endianness::Big => ByteOrder::Big,
        },
        if header.is_type_64() {
            AddressWidth::W64
        } else {
            AddressWidth::W32
        },
    );
    let phdrs = header
        .program_headers(endian, data)
        .map_err(|e| e.to_string())?;
    let mut out = Parsed {
        abi,
        machine: header.e_machine(endian).0,
        loads: Vec::new(),
        pids: Vec::new(),
        threads: Vec::new(),
        auxv: Vec::new(),
        files: Vec::new(),
    };
    for ph in phdrs {
        if ph.p_type(endian) == elf::PT_LOAD {
            out.loads.push(Load {
                vaddr: ph.p_vaddr(endian).into(),
                memsz: ph.p_memsz(endian).into(),
                offset: ph.p_offset(endian).into(),
                filesz: ph.p_filesz(endian).into(),
            });
        }
        let Some(mut notes) = ph.notes(endian, data).map_err(|e| e.to_string())? else {
            continue;
        };
        while let Some(note) = notes.next().map_err(|e| e.to_string())? {
            if note.name() != b"CORE" {
                continue;
            }
            let desc = note.desc();
            let n_type = note.n_type(endian);
            if n_type == elf::NT_PRSTATUS {
                if let Some(pid) = prstatus_pid(abi, desc) {
                    out.pids.push(pid);
                    out.threads.extend(thread_registers::from_prstatus(
                        out.machine,
                        abi,
                        pid,
                        desc,
                    ));
                }
            } else if n_type == elf::NT_AUXV {
                out.auxv = auxv_pairs(abi, desc);
            } else if n_type == elf::NT_FILE {
                out.files = nt_file(abi, desc)?;
            }
        }
    }
    out.loads.sort_by_key(|l| l.vaddr);
    Ok(out)
}

/// A target-order unsigned integer of 4 or 8 bytes.
fn uint(abi: TargetAbi, b: &[u8]) -> u64 {
    decode_unsigned(abi.byte_order, b)
}

/// The auxiliary vector's key for the address of the vDSO's ELF header.
pub(crate) const AT_SYSINFO_EHDR: u64 = 33;

/// An auxiliary vector (a core's NT_AUXV, a live process's
/// `/proc/PID/auxv`): (key, value) pairs of the target's words, up to the
/// `AT_NULL` that ends it.
pub(crate) fn auxv_pairs(abi: TargetAbi, b: &[u8]) -> Vec<(u64, u64)> {
    words(abi, b)
        .chunks_exact(2)
        .map(|kv| (kv[0], kv[1]))
        .take_while(|(k, _)| *k != 0)
        .collect()
}

fn words(abi: TargetAbi, b: &[u8]) -> Vec<u64> {
    b.chunks_exact(abi.address_bytes())
        .map(|w| uint(abi, w))
        .collect()
}

/// `pr_pid` of `struct elf_prstatus`: after the 12-byte siginfo, the
/// 2-byte current signal and its padding, and two `unsigned long` masks.
fn prstatus_pid(abi: TargetAbi, desc: &[u8]) -> Option<i32> {
    let at = 16 + 2 * abi.address_bytes();
    desc.get(at..at + 4).map(|b| uint(abi, b) as u32 as i32)
}

/// NT_FILE: count and page size, then (start, end, page offset) triples,
/// then the paths, NUL-separated. All words are the target's `long`.
fn nt_file(abi: TargetAbi, desc: &[u8]) -> Result<Vec<MappedFile>, String> {
    let w = abi.address_bytes();
    let word = |i: usize| desc.get(i * w..(i + 1) * w).map(|b| uint(abi, b));
    let (Some(count), Some(page)) = (word(0), word(1)) else {
        return Err("NT_FILE note is shorter than its header".into());
    };
    // Each entry takes three words, so the note's size bounds the count.
    let max = (desc.len() / w).saturating_sub(2) / 3;
    let count = usize::try_from(count)
        .ok()
        .filter(|&c| c <= max)
        .ok_or_else(|| {
            format!(
                "NT_FILE claims {count} entries, more than its {} bytes hold",
                desc.len()
            )
        })?;
    let mut names = desc[(2 + 3 * count) * w..]
        .split(|&b| b == 0)
        .map(|s| String::from_utf8_lossy(s).into_owned());
    let mut files = Vec::with_capacity(count);
    for i in 0..count {
        let base = 2 + 3 * i;
        let (Some(start), Some(end), Some(pgoff)) = (word(base), word(base + 1), word(base + 2))
        else {
            return Err(format!("NT_FILE entry {i} is cut short"));
        };
        files.push(MappedFile {
            start: TargetAddr(start),
            end: TargetAddr(end),
            file_offset: pgoff.saturating_mul(page),
            path: names.next().unwrap_or_default(),
        });
    }
    Ok(files)
}
