//! Synthetic hung jobs written as real files: for each rank an ELF core of
//! an MPICH CH3 process, beside the executable and the libraries it maps,
//! so that [`JobReader`](crate::JobReader) reads them as it reads cores of
//! a real job, from the files alone.
//!
//! Each core holds what the CH3 decoder reads (MPICH's version strings,
//! `MPIR_All_communicators` with every communicator, its group or virtual
//! connection table, the posted and unexpected receive queues, the send
//! queue) and one thread stopped in a chosen call chain, whose registers
//! (NT_PRSTATUS) and stack unwind through the functions of the written
//! objects by their `.eh_frame`. The synthetic `libmpi.so.12` has no DWARF
//! types, so the structs' layouts come with the job as a
//! [`LayoutTable`] for [`ReadOptions::layouts`](crate::ReadOptions).
//!
//! The bytes are laid out here from those layouts, field by field, never
//! through the decoder's code: a decoder bug cannot cancel out.
//!
//! All ranks share one executable and one set of libraries, as the ranks of
//! a real job run one build; only the cores are per rank.
//!
//! ```
//! use mpidd_job::synthetic_cores::{write_hung_job, FrameSpec, HungJobSpec, HungRankSpec};
//! use mpidd_job::{analyze, JobReader, RankTarget, ReadOptions};
//!
//! let dir = std::env::temp_dir().join(format!("mpidd-doc-cores-{}", std::process::id()));
//! let spec = HungJobSpec::new(2)
//!     .rank(HungRankSpec::new(0).receive("MPI_COMM_WORLD", Some(1), Some(7), 64)
//!         .stack(FrameSpec::in_mpi("MPI_Recv")))
//!     .rank(HungRankSpec::new(1).receive("MPI_COMM_WORLD", Some(0), Some(7), 64)
//!         .stack(FrameSpec::in_mpi("MPI_Recv")));
//! let job = write_hung_job(&dir, &spec)?;
//! let reader = JobReader::new(ReadOptions { layouts: Some(job.layouts.clone()), ..Default::default() });
//! let targets: Vec<_> = job.cores.iter().map(RankTarget::core).collect();
//! let report = analyze(&reader.read_all(&targets, &|_, _| {}));
//! assert_eq!(report.cycles, vec![vec![0, 1]]);
//! assert_eq!(report.ranks[0].mpi_call.as_deref(), Some("MPI_Recv"));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mpidd_read::synthetic_process::{
    frame_pointer_stack, x86_64_registers, BuiltObject, SyntheticCore, SyntheticObject,
    CALL_RETURN_OFFSET, STOPPED_PC_OFFSET,
};
use mpidd_read::{LayoutProfile, ProfileIdentity, ProfileObject};
use mpidd_types::{AddressWidth, ByteOrder, TargetAbi, TargetAddr};
use mpiq_core::{LayoutTable, Layouts};

/// MPICH's `MPI_ANY_SOURCE`, as it sits in a posted receive's match.
const MPICH_ANY_SOURCE: i64 = -2;
/// MPICH's `MPI_ANY_TAG`.
const MPICH_ANY_TAG: i64 = -1;
/// MPICH's handle of `MPI_BYTE`: builtin, size 1. Lengths then come out in
/// bytes.
const MPI_BYTE: u64 = 0x4c00_010d;
/// `MPI_MAX_OBJECT_NAME`.
const COMM_NAME_LEN: usize = 128;
/// The version MPICH's strings claim.
const MPICH_VERSION: &str = "4.0.2";
const MPICH_DEVICE: &str = "ch3:nemesis";

/// Load biases of the objects, the same in every rank (no ASLR), and where
/// each rank's heap and stack are.
const EXE_BIAS: u64 = 0x5555_5555_0000;
const LIBMPI_BIAS: u64 = 0x7f00_2000_0000;
/// The file name of the layout profile written beside the cores.
const PROFILE: &str = "libmpi-layouts.json";
const LIBC_BIAS: u64 = 0x7f00_3000_0000;
const HEAP: u64 = 0x7f00_1000_0000;
const STACK: u64 = 0x7ffd_0000_0000;
/// Where the hostile rank's stack pointer points: nothing is mapped there.
const UNMAPPED: u64 = 0x7ffe_dead_0000;

/// The file names written beside the cores.
pub const EXECUTABLE: &str = "app";
/// The synthetic MPI library's file name.
pub const LIBMPI: &str = "libmpi.so.12";
/// The synthetic C library's file name.
pub const LIBC: &str = "libc.so.6";

/// Which object a function is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Object {
    /// The program ([`EXECUTABLE`]).
    Program,
    /// The MPI library ([`LIBMPI`]).
    Mpi,
    /// The C library ([`LIBC`]).
    Libc,
}

/// One frame of a call chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameSpec {
    /// The function.
    pub function: String,
    /// Its object.
    pub object: Object,
    /// Its source file and line (DWARF), if any. A function has one line
    /// in the whole job: the first rank that names it decides.
    pub source: Option<(String, u32)>,
}

impl FrameSpec {
    fn new(function: &str, object: Object) -> Self {
        FrameSpec {
            function: function.to_string(),
            object,
            source: None,
        }
    }

    /// A function of the program.
    pub fn program(function: &str) -> Self {
        FrameSpec::new(function, Object::Program)
    }

    /// A function of the MPI library.
    pub fn mpi(function: &str) -> Self {
        FrameSpec::new(function, Object::Mpi)
    }

    /// A function of the C library.
    pub fn libc(function: &str) -> Self {
        FrameSpec::new(function, Object::Libc)
    }

    /// The same frame with a source line.
    pub fn at(mut self, file: &str, line: u32) -> Self {
        self.source = Some((file.to_string(), line));
        self
    }

    /// The chain of a rank blocked in MPI call `call` (`MPI_Recv`),
    /// outermost first: `_start → __libc_start_main → main →` `call` `→
    /// MPIDI_CH3I_Progress → poll`.
    pub fn in_mpi(call: &str) -> Vec<FrameSpec> {
        vec![
            FrameSpec::program("_start"),
            FrameSpec::libc("__libc_start_main"),
            FrameSpec::program("main").at("demo.c", 30),
            FrameSpec::mpi(call),
            FrameSpec::mpi("MPIDI_CH3I_Progress"),
            FrameSpec::libc("poll"),
        ]
    }

    /// The chain of a rank running its own code, outermost first: `_start
    /// → __libc_start_main → main → function` at `file:line`.
    pub fn computing(function: &str, file: &str, line: u32) -> Vec<FrameSpec> {
        vec![
            FrameSpec::program("_start"),
            FrameSpec::libc("__libc_start_main"),
            FrameSpec::program("main").at("demo.c", 30),
            FrameSpec::program(function).at(file, line),
        ]
    }
}

/// A communicator besides `MPI_COMM_WORLD`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HungCommSpec {
    /// Its name.
    pub name: String,
    /// Its members' world ranks, in communicator rank order.
    pub members: Vec<i64>,
}

/// A posted receive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiveSpec {
    /// The communicator's name.
    pub comm: String,
    /// The source's world rank; `None` for `MPI_ANY_SOURCE`.
    pub source: Option<i64>,
    /// The tag; `None` for `MPI_ANY_TAG`.
    pub tag: Option<i64>,
    /// The receive buffer's length in bytes.
    pub bytes: u64,
}

/// A message that arrived before a receive matched it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnexpectedSpec {
    /// The communicator's name.
    pub comm: String,
    /// The sender's world rank.
    pub source: i64,
    /// The tag.
    pub tag: i64,
    /// Its length in bytes.
    pub bytes: u64,
    /// A rendezvous request (no data yet, the sender waits) rather than
    /// eager data held in a library buffer.
    pub rendezvous: bool,
}

/// A nonblocking send not yet completed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendSpec {
    /// The communicator's name.
    pub comm: String,
    /// The destination's world rank.
    pub dest: i64,
    /// The tag.
    pub tag: i64,
    /// Its length in bytes.
    pub bytes: u64,
}

/// Damage done to a rank's core, for tests of hostile input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hostile {
    /// The posted receive queue's last request points back to its first.
    LoopingPostedQueue,
    /// The thread's stack and frame pointers point into unmapped memory.
    UnmappedStackPointer,
}

/// One rank of the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HungRankSpec {
    /// Its world rank.
    pub world_rank: i64,
    /// Its posted receives, in queue order.
    pub receives: Vec<ReceiveSpec>,
    /// Its unexpected messages, in queue order.
    pub unexpected: Vec<UnexpectedSpec>,
    /// Its nonblocking sends, in queue order.
    pub sends: Vec<SendSpec>,
    /// Its main thread's call chain, outermost first; empty for a thread
    /// without registers.
    pub stack: Vec<FrameSpec>,
    /// Damage to its core.
    pub hostile: Option<Hostile>,
}

impl HungRankSpec {
    /// World rank `world_rank`, with empty queues and no stack.
    pub fn new(world_rank: i64) -> Self {
        HungRankSpec {
            world_rank,
            receives: Vec::new(),
            unexpected: Vec::new(),
            sends: Vec::new(),
            stack: Vec::new(),
            hostile: None,
        }
    }

    /// Adds a posted receive from world rank `source` (`None`: any) with
    /// `tag` (`None`: any).
    pub fn receive(
        mut self,
        comm: &str,
        source: Option<i64>,
        tag: Option<i64>,
        bytes: u64,
    ) -> Self {
        self.receives.push(ReceiveSpec {
            comm: comm.to_string(),
            source,
            tag,
            bytes,
        });
        self
    }

    /// Adds an unexpected message from world rank `source`.
    pub fn unexpected(
        mut self,
        comm: &str,
        source: i64,
        tag: i64,
        bytes: u64,
        rendezvous: bool,
    ) -> Self {
        self.unexpected.push(UnexpectedSpec {
            comm: comm.to_string(),
            source,
            tag,
            bytes,
            rendezvous,
        });
        self
    }

    /// Adds a pending nonblocking send to world rank `dest`.
    pub fn send(mut self, comm: &str, dest: i64, tag: i64, bytes: u64) -> Self {
        self.sends.push(SendSpec {
            comm: comm.to_string(),
            dest,
            tag,
            bytes,
        });
        self
    }

    /// Sets the main thread's call chain, outermost first.
    pub fn stack(mut self, frames: Vec<FrameSpec>) -> Self {
        self.stack = frames;
        self
    }

    /// Damages the core.
    pub fn hostile(mut self, how: Hostile) -> Self {
        self.hostile = Some(how);
        self
    }
}

/// A whole job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HungJobSpec {
    /// The target ABI: 64-bit, either byte order. Stacks are unwound only
    /// on x86-64 (little-endian); a big-endian job is an s390x one, whose
    /// cores have queues but no decoded registers.
    pub abi: TargetAbi,
    /// The size of `MPI_COMM_WORLD`.
    pub world_size: i64,
    /// The communicators besides `MPI_COMM_WORLD`.
    pub communicators: Vec<HungCommSpec>,
    /// The ranks written (not necessarily all of the world).
    pub ranks: Vec<HungRankSpec>,
}

impl HungJobSpec {
    /// An x86-64 job of `world_size` ranks, none described yet.
    pub fn new(world_size: i64) -> Self {
        HungJobSpec {
            abi: TargetAbi::X86_64,
            world_size,
            communicators: Vec::new(),
            ranks: Vec::new(),
        }
    }

    /// Adds a communicator of these world ranks, in communicator rank
    /// order.
    pub fn comm(mut self, name: &str, members: &[i64]) -> Self {
        self.communicators.push(HungCommSpec {
            name: name.to_string(),
            members: members.to_vec(),
        });
        self
    }

    /// Adds a rank.
    pub fn rank(mut self, rank: HungRankSpec) -> Self {
        self.ranks.push(rank);
        self
    }
}

/// A written job.
#[derive(Clone)]
pub struct SyntheticJobCores {
    /// The directory that holds everything.
    pub dir: PathBuf,
    /// The core of each rank, in the order of [`HungJobSpec::ranks`].
    pub cores: Vec<PathBuf>,
    /// The layouts of the synthetic MPICH's structs, for
    /// [`ReadOptions::layouts`](crate::ReadOptions::layouts).
    pub layouts: Arc<dyn Layouts + Send + Sync>,
    /// The same layouts as a layout profile for the written
    /// `libmpi.so.12` (by its build-id), in the directory: what a user
    /// passes to `mpidd job --core-dir DIR --profile FILE`, as for a
    /// stripped MPI.
    pub profile: PathBuf,
}

impl std::fmt::Debug for SyntheticJobCores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyntheticJobCores")
            .field("dir", &self.dir)
            .field("cores", &self.cores)
            .finish_non_exhaustive()
    }
}

/// Why a job could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyntheticCoresError {
    /// The spec contradicts itself.
    #[error("the job's spec: {0}")]
    Spec(String),
    /// An ELF file could not be laid out or written.
    #[error(transparent)]
    Elf(#[from] mpidd_read::WriteError),
    /// The directory could not be made.
    #[error("cannot make {path}: {cause}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// The OS error: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
}

/// Offsets of the synthetic MPICH's structs: the "debug info" that the
/// layout table carries. Deliberately not the real MPICH's, so nothing can
/// be right by accident of matching a build.
mod layout {
    pub const LIST_SIZE: u64 = 16;
    pub const LIST_SEQ: u64 = 0;
    pub const LIST_HEAD: u64 = 8;

    pub const COMM_SIZE: u64 = 320;
    pub const COMM_NAME: u64 = 16;
    pub const COMM_CONTEXT: u64 = 144;
    pub const COMM_RECVCONTEXT: u64 = 146;
    pub const COMM_REMOTE_SIZE: u64 = 148;
    pub const COMM_RANK: u64 = 152;
    pub const COMM_LOCAL_SIZE: u64 = 156;
    pub const COMM_KIND: u64 = 160;
    pub const COMM_LOCAL_GROUP: u64 = 168;
    pub const COMM_NEXT: u64 = 176;
    pub const COMM_DEV: u64 = 184;
    pub const CH3_COMM_SIZE: u64 = 16;
    pub const CH3_COMM_VCRT: u64 = 0;

    pub const VCRT_SIZE_FIELD: u64 = 0;
    pub const VCRT_TABLE: u64 = 8;
    pub const VC_SIZE: u64 = 16;
    pub const VC_PG_RANK: u64 = 4;

    pub const GROUP_SIZE: u64 = 32;
    pub const GROUP_SIZE_FIELD: u64 = 4;
    pub const GROUP_PMAP: u64 = 16;
    pub const PMAP_SIZE: u64 = 16;
    pub const PMAP_LPID: u64 = 0;

    pub const REQ_SIZE: u64 = 160;
    pub const REQ_CC: u64 = 4;
    pub const REQ_NEXT: u64 = 16;
    pub const REQ_DEV: u64 = 32;
    pub const DREQ_SIZE: u64 = 96;
    pub const DREQ_MATCH: u64 = 0;
    pub const DREQ_USER_BUF: u64 = 8;
    pub const DREQ_USER_COUNT: u64 = 16;
    pub const DREQ_DATATYPE: u64 = 24;
    pub const DREQ_RECV_DATA_SZ: u64 = 32;
    pub const DREQ_TMPBUF: u64 = 40;
    pub const DREQ_STATE: u64 = 48;
    pub const MATCH_PARTS: u64 = 0;
    pub const PARTS_TAG: u64 = 0;
    pub const PARTS_RANK: u64 = 4;
    pub const PARTS_CONTEXT: u64 = 6;

    pub const SENDQ_SIZE: u64 = 40;
    pub const SENDQ_SREQ: u64 = 0;
    pub const SENDQ_TAG: u64 = 8;
    pub const SENDQ_RANK: u64 = 12;
    pub const SENDQ_CONTEXT: u64 = 16;
    pub const SENDQ_NEXT: u64 = 24;
}

/// The layout table of the synthetic MPICH: what its DWARF would say.
pub fn layout_table() -> LayoutTable {
    use layout::*;
    let mut t = LayoutTable::default();
    t.add_offsets(
        "MPIR_Comm_list",
        LIST_SIZE,
        &[("sequence_number", LIST_SEQ), ("head", LIST_HEAD)],
    );
    t.add_offsets(
        "MPIR_Comm",
        COMM_SIZE,
        &[
            ("name", COMM_NAME),
            ("context_id", COMM_CONTEXT),
            ("recvcontext_id", COMM_RECVCONTEXT),
            ("remote_size", COMM_REMOTE_SIZE),
            ("rank", COMM_RANK),
            ("local_size", COMM_LOCAL_SIZE),
            ("comm_kind", COMM_KIND),
            ("local_group", COMM_LOCAL_GROUP),
            ("comm_next", COMM_NEXT),
            ("dev", COMM_DEV),
        ],
    );
    t.add_offsets(
        "MPIDI_CH3I_comm_t",
        CH3_COMM_SIZE,
        &[("vcrt", CH3_COMM_VCRT)],
    );
    t.add_offsets(
        "MPIDI_VCRT",
        VCRT_TABLE + 8,
        &[("size", VCRT_SIZE_FIELD), ("vcr_table", VCRT_TABLE)],
    );
    t.add_offsets("MPIDI_VC", VC_SIZE, &[("pg_rank", VC_PG_RANK)]);
    t.add_offsets(
        "MPIR_Group",
        GROUP_SIZE,
        &[("size", GROUP_SIZE_FIELD), ("lrank_to_lpid", GROUP_PMAP)],
    );
    t.add_offsets("MPII_Group_pmap_t", PMAP_SIZE, &[("lpid", PMAP_LPID)]);
    t.add_offsets(
        "MPIR_Request",
        REQ_SIZE,
        &[("cc", REQ_CC), ("next", REQ_NEXT), ("dev", REQ_DEV)],
    );
    t.add_offsets(
        "MPIDI_Request",
        DREQ_SIZE,
        &[
            ("match", DREQ_MATCH),
            ("user_buf", DREQ_USER_BUF),
            ("user_count", DREQ_USER_COUNT),
            ("datatype", DREQ_DATATYPE),
            ("recv_data_sz", DREQ_RECV_DATA_SZ),
            ("tmpbuf", DREQ_TMPBUF),
            ("state", DREQ_STATE),
        ],
    );
    t.add_offsets("MPIDI_Message_match", 8, &[("parts", MATCH_PARTS)]);
    t.add_offsets(
        "MPIDI_Message_match_parts_t",
        8,
        &[
            ("tag", PARTS_TAG),
            ("rank", PARTS_RANK),
            ("context_id", PARTS_CONTEXT),
        ],
    );
    t.add_offsets(
        "MPIR_Sendq",
        SENDQ_SIZE,
        &[
            ("sreq", SENDQ_SREQ),
            ("tag", SENDQ_TAG),
            ("rank", SENDQ_RANK),
            ("context_id", SENDQ_CONTEXT),
            ("next", SENDQ_NEXT),
        ],
    );
    t
}

/// Bytes at target addresses `[base, base + len)`, written field by field
/// in the target's byte order; allocations grow it.
struct Region {
    order: ByteOrder,
    base: u64,
    bytes: Vec<u8>,
}

impl Region {
    fn new(order: ByteOrder, base: u64, len: usize) -> Self {
        Region {
            order,
            base,
            bytes: vec![0; len],
        }
    }

    /// `size` zeroed bytes at the next `align`ed address.
    fn alloc(&mut self, size: u64, align: u64) -> u64 {
        let start = (self.bytes.len() as u64).div_ceil(align) * align;
        self.bytes.resize((start + size) as usize, 0);
        self.base + start
    }

    /// The low `width` bytes of `value` at `addr`.
    fn put(&mut self, addr: u64, value: u64, width: usize) {
        let le = value.to_le_bytes();
        let i = (addr - self.base) as usize;
        let out = &mut self.bytes[i..i + width];
        out.copy_from_slice(&le[..width]);
        if self.order == ByteOrder::Big {
            out.reverse();
        }
    }

    fn put_str(&mut self, addr: u64, s: &str) {
        let i = (addr - self.base) as usize;
        self.bytes[i..i + s.len()].copy_from_slice(s.as_bytes());
    }
}

/// A communicator of one rank, as written.
struct Comm<'a> {
    name: &'a str,
    members: Vec<i64>,
    context: u64,
}

/// The libraries' and program's functions, and the globals of libmpi.
struct Objects {
    exe: BuiltObject,
    libmpi: BuiltObject,
    libc: Option<BuiltObject>,
}

impl Objects {
    fn build(spec: &HungJobSpec) -> Result<Objects, SyntheticCoresError> {
        let abi = spec.abi;
        let mut exe = SyntheticObject::executable(abi);
        let mut libmpi = SyntheticObject::library(abi)
            .global("MPII_Version_string", 32, 8, false)
            .global("MPII_Version_device", 32, 8, false)
            .global("MPIR_All_communicators", layout::LIST_SIZE, 8, false)
            .global("MPIR_Sendq_head", 8, 8, false)
            // Local symbols in a real build: only .symtab has them.
            .global("MPID_Recvq_posted_head_ptr", 8, 8, true)
            .global("MPID_Recvq_unexpected_head_ptr", 8, 8, true)
            .global("recvq_posted", 8, 8, true)
            .global("recvq_unexpected", 8, 8, true);
        let mut libc = SyntheticObject::library(abi);
        let mut any_libc = false;
        for frame in spec.ranks.iter().flat_map(|r| &r.stack) {
            let source = frame.source.as_ref().map(|(f, l)| (f.as_str(), *l));
            match frame.object {
                Object::Program => exe = exe.function(&frame.function, source),
                Object::Mpi => libmpi = libmpi.function(&frame.function, source),
                Object::Libc => {
                    any_libc = true;
                    libc = libc.function(&frame.function, source);
                }
            }
        }
        Ok(Objects {
            exe: exe.build()?,
            libmpi: libmpi.build()?,
            libc: if any_libc { Some(libc.build()?) } else { None },
        })
    }

    fn object(&self, which: Object) -> Option<(&BuiltObject, u64)> {
        match which {
            Object::Program => Some((&self.exe, EXE_BIAS)),
            Object::Mpi => Some((&self.libmpi, LIBMPI_BIAS)),
            Object::Libc => self.libc.as_ref().map(|l| (l, LIBC_BIAS)),
        }
    }

    /// The run-time address of a libmpi global.
    fn global(&self, name: &str) -> u64 {
        self.libmpi.global(name).map_or(0, |(a, _)| a) + LIBMPI_BIAS
    }

    /// The run-time address of `offset` bytes into a function.
    fn code(&self, frame: &FrameSpec, offset: u64) -> u64 {
        self.object(frame.object)
            .and_then(|(o, bias)| Some(o.function(&frame.function)?.start + bias + offset))
            .unwrap_or(0)
    }
}

/// Writes the job into `dir` (made if missing): [`EXECUTABLE`], [`LIBMPI`],
/// [`LIBC`] and one `core.N` per rank (N its world rank, zero-padded).
/// Files of an earlier job there are overwritten.
pub fn write_hung_job(
    dir: &Path,
    spec: &HungJobSpec,
) -> Result<SyntheticJobCores, SyntheticCoresError> {
    if spec.abi.address_width != AddressWidth::W64 {
        return Err(SyntheticCoresError::Spec(
            "only 64-bit targets are laid out (the layout table assumes 8-byte words)".into(),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|cause| SyntheticCoresError::Io {
        path: dir.to_path_buf(),
        cause,
    })?;
    // The cores record absolute paths, as the kernel does.
    let dir = dir
        .canonicalize()
        .map_err(|cause| SyntheticCoresError::Io {
            path: dir.to_path_buf(),
            cause,
        })?;
    let objects = Objects::build(spec)?;
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    objects.exe.write(&dir.join(EXECUTABLE))?;
    objects.libmpi.write(&dir.join(LIBMPI))?;
    if let Some(libc) = &objects.libc {
        libc.write(&dir.join(LIBC))?;
    }
    let mut comms: Vec<Comm<'_>> = vec![Comm {
        name: "MPI_COMM_WORLD",
        members: (0..spec.world_size).collect(),
        context: 0,
    }];
    for (i, c) in spec.communicators.iter().enumerate() {
        if comms.iter().any(|k| k.name == c.name) {
            return Err(SyntheticCoresError::Spec(format!(
                "two communicators named {}",
                c.name
            )));
        }
        // MPICH hands out context ids in steps that leave room for its
        // collective and intercommunicator sub-contexts.
        comms.push(Comm {
            name: &c.name,
            members: c.members.clone(),
            context: 16 * (i as u64 + 1),
        });
    }
    let width = spec.world_size.max(1).to_string().len();
    let mut cores = Vec::with_capacity(spec.ranks.len());
    for rank in &spec.ranks {
        let core = rank_core(spec, rank, &comms, &objects, &path)?;
        let file = dir.join(format!("core.{:0width$}", rank.world_rank));
        core.write(&file)?;
        cores.push(file);
    }
    let profile = dir.join(PROFILE);
    let table = layout_table();
    let written = LayoutProfile::cached(
        ProfileIdentity {
            implementation: "MPICH".into(),
            version: "4.0.2".into(),
            build: "mpidd-job's synthetic cores".into(),
            arch: "x86_64".into(),
            objects: vec![ProfileObject {
                name: LIBMPI.into(),
                source_build_id: None,
                build_ids: objects
                    .libmpi
                    .build_id()
                    .iter()
                    .map(|id| mpidd_read::build_id_hex(id))
                    .collect(),
            }],
        },
        table.clone(),
    );
    std::fs::write(&profile, written.to_json()).map_err(|cause| SyntheticCoresError::Io {
        path: profile.clone(),
        cause,
    })?;
    Ok(SyntheticJobCores {
        dir,
        cores,
        layouts: Arc::new(table),
        profile,
    })
}

/// The core of one rank.
fn rank_core(
    spec: &HungJobSpec,
    rank: &HungRankSpec,
    comms: &[Comm<'_>],
    objects: &Objects,
    path: &dyn Fn(&str) -> String,
) -> Result<SyntheticCore, SyntheticCoresError> {
    use layout::*;
    let abi = spec.abi;
    let order = abi.byte_order;
    let me = rank.world_rank;
    let pid = 10_000 + me as i32;
    let mut heap = Region::new(order, HEAP, 0);
    let mine: Vec<&Comm<'_>> = comms.iter().filter(|c| c.members.contains(&me)).collect();
    let find = |name: &str| -> Result<&Comm<'_>, SyntheticCoresError> {
        mine.iter()
            .copied()
            .find(|c| c.name == name)
            .ok_or_else(|| {
                SyntheticCoresError::Spec(format!("rank {me} is not in a communicator {name}"))
            })
    };
    let local = |c: &Comm<'_>, world: i64| -> Result<i64, SyntheticCoresError> {
        c.members
            .iter()
            .position(|&m| m == world)
            .map(|p| p as i64)
            .ok_or_else(|| SyntheticCoresError::Spec(format!("rank {world} is not in {}", c.name)))
    };

    // Communicators: the named ones first (MPICH puts new ones at the
    // head of the list), MPI_COMM_WORLD last. World ranks come from the
    // world's virtual connection table and from the others' groups, so
    // both ways the decoder has are used.
    let mut comm_addrs = Vec::new();
    for c in &mine {
        let at = heap.alloc(COMM_SIZE, 8);
        let name: String = c.name.chars().take(COMM_NAME_LEN - 1).collect();
        heap.put_str(at + COMM_NAME, &name);
        heap.put(at + COMM_CONTEXT, c.context, 2);
        heap.put(at + COMM_RECVCONTEXT, c.context, 2);
        let size = c.members.len() as u64;
        heap.put(at + COMM_REMOTE_SIZE, size, 4);
        heap.put(at + COMM_LOCAL_SIZE, size, 4);
        heap.put(at + COMM_RANK, local(c, me)? as u64, 4);
        heap.put(at + COMM_KIND, 0, 4);
        if c.context == 0 {
            let vcrt = heap.alloc(VCRT_TABLE + 8 * size, 8);
            let vcs = heap.alloc(VC_SIZE * size, 8);
            heap.put(vcrt + VCRT_SIZE_FIELD, size, 4);
            for (i, &m) in c.members.iter().enumerate() {
                let vc = vcs + VC_SIZE * i as u64;
                heap.put(vc + VC_PG_RANK, m as u64, 4);
                heap.put(vcrt + VCRT_TABLE + 8 * i as u64, vc, 8);
            }
            heap.put(at + COMM_DEV + CH3_COMM_VCRT, vcrt, 8);
        } else {
            let group = heap.alloc(GROUP_SIZE, 8);
            let pmap = heap.alloc(PMAP_SIZE * size, 8);
            heap.put(group + GROUP_SIZE_FIELD, size, 4);
            heap.put(group + GROUP_PMAP, pmap, 8);
            for (i, &m) in c.members.iter().enumerate() {
                heap.put(pmap + PMAP_SIZE * i as u64 + PMAP_LPID, m as u64, 8);
            }
            heap.put(at + COMM_LOCAL_GROUP, group, 8);
        }
        comm_addrs.push((c.context, at));
    }
    comm_addrs.sort_by_key(|&(context, _)| std::cmp::Reverse(context));
    for pair in comm_addrs.windows(2) {
        heap.put(pair[0].1 + COMM_NEXT, pair[1].1, 8);
    }
    let comm_head = comm_addrs.first().map_or(0, |&(_, a)| a);

    // A request of the receive queues: `rank` and `context` as its match
    // holds them.
    let request = |heap: &mut Region, tag: i64, rank: i64, context: u64| {
        let at = heap.alloc(REQ_SIZE, 8);
        let dev = at + REQ_DEV;
        heap.put(at + REQ_CC, 1, 4);
        heap.put(dev + DREQ_MATCH + MATCH_PARTS + PARTS_TAG, tag as u64, 4);
        heap.put(dev + DREQ_MATCH + MATCH_PARTS + PARTS_RANK, rank as u64, 2);
        heap.put(dev + DREQ_MATCH + MATCH_PARTS + PARTS_CONTEXT, context, 2);
        heap.put(dev + DREQ_DATATYPE, MPI_BYTE, 4);
        at
    };
    let link = |heap: &mut Region, list: &[u64], next: u64| {
        for pair in list.windows(2) {
            heap.put(pair[0] + next, pair[1], 8);
        }
        list.first().copied().unwrap_or(0)
    };

    let mut posted = Vec::new();
    for r in &rank.receives {
        let c = find(&r.comm)?;
        let source = match r.source {
            Some(w) => local(c, w)?,
            None => MPICH_ANY_SOURCE,
        };
        let at = request(&mut heap, r.tag.unwrap_or(MPICH_ANY_TAG), source, c.context);
        let buf = heap.alloc(r.bytes.clamp(1, 64), 8);
        heap.put(at + REQ_DEV + DREQ_USER_BUF, buf, 8);
        heap.put(at + REQ_DEV + DREQ_USER_COUNT, r.bytes, 8);
        posted.push(at);
    }
    if rank.hostile == Some(Hostile::LoopingPostedQueue) {
        while posted.len() < 2 {
            posted.push(request(&mut heap, 0, 0, 0));
        }
        let (first, last) = (posted[0], posted[posted.len() - 1]);
        heap.put(last + REQ_NEXT, first, 8);
    }
    let posted_head = link(&mut heap, &posted, REQ_NEXT);

    let mut unexpected = Vec::new();
    for u in &rank.unexpected {
        let c = find(&u.comm)?;
        let at = request(&mut heap, u.tag, local(c, u.source)?, c.context);
        heap.put(at + REQ_DEV + DREQ_RECV_DATA_SZ, u.bytes, 8);
        // The message kind in MPICH's `dev.state` (mpidimpl.h): 1 for an
        // eager message, 2 for a rendezvous request-to-send.
        heap.put(
            at + REQ_DEV + DREQ_STATE,
            if u.rendezvous { 2 } else { 1 },
            4,
        );
        if !u.rendezvous {
            let data = heap.alloc(u.bytes.clamp(1, 64), 8);
            heap.put(at + REQ_DEV + DREQ_TMPBUF, data, 8);
        }
        unexpected.push(at);
    }
    let unexpected_head = link(&mut heap, &unexpected, REQ_NEXT);

    let mut sendq = Vec::new();
    for s in &rank.sends {
        let c = find(&s.comm)?;
        let sreq = request(&mut heap, s.tag, 0, c.context);
        let buf = heap.alloc(s.bytes.clamp(1, 64), 8);
        heap.put(sreq + REQ_DEV + DREQ_USER_BUF, buf, 8);
        heap.put(sreq + REQ_DEV + DREQ_USER_COUNT, s.bytes, 8);
        let at = heap.alloc(SENDQ_SIZE, 8);
        heap.put(at + SENDQ_SREQ, sreq, 8);
        heap.put(at + SENDQ_TAG, s.tag as u64, 4);
        heap.put(at + SENDQ_RANK, local(c, s.dest)? as u64, 4);
        heap.put(at + SENDQ_CONTEXT, c.context, 4);
        sendq.push(at);
    }
    let sendq_head = link(&mut heap, &sendq, SENDQ_NEXT);

    // libmpi's data segment as this rank has it.
    let data = objects.libmpi.data();
    let mut globals = Region::new(
        order,
        data.start + LIBMPI_BIAS,
        (data.end - data.start) as usize,
    );
    let g = |name: &str| objects.global(name);
    globals.put_str(g("MPII_Version_string"), MPICH_VERSION);
    globals.put_str(g("MPII_Version_device"), MPICH_DEVICE);
    globals.put(g("MPIR_All_communicators") + LIST_SEQ, 1, 4);
    globals.put(g("MPIR_All_communicators") + LIST_HEAD, comm_head, 8);
    globals.put(g("MPID_Recvq_posted_head_ptr"), g("recvq_posted"), 8);
    globals.put(g("recvq_posted"), posted_head, 8);
    globals.put(
        g("MPID_Recvq_unexpected_head_ptr"),
        g("recvq_unexpected"),
        8,
    );
    globals.put(g("recvq_unexpected"), unexpected_head, 8);
    globals.put(g("MPIR_Sendq_head"), sendq_head, 8);

    let mut core = SyntheticCore::new(abi, pid);
    core.map_object(&path(EXECUTABLE), &objects.exe, EXE_BIAS);
    core.map_object(&path(LIBMPI), &objects.libmpi, LIBMPI_BIAS);
    if let Some(libc) = &objects.libc {
        core.map_object(&path(LIBC), libc, LIBC_BIAS);
    }
    core.map(TargetAddr(globals.base), globals.bytes);
    if !heap.bytes.is_empty() {
        core.map(TargetAddr(heap.base), heap.bytes);
    }
    if let Some((innermost, callers)) = rank.stack.split_last() {
        let pc = objects.code(innermost, STOPPED_PC_OFFSET);
        let returns: Vec<u64> = callers
            .iter()
            .rev()
            .map(|f| objects.code(f, CALL_RETURN_OFFSET))
            .collect();
        let stack = frame_pointer_stack(abi, STACK, pc, &returns);
        if rank.hostile == Some(Hostile::UnmappedStackPointer) {
            core.thread(x86_64_registers(pid, pc, UNMAPPED, UNMAPPED + 0x20));
        } else {
            core.thread(stack.registers(pid));
            core.map(stack.base, stack.bytes);
        }
    }
    Ok(core)
}

/// The job of `mpidd demo`: six ranks in two communicators besides the
/// world, hung in a cycle across two of them while a chain of waits ends
/// at a rank that computes.
///
/// - 0 receives from 1 on `MPI_COMM_WORLD` (tag 7);
/// - 1 receives from 2 on `halo` (tag 3);
/// - 2 receives from 0 on `halo` (tag 3): the cycle 0 → 1 → 2 → 0;
/// - 3 receives from 4 on `pipeline` (any tag), with an eager message
///   from 5 that no receive matches;
/// - 4 is blocked sending to 5: its rendezvous request waits unexpected
///   at 5;
/// - 5 computes (`compute at solver.c:42`), outside MPI.
pub fn demo_job() -> HungJobSpec {
    HungJobSpec::new(6)
        .comm("halo", &[0, 1, 2])
        .comm("pipeline", &[3, 4, 5])
        .rank(
            HungRankSpec::new(0)
                .receive("MPI_COMM_WORLD", Some(1), Some(7), 4096)
                .stack(FrameSpec::in_mpi("MPI_Recv")),
        )
        .rank(
            HungRankSpec::new(1)
                .receive("halo", Some(2), Some(3), 8192)
                .stack(FrameSpec::in_mpi("MPI_Recv")),
        )
        .rank(
            HungRankSpec::new(2)
                .receive("halo", Some(0), Some(3), 8192)
                .stack(FrameSpec::in_mpi("MPI_Recv")),
        )
        .rank(
            HungRankSpec::new(3)
                .receive("pipeline", Some(4), None, 1024)
                .unexpected("pipeline", 5, 99, 16, false)
                .stack(FrameSpec::in_mpi("MPI_Recv")),
        )
        .rank(HungRankSpec::new(4).stack(FrameSpec::in_mpi("MPI_Send")))
        .rank(
            HungRankSpec::new(5)
                .unexpected("pipeline", 4, 11, 1 << 20, true)
                .stack(FrameSpec::computing("compute", "solver.c", 42)),
        )
}

/// A ring of `n` ranks, each blocked receiving from the next on
/// `MPI_COMM_WORLD` (one cycle through them all), for benchmarks.
pub fn ring_job(n: i64) -> HungJobSpec {
    (0..n).fold(HungJobSpec::new(n), |job, r| {
        job.rank(
            HungRankSpec::new(r)
                .receive("MPI_COMM_WORLD", Some((r + 1) % n), Some(1), 256)
                .stack(FrameSpec::in_mpi("MPI_Recv")),
        )
    })
}

/// Function names of a chain, innermost first, as an unwinder gives them.
pub fn innermost_first(frames: &[FrameSpec]) -> Vec<String> {
    frames.iter().rev().map(|f| f.function.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_every_type_the_ch3_decoder_asks_for() {
        let t = layout_table();
        for (ty, member) in [
            ("MPIR_Comm", "dev"),
            ("MPIDI_Request", "tmpbuf"),
            ("MPIR_Sendq", "next"),
        ] {
            assert!(t.member_offset(ty, member).is_ok(), "{ty}.{member}");
        }
    }

    #[test]
    fn regions_write_in_the_targets_order() {
        let mut r = Region::new(ByteOrder::Big, 0x100, 8);
        r.put(0x100, 0x0102, 2);
        assert_eq!(&r.bytes[..2], &[1, 2]);
        let mut r = Region::new(ByteOrder::Little, 0x100, 8);
        r.put(0x104, 0x0102, 2);
        assert_eq!(&r.bytes[4..6], &[2, 1]);
    }

    #[test]
    fn a_32_bit_job_is_refused() {
        let spec = HungJobSpec {
            abi: TargetAbi::I686,
            ..HungJobSpec::new(1)
        };
        let dir = std::env::temp_dir().join("mpidd-never-written");
        assert!(matches!(
            write_hung_job(&dir, &spec),
            Err(SyntheticCoresError::Spec(_))
        ));
    }
}
