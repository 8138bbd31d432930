//! Builds synthetic MPI jobs in [`SyntheticMemory`].
//!
//! The builder lays out every record with its own byte-level code, written
//! from the C rules, and never calls the `mpidd-types` encoders. A layout
//! bug in the decoders therefore shows up as a test failure instead of
//! cancelling out, as in rust-minidump's synth builder.

use mpidd_types::{AddressWidth, ByteOrder, Packing, TargetAbi, TargetAddr};

use crate::mpir::names;
use crate::symbols::SymbolTable;
use crate::synthetic::synthetic_memory::SyntheticMemory;

/// Link-time address of the synthetic executable's data segment; the
/// run-time address is this plus the load bias, as for a PIE.
pub(crate) const DATA_LINK_VADDR: u64 = 0x4000;
/// Link-time entry point of the synthetic executable.
pub(crate) const ENTRY_LINK_VADDR: u64 = 0x1000;

/// A built job: its memory and its symbols.
#[derive(Clone, Debug)]
pub struct SyntheticJob {
    /// The target memory.
    pub memory: SyntheticMemory,
    /// The globals the job defines.
    pub symbols: SymbolTable,
    /// Where things are, for writing the job out as files.
    pub(crate) layout: JobLayout,
}

/// The pieces of a synthetic process: an executable whose data segment
/// holds the globals, and an anonymous heap.
#[derive(Clone, Debug)]
pub(crate) struct JobLayout {
    pub(crate) pid: i32,
    /// Run-time address of the executable's data segment.
    pub(crate) data: TargetAddr,
    /// Run-time minus link-time addresses of the executable.
    pub(crate) bias: u64,
}

impl SyntheticJob {
    /// Starts a job for a target with this ABI.
    pub fn builder(abi: TargetAbi) -> SyntheticJobBuilder {
        SyntheticJobBuilder::new(abi)
    }
}

/// Appends the low `size` bytes of `v` in `order`. The synthetic writers
/// use this instead of the decoders' code, so a layout bug cannot cancel
/// out.
pub(crate) fn push_uint(out: &mut Vec<u8>, order: ByteOrder, v: u64, size: usize) {
    let be = v.to_be_bytes();
    let bytes = &be[8 - size..];
    match order {
        ByteOrder::Big => out.extend_from_slice(bytes),
        ByteOrder::Little => out.extend(bytes.iter().rev()),
    }
}

impl crate::backend::memory::TargetMemory for SyntheticJob {
    fn abi(&self) -> TargetAbi {
        self.memory.abi()
    }

    fn read_into(
        &self,
        addr: TargetAddr,
        buf: &mut [u8],
    ) -> Result<usize, crate::error::ReadError> {
        self.memory.read_into(addr, buf)
    }
}

impl crate::symbols::SymbolSource for SyntheticJob {
    fn lookup(&self, name: &str) -> Option<crate::symbols::Symbol> {
        self.symbols.lookup(name)
    }

    fn searched_objects(&self) -> Vec<String> {
        self.symbols.searched_objects()
    }
}

/// Bytes being laid out at a target address, with the target's byte order
/// and width.
#[derive(Clone, Debug)]
struct Region {
    abi: TargetAbi,
    base: u64,
    bytes: Vec<u8>,
}

impl Region {
    fn new(abi: TargetAbi, base: u64) -> Self {
        Region {
            abi,
            base,
            bytes: Vec::new(),
        }
    }

    fn here(&self) -> TargetAddr {
        TargetAddr(self.base + self.bytes.len() as u64)
    }

    fn align(&mut self, to: usize) -> &mut Self {
        while !self.bytes.len().is_multiple_of(to) {
            self.bytes.push(0);
        }
        self
    }

    /// Pads to `align` under natural packing; packed records have none.
    fn natural(&mut self, packing: Packing, align: usize) -> &mut Self {
        match packing {
            Packing::Natural => self.align(align),
            Packing::Packed => self,
        }
    }

    fn ptr_size(&self) -> usize {
        match self.abi.address_width {
            AddressWidth::W32 => 4,
            AddressWidth::W64 => 8,
        }
    }

    fn uint(&mut self, v: u64, size: usize) -> &mut Self {
        push_uint(&mut self.bytes, self.abi.byte_order, v, size);
        self
    }

    fn int(&mut self, v: i32) -> &mut Self {
        self.uint(u64::from(v as u32), 4)
    }

    fn ptr(&mut self, a: TargetAddr) -> &mut Self {
        let n = self.ptr_size();
        self.uint(a.0, n)
    }

    /// A NUL-terminated string; returns its address.
    fn string(&mut self, s: &str) -> TargetAddr {
        let at = self.here();
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        at
    }
}

/// A rank for [`SyntheticJobBuilder::mpi2dd`].
#[derive(Clone, Copy, Debug)]
pub struct RankSpec<'a> {
    /// Host name.
    pub host: &'a str,
    /// Executable.
    pub exe: &'a str,
    /// Pid.
    pub pid: i32,
    /// Rank in its world.
    pub rank: i32,
    /// Its `comm_world_id`.
    pub world: &'a str,
    /// For a spawned rank: parent world, parent rank, sequence.
    pub spawn: Option<(&'a str, i32, i32)>,
}

/// A directory or metadirectory entry for [`SyntheticJobBuilder::mpi2dd`].
#[derive(Clone, Copy, Debug)]
pub struct PeerSpec<'a> {
    /// Host name.
    pub host: &'a str,
    /// Executable.
    pub exe: &'a str,
    /// Pid.
    pub pid: i32,
}

/// What [`SyntheticJobBuilder::mpi2dd`] lays out.
#[derive(Clone, Copy, Debug)]
pub struct Mpi2ddSpec<'a> {
    /// Packed (as the draft says) or natural (as MPICH compiles).
    pub packing: Packing,
    /// `debug_state`.
    pub debug_state: u8,
    /// `mpi_flags` bits.
    pub mpi_flags: u32,
    /// The metadirectory this process points to.
    pub meta: Option<PeerSpec<'a>>,
    /// The proctable.
    pub ranks: &'a [RankSpec<'a>],
    /// The directory table.
    pub directories: &'a [PeerSpec<'a>],
    /// The metadirectory table.
    pub metadirectories: &'a [PeerSpec<'a>],
    /// Both DLL names.
    pub dll_name: Option<&'a str>,
    /// The abort string.
    pub abort: Option<&'a str>,
}

impl Default for Mpi2ddSpec<'_> {
    fn default() -> Self {
        Mpi2ddSpec {
            packing: Packing::Natural,
            debug_state: 1,
            mpi_flags: 0,
            meta: None,
            ranks: &[],
            directories: &[],
            metadirectories: &[],
            dll_name: None,
            abort: None,
        }
    }
}

/// Lays out a synthetic job: globals in a data region, tables and strings
/// in a heap region, each global named in the symbol table.
#[derive(Clone, Debug)]
pub struct SyntheticJobBuilder {
    abi: TargetAbi,
    object: String,
    data: Region,
    heap: Region,
    symbols: Vec<(String, TargetAddr, u64)>,
    pid: i32,
}

impl SyntheticJobBuilder {
    fn new(abi: TargetAbi) -> Self {
        let (data, heap) = match abi.address_width {
            AddressWidth::W32 => (0x0804_a000, 0x0a00_0000),
            AddressWidth::W64 => (0x5555_5555_a000, 0x7f00_1000_0000),
        };
        SyntheticJobBuilder {
            abi,
            object: "/synthetic/mpirun".into(),
            data: Region::new(abi, data),
            heap: Region::new(abi, heap),
            symbols: Vec::new(),
            pid: 4242,
        }
    }

    /// Names the object that defines the globals (default
    /// `/synthetic/mpirun`). When the job is written out as files, this is
    /// the executable's path as recorded in the core.
    pub fn object(mut self, path: &str) -> Self {
        self.object = path.to_string();
        self
    }

    /// The process id recorded in a core file written from the job
    /// (default 4242).
    pub fn pid(mut self, pid: i32) -> Self {
        self.pid = pid;
        self
    }

    fn global(&mut self, name: &str, align: usize, fill: impl FnOnce(&mut Region)) {
        self.data.align(align);
        let at = self.data.here();
        fill(&mut self.data);
        let size = self.data.here().0 - at.0;
        self.symbols.push((name.to_string(), at, size));
    }

    fn int_global(&mut self, name: &str, v: i32) {
        self.global(name, 4, |r| {
            r.int(v);
        });
    }

    /// An MPIR starter with a spawned job: the table (host, executable,
    /// pid) in rank order, `MPIR_debug_state` 1 (spawned), the gate and
    /// being-debugged flags at 0, and `MPIR_i_am_starter` defined.
    pub fn mpir_starter(mut self, ranks: &[(&str, &str, i32)]) -> Self {
        let p = self.heap.ptr_size();
        let names: Vec<(TargetAddr, TargetAddr)> = ranks
            .iter()
            .map(|(h, e, _)| (self.heap.string(h), self.heap.string(e)))
            .collect();
        // MPIR_PROCDESC { char *host_name; char *executable_name; int pid; }:
        // natural C layout, so the struct ends padded to pointer alignment.
        self.heap.align(p);
        let table = self.heap.here();
        for ((host, exe), (_, _, pid)) in names.iter().zip(ranks) {
            self.heap.ptr(*host).ptr(*exe).int(*pid).align(p);
        }
        self.global(names::PROCTABLE, p, |r| {
            r.ptr(table);
        });
        self.int_global(names::PROCTABLE_SIZE, ranks.len() as i32);
        self.int_global(names::DEBUG_STATE, 1);
        self.int_global(names::DEBUG_GATE, 0);
        self.int_global(names::BEING_DEBUGGED, 0);
        self.int_global(names::I_AM_STARTER, 0);
        // The function a debugger plants its breakpoint on. A synthetic job
        // never runs, so one placeholder byte in its data gives the symbol
        // an address.
        self.global(names::BREAKPOINT, 1, |r| {
            r.string("");
        });
        self
    }

    /// Raw MPIR table fields, for hostile-input tests: the pointer and size
    /// are written as given, whatever they point at.
    pub fn mpir_raw(mut self, table: TargetAddr, size: i32, state: i32) -> Self {
        let p = self.heap.ptr_size();
        self.global(names::PROCTABLE, p, |r| {
            r.ptr(table);
        });
        self.int_global(names::PROCTABLE_SIZE, size);
        self.int_global(names::DEBUG_STATE, state);
        self
    }

    /// `char MPIR_dll_name[]` holding `name`.
    pub fn mpir_dll_name(mut self, name: &str) -> Self {
        self.global(names::DLL_NAME, 1, |r| {
            r.string(name);
        });
        self
    }

    /// Marks the job as aborting with `message`: `MPIR_debug_state` 2 and
    /// `MPIR_debug_abort_string` pointing at the message. Call after
    /// [`Self::mpir_starter`].
    pub fn mpir_abort(mut self, message: &str) -> Self {
        let s = self.heap.string(message);
        let p = self.heap.ptr_size();
        self.global(names::ABORT_STRING, p, |r| {
            r.ptr(s);
        });
        self.symbols.retain(|(n, _, _)| n != names::DEBUG_STATE);
        self.int_global(names::DEBUG_STATE, 2);
        self
    }

    /// `char MPIR_executable_path[len]` holding `path`.
    pub fn mpir_executable_path(mut self, path: &str, len: usize) -> Self {
        self.global(names::EXECUTABLE_PATH, 1, |r| {
            let start = r.bytes.len();
            r.string(path);
            r.bytes.resize(start + len.max(path.len() + 1), 0);
        });
        self
    }

    /// A presence-only symbol such as `MPIR_partial_attach_ok`.
    pub fn presence(mut self, name: &str) -> Self {
        self.int_global(name, 0);
        self
    }

    /// An `MPI2DD_info` global and the tables it points to, laid out with
    /// `spec.packing`.
    pub fn mpi2dd(mut self, spec: &Mpi2ddSpec<'_>) -> Self {
        let packing = spec.packing;
        let p = self.heap.ptr_size();
        let h = &mut self.heap;
        let dll = spec.dll_name.map(|d| h.string(d)).unwrap_or_default();
        let abort = spec.abort.map(|a| h.string(a)).unwrap_or_default();
        let meta = spec
            .meta
            .map(|m| (h.string(m.host), h.string(m.exe), m.pid))
            .unwrap_or_default();
        let ranks: Vec<_> = spec
            .ranks
            .iter()
            .map(|r| {
                let spawn = match r.spawn {
                    None => TargetAddr::NULL,
                    Some((world, parent, seq)) => {
                        let w = h.string(world);
                        // MPI2DD_SPAWNDESC { addr; int32; int32; }
                        h.natural(packing, p);
                        let at = h.here();
                        h.ptr(w).int(parent).int(seq).natural(packing, p);
                        at
                    }
                };
                (
                    h.string(r.host),
                    h.string(r.exe),
                    spawn,
                    h.string(r.world),
                    r.pid,
                    r.rank,
                )
            })
            .collect();
        let table = |h: &mut Region, peers: &[PeerSpec<'_>]| -> TargetAddr {
            if peers.is_empty() {
                return TargetAddr::NULL;
            }
            let names: Vec<_> = peers
                .iter()
                .map(|d| (h.string(d.host), h.string(d.exe)))
                .collect();
            // MPI2DD_DIRECTORYENTRY { addr; addr; int32; }: natural layout
            // pads the tail to pointer alignment, packed does not.
            h.natural(packing, p);
            let at = h.here();
            for ((host, exe), d) in names.iter().zip(peers) {
                h.ptr(*host).ptr(*exe).int(d.pid).natural(packing, p);
            }
            at
        };
        let dirs = table(h, spec.directories);
        let metas = table(h, spec.metadirectories);
        let procs = if ranks.is_empty() {
            TargetAddr::NULL
        } else {
            // MPI2DD_PROCDESC { addr x4; int32 pid; int32 rank; }
            h.natural(packing, p);
            let at = h.here();
            for (host, exe, spawn, world, pid, rank) in &ranks {
                h.ptr(*host)
                    .ptr(*exe)
                    .ptr(*spawn)
                    .ptr(*world)
                    .int(*pid)
                    .int(*rank);
                h.natural(packing, p);
            }
            at
        };
        self.global(crate::mpi2dd::INFO_SYMBOL, p, |r| {
            r.bytes.extend_from_slice(b"MPI2\x7f");
            r.bytes.extend_from_slice(&[1, 1, spec.debug_state]);
            r.natural(packing, 4)
                .uint(0, 4)
                .uint(u64::from(spec.mpi_flags), 4);
            r.natural(packing, p);
            for a in [dll, dll, meta.0, meta.1, abort, procs, dirs, metas] {
                r.ptr(a);
            }
            r.int(spec.ranks.len() as i32)
                .int(spec.directories.len() as i32)
                .int(spec.metadirectories.len() as i32)
                .int(meta.2);
            for _ in 0..8 {
                r.int(0);
            }
            r.natural(packing, p);
        });
        self
    }

    /// The finished job.
    pub fn build(self) -> SyntheticJob {
        let mut memory = SyntheticMemory::new(self.abi);
        let layout = JobLayout {
            pid: self.pid,
            data: TargetAddr(self.data.base),
            bias: self.data.base - DATA_LINK_VADDR,
        };
        memory.map(TargetAddr(self.data.base), self.data.bytes);
        memory.map(TargetAddr(self.heap.base), self.heap.bytes);
        let mut symbols = SymbolTable::new();
        symbols.add_object(&self.object);
        for (name, addr, size) in &self.symbols {
            symbols.insert(&self.object, name, *addr, *size);
        }
        SyntheticJob {
            memory,
            symbols,
            layout,
        }
    }
}
