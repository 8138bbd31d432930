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

    /// What the ob1 queue decoder and its detection look up.
    pub const OB1: &[&str] = &[
        "ompi_mpi_communicators",
        "mca_pml_base_send_requests",
        "mca_pml_base_selected_component",
        "opal_version_string",
        "MPII_Version_string",
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
        ("MPIDI_Request", Some("state"), 48),
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
            t.add_offsets(ty, size, &members);
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

/// What the MPICH handle resolver looks up: the handle pools (builtin,
/// direct and allocator of each kind), the process, the topology keyval,
/// ROMIO's Fortran file table and the version strings (30 of the 32
/// symbols a process can have).
pub const HANDLE_SYMBOLS: &[&str] = &[
    "MPIR_Comm_builtin",
    "MPIR_Comm_direct",
    "MPIR_Comm_mem",
    "MPIR_Group_builtin",
    "MPIR_Group_direct",
    "MPIR_Group_mem",
    "MPIR_Datatype_builtin",
    "MPIR_Datatype_direct",
    "MPIR_Datatype_mem",
    "MPIR_Errhandler_builtin",
    "MPIR_Errhandler_direct",
    "MPIR_Errhandler_mem",
    "MPIR_Op_builtin",
    "MPIR_Op_direct",
    "MPIR_Op_mem",
    "MPIR_Info_builtin",
    "MPIR_Info_direct",
    "MPIR_Info_mem",
    "MPIR_Request_builtins",
    "MPIR_Request_direct",
    "MPIR_Request_mem",
    "MPIR_Win_direct",
    "MPIR_Win_mem",
    "MPIR_Process",
    "MPIR_Topology_keyval",
    "ADIOI_Ftable",
    "ADIOI_Ftable_ptr",
    "MPII_Version_string",
    "MPII_Version_device",
];

/// The symbols of the `mpich_ch4_queues` target: the handle objects'
/// (whose request pools it walks) and CH4's queue globals.
pub const CH4_SYMBOLS: &[&str] = &[
    "MPIR_Request_direct",
    "MPIR_Request_mem",
    "MPIR_Datatype_direct",
    "MPIR_All_communicators",
    "MPIDI_global",
    "MPIR_Sendq_head",
    "MPII_Version_string",
    "MPII_Version_device",
];

/// A layout the fuzzer bends, shared by the targets whose decoders take a
/// [`mpidd_read::LayoutTable`]: sizes, member offsets and widths, and
/// enumerator values, each entry changeable or removable by the input.
pub mod bent {
    use mpidd_read::LayoutTable;

    use crate::Cursor;

    /// A member's width: fixed, or the target's pointer.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Width {
        /// `n` bytes.
        Bytes(u64),
        /// A pointer of the target.
        Word,
        /// A `char[n]`.
        Chars(u64),
    }

    /// One entry's value: an offset or size and a width for a layout
    /// entry, a value for an enumerator; `None` when removed.
    pub type Values = Vec<Option<(u64, u64)>>;

    /// Most overrides one input applies: enough for every entry's
    /// offset and width (a real library's layout is one such list).
    pub const MAX_OVERRIDES: usize = 512;

    /// The entries of one layout and their defaults.
    pub struct LayoutSpec {
        /// `(type, member, value, width)`: a member's offset and width, or
        /// with no member the type's size (its width unused).
        pub default: &'static [(&'static str, Option<&'static str>, u64, Width)],
        /// `(enumeration, enumerator, value)`.
        pub enumerators: &'static [(&'static str, &'static str, i128)],
        /// `(type, member, enumeration)`: the members whose enumerators
        /// the decoders ask for.
        pub member_enums: &'static [(&'static str, &'static str, &'static str)],
    }

    impl LayoutSpec {
        /// The default values for a target whose pointers are `word`
        /// bytes: [`LayoutSpec::default`] then
        /// [`LayoutSpec::enumerators`], one per entry.
        pub fn defaults(&self, word: u64) -> Values {
            self.default
                .iter()
                .map(|&(_, _, v, w)| {
                    Some((
                        v,
                        match w {
                            Width::Bytes(n) | Width::Chars(n) => n,
                            Width::Word => word,
                        },
                    ))
                })
                .chain(
                    self.enumerators
                        .iter()
                        .map(|&(_, _, v)| Some((v as u64, 0))),
                )
                .collect()
        }

        /// Reads the overrides to the defaults for pointers of `word`
        /// bytes:
        ///
        /// ```text
        /// layout   := n:u16 override{n % 513}
        /// override := entry:u16 what:u8 value:u64
        /// ```
        ///
        /// `entry` modulo the number of entries (the layout's, then the
        /// enumerators); `what` modulo 3: 0 sets the offset, size or
        /// enumerator value, 1 the member's width, 2 removes the entry (a
        /// type without a size is removed with all its members).
        pub fn parse(&self, c: &mut Cursor<'_>, word: u64) -> Values {
            let mut values = self.defaults(word);
            let n = usize::from(c.u8()) | usize::from(c.u8()) << 8;
            for _ in 0..n % (MAX_OVERRIDES + 1) {
                let entry = (usize::from(c.u8()) | usize::from(c.u8()) << 8) % values.len();
                let what = c.u8() % 3;
                let value = c.u64();
                let v = &mut values[entry];
                *v = match (what, *v) {
                    (0, Some((_, w))) => Some((value, w)),
                    (1, Some((o, _))) => Some((o, value)),
                    (0 | 1, None) => Some((value, value)),
                    _ => None,
                };
            }
            values
        }

        /// The table of `values`.
        pub fn table(&self, values: &[Option<(u64, u64)>]) -> LayoutTable {
            let mut t = LayoutTable::default();
            let (layout, enums) = values.split_at(self.default.len());
            for (&(ty, member, _, _), v) in self.default.iter().zip(layout) {
                let Some((value, width)) = *v else { continue };
                match member {
                    None => {
                        t.add_type(ty, value);
                    }
                    Some(m) => {
                        let sized =
                            self.default.iter().zip(layout).any(|((t2, m2, _, _), v2)| {
                                *t2 == ty && m2.is_none() && v2.is_some()
                            });
                        if !sized {
                            continue;
                        }
                        match self.default.iter().find(|e| e.0 == ty && e.1 == member) {
                            Some((_, _, _, Width::Chars(_))) => {
                                t.add_array(ty, m, value, width, width);
                            }
                            _ => {
                                t.add_member(ty, m, value, width);
                            }
                        }
                    }
                }
            }
            let mut names: Vec<&str> = self.enumerators.iter().map(|e| e.0).collect();
            names.dedup();
            for name in names {
                let list: Vec<(&str, i128)> = self
                    .enumerators
                    .iter()
                    .zip(enums)
                    .filter(|((e, _, _), _)| *e == name)
                    .filter_map(|((_, n, _), v)| Some((*n, i128::from((*v)?.0 as i64))))
                    .collect();
                t.add_enum(name, &list);
            }
            for &(ty, m, e) in self.member_enums {
                t.add_member_enum(ty, m, e);
            }
            t
        }

        /// Writes overrides that turn the defaults for `word` into
        /// `values`, for seeds.
        pub fn encode(&self, values: &[Option<(u64, u64)>], word: u64, out: &mut Vec<u8>) {
            let mut changes: Vec<(u16, u8, u64)> = Vec::new();
            for (i, (d, v)) in self.defaults(word).iter().zip(values).enumerate() {
                let i = i as u16;
                match (d, v) {
                    (Some(d), Some(v)) => {
                        if d.0 != v.0 {
                            changes.push((i, 0, v.0));
                        }
                        if d.1 != v.1 {
                            changes.push((i, 1, v.1));
                        }
                    }
                    (_, None) => changes.push((i, 2, 0)),
                    (None, Some(_)) => unreachable!("every default is set"),
                }
            }
            assert!(
                changes.len() <= MAX_OVERRIDES,
                "too many layout changes for a seed"
            );
            out.extend_from_slice(&(changes.len() as u16).to_le_bytes());
            for (entry, what, value) in changes {
                out.extend_from_slice(&entry.to_le_bytes());
                out.push(what);
                out.extend_from_slice(&value.to_le_bytes());
            }
        }
    }
}

/// The layouts of MPICH's handle objects the `handles` target starts from
/// and the fuzzer bends: a [`mpihandles::LayoutTable`] built from
/// [`handles::DEFAULT`] for the process's pointer width, then changed by
/// the input.
pub mod handles {
    use mpihandles::LayoutTable;

    use crate::Cursor;

    use crate::bent::{
        LayoutSpec,
        Width::{Bytes as B, Chars, Word as W},
    };
    pub use crate::bent::{Values, Width, MAX_OVERRIDES};

    /// `(type, member, value, width)`: a member's offset and width, or
    /// with no member the type's size (its width unused). A synthetic
    /// MPICH (every member in its own 8-byte slot, so one table serves
    /// 32- and 64-bit targets), not the real one.
    pub const DEFAULT: &[(&str, Option<&str>, u64, Width)] = &[
        ("MPIR_Handle_common", None, 24, B(0)),
        ("MPIR_Handle_common", Some("next"), 8, W),
        ("MPIR_Object_alloc_t", None, 80, B(0)),
        ("MPIR_Object_alloc_t", Some("avail"), 0, W),
        ("MPIR_Object_alloc_t", Some("initialized"), 8, B(4)),
        ("MPIR_Object_alloc_t", Some("indirect"), 16, W),
        ("MPIR_Object_alloc_t", Some("indirect_size"), 24, B(4)),
        ("MPIR_Object_alloc_t", Some("num_allocated"), 32, B(4)),
        ("MPIR_Object_alloc_t", Some("num_avail"), 40, B(4)),
        ("MPIR_Object_alloc_t", Some("kind"), 48, B(4)),
        ("MPIR_Object_alloc_t", Some("size"), 56, B(4)),
        ("MPIR_Object_alloc_t", Some("direct"), 64, W),
        ("MPIR_Object_alloc_t", Some("direct_size"), 72, B(4)),
        ("MPIR_Comm", None, 336, B(0)),
        ("MPIR_Comm", Some("handle"), 0, B(4)),
        ("MPIR_Comm", Some("ref_count"), 4, B(4)),
        ("MPIR_Comm", Some("name"), 8, Chars(128)),
        ("MPIR_Comm", Some("context_id"), 136, B(2)),
        ("MPIR_Comm", Some("recvcontext_id"), 138, B(2)),
        ("MPIR_Comm", Some("rank"), 144, B(4)),
        ("MPIR_Comm", Some("local_size"), 152, B(4)),
        ("MPIR_Comm", Some("remote_size"), 160, B(4)),
        ("MPIR_Comm", Some("comm_kind"), 168, B(4)),
        ("MPIR_Comm", Some("local_group"), 176, W),
        ("MPIR_Comm", Some("remote_group"), 184, W),
        ("MPIR_Comm", Some("errhandler"), 192, W),
        ("MPIR_Comm", Some("attributes"), 200, W),
        ("MPIR_Comm", Some("dev.vcrt"), 208, W),
        ("MPIR_Comm", Some("dev.local_vcrt"), 216, W),
        ("MPIDI_VCRT", None, 16, B(0)),
        ("MPIDI_VCRT", Some("size"), 0, B(4)),
        ("MPIDI_VCRT", Some("vcr_table"), 8, W),
        ("MPIDI_VC", None, 16, B(0)),
        ("MPIDI_VC", Some("lpid"), 0, B(4)),
        ("MPIR_Process_t", None, 16, B(0)),
        ("MPIR_Process_t", Some("rank"), 8, B(4)),
        ("MPIR_Group", None, 32, B(0)),
        ("MPIR_Group", Some("handle"), 0, B(4)),
        ("MPIR_Group", Some("ref_count"), 4, B(4)),
        ("MPIR_Group", Some("size"), 8, B(4)),
        ("MPIR_Group", Some("rank"), 16, B(4)),
        ("MPIR_Group", Some("lrank_to_lpid"), 24, W),
        ("MPII_Group_pmap_t", None, 16, B(0)),
        ("MPII_Group_pmap_t", Some("lpid"), 0, B(8)),
        ("MPIR_Attribute", None, 32, B(0)),
        ("MPIR_Attribute", Some("keyval"), 0, W),
        ("MPIR_Attribute", Some("next"), 8, W),
        ("MPIR_Attribute", Some("attrType"), 16, B(4)),
        ("MPIR_Attribute", Some("value"), 24, B(8)),
        ("MPII_Keyval", None, 16, B(0)),
        ("MPII_Keyval", Some("handle"), 0, B(4)),
        ("MPIR_Topology", None, 64, B(0)),
        ("MPIR_Topology", Some("kind"), 0, B(4)),
        ("MPIR_Topology", Some("topo.cart.ndims"), 8, B(4)),
        ("MPIR_Topology", Some("topo.cart.dims"), 16, W),
        ("MPIR_Topology", Some("topo.cart.periodic"), 24, W),
        ("MPIR_Topology", Some("topo.cart.position"), 32, W),
        ("MPIR_Topology", Some("topo.graph.nnodes"), 8, B(4)),
        ("MPIR_Topology", Some("topo.graph.nedges"), 12, B(4)),
        ("MPIR_Topology", Some("topo.graph.index"), 16, W),
        ("MPIR_Topology", Some("topo.graph.edges"), 24, W),
        ("MPIR_Topology", Some("topo.dist_graph.indegree"), 8, B(4)),
        ("MPIR_Topology", Some("topo.dist_graph.in"), 16, W),
        ("MPIR_Topology", Some("topo.dist_graph.outdegree"), 32, B(4)),
        ("MPIR_Topology", Some("topo.dist_graph.out"), 40, W),
        (
            "MPIR_Topology",
            Some("topo.dist_graph.is_weighted"),
            56,
            B(4),
        ),
        ("MPIR_Errhandler", None, 24, B(0)),
        ("MPIR_Errhandler", Some("handle"), 0, B(4)),
        ("MPIR_Errhandler", Some("ref_count"), 4, B(4)),
        ("MPIR_Errhandler", Some("language"), 8, B(4)),
        ("MPIR_Errhandler", Some("kind"), 12, B(4)),
        ("MPIR_Errhandler", Some("errfn"), 16, W),
        ("MPIR_Op", None, 24, B(0)),
        ("MPIR_Op", Some("handle"), 0, B(4)),
        ("MPIR_Op", Some("ref_count"), 4, B(4)),
        ("MPIR_Op", Some("kind"), 8, B(4)),
        ("MPIR_Op", Some("language"), 12, B(4)),
        ("MPIR_Op", Some("function"), 16, W),
        ("MPIR_Info", None, 32, B(0)),
        ("MPIR_Info", Some("handle"), 0, B(4)),
        ("MPIR_Info", Some("ref_count"), 4, B(4)),
        ("MPIR_Info", Some("next"), 8, W),
        ("MPIR_Info", Some("key"), 16, W),
        ("MPIR_Info", Some("value"), 24, W),
        ("MPIR_Request", None, 224, B(0)),
        ("MPIR_Request", Some("handle"), 0, B(4)),
        ("MPIR_Request", Some("ref_count"), 4, B(4)),
        ("MPIR_Request", Some("kind"), 8, B(4)),
        ("MPIR_Request", Some("cc_ptr"), 16, W),
        ("MPIR_Request", Some("cc"), 24, B(4)),
        ("MPIR_Request", Some("comm"), 32, W),
        ("MPIR_Request", Some("status"), 40, B(20)),
        ("MPIR_Request", Some("u.persist.real_request"), 64, W),
        ("MPIR_Request", Some("u.persist_coll.real_request"), 64, W),
        ("MPIR_Request", Some("u.ureq.greq_fns"), 64, W),
        ("MPIR_Request", Some("dev.match.parts.tag"), 80, B(4)),
        ("MPIR_Request", Some("dev.match.parts.rank"), 84, B(2)),
        ("MPI_Status", None, 20, B(0)),
        ("MPI_Status", Some("count_lo"), 0, B(4)),
        ("MPI_Status", Some("count_hi_and_cancelled"), 4, B(4)),
        ("MPI_Status", Some("MPI_SOURCE"), 8, B(4)),
        ("MPI_Status", Some("MPI_TAG"), 12, B(4)),
        ("MPI_Status", Some("MPI_ERROR"), 16, B(4)),
        ("MPIR_Grequest_fns", None, 40, B(0)),
        ("MPIR_Grequest_fns", Some("U.C.query_fn"), 0, W),
        ("MPIR_Grequest_fns", Some("U.C.free_fn"), 8, W),
        ("MPIR_Grequest_fns", Some("U.C.cancel_fn"), 16, W),
        ("MPIR_Grequest_fns", Some("greq_lang"), 24, B(4)),
        ("MPIR_Grequest_fns", Some("grequest_extra_state"), 32, W),
        ("MPIR_Win", None, 144, B(0)),
        ("MPIR_Win", Some("handle"), 0, B(4)),
        ("MPIR_Win", Some("ref_count"), 4, B(4)),
        ("MPIR_Win", Some("name"), 8, Chars(64)),
        ("MPIR_Win", Some("base"), 72, W),
        ("MPIR_Win", Some("size"), 80, B(8)),
        ("MPIR_Win", Some("disp_unit"), 88, B(4)),
        ("MPIR_Win", Some("comm_ptr"), 96, W),
        ("MPIR_Win", Some("create_flavor"), 104, B(4)),
        ("MPIR_Win", Some("model"), 108, B(4)),
        ("MPIR_Win", Some("errhandler"), 112, W),
        ("MPIR_Win", Some("info_args.no_locks"), 120, B(4)),
        ("MPIR_Win", Some("info_args.accumulate_ops"), 124, B(4)),
        ("MPIR_Win", Some("states.access_state"), 128, B(4)),
        ("MPIR_Win", Some("states.exposure_state"), 132, B(4)),
        ("MPIR_Datatype", None, 136, B(0)),
        ("MPIR_Datatype", Some("handle"), 0, B(4)),
        ("MPIR_Datatype", Some("ref_count"), 4, B(4)),
        ("MPIR_Datatype", Some("size"), 8, B(8)),
        ("MPIR_Datatype", Some("extent"), 16, B(8)),
        ("MPIR_Datatype", Some("ub"), 24, B(8)),
        ("MPIR_Datatype", Some("lb"), 32, B(8)),
        ("MPIR_Datatype", Some("true_ub"), 40, B(8)),
        ("MPIR_Datatype", Some("true_lb"), 48, B(8)),
        ("MPIR_Datatype", Some("is_committed"), 56, B(4)),
        ("MPIR_Datatype", Some("is_contig"), 60, B(4)),
        ("MPIR_Datatype", Some("contents"), 64, W),
        ("MPIR_Datatype", Some("name"), 72, Chars(64)),
        ("MPIR_Datatype_contents", None, 40, B(0)),
        ("MPIR_Datatype_contents", Some("combiner"), 0, B(4)),
        ("MPIR_Datatype_contents", Some("nr_ints"), 8, W),
        ("MPIR_Datatype_contents", Some("nr_aints"), 16, W),
        ("MPIR_Datatype_contents", Some("nr_counts"), 24, W),
        ("MPIR_Datatype_contents", Some("nr_types"), 32, W),
        ("ADIOI_FileD", None, 48, B(0)),
        ("ADIOI_FileD", Some("cookie"), 0, B(4)),
        ("ADIOI_FileD", Some("comm"), 4, B(4)),
        ("ADIOI_FileD", Some("filename"), 8, W),
        ("ADIOI_FileD", Some("orig_access_mode"), 16, B(4)),
        ("ADIOI_FileD", Some("info"), 20, B(4)),
        ("ADIOI_FileD", Some("err_handler"), 24, B(4)),
        ("ADIOI_FileD", Some("atomicity"), 28, B(4)),
        ("ADIOI_FileD", Some("async_count"), 32, B(4)),
        ("ADIOI_FileD", Some("fortran_handle"), 36, B(4)),
        // MPICH's CH4 device (mpiq-core's MpichCh4 and the CH4 request
        // envelope of mpihandles), in slots after the CH3 ones.
        ("MPIR_Comm_list", None, 16, B(0)),
        ("MPIR_Comm_list", Some("sequence_number"), 0, B(4)),
        ("MPIR_Comm_list", Some("head"), 8, W),
        ("MPIR_Comm", Some("comm_next"), 224, W),
        ("MPIR_Comm", Some("dev.ch4.map.mode"), 232, B(4)),
        ("MPIR_Comm", Some("dev.ch4.map.avtid"), 240, B(4)),
        ("MPIR_Comm", Some("dev.ch4.map.reg.offset"), 248, B(4)),
        (
            "MPIR_Comm",
            Some("dev.ch4.map.reg.stride.offset"),
            256,
            B(4),
        ),
        (
            "MPIR_Comm",
            Some("dev.ch4.map.reg.stride.stride"),
            264,
            B(4),
        ),
        (
            "MPIR_Comm",
            Some("dev.ch4.map.reg.stride.blocksize"),
            272,
            B(4),
        ),
        ("MPIR_Comm", Some("dev.ch4.map.irreg.lut.lpid"), 280, W),
        ("MPIR_Comm", Some("dev.ch4.map.irreg.mlut.gpid"), 288, W),
        ("MPIDI_gpid_t", None, 16, B(0)),
        ("MPIDI_gpid_t", Some("avtid"), 0, B(4)),
        ("MPIDI_gpid_t", Some("lpid"), 8, B(4)),
        ("MPIDI_CH4_Global_t", None, 16, B(0)),
        ("MPIDI_CH4_Global_t", Some("n_vcis"), 0, B(4)),
        // An array of 2 VCIs (its width is the array's length).
        ("MPIDI_CH4_Global_t", Some("per_vci"), 8, Chars(2)),
        ("MPIDI_per_vci_t", None, 16, B(0)),
        ("MPIDI_per_vci_t", Some("posted_list"), 0, W),
        ("MPIDI_per_vci_t", Some("unexp_list"), 8, W),
        ("MPIDIG_req_ext_t", None, 8, B(0)),
        ("MPIDIG_req_ext_t", Some("status"), 0, B(8)),
        ("MPIR_Request", Some("next"), 96, W),
        ("MPIR_Request", Some("dev.is_local"), 104, B(4)),
        (
            "MPIR_Request",
            Some("dev.anysource_partner_request"),
            112,
            W,
        ),
        ("MPIR_Request", Some("dev.ch4.am.req"), 120, W),
        ("MPIR_Request", Some("dev.ch4.am.buffer"), 128, W),
        ("MPIR_Request", Some("dev.ch4.am.count"), 136, W),
        ("MPIR_Request", Some("dev.ch4.am.datatype"), 144, B(4)),
        ("MPIR_Request", Some("dev.ch4.am.u.recv.source"), 152, B(4)),
        ("MPIR_Request", Some("dev.ch4.am.u.recv.tag"), 160, B(4)),
        (
            "MPIR_Request",
            Some("dev.ch4.am.u.recv.context_id"),
            168,
            B(2),
        ),
        ("MPIR_Request", Some("dev.ch4.am.u.send.dest"), 176, B(4)),
        (
            "MPIR_Request",
            Some("dev.ch4.netmod.ucx.ucp_request"),
            184,
            W,
        ),
        ("MPIR_Request", Some("dev.ch4.preq.rank"), 192, B(4)),
        ("MPIR_Request", Some("dev.ch4.preq.tag"), 200, B(4)),
        ("MPIR_Request", Some("u.send.dbg_next"), 208, W),
        ("MPIR_Sendq", None, 40, B(0)),
        ("MPIR_Sendq", Some("sreq"), 0, W),
        ("MPIR_Sendq", Some("tag"), 8, B(4)),
        ("MPIR_Sendq", Some("rank"), 16, B(4)),
        ("MPIR_Sendq", Some("context_id"), 24, B(4)),
        ("MPIR_Sendq", Some("next"), 32, W),
        // UCX's receive request, whose tag the CH4 decoder decodes.
        ("ucp_request_t", None, 48, B(0)),
        ("ucp_request_t", Some("recv.buffer"), 0, W),
        ("ucp_request_t", Some("recv.length"), 8, W),
        ("ucp_request_t", Some("recv.tag.tag"), 16, B(8)),
        ("ucp_request_t", Some("recv.tag.tag_mask"), 24, B(8)),
    ];

    /// `(enumeration, enumerator, value)`, MPICH 4.0.2's values.
    pub const ENUMERATORS: &[(&str, &str, i128)] = &[
        ("MPII_Object_kind", "MPIR_COMM", 1),
        ("MPII_Object_kind", "MPIR_GROUP", 2),
        ("MPII_Object_kind", "MPIR_DATATYPE", 3),
        ("MPII_Object_kind", "MPIR_FILE", 4),
        ("MPII_Object_kind", "MPIR_ERRHANDLER", 5),
        ("MPII_Object_kind", "MPIR_OP", 6),
        ("MPII_Object_kind", "MPIR_INFO", 7),
        ("MPII_Object_kind", "MPIR_WIN", 8),
        ("MPII_Object_kind", "MPIR_KEYVAL", 9),
        ("MPII_Object_kind", "MPIR_ATTR", 10),
        ("MPII_Object_kind", "MPIR_REQUEST", 11),
        ("MPIR_Comm_kind_t", "MPIR_COMM_KIND__INTRACOMM", 0),
        ("MPIR_Comm_kind_t", "MPIR_COMM_KIND__INTERCOMM", 1),
        ("MPIR_Attr_type", "MPIR_ATTR_PTR", 0),
        ("MPIR_Attr_type", "MPIR_ATTR_AINT", 1),
        ("MPIR_Attr_type", "MPIR_ATTR_INT", 3),
        ("MPIR_Topo_type", "MPI_GRAPH", 1),
        ("MPIR_Topo_type", "MPI_CART", 2),
        ("MPIR_Topo_type", "MPI_DIST_GRAPH", 3),
        ("MPIR_Lang_t", "MPIR_LANG__C", 0),
        ("MPIR_Lang_t", "MPIR_LANG__FORTRAN", 1),
        ("MPIR_Lang_t", "MPIR_LANG__FORTRAN90", 2),
        ("MPIR_Lang_t", "MPIR_LANG__CXX", 3),
        ("MPIR_Op_kind", "MPIR_OP_KIND__USER_NONCOMMUTE", 32),
        ("MPIR_Op_kind", "MPIR_OP_KIND__USER", 33),
        ("MPIR_Request_kind_t", "MPIR_REQUEST_KIND__UNDEFINED", 0),
        ("MPIR_Request_kind_t", "MPIR_REQUEST_KIND__SEND", 1),
        ("MPIR_Request_kind_t", "MPIR_REQUEST_KIND__RECV", 2),
        ("MPIR_Request_kind_t", "MPIR_REQUEST_KIND__PREQUEST_SEND", 3),
        ("MPIR_Request_kind_t", "MPIR_REQUEST_KIND__PREQUEST_RECV", 4),
        ("MPIR_Request_kind_t", "MPIR_REQUEST_KIND__PREQUEST_COLL", 5),
        ("MPIR_Request_kind_t", "MPIR_REQUEST_KIND__GREQUEST", 8),
        ("MPIR_Request_kind_t", "MPIR_REQUEST_KIND__COLL", 9),
        ("MPIR_Request_kind_t", "MPIR_REQUEST_KIND__MPROBE", 10),
        ("MPIR_Request_kind_t", "MPIR_REQUEST_KIND__RMA", 11),
        ("MPIR_Win_flavor", "MPI_WIN_FLAVOR_CREATE", 1),
        ("MPIR_Win_flavor", "MPI_WIN_FLAVOR_ALLOCATE", 2),
        ("MPIR_Win_flavor", "MPI_WIN_FLAVOR_DYNAMIC", 3),
        ("MPIR_Win_flavor", "MPI_WIN_FLAVOR_SHARED", 4),
        ("MPIDI_Win_state", "MPIDI_RMA_NONE", 0),
        ("MPIDI_Win_state", "MPIDI_RMA_FENCE_ISSUED", 1),
        ("MPIDI_Win_state", "MPIDI_RMA_PER_TARGET", 6),
        ("enum MPIR_Combiner_enum", "MPI_COMBINER_NAMED", 1),
        ("enum MPIR_Combiner_enum", "MPI_COMBINER_DUP", 2),
        ("enum MPIR_Combiner_enum", "MPI_COMBINER_CONTIGUOUS", 3),
        ("enum MPIR_Combiner_enum", "MPI_COMBINER_VECTOR", 4),
        ("enum MPIR_Combiner_enum", "MPI_COMBINER_HVECTOR", 5),
        ("enum MPIR_Combiner_enum", "MPI_COMBINER_INDEXED", 6),
        ("enum MPIR_Combiner_enum", "MPI_COMBINER_HINDEXED", 7),
        ("enum MPIR_Combiner_enum", "MPI_COMBINER_INDEXED_BLOCK", 8),
        ("enum MPIR_Combiner_enum", "MPI_COMBINER_HINDEXED_BLOCK", 9),
        ("enum MPIR_Combiner_enum", "MPI_COMBINER_STRUCT", 10),
        ("enum MPIR_Combiner_enum", "MPI_COMBINER_RESIZED", 17),
        ("MPIDI_rank_map_mode", "MPIDI_RANK_MAP_DIRECT", 0),
        ("MPIDI_rank_map_mode", "MPIDI_RANK_MAP_DIRECT_INTRA", 1),
        ("MPIDI_rank_map_mode", "MPIDI_RANK_MAP_OFFSET", 2),
        ("MPIDI_rank_map_mode", "MPIDI_RANK_MAP_OFFSET_INTRA", 3),
        ("MPIDI_rank_map_mode", "MPIDI_RANK_MAP_STRIDE", 4),
        ("MPIDI_rank_map_mode", "MPIDI_RANK_MAP_STRIDE_INTRA", 5),
        ("MPIDI_rank_map_mode", "MPIDI_RANK_MAP_STRIDE_BLOCK", 6),
        (
            "MPIDI_rank_map_mode",
            "MPIDI_RANK_MAP_STRIDE_BLOCK_INTRA",
            7,
        ),
        ("MPIDI_rank_map_mode", "MPIDI_RANK_MAP_LUT", 8),
        ("MPIDI_rank_map_mode", "MPIDI_RANK_MAP_LUT_INTRA", 9),
        ("MPIDI_rank_map_mode", "MPIDI_RANK_MAP_MLUT", 10),
        ("MPIDI_rank_map_mode", "MPIDI_RANK_MAP_NONE", 11),
    ];

    /// `(type, member, enumeration)`: the members whose enumerators the
    /// decoders ask for.
    pub const MEMBER_ENUMS: &[(&str, &str, &str)] = &[
        ("MPIR_Comm", "comm_kind", "MPIR_Comm_kind_t"),
        ("MPIR_Comm", "dev.ch4.map.mode", "MPIDI_rank_map_mode"),
        ("MPIR_Attribute", "attrType", "MPIR_Attr_type"),
        ("MPIR_Topology", "kind", "MPIR_Topo_type"),
        ("MPIR_Errhandler", "language", "MPIR_Lang_t"),
        ("MPIR_Errhandler", "kind", "MPII_Object_kind"),
        ("MPIR_Op", "kind", "MPIR_Op_kind"),
        ("MPIR_Op", "language", "MPIR_Lang_t"),
        ("MPIR_Request", "kind", "MPIR_Request_kind_t"),
        ("MPIR_Grequest_fns", "greq_lang", "MPIR_Lang_t"),
        ("MPIR_Win", "states.access_state", "MPIDI_Win_state"),
        ("MPIR_Win", "states.exposure_state", "MPIDI_Win_state"),
    ];

    /// The synthetic MPICH's layout, as the shared format takes it.
    pub const SPEC: LayoutSpec = LayoutSpec {
        default: DEFAULT,
        enumerators: ENUMERATORS,
        member_enums: MEMBER_ENUMS,
    };

    /// The default values for a target whose pointers are `word` bytes:
    /// [`DEFAULT`] then [`ENUMERATORS`], one per entry.
    pub fn defaults(word: u64) -> Values {
        SPEC.defaults(word)
    }

    /// Reads the overrides to the defaults for pointers of `word` bytes
    /// ([`LayoutSpec::parse`]).
    pub fn parse(c: &mut Cursor<'_>, word: u64) -> Values {
        SPEC.parse(c, word)
    }

    /// The table of `values`.
    pub fn table(values: &[Option<(u64, u64)>]) -> LayoutTable {
        SPEC.table(values)
    }

    /// Writes overrides that turn the defaults for `word` into `values`,
    /// for seeds.
    pub fn encode(values: &[Option<(u64, u64)>], word: u64, out: &mut Vec<u8>) {
        SPEC.encode(values, word, out)
    }
}

/// The layout of Open MPI's ob1 structures the `ompi_ob1_queues` target
/// starts from and the fuzzer bends: every question of
/// [`mpiq_core::OB1_LAYOUT`], answered by a synthetic Open MPI in which
/// every member has its own 8-byte slot (so one table serves 32- and
/// 64-bit targets) and only pointers and `size_t`s follow the process's
/// word; then changed by the input ([`bent::LayoutSpec::parse`]).
pub mod ob1 {
    use mpidd_read::LayoutTable;

    use crate::bent::{
        LayoutSpec, Values,
        Width::{Bytes as B, Chars, Word as W},
    };
    use crate::Cursor;

    /// `(type, member, value, width)`, as [`LayoutSpec::default`]. A
    /// request or fragment is an `opal_list_item_t` (its `obj_class` at 0,
    /// its links at 16 and 24), as in Open MPI; the rest is made up.
    pub const DEFAULT: &[(&str, Option<&str>, u64, crate::bent::Width)] = &[
        ("opal_pointer_array_t", None, 32, B(0)),
        ("opal_pointer_array_t", Some("lowest_free"), 0, B(4)),
        ("opal_pointer_array_t", Some("number_free"), 8, B(4)),
        ("opal_pointer_array_t", Some("size"), 16, B(4)),
        ("opal_pointer_array_t", Some("addr"), 24, W),
        ("opal_object_t", None, 16, B(0)),
        ("opal_object_t", Some("obj_class"), 0, W),
        ("opal_list_item_t", None, 40, B(0)),
        ("opal_list_item_t", Some("opal_list_next"), 16, W),
        ("opal_list_item_t", Some("opal_list_prev"), 24, W),
        ("opal_list_t", None, 64, B(0)),
        ("opal_list_t", Some("opal_list_sentinel"), 16, B(40)),
        ("opal_free_list_t", None, 120, B(0)),
        ("opal_free_list_t", Some("fl_num_allocated"), 0, W),
        ("opal_free_list_t", Some("fl_num_per_alloc"), 8, W),
        ("opal_free_list_t", Some("fl_frag_size"), 16, W),
        ("opal_free_list_t", Some("fl_frag_alignment"), 24, W),
        ("opal_free_list_t", Some("fl_frag_class"), 32, W),
        ("opal_free_list_t", Some("fl_allocations"), 40, B(64)),
        ("opal_free_list_item_t", None, 48, B(0)),
        ("ompi_communicator_t", None, 112, B(0)),
        ("ompi_communicator_t", Some("c_name"), 0, Chars(64)),
        ("ompi_communicator_t", Some("c_contextid"), 64, B(4)),
        ("ompi_communicator_t", Some("c_my_rank"), 72, B(4)),
        ("ompi_communicator_t", Some("c_flags"), 80, B(4)),
        ("ompi_communicator_t", Some("c_local_group"), 88, W),
        ("ompi_communicator_t", Some("c_remote_group"), 96, W),
        ("ompi_communicator_t", Some("c_pml_comm"), 104, W),
        ("ompi_group_t", None, 24, B(0)),
        ("ompi_group_t", Some("grp_proc_count"), 0, B(4)),
        ("ompi_group_t", Some("grp_my_rank"), 8, B(4)),
        ("ompi_group_t", Some("grp_proc_pointers"), 16, W),
        ("ompi_proc_t", None, 16, B(0)),
        ("ompi_proc_t", Some("super.proc_name.vpid"), 8, B(4)),
        ("ompi_datatype_t", None, 16, B(0)),
        ("ompi_datatype_t", Some("super.size"), 8, W),
        ("mca_pml_base_component_t", None, 64, B(0)),
        (
            "mca_pml_base_component_t",
            Some("pmlm_version.mca_component_name"),
            0,
            Chars(64),
        ),
        ("mca_pml_ob1_comm_t", None, 80, B(0)),
        ("mca_pml_ob1_comm_t", Some("wild_receives"), 0, B(64)),
        ("mca_pml_ob1_comm_t", Some("procs"), 64, W),
        ("mca_pml_ob1_comm_t", Some("num_procs"), 72, W),
        ("mca_pml_ob1_comm_proc_t", None, 144, B(0)),
        (
            "mca_pml_ob1_comm_proc_t",
            Some("expected_sequence"),
            0,
            B(2),
        ),
        ("mca_pml_ob1_comm_proc_t", Some("frags_cant_match"), 8, W),
        (
            "mca_pml_ob1_comm_proc_t",
            Some("specific_receives"),
            16,
            B(64),
        ),
        (
            "mca_pml_ob1_comm_proc_t",
            Some("unexpected_frags"),
            80,
            B(64),
        ),
        ("mca_pml_ob1_recv_request_t", None, 104, B(0)),
        (
            "mca_pml_ob1_recv_request_t",
            Some("req_recv.req_base.req_ompi.req_complete"),
            40,
            W,
        ),
        (
            "mca_pml_ob1_recv_request_t",
            Some("req_recv.req_base.req_ompi.req_state"),
            48,
            B(4),
        ),
        (
            "mca_pml_ob1_recv_request_t",
            Some("req_recv.req_base.req_datatype"),
            56,
            W,
        ),
        (
            "mca_pml_ob1_recv_request_t",
            Some("req_recv.req_base.req_addr"),
            64,
            W,
        ),
        (
            "mca_pml_ob1_recv_request_t",
            Some("req_recv.req_base.req_count"),
            72,
            W,
        ),
        (
            "mca_pml_ob1_recv_request_t",
            Some("req_recv.req_base.req_peer"),
            80,
            B(4),
        ),
        (
            "mca_pml_ob1_recv_request_t",
            Some("req_recv.req_base.req_tag"),
            88,
            B(4),
        ),
        (
            "mca_pml_ob1_recv_request_t",
            Some("req_recv.req_base.req_sequence"),
            96,
            B(8),
        ),
        ("mca_pml_ob1_send_request_t", None, 200, B(0)),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_ompi.req_type"),
            40,
            B(4),
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_ompi.req_complete"),
            48,
            W,
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_ompi.req_state"),
            56,
            B(4),
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_pml_complete"),
            64,
            B(1),
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_free_called"),
            72,
            B(1),
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_type"),
            80,
            B(4),
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_comm"),
            88,
            W,
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_datatype"),
            96,
            W,
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_addr"),
            104,
            W,
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_count"),
            112,
            W,
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_peer"),
            120,
            B(4),
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_tag"),
            128,
            B(4),
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_base.req_sequence"),
            136,
            B(8),
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_addr"),
            144,
            W,
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_bytes_packed"),
            152,
            W,
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_send.req_send_mode"),
            160,
            B(4),
        ),
        ("mca_pml_ob1_send_request_t", Some("req_endpoint"), 168, W),
        ("mca_pml_ob1_send_request_t", Some("req_recv"), 176, B(8)),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_bytes_delivered"),
            184,
            W,
        ),
        (
            "mca_pml_ob1_send_request_t",
            Some("req_rdma_cnt"),
            192,
            B(4),
        ),
        ("mca_pml_ob1_recv_frag_t", None, 136, B(0)),
        (
            "mca_pml_ob1_recv_frag_t",
            Some("super.super.opal_list_next"),
            16,
            W,
        ),
        (
            "mca_pml_ob1_recv_frag_t",
            Some("super.super.opal_list_prev"),
            24,
            W,
        ),
        (
            "mca_pml_ob1_recv_frag_t",
            Some("hdr.hdr_common.hdr_type"),
            40,
            B(1),
        ),
        (
            "mca_pml_ob1_recv_frag_t",
            Some("hdr.hdr_match.hdr_ctx"),
            48,
            B(2),
        ),
        (
            "mca_pml_ob1_recv_frag_t",
            Some("hdr.hdr_match.hdr_src"),
            56,
            B(4),
        ),
        (
            "mca_pml_ob1_recv_frag_t",
            Some("hdr.hdr_match.hdr_tag"),
            64,
            B(4),
        ),
        (
            "mca_pml_ob1_recv_frag_t",
            Some("hdr.hdr_match.hdr_seq"),
            72,
            B(2),
        ),
        (
            "mca_pml_ob1_recv_frag_t",
            Some("hdr.hdr_rndv.hdr_msg_length"),
            80,
            B(8),
        ),
        ("mca_pml_ob1_recv_frag_t", Some("num_segments"), 88, W),
        ("mca_pml_ob1_recv_frag_t", Some("range"), 96, W),
        ("mca_pml_ob1_recv_frag_t", Some("segments"), 104, B(32)),
        ("mca_pml_ob1_rendezvous_hdr_t", None, 24, B(0)),
        ("mca_pml_ob1_hdr_t", None, 48, B(0)),
        ("mca_btl_base_segment_t", None, 16, B(0)),
        ("mca_btl_base_segment_t", Some("seg_addr"), 0, W),
        ("mca_btl_base_segment_t", Some("seg_len"), 8, B(8)),
        ("mca_bml_base_endpoint_t", None, 64, B(0)),
        ("mca_bml_base_endpoint_t", Some("btl_eager"), 8, B(24)),
        ("mca_bml_base_btl_array_t", None, 24, B(0)),
        ("mca_bml_base_btl_array_t", Some("arr_size"), 0, W),
        ("mca_bml_base_btl_array_t", Some("bml_btls"), 16, W),
        ("mca_bml_base_btl_t", None, 16, B(0)),
        ("mca_bml_base_btl_t", Some("btl"), 0, W),
        ("mca_btl_base_module_t", None, 16, B(0)),
        ("mca_btl_base_module_t", Some("btl_eager_limit"), 8, W),
    ];

    /// `(enumeration, enumerator, value)`, Open MPI 4.1.4's values.
    pub const ENUMERATORS: &[(&str, &str, i128)] = &[
        ("ompi_request_state_t", "OMPI_REQUEST_INVALID", 0),
        ("ompi_request_state_t", "OMPI_REQUEST_INACTIVE", 1),
        ("ompi_request_state_t", "OMPI_REQUEST_ACTIVE", 2),
        ("ompi_request_state_t", "OMPI_REQUEST_CANCELLED", 3),
        ("ompi_request_type_t", "OMPI_REQUEST_PML", 0),
        ("ompi_request_type_t", "OMPI_REQUEST_IO", 1),
        ("mca_pml_base_request_type_t", "MCA_PML_REQUEST_NULL", 0),
        ("mca_pml_base_request_type_t", "MCA_PML_REQUEST_SEND", 1),
        ("mca_pml_base_request_type_t", "MCA_PML_REQUEST_RECV", 2),
        (
            "mca_pml_base_send_mode_t",
            "MCA_PML_BASE_SEND_SYNCHRONOUS",
            0,
        ),
        ("mca_pml_base_send_mode_t", "MCA_PML_BASE_SEND_COMPLETE", 1),
        ("mca_pml_base_send_mode_t", "MCA_PML_BASE_SEND_BUFFERED", 2),
        ("mca_pml_base_send_mode_t", "MCA_PML_BASE_SEND_READY", 3),
        ("mca_pml_base_send_mode_t", "MCA_PML_BASE_SEND_STANDARD", 4),
    ];

    /// The synthetic ob1 layout, as the shared format takes it.
    pub const SPEC: LayoutSpec = LayoutSpec {
        default: DEFAULT,
        enumerators: ENUMERATORS,
        member_enums: &[],
    };

    /// The default values for pointers of `word` bytes.
    pub fn defaults(word: u64) -> Values {
        SPEC.defaults(word)
    }

    /// Reads the overrides ([`LayoutSpec::parse`]).
    pub fn parse(c: &mut Cursor<'_>, word: u64) -> Values {
        SPEC.parse(c, word)
    }

    /// The table of `values`.
    pub fn table(values: &[Option<(u64, u64)>]) -> LayoutTable {
        SPEC.table(values)
    }

    /// Writes overrides that turn the defaults for `word` into `values`.
    pub fn encode(values: &[Option<(u64, u64)>], word: u64, out: &mut Vec<u8>) {
        SPEC.encode(values, word, out)
    }
}

/// The layouts of Open MPI's handle objects the `ompi_handles` target
/// starts from and the fuzzer bends: the synthetic layout of
/// [`mpihandles::SyntheticOmpi::layouts`] for the process's pointer width
/// (every question of [`mpihandles::OMPI_HANDLE_LAYOUT`] answered), as a
/// list of entries (each type's size, each member's offset and width, each
/// enumerator's value) that the input changes or removes.
pub mod ompi_handles {
    use std::sync::OnceLock;

    use mpihandles::{LayoutTable, SyntheticOmpi};
    use serde_json::Value;

    use crate::Cursor;

    /// One entry of the layout: where it is in the table's JSON form.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Entry {
        /// A type's size.
        Size(String),
        /// A member's offset and width.
        Member(String, String),
        /// The value of an enumeration's `n`th enumerator.
        Enumerator(String, usize),
    }

    /// One entry's value: (offset or size or enumerator value, width);
    /// `None` when removed.
    pub type Values = Vec<Option<(u64, u64)>>;

    /// The default table's JSON form for pointers of `word` bytes, made
    /// once per width: every input starts from it.
    fn json(word: u64) -> &'static Value {
        static FOUR: OnceLock<Value> = OnceLock::new();
        static EIGHT: OnceLock<Value> = OnceLock::new();
        let make =
            || serde_json::to_value(SyntheticOmpi::layouts(word)).expect("a table is plain data");
        if word == 4 {
            FOUR.get_or_init(make)
        } else {
            EIGHT.get_or_init(make)
        }
    }

    /// Every entry, in the table's order (the same for every width).
    pub fn entries() -> &'static [Entry] {
        static ENTRIES: OnceLock<Vec<Entry>> = OnceLock::new();
        ENTRIES.get_or_init(make_entries)
    }

    fn make_entries() -> Vec<Entry> {
        let mut out = Vec::new();
        let Value::Object(types) = json(8) else {
            return out;
        };
        for (ty, t) in types {
            if t.get("size").is_some() {
                out.push(Entry::Size(ty.clone()));
            }
            if let Some(Value::Object(members)) = t.get("members") {
                for path in members.keys() {
                    out.push(Entry::Member(ty.clone(), path.clone()));
                }
            }
            if let Some(Value::Array(list)) = t.get("enumerators") {
                for i in 0..list.len() {
                    out.push(Entry::Enumerator(ty.clone(), i));
                }
            }
        }
        out
    }

    /// The values of `table`'s entries (`None` where it lacks one).
    pub fn values_of(table: &LayoutTable) -> Values {
        let json = serde_json::to_value(table).expect("a table is plain data");
        entries()
            .iter()
            .map(|e| match e {
                Entry::Size(t) => Some((json[t]["size"].as_u64()?, 0)),
                Entry::Member(t, m) => {
                    let m = &json[t]["members"][m];
                    Some((m["offset"].as_u64()?, m["size"].as_u64()?))
                }
                Entry::Enumerator(t, i) => {
                    Some((json[t]["enumerators"][*i][1].as_i64()? as u64, 0))
                }
            })
            .collect()
    }

    /// The default values for pointers of `word` bytes.
    pub fn defaults(word: u64) -> Values {
        static FOUR: OnceLock<Values> = OnceLock::new();
        static EIGHT: OnceLock<Values> = OnceLock::new();
        let make = || values_of(&SyntheticOmpi::layouts(word));
        if word == 4 {
            FOUR.get_or_init(make).clone()
        } else {
            EIGHT.get_or_init(make).clone()
        }
    }

    /// Most overrides one input applies: enough for every entry's value
    /// and width (a real build's layout is one such list).
    pub const MAX_OVERRIDES: usize = 512;

    /// Reads the overrides to the defaults for pointers of `word` bytes:
    ///
    /// ```text
    /// layout   := n:u16 override{n % 513}
    /// override := entry:u16 what:u8 value:u64
    /// ```
    ///
    /// `entry` modulo the number of entries; `what` modulo 3: 0 sets the
    /// offset, size or enumerator value, 1 the member's width, 2 removes
    /// the entry (a type without a size is removed with its members).
    pub fn parse(c: &mut Cursor<'_>, word: u64) -> Values {
        let mut values = defaults(word);
        let n = usize::from(c.u8()) | usize::from(c.u8()) << 8;
        for _ in 0..n % (MAX_OVERRIDES + 1) {
            let entry = (usize::from(c.u8()) | usize::from(c.u8()) << 8) % values.len();
            let what = c.u8() % 3;
            let value = c.u64();
            let v = &mut values[entry];
            *v = match (what, *v) {
                (0, Some((_, w))) => Some((value, w)),
                (1, Some((o, _))) => Some((o, value)),
                (0 | 1, None) => Some((value, value)),
                _ => None,
            };
        }
        values
    }

    /// The table of `values` (for pointers of `word` bytes).
    pub fn table(values: &[Option<(u64, u64)>], word: u64) -> LayoutTable {
        let mut json = json(word).clone();
        for (e, v) in entries().iter().zip(values) {
            match (e, v) {
                (Entry::Size(t), None) => {
                    if let Some(types) = json.as_object_mut() {
                        types.remove(t);
                    }
                }
                (Entry::Size(t), Some((size, _))) => {
                    if json.get(t).is_some() {
                        json[t]["size"] = (*size).into();
                    }
                }
                (Entry::Member(t, m), None) => {
                    if let Some(members) = json
                        .get_mut(t)
                        .and_then(|t| t.get_mut("members"))
                        .and_then(Value::as_object_mut)
                    {
                        members.remove(m);
                    }
                }
                (Entry::Member(t, m), Some((offset, size))) => {
                    if json.get(t).is_some() {
                        json[t]["members"][m]["offset"] = (*offset).into();
                        json[t]["members"][m]["size"] = (*size).into();
                    }
                }
                (Entry::Enumerator(t, i), v) => {
                    if let Some(e) = json
                        .get_mut(t)
                        .and_then(|t| t.get_mut("enumerators"))
                        .and_then(|l| l.get_mut(*i))
                    {
                        e[1] = match v {
                            Some((value, _)) => (*value as i64).into(),
                            // A removed enumerator keeps its name under a
                            // value no decoder looks for.
                            None => i64::MIN.into(),
                        };
                    }
                }
            }
        }
        serde_json::from_value(json).unwrap_or_default()
    }

    /// Writes overrides that turn the defaults for `word` into `values`,
    /// for seeds.
    pub fn encode(values: &[Option<(u64, u64)>], word: u64, out: &mut Vec<u8>) {
        let mut changes: Vec<(u16, u8, u64)> = Vec::new();
        for (i, (d, v)) in defaults(word).iter().zip(values).enumerate() {
            let i = i as u16;
            match (d, v) {
                (Some(d), Some(v)) => {
                    if d.0 != v.0 {
                        changes.push((i, 0, v.0));
                    }
                    if d.1 != v.1 {
                        changes.push((i, 1, v.1));
                    }
                }
                (Some(_), None) => changes.push((i, 2, 0)),
                (None, _) => {}
            }
        }
        assert!(
            changes.len() <= MAX_OVERRIDES,
            "too many layout changes for a seed"
        );
        out.extend_from_slice(&(changes.len() as u16).to_le_bytes());
        for (entry, what, value) in changes {
            out.extend_from_slice(&entry.to_le_bytes());
            out.push(what);
            out.extend_from_slice(&value.to_le_bytes());
        }
    }
}
