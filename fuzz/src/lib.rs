//! What the fuzz targets share: the ABIs they cycle through, the small
//! [`Limits`] every run is bounded by, a byte format for synthetic target
//! processes (memory segments and symbols) that the targets parse and the
//! seed generator writes, and scratch files for the readers that only take
//! paths.
//!
//! The process format is deliberately simple and forgiving: every field is
//! little-endian, and a field cut short by the end of the input reads as
//! zero. A mutated input is therefore always some process, and the fuzzer
//! spends its time in the decoders instead of in our own format's errors.
//!
//! ```text
//! process   := abi:u8 nseg:u8 segment{nseg % 9} nsym:u8 symbol{nsym % 33}
//! segment   := addr:u64 len:u32 bytes{min(len, 65536, what is left)}
//! symbol    := name:u8 seg:u8 offset:u64 size:u32
//! ```
//!
//! `name` indexes the target's list of symbol names (modulo its length).
//! A symbol's address is `offset` past the start of segment `seg`, or
//! `offset` itself when `seg` names no segment: symbols stay inside the
//! memory they were made for while the fuzzer moves segments around.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mpidd_read::{
    Limits, ReadError, Symbol, SymbolSource, SymbolTable, SyntheticMemory, TargetMemory,
};
use mpidd_types::{Packing, TargetAbi, TargetAddr};

/// The ABI presets of `mpidd-types`, each read with natural and with
/// packed MPI-2 records.
pub const PRESETS: [TargetAbi; 7] = [
    TargetAbi::X86_64,
    TargetAbi::I686,
    TargetAbi::AARCH64,
    TargetAbi::ARMHF,
    TargetAbi::S390X,
    TargetAbi::POWERPC,
    TargetAbi::MIPS,
];

/// Every preset with every packing.
pub fn all_abis() -> impl Iterator<Item = TargetAbi> {
    PRESETS.iter().flat_map(|abi| {
        [Packing::Natural, Packing::Packed]
            .into_iter()
            .map(move |p| abi.with_packing(p))
    })
}

/// The ABI a selector byte stands for.
pub fn abi_from(selector: u8) -> TargetAbi {
    let n = PRESETS.len() * 2;
    let i = usize::from(selector) % n;
    let packing = if i.is_multiple_of(2) {
        Packing::Natural
    } else {
        Packing::Packed
    };
    PRESETS[i / 2].with_packing(packing)
}

/// The selector byte of an ABI (the inverse of [`abi_from`]).
pub fn abi_selector(abi: TargetAbi) -> u8 {
    (0..=u8::MAX)
        .find(|&s| abi_from(s) == abi)
        .expect("every preset with either packing has a selector")
}

/// Bounds small enough that one input can neither allocate much nor run
/// long, yet large enough for every seed to decode in full.
// Limits another change may add keep their defaults, hence the update.
#[allow(clippy::needless_update)]
pub fn limits() -> Limits {
    Limits {
        max_table_entries: 512,
        max_string_len: 512,
        max_walk_depth: 4,
        max_walk_processes: 16,
        max_list_len: 128,
        max_record_bytes: 1 << 16,
        ..Limits::default()
    }
}

/// Little-endian fields off the front of the input; past its end, every
/// field reads as zero and every byte run as empty.
pub struct Cursor<'a> {
    data: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Cursor { data }
    }

    /// Up to `n` bytes.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.data.len());
        let (head, tail) = self.data.split_at(n);
        self.data = tail;
        head
    }

    fn uint(&mut self, n: usize) -> u64 {
        self.take(n)
            .iter()
            .rev()
            .fold(0, |acc, &b| (acc << 8) | u64::from(b))
    }

    /// One byte.
    pub fn u8(&mut self) -> u8 {
        self.uint(1) as u8
    }

    /// Four bytes.
    pub fn u32(&mut self) -> u32 {
        self.uint(4) as u32
    }

    /// Eight bytes.
    pub fn u64(&mut self) -> u64 {
        self.uint(8)
    }

    /// What is left.
    pub fn rest(&mut self) -> &'a [u8] {
        self.take(usize::MAX)
    }

    /// Whether nothing is left.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// Most segments in one process.
pub const MAX_SEGMENTS: usize = 8;
/// Most bytes in one segment.
pub const MAX_SEGMENT_LEN: usize = 1 << 16;
/// Most symbols in one process.
pub const MAX_SYMBOLS: usize = 32;
/// The object every synthetic symbol is defined in.
pub const OBJECT: &str = "/fuzz/libtarget.so";

/// A synthetic process: memory and symbols, as the readers take them.
#[derive(Clone, Debug)]
pub struct Process {
    /// Its memory.
    pub memory: SyntheticMemory,
    /// Its symbols.
    pub symbols: SymbolTable,
}

impl TargetMemory for Process {
    fn abi(&self) -> TargetAbi {
        self.memory.abi()
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        self.memory.read_into(addr, buf)
    }
}

impl SymbolSource for Process {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        self.symbols.lookup(name)
    }

    fn searched_objects(&self) -> Vec<String> {
        self.symbols.searched_objects()
    }
}

impl Process {
    /// Reads one process in the format above; `names` are the symbol names
    /// the target knows.
    pub fn parse(c: &mut Cursor<'_>, names: &[&str]) -> Process {
        let abi = abi_from(c.u8());
        let mut memory = SyntheticMemory::new(abi);
        let mut starts = Vec::new();
        for _ in 0..usize::from(c.u8()) % (MAX_SEGMENTS + 1) {
            let addr = c.u64();
            let len = (c.u32() as usize).min(MAX_SEGMENT_LEN);
            memory.map(TargetAddr(addr), c.take(len).to_vec());
            starts.push(addr);
        }
        let mut symbols = SymbolTable::new();
        symbols.add_object(OBJECT);
        for _ in 0..usize::from(c.u8()) % (MAX_SYMBOLS + 1) {
            let name = names[usize::from(c.u8()) % names.len()];
            let seg = usize::from(c.u8());
            let offset = c.u64();
            let size = u64::from(c.u32());
            let addr = match starts.get(seg) {
                Some(start) => start.wrapping_add(offset),
                None => offset,
            };
            symbols.insert(OBJECT, name, TargetAddr(addr), size);
        }
        Process { memory, symbols }
    }

    /// Writes this process in the format above, for seeds. Symbols whose
    /// name is not in `names` are left out; every segment must be at most
    /// [`MAX_SEGMENT_LEN`] bytes and there must be at most
    /// [`MAX_SEGMENTS`] of them, [`MAX_SYMBOLS`] symbols.
    pub fn encode(&self, names: &[&str], out: &mut Vec<u8>) {
        out.push(abi_selector(self.memory.abi()));
        let segments: Vec<(TargetAddr, &[u8])> = self.memory.segments().collect();
        assert!(
            segments.len() <= MAX_SEGMENTS,
            "too many segments for a seed"
        );
        out.push(segments.len() as u8);
        for (addr, bytes) in &segments {
            assert!(
                bytes.len() <= MAX_SEGMENT_LEN,
                "segment too long for a seed"
            );
            out.extend_from_slice(&addr.0.to_le_bytes());
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(bytes);
        }
        let symbols: Vec<(usize, &Symbol)> = self
            .symbols
            .iter()
            .filter_map(|s| Some((names.iter().position(|n| *n == s.name)?, s)))
            .collect();
        assert!(symbols.len() <= MAX_SYMBOLS, "too many symbols for a seed");
        out.push(symbols.len() as u8);
        for (name, sym) in symbols {
            let seg = segments
                .iter()
                .position(|(a, b)| a.0 <= sym.addr.0 && sym.addr.0 - a.0 <= b.len() as u64);
            let (seg, offset) = match seg {
                Some(i) => (i as u8, sym.addr.0 - segments[i].0 .0),
                None => (u8::MAX, sym.addr.0),
            };
            out.push(name as u8);
            out.push(seg);
            out.extend_from_slice(&offset.to_le_bytes());
            out.extend_from_slice(&(sym.size.min(u64::from(u32::MAX)) as u32).to_le_bytes());
        }
    }
}

/// This process's scratch directory, on tmpfs when there is one. The fuzz
/// script points `MPIDD_FUZZ_SCRATCH` at a directory of its own and removes
/// it afterwards; each fuzzing process works in a subdirectory named after
/// its pid, so parallel runs never share files.
pub fn scratch_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let parent = std::env::var_os("MPIDD_FUZZ_SCRATCH")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                let shm = Path::new("/dev/shm");
                if shm.is_dir() {
                    shm.to_path_buf()
                } else {
                    std::env::temp_dir()
                }
            });
        let dir = parent.join(format!("mpidd-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory for the fuzz inputs");
        dir
    })
}

/// Writes `bytes` to the scratch file `name` and returns its path.
pub fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch_dir().join(name);
    std::fs::write(&path, bytes).expect("writing a scratch file");
    path
}

/// Fails unless `after` differs from `before` only in the `len` bytes at
/// `at`: the debugger's writes must touch their own variable and nothing
/// else.
pub fn assert_only_changed(
    before: &SyntheticMemory,
    after: &SyntheticMemory,
    at: TargetAddr,
    len: u64,
) {
    let segments: Vec<_> = before.segments().zip(after.segments()).collect();
    assert_eq!(
        segments.len(),
        before.segments().count(),
        "a write mapped or unmapped memory"
    );
    for ((a, old), (b, new)) in segments {
        assert_eq!((a, old.len()), (b, new.len()), "a write moved a segment");
        for (i, (x, y)) in old.iter().zip(new).enumerate() {
            let addr = a.0.wrapping_add(i as u64);
            let inside = addr.wrapping_sub(at.0) < len;
            assert!(
                x == y || inside,
                "a write changed {addr:#x}, outside {at} + {len}"
            );
        }
    }
}

/// Symbol names each target's processes can define, in the order of the
/// `name` byte of the process format (seeds depend on this order: append,
/// never reorder).
pub mod names {
    use mpidd_read::mpi2dd::{BREAKPOINT_SYMBOL, INFO_SYMBOL};
    use mpidd_read::mpir::names as m;

    /// Every symbol the MPIR reader looks up.
    pub const MPIR: &[&str] = &[
        m::PROCTABLE,
        m::PROCTABLE_SIZE,
        m::DEBUG_STATE,
        m::DEBUG_GATE,
        m::BEING_DEBUGGED,
        m::ABORT_STRING,
        m::DLL_NAME,
        m::BREAKPOINT,
        m::I_AM_STARTER,
        m::PARTIAL_ATTACH_OK,
        m::ACQUIRED_PRE_MAIN,
        m::FORCE_TO_MAIN,
        m::IGNORE_QUEUES,
        m::EXECUTABLE_PATH,
        m::SERVER_ARGUMENTS,
        m::ATTACH_FIFO,
    ];

    /// The MPI-2 interface's symbols.
    pub const MPI2DD: &[&str] = &[INFO_SYMBOL, BREAKPOINT_SYMBOL];

    /// What the MPICH queue decoder and its detection look up.
    pub const MPICH: &[&str] = &[
        "MPIR_All_communicators",
        "MPID_Recvq_posted_head_ptr",
        "MPID_Recvq_unexpected_head_ptr",
        "MPIR_Sendq_head",
        "MPIR_Datatype_direct",
        "MPII_Version_string",
        "MPII_Version_device",
        "ompi_comm_f_to_c_table",
    ];
}

/// The MPICH layout the queue target starts from and the fuzzer bends.
pub mod mpich {
    use mpiq_core::LayoutTable;

    use crate::Cursor;

    /// `(type, member, value)`: a member's offset, or with no member the
    /// type's size. The values are a synthetic MPICH's (those of
    /// mpiq-core's native_synthetic test), not the real one's.
    pub const DEFAULT: &[(&str, Option<&str>, u64)] = &[
        ("MPIR_Comm_list", None, 16),
        ("MPIR_Comm_list", Some("sequence_number"), 0),
        ("MPIR_Comm_list", Some("head"), 8),
        ("MPIR_Comm", None, 256),
        ("MPIR_Comm", Some("name"), 0),
        ("MPIR_Comm", Some("context_id"), 128),
        ("MPIR_Comm", Some("recvcontext_id"), 130),
        ("MPIR_Comm", Some("remote_size"), 132),
        ("MPIR_Comm", Some("rank"), 136),
        ("MPIR_Comm", Some("local_size"), 140),
        ("MPIR_Comm", Some("comm_kind"), 144),
        ("MPIR_Comm", Some("local_group"), 152),
        ("MPIR_Comm", Some("comm_next"), 160),
        ("MPIR_Comm", Some("dev"), 168),
        ("MPIDI_CH3I_comm_t", None, 16),
        ("MPIDI_CH3I_comm_t", Some("vcrt"), 0),
        ("MPIDI_VCRT", None, 24),
        ("MPIDI_VCRT", Some("size"), 0),
        ("MPIDI_VCRT", Some("vcr_table"), 8),
        ("MPIDI_VC", None, 8),
        ("MPIDI_VC", Some("pg_rank"), 0),
        ("MPIR_Group", None, 16),
        ("MPIR_Group", Some("size"), 0),
        ("MPIR_Group", Some("lrank_to_lpid"), 8),
        ("MPII_Group_pmap_t", None, 16),
        ("MPII_Group_pmap_t", Some("lpid"), 0),
        ("MPIR_Request", None, 128),
        ("MPIR_Request", Some("cc"), 0),
        ("MPIR_Request", Some("next"), 8),
        ("MPIR_Request", Some("dev"), 16),
        ("MPIDI_Request", None, 64),
        ("MPIDI_Request", Some("match"), 0),
        ("MPIDI_Request", Some("user_buf"), 8),
        ("MPIDI_Request", Some("user_count"), 16),
        ("MPIDI_Request", Some("datatype"), 24),
        ("MPIDI_Request", Some("recv_data_sz"), 32),
        ("MPIDI_Request", Some("tmpbuf"), 40),
        ("MPIDI_Message_match", None, 8),
        ("MPIDI_Message_match", Some("parts"), 0),
        ("MPIDI_Message_match_parts_t", None, 8),
        ("MPIDI_Message_match_parts_t", Some("tag"), 0),
        ("MPIDI_Message_match_parts_t", Some("rank"), 4),
        ("MPIDI_Message_match_parts_t", Some("context_id"), 6),
        ("MPIR_Sendq", None, 40),
        ("MPIR_Sendq", Some("sreq"), 0),
        ("MPIR_Sendq", Some("tag"), 8),
        ("MPIR_Sendq", Some("rank"), 12),
        ("MPIR_Sendq", Some("context_id"), 16),
        ("MPIR_Sendq", Some("next"), 24),
        ("MPIR_Datatype", None, 32),
        ("MPIR_Datatype", Some("size"), 8),
    ];

    /// Most overrides one input applies.
    pub const MAX_OVERRIDES: usize = 64;

    /// Reads the overrides and builds the table:
    ///
    /// ```text
    /// layout   := n:u8 override{n % 65}
    /// override := entry:u8 value:u64
    /// ```
    ///
    /// `entry` modulo twice the number of entries: below the number, the
    /// entry takes `value`; above, the entry is removed (a type without a
    /// size is removed with all its members).
    pub fn parse(c: &mut Cursor<'_>) -> LayoutTable {
        let mut values: Vec<Option<u64>> = DEFAULT.iter().map(|e| Some(e.2)).collect();
        for _ in 0..usize::from(c.u8()) % (MAX_OVERRIDES + 1) {
            let entry = usize::from(c.u8()) % (2 * DEFAULT.len());
            let value = c.u64();
            match values.get_mut(entry) {
                Some(v) => *v = Some(value),
                None => values[entry - DEFAULT.len()] = None,
            }
        }
        table(&values)
    }

    /// The table of `values`, one per entry of [`DEFAULT`].
    pub fn table(values: &[Option<u64>]) -> LayoutTable {
        let mut t = LayoutTable::default();
        for (i, &(ty, member, _)) in DEFAULT.iter().enumerate() {
            if member.is_some() {
                continue;
            }
            let Some(size) = values[i] else {
                continue;
            };
            let members: Vec<(&str, u64)> = DEFAULT
                .iter()
                .zip(values)
                .filter(|((t2, m, _), _)| *t2 == ty && m.is_some())
                .filter_map(|((_, m, _), v)| Some(((*m)?, (*v)?)))
                .collect();
            t.insert(ty, size, &members);
        }
        t
    }

    /// Writes overrides that turn [`DEFAULT`] into `values`, for seeds.
    pub fn encode(values: &[Option<u64>], out: &mut Vec<u8>) {
        let changes: Vec<(u8, u64)> = DEFAULT
            .iter()
            .zip(values)
            .enumerate()
            .filter(|(_, (d, v))| **v != Some(d.2))
            .map(|(i, (_, v))| match v {
                Some(v) => (i as u8, *v),
                None => ((i + DEFAULT.len()) as u8, 0),
            })
            .collect();
        assert!(
            changes.len() <= MAX_OVERRIDES,
            "too many layout changes for a seed"
        );
        out.push(changes.len() as u8);
        for (entry, value) in changes {
            out.push(entry);
            out.extend_from_slice(&value.to_le_bytes());
        }
    }
}
