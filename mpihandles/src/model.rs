//! What a debugger shows for an MPI handle, whatever the implementation.
//!
//! Every kind of handle the MPI standard defines has a view here. A field an
//! implementation may not keep is an [`Availability`]: either the value, or
//! an explicit "not available from this implementation" with the reason, so
//! that a missing value is never mistaken for a zero or an empty list.

use mpidd_types::TargetAddr;
use serde::{Deserialize, Serialize};

/// A value the implementation keeps, or the reason it does not.
///
/// ```
/// use mpihandles::Availability;
///
/// let name: Availability<String> = Availability::Value("MPI_COMM_WORLD".into());
/// let freed: Availability<bool> = Availability::not_available("MPICH keeps no such mark");
/// assert_eq!(name.value().map(String::as_str), Some("MPI_COMM_WORLD"));
/// assert!(freed.value().is_none());
/// assert_eq!(
///     serde_json::to_string(&freed).unwrap(),
///     r#"{"not_available":{"reason":"MPICH keeps no such mark"}}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Availability<T> {
    /// The implementation keeps this, and this is what was read.
    Value(T),
    /// Not available from this implementation (or this target), and why.
    NotAvailable {
        /// Why: what the implementation does not keep, or what could not be
        /// read.
        reason: String,
    },
}

impl<T> Availability<T> {
    /// Not available, for this reason.
    pub fn not_available(reason: impl Into<String>) -> Self {
        Availability::NotAvailable {
            reason: reason.into(),
        }
    }

    /// The value, if there is one.
    pub fn value(&self) -> Option<&T> {
        match self {
            Availability::Value(v) => Some(v),
            Availability::NotAvailable { .. } => None,
        }
    }

    /// The reason, if there is no value.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Availability::Value(_) => None,
            Availability::NotAvailable { reason } => Some(reason),
        }
    }

    /// Applies `f` to the value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Availability<U> {
        match self {
            Availability::Value(v) => Availability::Value(f(v)),
            Availability::NotAvailable { reason } => Availability::NotAvailable { reason },
        }
    }
}

impl<T, E: std::fmt::Display> From<Result<T, E>> for Availability<T> {
    /// A failed read becomes "not available" with the error as its reason.
    fn from(r: Result<T, E>) -> Self {
        match r {
            Ok(v) => Availability::Value(v),
            Err(e) => Availability::not_available(e.to_string()),
        }
    }
}

/// The kinds of MPI handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandleKind {
    /// `MPI_Comm`.
    Comm,
    /// `MPI_Group`.
    Group,
    /// `MPI_Datatype`.
    Datatype,
    /// `MPI_Errhandler`.
    Errhandler,
    /// `MPI_Op`.
    Op,
    /// `MPI_Info`.
    Info,
    /// `MPI_Request`.
    Request,
    /// `MPI_Win`.
    Win,
    /// `MPI_File`.
    File,
    /// `MPI_Status`: not a handle but a struct in user memory, read at an
    /// address.
    Status,
}

impl HandleKind {
    /// Every kind, in the order of the MPI standard's chapters.
    pub const ALL: [HandleKind; 10] = [
        HandleKind::Comm,
        HandleKind::Group,
        HandleKind::Datatype,
        HandleKind::Errhandler,
        HandleKind::Op,
        HandleKind::Info,
        HandleKind::Request,
        HandleKind::Win,
        HandleKind::File,
        HandleKind::Status,
    ];

    /// The C type name, e.g. `MPI_Comm`.
    pub fn c_type(self) -> &'static str {
        match self {
            HandleKind::Comm => "MPI_Comm",
            HandleKind::Group => "MPI_Group",
            HandleKind::Datatype => "MPI_Datatype",
            HandleKind::Errhandler => "MPI_Errhandler",
            HandleKind::Op => "MPI_Op",
            HandleKind::Info => "MPI_Info",
            HandleKind::Request => "MPI_Request",
            HandleKind::Win => "MPI_Win",
            HandleKind::File => "MPI_File",
            HandleKind::Status => "MPI_Status",
        }
    }

    /// The short name the command line uses: `comm`, `group`, ...
    pub fn short_name(self) -> &'static str {
        match self {
            HandleKind::Comm => "comm",
            HandleKind::Group => "group",
            HandleKind::Datatype => "datatype",
            HandleKind::Errhandler => "errhandler",
            HandleKind::Op => "op",
            HandleKind::Info => "info",
            HandleKind::Request => "request",
            HandleKind::Win => "win",
            HandleKind::File => "file",
            HandleKind::Status => "status",
        }
    }

    /// The kind whose [`short_name`](Self::short_name) is `name`.
    pub fn from_short_name(name: &str) -> Option<HandleKind> {
        HandleKind::ALL.into_iter().find(|k| k.short_name() == name)
    }
}

impl std::fmt::Display for HandleKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.c_type())
    }
}

/// The C value of a handle: an integer in MPICH (and for its Fortran
/// INTEGER), a pointer where an implementation uses pointers (ROMIO's
/// `MPI_File`, Open MPI's handles).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CHandle {
    /// An `int` handle.
    Int(i32),
    /// A pointer handle.
    Pointer(TargetAddr),
}

impl std::fmt::Display for CHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CHandle::Int(v) => write!(f, "{:#010x}", *v as u32),
            CHandle::Pointer(p) => write!(f, "{p}"),
        }
    }
}

/// Where a handle's object stands in the implementation's life cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObjectState {
    /// In use: the object is allocated and its fields are current.
    Live,
    /// The implementation freed it (or never handed it out): the handle is
    /// stale and the fields shown are whatever the memory holds now, which
    /// may already belong to a newer object.
    Freed,
}

/// A short reference to another handle, as a field of a view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandleRef {
    /// Its kind.
    pub kind: HandleKind,
    /// Its C value.
    pub c_handle: CHandle,
    /// Its predefined name (`MPI_COMM_WORLD`, `MPI_INT`), if predefined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predefined_name: Option<String>,
    /// The name the object carries (communicators, datatypes, windows),
    /// when it has a non-empty one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Everything shown for one handle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HandleView {
    /// Which MPI implementation decoded it, e.g. `MPICH 4.0.2 (ch3:nemesis)`.
    pub implementation: String,
    /// The handle's kind.
    pub kind: HandleKind,
    /// The C handle.
    pub c_handle: Availability<CHandle>,
    /// The Fortran INTEGER for it (`MPI_*_c2f`).
    pub fortran_index: Availability<i32>,
    /// Whether the MPI standard or the implementation predefines it.
    pub predefined: bool,
    /// Its predefined name, e.g. `MPI_COMM_WORLD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predefined_name: Option<String>,
    /// Where the object behind the handle is in the target.
    pub object_address: Availability<TargetAddr>,
    /// Whether the object is live or freed.
    pub state: Availability<ObjectState>,
    /// Whether the application freed the handle (`MPI_*_free`): the object
    /// may live on while something else still holds it (a pending request
    /// on a freed communicator).
    pub freed_by_application: Availability<bool>,
    /// Whether the implementation freed the object: the handle is stale.
    pub freed_by_implementation: Availability<bool>,
    /// How many references the implementation counts on the object.
    pub reference_count: Availability<i64>,
    /// How the implementation encodes the handle, for the curious.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<HandleEncoding>,
    /// What is particular to the kind.
    pub details: Details,
    /// Remarks on how things were read.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notes: Vec<String>,
}

/// How an integer handle breaks down into the implementation's fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandleEncoding {
    /// Where the object lives: `builtin`, `direct`, `indirect`, `invalid`.
    pub storage: String,
    /// The object kind the handle's bits name (`MPIR_COMM`...).
    pub object_kind: String,
    /// Index into the builtin or direct array.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// Request pool (MPICH keeps one per virtual communication interface).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<u32>,
    /// Indirect block number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<u32>,
    /// Index inside the indirect block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_index: Option<u32>,
}

/// The part of a view particular to the handle's kind.
// One is built per view and moved once; boxing would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Details {
    /// A communicator.
    Comm(CommDetails),
    /// A group.
    Group(GroupDetails),
    /// A datatype.
    Datatype(DatatypeDetails),
    /// An error handler.
    Errhandler(ErrhandlerDetails),
    /// A reduction operation.
    Op(OpDetails),
    /// An info object.
    Info(InfoDetails),
    /// A request.
    Request(RequestDetails),
    /// A window.
    Win(WinDetails),
    /// A file.
    File(FileDetails),
    /// Nothing could be decoded beyond the common fields (a stale object
    /// whose memory no longer decodes), and why.
    Undecoded {
        /// Why.
        reason: String,
    },
}

/// Intra- or intercommunicator.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommKind {
    /// One group.
    Intracommunicator,
    /// A local and a remote group.
    Intercommunicator,
    /// A kind this decoder does not know, by the implementation's name for
    /// it (or its number).
    Other(String),
}

/// A communicator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommDetails {
    /// Its name (`MPI_Comm_set_name`); empty when it has none.
    pub name: Availability<String>,
    /// This process's rank in it.
    pub rank: Availability<i32>,
    /// The size of its (local) group.
    pub size: Availability<i32>,
    /// This process's rank in `MPI_COMM_WORLD`: its unique id in the job.
    pub world_rank: Availability<i32>,
    /// Intra or inter.
    pub comm_kind: Availability<CommKind>,
    /// For an intercommunicator, the size of the remote group.
    pub remote_size: Availability<i32>,
    /// The `MPI_COMM_WORLD` rank of each member of the local group, by
    /// rank.
    pub local_world_ranks: Availability<Vec<i64>>,
    /// For an intercommunicator, the `MPI_COMM_WORLD` rank of each member of
    /// the remote group.
    pub remote_world_ranks: Availability<Vec<i64>>,
    /// The local group, when the implementation has made one.
    pub local_group: Availability<Option<HandleRef>>,
    /// The remote group of an intercommunicator.
    pub remote_group: Availability<Option<HandleRef>>,
    /// Its virtual topology.
    pub topology: Availability<Topology>,
    /// Its error handler; `None` when none was set on it, so the
    /// implementation's default applies.
    pub errhandler: Availability<Option<HandleRef>>,
    /// The attributes cached on it.
    pub attributes: Availability<Vec<Attribute>>,
    /// The requests that refer to it and are not yet freed, oldest
    /// allocation first.
    pub requests: Availability<Vec<HandleRef>>,
    /// Windows created over it.
    pub windows: Availability<Vec<HandleRef>>,
    /// Files opened over it.
    pub files: Availability<Vec<HandleRef>>,
    /// The context id its messages carry (sends).
    pub context_id: Availability<i64>,
    /// The context id it receives on.
    pub recv_context_id: Availability<i64>,
}

/// A communicator's virtual topology.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Topology {
    /// No topology.
    None,
    /// `MPI_Cart_create`'s arguments.
    Cartesian {
        /// Number of dimensions.
        ndims: i32,
        /// Extent of each dimension.
        dims: Vec<i32>,
        /// Whether each dimension wraps around.
        periods: Vec<bool>,
        /// This process's coordinates.
        coords: Vec<i32>,
    },
    /// `MPI_Graph_create`'s arguments.
    Graph {
        /// Number of nodes.
        nnodes: i32,
        /// Cumulative degree of each node.
        index: Vec<i32>,
        /// The edges, node by node.
        edges: Vec<i32>,
    },
    /// `MPI_Dist_graph_create`'s view from this process.
    DistGraph {
        /// The sources of the incoming edges.
        sources: Vec<i32>,
        /// The destinations of the outgoing edges.
        destinations: Vec<i32>,
        /// Whether the edges carry weights.
        weighted: bool,
    },
    /// A topology kind this decoder does not know.
    Other {
        /// The implementation's name or number for it.
        kind: String,
    },
}

/// One attribute cached on a communicator, window or datatype.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribute {
    /// The key value (`MPI_Comm_create_keyval`'s result).
    pub keyval: i32,
    /// The attribute's value as stored: for the C binding, the pointer the
    /// application gave.
    pub value: u64,
    /// How the implementation stored it (pointer, address-size integer,
    /// int), by its name for it.
    pub value_type: Availability<String>,
    /// Whether the implementation put it there for itself (the topology),
    /// rather than the application.
    pub internal: bool,
}

/// A group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupDetails {
    /// Its size.
    pub size: Availability<i32>,
    /// This process's rank in it; `None` when this process is not a member.
    pub rank: Availability<Option<i32>>,
    /// The `MPI_COMM_WORLD` rank of each member, by group rank.
    pub world_ranks: Availability<Vec<i64>>,
    /// Communicators using it.
    pub communicators: Availability<Vec<HandleRef>>,
}

/// A datatype.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatatypeDetails {
    /// Its name (`MPI_Type_set_name`, or the predefined name).
    pub name: Availability<String>,
    /// Bytes of data in one element (`MPI_Type_size`).
    pub size: Availability<i64>,
    /// Its extent (`MPI_Type_get_extent`).
    pub extent: Availability<i64>,
    /// Its lower bound.
    pub lb: Availability<i64>,
    /// Its upper bound.
    pub ub: Availability<i64>,
    /// Its true lower bound (`MPI_Type_get_true_extent`).
    pub true_lb: Availability<i64>,
    /// Its true upper bound.
    pub true_ub: Availability<i64>,
    /// Whether `MPI_Type_commit` was called.
    pub committed: Availability<bool>,
    /// Whether N elements are one contiguous block.
    pub contiguous: Availability<bool>,
    /// How it was built, recursively down to predefined types.
    pub constructor: Availability<Constructor>,
    /// One element's type map, in predefined types, in offset order.
    pub type_map: Availability<TypeMap>,
    /// The gaps in one element's extent that no data covers.
    pub holes: Availability<Vec<Hole>>,
    /// Ongoing communication using it.
    pub ongoing_operations: Availability<Vec<HandleRef>>,
}

/// The constructor call a derived datatype came from (its envelope and
/// contents).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Constructor {
    /// The combiner: `MPI_COMBINER_STRUCT`...
    pub combiner: String,
    /// The integer arguments (counts, block lengths, displacements in
    /// elements), as `MPI_Type_get_contents` gives them.
    pub integers: Vec<i64>,
    /// The address-size arguments (displacements in bytes, bounds).
    pub addresses: Vec<i64>,
    /// The large-count arguments (MPI 4's `_c` constructors).
    pub large_counts: Vec<i64>,
    /// The datatype arguments, each with its own constructor.
    pub types: Vec<TypeArgument>,
}

/// A datatype given to a constructor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeArgument {
    /// The handle.
    pub handle: HandleRef,
    /// How it was built, for a derived type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constructor: Option<Box<Availability<Constructor>>>,
}

/// One element's type map.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeMap {
    /// (offset, predefined type) runs, in offset order.
    pub entries: Vec<TypeMapEntry>,
}

/// Consecutive copies of one predefined type in a type map.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeMapEntry {
    /// Byte offset of the first copy from the start of the element.
    pub offset: i64,
    /// The predefined type's name.
    pub datatype: String,
    /// Its size in bytes.
    pub size: i64,
    /// How many copies follow each other without a gap.
    pub count: i64,
}

/// Bytes of an element's extent that carry no data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hole {
    /// Where the gap starts, from the element's start.
    pub offset: i64,
    /// How many bytes it spans.
    pub length: i64,
}

/// An error handler.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrhandlerDetails {
    /// Which objects it is for: `communicator`, `window`, `file`, `session`
    /// (or the implementation's name for another kind).
    pub object_kind: Availability<String>,
    /// The language of its function: `C`, `Fortran`, `C++`...
    pub language: Availability<String>,
    /// The user function's address; `None` for a predefined handler.
    pub user_function: Availability<Option<TargetAddr>>,
    /// Objects it is attached to.
    pub attached_to: Availability<Vec<HandleRef>>,
}

/// A reduction operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpDetails {
    /// The implementation's name for its kind (`MPIR_OP_KIND__SUM`,
    /// `MPIR_OP_KIND__USER_NONCOMMUTE`...).
    pub op_kind: Availability<String>,
    /// Whether it is commutative.
    pub commutative: Availability<bool>,
    /// The language of its function.
    pub language: Availability<String>,
    /// The user function's address; `None` for a predefined operation.
    pub user_function: Availability<Option<TargetAddr>>,
}

/// An info object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfoDetails {
    /// Its key=value pairs, in the implementation's order.
    pub entries: Availability<Vec<InfoEntry>>,
}

/// One key=value pair.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfoEntry {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
}

/// What kind of operation a request stands for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// A point-to-point send.
    Send,
    /// A point-to-point receive.
    Receive,
    /// A persistent send (`MPI_Send_init`...).
    PersistentSend,
    /// A persistent receive (`MPI_Recv_init`).
    PersistentReceive,
    /// A persistent collective.
    PersistentCollective,
    /// A partitioned send.
    PartitionedSend,
    /// A partitioned receive.
    PartitionedReceive,
    /// A generalized request (`MPI_Grequest_start`).
    Generalized,
    /// A nonblocking collective.
    Collective,
    /// A message from `MPI_Mprobe`.
    MatchedProbe,
    /// A one-sided request.
    Rma,
    /// A nonblocking file operation.
    File,
    /// Anything else, by the implementation's name for it.
    Other(String),
}

/// The process at the other end of a point-to-point request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Peer {
    /// `MPI_ANY_SOURCE`.
    AnySource,
    /// `MPI_PROC_NULL`.
    ProcNull,
    /// A rank in the request's communicator.
    Rank(i32),
}

/// A request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestDetails {
    /// What it stands for.
    pub request_kind: Availability<RequestKind>,
    /// Whether it is persistent.
    pub persistent: Availability<bool>,
    /// For a persistent request, whether it has been started and not
    /// completed since.
    pub active: Availability<bool>,
    /// Whether the operation has completed.
    pub complete: Availability<bool>,
    /// The function that created it (`MPI_Isend`, `MPI_Recv_init`...).
    pub created_by: Availability<String>,
    /// Its communicator.
    pub communicator: Availability<Option<HandleRef>>,
    /// The peer it sends to or receives from.
    pub peer: Availability<Peer>,
    /// The tag; `None` for `MPI_ANY_TAG`.
    pub tag: Availability<Option<i32>>,
    /// For a completed request, its status.
    pub status: Availability<StatusView>,
    /// For a generalized request, its query, free and cancel functions.
    pub generalized: Availability<GeneralizedRequest>,
}

/// The callbacks of a generalized request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneralizedRequest {
    /// The query function.
    pub query_fn: TargetAddr,
    /// The free function.
    pub free_fn: TargetAddr,
    /// The cancel function.
    pub cancel_fn: TargetAddr,
    /// The extra state given to them.
    pub extra_state: TargetAddr,
    /// The language they were registered from.
    pub language: Availability<String>,
}

/// A status, read from memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusView {
    /// Where it was read, when it was read from user memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<TargetAddr>,
    /// `MPI_SOURCE`.
    pub source: i32,
    /// `MPI_TAG`.
    pub tag: i32,
    /// `MPI_ERROR`.
    pub error: i32,
    /// Bytes received.
    pub count_bytes: Availability<i64>,
    /// Whether the operation was cancelled.
    pub cancelled: Availability<bool>,
    /// Elements received, in the datatype given with the question.
    pub elements: Availability<i64>,
}

/// A one-sided window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WinDetails {
    /// Its name.
    pub name: Availability<String>,
    /// The base address of this process's window memory.
    pub base: Availability<TargetAddr>,
    /// Its size in bytes.
    pub size: Availability<i64>,
    /// The displacement unit.
    pub disp_unit: Availability<i32>,
    /// The communicator the implementation keeps for it (a duplicate of the
    /// one given at creation, in MPICH).
    pub communicator: Availability<Option<HandleRef>>,
    /// How it was created: `MPI_WIN_FLAVOR_CREATE`...
    pub flavor: Availability<String>,
    /// Its memory model (`MPI_WIN_SEPARATE`, `MPI_WIN_UNIFIED`), by number.
    pub model: Availability<i32>,
    /// Its error handler; `None` when none was set.
    pub errhandler: Availability<Option<HandleRef>>,
    /// The info key=value pairs it was created with.
    pub info: Availability<Vec<InfoEntry>>,
    /// The hints the implementation took from the info, by its own names.
    pub hints: Availability<Vec<InfoEntry>>,
    /// The synchronization state of its access and exposure epochs, by the
    /// implementation's names.
    pub synchronization: Availability<Vec<InfoEntry>>,
}

/// An `MPI_File`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileDetails {
    /// The file name as given to `MPI_File_open`.
    pub filename: Availability<String>,
    /// The communicator the implementation keeps for it.
    pub communicator: Availability<Option<HandleRef>>,
    /// The access mode as given to `MPI_File_open`.
    pub access_mode: Availability<AccessMode>,
    /// The info key=value pairs it keeps (the application's hints and the
    /// implementation's own).
    pub info: Availability<Vec<InfoEntry>>,
    /// Its error handler.
    pub errhandler: Availability<Option<HandleRef>>,
    /// Whether atomic mode is on.
    pub atomic: Availability<bool>,
    /// Nonblocking operations in progress on it.
    pub pending_operations: Availability<i64>,
}

/// `MPI_MODE_*` bits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessMode {
    /// The bits.
    pub bits: i32,
    /// The names of the bits set, and `0x...` for bits with no name.
    pub names: Vec<String>,
}

/// `MPI_MODE_*` bits of `MPI_File_open` and their names: ROMIO's
/// (`mpio.h`), which MPICH's and Open MPI's `mpi.h` both keep.
const FILE_MODES: &[(i32, &str)] = &[
    (1, "MPI_MODE_CREATE"),
    (2, "MPI_MODE_RDONLY"),
    (4, "MPI_MODE_WRONLY"),
    (8, "MPI_MODE_RDWR"),
    (16, "MPI_MODE_DELETE_ON_CLOSE"),
    (32, "MPI_MODE_UNIQUE_OPEN"),
    (64, "MPI_MODE_EXCL"),
    (128, "MPI_MODE_APPEND"),
    (256, "MPI_MODE_SEQUENTIAL"),
];

impl AccessMode {
    /// The mode `bits` (of MPICH or Open MPI), each bit named.
    pub(crate) fn from_bits(bits: i32) -> AccessMode {
        let mut names: Vec<String> = FILE_MODES
            .iter()
            .filter(|(bit, _)| bits & bit != 0)
            .map(|(_, n)| n.to_string())
            .collect();
        let known = FILE_MODES.iter().fold(0, |acc, (bit, _)| acc | bit);
        if bits & !known != 0 {
            names.push(format!("{:#x}", bits & !known));
        }
        AccessMode { bits, names }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_modes_name_their_bits() {
        let m = AccessMode::from_bits(1 | 8 | 0x4000);
        assert_eq!(m.names, ["MPI_MODE_CREATE", "MPI_MODE_RDWR", "0x4000"]);
    }
}
