//! Open MPI's message queues with the ob1 PML, read natively.
//!
//! Where Open MPI 4.1 keeps what a debugger wants:
//! - `ompi_mpi_communicators` (libmpi), an `opal_pointer_array_t` of every
//!   `ompi_communicator_t`; each has its groups (`ompi_group_t`, whose
//!   `ompi_proc_t`s carry the world rank as `proc_name.vpid`) and ob1's
//!   per-communicator state in `c_pml_comm` (`mca_pml_ob1_comm_t`);
//! - in that state: `wild_receives`, the receives posted for
//!   `MPI_ANY_SOURCE`, and one `mca_pml_ob1_comm_proc_t` per peer with the
//!   receives posted for that peer (`specific_receives`), the fragments
//!   that arrived before a receive matched them (`unexpected_frags`), and
//!   those that arrived out of order (`frags_cant_match`, a ring of rings);
//! - `mca_pml_base_send_requests` (libmpi), the `opal_free_list_t` every
//!   ob1 send request comes from. There is no list of pending sends: the
//!   free list's allocation chunks are walked element by element, and the
//!   requests that are in use (not `OMPI_REQUEST_INVALID`) are the sends
//!   the program has started and not yet completed by a wait or a test,
//!   including eager sends that ob1 finished long ago.
//!
//! Every size, offset and enumerator comes from the [`Layouts`], and
//! the decoder asks only the questions of [`OB1_LAYOUT`], so a layout
//! profile made for exactly those answers the stripped library too. The
//! few values that are preprocessor constants in Open MPI's source (and so
//! in no debug info) are named where they are used.
//!
//! What Open MPI's own `libompi_dbg_msgq.so` does not show and this does:
//! unexpected messages (it has no code for them), the protocol and length
//! of each, out-of-order fragments, and signed ranks and tags.

use std::collections::HashMap;

use mpidd_read::{Limits, ReadError, SymbolSource};
use mpidd_types::TargetAddr;

use crate::decoder::{DecodeError, FoundLibrary, QueueDecoder, DECODED};
use crate::list_walk::{at, walk, ListShape, Span};
use crate::model::{
    Communicator, OperationStatus, PendingOperation, ProcessQueues, Protocol, Queue,
};
use crate::target_read::{read_bytes, read_pointer, Budgeted, Record};
use mpidd_read::Target;
use mpidd_read::TargetMemory;
use mpidd_read::{LayoutError, LayoutNeed, Layouts, Member};

/// Open MPI's `MPI_ANY_SOURCE` and `MPI_ANY_TAG` (`mpi.h`: both −1).
const OMPI_ANY_SOURCE: i64 = -1;
const OMPI_ANY_TAG: i64 = -1;
/// `OMPI_COMM_INTER` (`communicator.h`), the intercommunicator bit of
/// `c_flags`.
const OMPI_COMM_INTER: u64 = 0x1;
/// `REQUEST_COMPLETED` (`request.h`): `req_complete` holds this value once
/// the request is complete for MPI (0 is pending; anything else is the
/// synchronisation object of a thread waiting for it).
const REQUEST_COMPLETED: u64 = 1;
/// ob1's header types (`pml_ob1_hdr.h`, `MCA_BTL_TAG_PML` 0x40 + n): the
/// first fragment of an eager message, of a rendezvous, and of a
/// rendezvous whose data the receiver fetches by RDMA get.
const HDR_TYPE_MATCH: u64 = 0x41;
const HDR_TYPE_RNDV: u64 = 0x42;
const HDR_TYPE_RGET: u64 = 0x43;
/// `OMPI_PML_OB1_MATCH_HDR_LEN` without heterogeneous support: the bytes
/// of a match header on the wire (its struct is padded to more).
const MATCH_HDR_LEN: u64 = 14;

/// The symbols the decoder starts from, and the object each is in (all
/// three in `.dynsym`, so Debian's stripped library has them too). The
/// types it reads are in libmpi's debug info (`ompi_*`, `mca_pml_base_*`),
/// libopen-pal's (`opal_*`) and mca_pml_ob1.so's (`mca_pml_ob1_*`,
/// `mca_bml_*`, `mca_btl_*`).
pub const OB1_SYMBOLS: [(&str, &str); 3] = [
    ("ompi_mpi_communicators", "libmpi.so.40"),
    ("mca_pml_base_send_requests", "libmpi.so.40"),
    ("mca_pml_base_selected_component", "libmpi.so.40"),
];

/// Every layout question the ob1 decoder asks: the sizes of these types,
/// the members at these paths, and the enumerators of these enumerations.
/// Nothing else is asked, so a layout profile holding these answers
/// suffices.
pub const OB1_LAYOUT: &[LayoutNeed] = &[
    LayoutNeed::members(
        "opal_pointer_array_t",
        &["lowest_free", "number_free", "size", "addr"],
    ),
    LayoutNeed::members("opal_list_t", &["opal_list_sentinel"]),
    LayoutNeed::members("opal_list_item_t", &["opal_list_next", "opal_list_prev"]),
    LayoutNeed::members("opal_object_t", &["obj_class"]),
    LayoutNeed::members(
        "opal_free_list_t",
        &[
            "fl_num_allocated",
            "fl_num_per_alloc",
            "fl_frag_size",
            "fl_frag_alignment",
            "fl_frag_class",
            "fl_allocations",
        ],
    ),
    LayoutNeed::members("opal_free_list_item_t", &[]),
    LayoutNeed::members(
        "ompi_communicator_t",
        &[
            "c_name",
            "c_contextid",
            "c_my_rank",
            "c_flags",
            "c_local_group",
            "c_remote_group",
            "c_pml_comm",
        ],
    ),
    LayoutNeed::members(
        "ompi_group_t",
        &["grp_proc_count", "grp_my_rank", "grp_proc_pointers"],
    ),
    LayoutNeed::members("ompi_proc_t", &["super.proc_name.vpid"]),
    LayoutNeed::members("ompi_datatype_t", &["super.size"]),
    LayoutNeed::members(
        "mca_pml_base_component_t",
        &["pmlm_version.mca_component_name"],
    ),
    LayoutNeed::members(
        "mca_pml_ob1_comm_t",
        &["wild_receives", "procs", "num_procs"],
    ),
    LayoutNeed::members(
        "mca_pml_ob1_comm_proc_t",
        &[
            "expected_sequence",
            "frags_cant_match",
            "specific_receives",
            "unexpected_frags",
        ],
    ),
    LayoutNeed::members(
        "mca_pml_ob1_recv_request_t",
        &[
            "req_recv.req_base.req_ompi.req_complete",
            "req_recv.req_base.req_ompi.req_state",
            "req_recv.req_base.req_datatype",
            "req_recv.req_base.req_addr",
            "req_recv.req_base.req_count",
            "req_recv.req_base.req_peer",
            "req_recv.req_base.req_tag",
            "req_recv.req_base.req_sequence",
        ],
    ),
    LayoutNeed::members(
        "mca_pml_ob1_send_request_t",
        &[
            "req_send.req_base.req_ompi.req_type",
            "req_send.req_base.req_ompi.req_complete",
            "req_send.req_base.req_ompi.req_state",
            "req_send.req_base.req_pml_complete",
            "req_send.req_base.req_free_called",
            "req_send.req_base.req_type",
            "req_send.req_base.req_comm",
            "req_send.req_base.req_datatype",
            "req_send.req_base.req_addr",
            "req_send.req_base.req_count",
            "req_send.req_base.req_peer",
            "req_send.req_base.req_tag",
            "req_send.req_base.req_sequence",
            "req_send.req_addr",
            "req_send.req_bytes_packed",
            "req_send.req_send_mode",
            "req_endpoint",
            "req_recv",
            "req_bytes_delivered",
            "req_rdma_cnt",
        ],
    ),
    LayoutNeed::members(
        "mca_pml_ob1_recv_frag_t",
        &[
            "super.super.opal_list_next",
            "super.super.opal_list_prev",
            "hdr.hdr_common.hdr_type",
            "hdr.hdr_match.hdr_ctx",
            "hdr.hdr_match.hdr_src",
            "hdr.hdr_match.hdr_tag",
            "hdr.hdr_match.hdr_seq",
            "hdr.hdr_rndv.hdr_msg_length",
            "num_segments",
            "range",
            "segments",
        ],
    ),
    LayoutNeed::members("mca_pml_ob1_rendezvous_hdr_t", &[]),
    LayoutNeed::members("mca_pml_ob1_hdr_t", &[]),
    LayoutNeed::members("mca_btl_base_segment_t", &["seg_addr", "seg_len"]),
    LayoutNeed::members("mca_bml_base_endpoint_t", &["btl_eager"]),
    LayoutNeed::members("mca_bml_base_btl_array_t", &["arr_size", "bml_btls"]),
    LayoutNeed::members("mca_bml_base_btl_t", &["btl"]),
    LayoutNeed::members("mca_btl_base_module_t", &["btl_eager_limit"]),
    LayoutNeed::enumeration("ompi_request_state_t"),
    LayoutNeed::enumeration("ompi_request_type_t"),
    LayoutNeed::enumeration("mca_pml_base_request_type_t"),
    LayoutNeed::enumeration("mca_pml_base_send_mode_t"),
];

/// A scalar member: where it is and how wide.
#[derive(Clone, Copy, Debug, Default)]
struct Field {
    offset: u64,
    size: usize,
}

impl Field {
    fn end(self) -> u64 {
        self.offset.saturating_add(self.size as u64)
    }
    fn int(self, r: &Record<'_>) -> Result<i64, ReadError> {
        r.int(self.offset, self.size)
    }
    fn uint(self, r: &Record<'_>) -> Result<u64, ReadError> {
        r.uint(self.offset, self.size)
    }
    fn addr(self, r: &Record<'_>) -> Result<TargetAddr, ReadError> {
        r.uint(self.offset, self.size).map(TargetAddr)
    }
}

/// The smallest window of a record holding these fields.
fn span_of(fields: &[Field]) -> Span {
    Span {
        start: fields.iter().map(|f| f.offset).min().unwrap_or(0),
        end: fields.iter().map(|f| f.end()).max().unwrap_or(0),
    }
}

/// Answers the questions of [`OB1_LAYOUT`], noting every one that fails;
/// asking anything outside the list is a bug the tests catch.
struct Asker<'a> {
    src: &'a dyn Layouts,
    missing: Vec<LayoutError>,
}

impl Asker<'_> {
    fn declared(ty: &str, path: Option<&str>) -> bool {
        OB1_LAYOUT
            .iter()
            .any(|n| !n.is_enum && n.type_name == ty && path.is_none_or(|p| n.members.contains(&p)))
    }

    fn field(&mut self, ty: &str, path: &str) -> Field {
        debug_assert!(
            Self::declared(ty, Some(path)),
            "{ty}.{path} is not in OB1_LAYOUT"
        );
        match self.src.member(ty, path) {
            Ok(Member { offset, size, .. }) => Field {
                offset,
                size: usize::try_from(size).unwrap_or(usize::MAX),
            },
            Err(e) => {
                self.missing.push(e);
                Field::default()
            }
        }
    }

    fn member(&mut self, ty: &str, path: &str) -> Member {
        debug_assert!(
            Self::declared(ty, Some(path)),
            "{ty}.{path} is not in OB1_LAYOUT"
        );
        self.src.member(ty, path).unwrap_or_else(|e| {
            self.missing.push(e);
            Member {
                offset: 0,
                size: 0,
                array_len: None,
            }
        })
    }

    fn size(&mut self, ty: &str) -> u64 {
        debug_assert!(Self::declared(ty, None), "{ty} is not in OB1_LAYOUT");
        self.src.size_of(ty).unwrap_or_else(|e| {
            self.missing.push(e);
            0
        })
    }

    fn enumerator(&mut self, ty: &str, name: &str) -> i64 {
        debug_assert!(
            OB1_LAYOUT.iter().any(|n| n.is_enum && n.type_name == ty),
            "{ty}::{name} is not in OB1_LAYOUT"
        );
        let found = self.src.enumerators(ty).and_then(|all| {
            all.into_iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v)
                .ok_or_else(|| LayoutError {
                    type_name: ty.to_string(),
                    member: Some(name.to_string()),
                    reason: "no such enumerator".to_string(),
                })
        });
        match found.map(i64::try_from) {
            Ok(Ok(v)) => v,
            Ok(Err(_)) => {
                self.missing.push(LayoutError {
                    type_name: ty.to_string(),
                    member: Some(name.to_string()),
                    reason: "its value does not fit 64 bits".to_string(),
                });
                0
            }
            Err(e) => {
                self.missing.push(e);
                0
            }
        }
    }
}

/// Offsets, widths and enumerator values of everything the decoder reads.
#[derive(Clone, Debug)]
struct Layout {
    pa_size: Field,
    pa_number_free: Field,
    pa_addr: Field,
    list_sentinel: u64,
    item_next: Field,
    fl_num_allocated: Field,
    fl_num_per_alloc: Field,
    fl_frag_size: Field,
    fl_frag_alignment: Field,
    fl_frag_class: Field,
    fl_allocations: u64,
    free_list_item_size: u64,
    comm_name: Member,
    comm_contextid: Field,
    comm_my_rank: Field,
    comm_flags: Field,
    comm_local_group: Field,
    comm_remote_group: Field,
    comm_pml_comm: Field,
    comm_span: Span,
    group_count: Field,
    group_procs: Field,
    proc_vpid: Field,
    datatype_size: Field,
    component_name: Member,
    ob1_wild: u64,
    ob1_procs: Field,
    ob1_num_procs: Field,
    peer_cant_match: Field,
    peer_specific: u64,
    peer_unexpected: u64,
    recv: RecvFields,
    recv_span: Span,
    send: SendFields,
    send_span: Span,
    frag: FragFields,
    frag_span: Span,
    rndv_hdr_size: u64,
    ob1_hdr_size: u64,
    seg_addr: Field,
    seg_len: Field,
    seg_size: u64,
    endpoint_eager: u64,
    btl_array_size: Field,
    btl_array_btls: Field,
    bml_btl: Field,
    bml_btl_size: u64,
    btl_eager_limit: Field,
    state_invalid: i64,
    state_cancelled: i64,
    ompi_request_pml: i64,
    pml_request_send: i64,
    send_synchronous: i64,
    send_buffered: i64,
}

#[derive(Clone, Copy, Debug)]
struct RecvFields {
    next: Field,
    complete: Field,
    state: Field,
    datatype: Field,
    addr: Field,
    count: Field,
    peer: Field,
    tag: Field,
    sequence: Field,
}

#[derive(Clone, Copy, Debug)]
struct SendFields {
    class: Field,
    ompi_type: Field,
    complete: Field,
    state: Field,
    pml_complete: Field,
    free_called: Field,
    pml_type: Field,
    comm: Field,
    datatype: Field,
    user_addr: Field,
    count: Field,
    peer: Field,
    tag: Field,
    sequence: Field,
    addr: Field,
    bytes_packed: Field,
    mode: Field,
    endpoint: Field,
    recv: Field,
    delivered: Field,
    rdma_cnt: Field,
}

#[derive(Clone, Copy, Debug)]
struct FragFields {
    next: Field,
    prev: Field,
    hdr_type: Field,
    ctx: Field,
    src: Field,
    tag: Field,
    seq: Field,
    msg_length: Field,
    num_segments: Field,
    range: Field,
    segments: u64,
    /// How many segments the fragment has room for.
    segments_len: u64,
}

impl Layout {
    fn resolve(src: &dyn Layouts) -> Result<Layout, Vec<LayoutError>> {
        let mut a = Asker {
            src,
            missing: Vec::new(),
        };
        let pa = "opal_pointer_array_t";
        let comm = "ompi_communicator_t";
        let rq = "mca_pml_ob1_recv_request_t";
        let sq = "mca_pml_ob1_send_request_t";
        let fr = "mca_pml_ob1_recv_frag_t";
        let fl = "opal_free_list_t";
        // An ob1 request or fragment is an opal_list_item_t at offset 0
        // (its first members are the free-list item's): the list links
        // are read through the item's own layout.
        let item_next = a.field("opal_list_item_t", "opal_list_next");
        let _ = a.field("opal_list_item_t", "opal_list_prev");
        let obj_class = a.field("opal_object_t", "obj_class");
        let recv = RecvFields {
            next: item_next,
            complete: a.field(rq, "req_recv.req_base.req_ompi.req_complete"),
            state: a.field(rq, "req_recv.req_base.req_ompi.req_state"),
            datatype: a.field(rq, "req_recv.req_base.req_datatype"),
            addr: a.field(rq, "req_recv.req_base.req_addr"),
            count: a.field(rq, "req_recv.req_base.req_count"),
            peer: a.field(rq, "req_recv.req_base.req_peer"),
            tag: a.field(rq, "req_recv.req_base.req_tag"),
            sequence: a.field(rq, "req_recv.req_base.req_sequence"),
        };
        let send = SendFields {
            class: obj_class,
            ompi_type: a.field(sq, "req_send.req_base.req_ompi.req_type"),
            complete: a.field(sq, "req_send.req_base.req_ompi.req_complete"),
            state: a.field(sq, "req_send.req_base.req_ompi.req_state"),
            pml_complete: a.field(sq, "req_send.req_base.req_pml_complete"),
            free_called: a.field(sq, "req_send.req_base.req_free_called"),
            pml_type: a.field(sq, "req_send.req_base.req_type"),
            comm: a.field(sq, "req_send.req_base.req_comm"),
            datatype: a.field(sq, "req_send.req_base.req_datatype"),
            user_addr: a.field(sq, "req_send.req_base.req_addr"),
            count: a.field(sq, "req_send.req_base.req_count"),
            peer: a.field(sq, "req_send.req_base.req_peer"),
            tag: a.field(sq, "req_send.req_base.req_tag"),
            sequence: a.field(sq, "req_send.req_base.req_sequence"),
            addr: a.field(sq, "req_send.req_addr"),
            bytes_packed: a.field(sq, "req_send.req_bytes_packed"),
            mode: a.field(sq, "req_send.req_send_mode"),
            endpoint: a.field(sq, "req_endpoint"),
            recv: a.field(sq, "req_recv"),
            delivered: a.field(sq, "req_bytes_delivered"),
            rdma_cnt: a.field(sq, "req_rdma_cnt"),
        };
        let frag = FragFields {
            next: a.field(fr, "super.super.opal_list_next"),
            prev: a.field(fr, "super.super.opal_list_prev"),
            hdr_type: a.field(fr, "hdr.hdr_common.hdr_type"),
            ctx: a.field(fr, "hdr.hdr_match.hdr_ctx"),
            src: a.field(fr, "hdr.hdr_match.hdr_src"),
            tag: a.field(fr, "hdr.hdr_match.hdr_tag"),
            seq: a.field(fr, "hdr.hdr_match.hdr_seq"),
            msg_length: a.field(fr, "hdr.hdr_rndv.hdr_msg_length"),
            num_segments: a.field(fr, "num_segments"),
            range: a.field(fr, "range"),
            segments: 0,
            segments_len: 0,
        };
        let seg_size = a.size("mca_btl_base_segment_t");
        let segments = a.member(fr, "segments");
        let frag = FragFields {
            segments: segments.offset,
            // An array's length, or as many segments as its bytes hold.
            segments_len: segments
                .array_len
                .unwrap_or_else(|| segments.size.checked_div(seg_size).unwrap_or(0)),
            ..frag
        };
        let comm_fields = [
            a.field(comm, "c_contextid"),
            a.field(comm, "c_my_rank"),
            a.field(comm, "c_flags"),
            a.field(comm, "c_local_group"),
            a.field(comm, "c_remote_group"),
            a.field(comm, "c_pml_comm"),
        ];
        let comm_name = a.member(comm, "c_name");
        let mut comm_span = span_of(&comm_fields);
        comm_span.start = comm_span.start.min(comm_name.offset);
        comm_span.end = comm_span
            .end
            .max(comm_name.offset.saturating_add(comm_name.size));
        let recv_span = span_of(&[
            recv.next,
            recv.complete,
            recv.state,
            recv.datatype,
            recv.addr,
            recv.count,
            recv.peer,
            recv.tag,
            recv.sequence,
        ]);
        let send_span = span_of(&[
            send.class,
            send.ompi_type,
            send.complete,
            send.state,
            send.pml_complete,
            send.free_called,
            send.pml_type,
            send.comm,
            send.datatype,
            send.user_addr,
            send.count,
            send.peer,
            send.tag,
            send.sequence,
            send.addr,
            send.bytes_packed,
            send.mode,
            send.endpoint,
            send.recv,
            send.delivered,
            send.rdma_cnt,
        ]);
        let mut frag_span = span_of(&[
            frag.next,
            frag.prev,
            frag.hdr_type,
            frag.ctx,
            frag.src,
            frag.tag,
            frag.seq,
            frag.msg_length,
            frag.num_segments,
            frag.range,
        ]);
        // The first segment is read with the fragment; the others, rare,
        // one by one.
        frag_span.end = frag_span.end.max(frag.segments.saturating_add(seg_size));
        let l = Layout {
            pa_size: a.field(pa, "size"),
            pa_number_free: a.field(pa, "number_free"),
            pa_addr: a.field(pa, "addr"),
            list_sentinel: a.member("opal_list_t", "opal_list_sentinel").offset,
            item_next,
            fl_num_allocated: a.field(fl, "fl_num_allocated"),
            fl_num_per_alloc: a.field(fl, "fl_num_per_alloc"),
            fl_frag_size: a.field(fl, "fl_frag_size"),
            fl_frag_alignment: a.field(fl, "fl_frag_alignment"),
            fl_frag_class: a.field(fl, "fl_frag_class"),
            fl_allocations: a.member(fl, "fl_allocations").offset,
            // `opal_free_list_memory_t`, the head of each allocation
            // chunk, is a typedef of this type local to opal_free_list.c.
            free_list_item_size: a.size("opal_free_list_item_t"),
            comm_name,
            comm_contextid: comm_fields[0],
            comm_my_rank: comm_fields[1],
            comm_flags: comm_fields[2],
            comm_local_group: comm_fields[3],
            comm_remote_group: comm_fields[4],
            comm_pml_comm: comm_fields[5],
            comm_span,
            group_count: a.field("ompi_group_t", "grp_proc_count"),
            group_procs: a.field("ompi_group_t", "grp_proc_pointers"),
            proc_vpid: a.field("ompi_proc_t", "super.proc_name.vpid"),
            datatype_size: a.field("ompi_datatype_t", "super.size"),
            component_name: a.member(
                "mca_pml_base_component_t",
                "pmlm_version.mca_component_name",
            ),
            ob1_wild: a.member("mca_pml_ob1_comm_t", "wild_receives").offset,
            ob1_procs: a.field("mca_pml_ob1_comm_t", "procs"),
            ob1_num_procs: a.field("mca_pml_ob1_comm_t", "num_procs"),
            peer_cant_match: a.field("mca_pml_ob1_comm_proc_t", "frags_cant_match"),
            peer_specific: a
                .member("mca_pml_ob1_comm_proc_t", "specific_receives")
                .offset,
            peer_unexpected: a
                .member("mca_pml_ob1_comm_proc_t", "unexpected_frags")
                .offset,
            recv,
            recv_span,
            send,
            send_span,
            frag,
            frag_span,
            rndv_hdr_size: a.size("mca_pml_ob1_rendezvous_hdr_t"),
            ob1_hdr_size: a.size("mca_pml_ob1_hdr_t"),
            seg_addr: a.field("mca_btl_base_segment_t", "seg_addr"),
            seg_len: a.field("mca_btl_base_segment_t", "seg_len"),
            seg_size,
            endpoint_eager: a.member("mca_bml_base_endpoint_t", "btl_eager").offset,
            btl_array_size: a.field("mca_bml_base_btl_array_t", "arr_size"),
            btl_array_btls: a.field("mca_bml_base_btl_array_t", "bml_btls"),
            bml_btl: a.field("mca_bml_base_btl_t", "btl"),
            bml_btl_size: a.size("mca_bml_base_btl_t"),
            btl_eager_limit: a.field("mca_btl_base_module_t", "btl_eager_limit"),
            state_invalid: a.enumerator("ompi_request_state_t", "OMPI_REQUEST_INVALID"),
            state_cancelled: a.enumerator("ompi_request_state_t", "OMPI_REQUEST_CANCELLED"),
            ompi_request_pml: a.enumerator("ompi_request_type_t", "OMPI_REQUEST_PML"),
            pml_request_send: a.enumerator("mca_pml_base_request_type_t", "MCA_PML_REQUEST_SEND"),
            send_synchronous: a
                .enumerator("mca_pml_base_send_mode_t", "MCA_PML_BASE_SEND_SYNCHRONOUS"),
            send_buffered: a.enumerator("mca_pml_base_send_mode_t", "MCA_PML_BASE_SEND_BUFFERED"),
        };
        // Unused answers are still asked, so the question list is whole.
        let _ = a.field(pa, "lowest_free");
        let _ = a.field("ompi_group_t", "grp_my_rank");
        let _ = a.field("mca_pml_ob1_comm_proc_t", "expected_sequence");
        if a.missing.is_empty() {
            Ok(l)
        } else {
            Err(a.missing)
        }
    }
}

/// Addresses of the globals the decoder starts from.
#[derive(Clone, Copy, Debug)]
struct Globals {
    communicators: TargetAddr,
    send_requests: TargetAddr,
}

/// One communicator as read from the target.
#[derive(Clone, Debug)]
struct CommInfo {
    addr: TargetAddr,
    name: String,
    context_id: i64,
    rank: i64,
    size: i64,
    pml_comm: TargetAddr,
    /// `MPI_COMM_WORLD` rank of each peer (the remote group's, for an
    /// intercommunicator), when it could be read.
    world: Option<Vec<i64>>,
    world_error: Option<String>,
}

impl CommInfo {
    fn world_of(&self, rank: i64) -> i64 {
        usize::try_from(rank)
            .ok()
            .and_then(|i| self.world.as_ref()?.get(i).copied())
            .unwrap_or(-1)
    }
}

/// The operations of one queue of one communicator, at most
/// [`Limits::max_list_len`]: ob1 spreads a queue over several lists (the
/// wildcard receives and one list per peer, the out-of-order rings), and
/// the bound a list has holds for the queue they make.
struct QueueOps<T> {
    ops: Vec<T>,
    limit: u64,
    what: &'static str,
}

impl<T> QueueOps<T> {
    fn new(limits: &Limits, what: &'static str) -> Self {
        QueueOps {
            ops: Vec::new(),
            limit: limits.max_list_len,
            what,
        }
    }

    /// Adds the operation read at `at`, unless the queue is full.
    fn push(&mut self, op: T, at: TargetAddr) -> Result<(), DecodeError> {
        if self.ops.len() as u64 >= self.limit {
            return Err(DecodeError::TooLong {
                what: self.what,
                limit: self.limit,
                addr: at,
            });
        }
        self.ops.push(op);
        Ok(())
    }
}

/// The native decoder of Open MPI's ob1 PML.
pub struct OmpiOb1 {
    name: String,
    layout: Layout,
    globals: Globals,
}

impl std::fmt::Debug for OmpiOb1 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OmpiOb1")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn symbol(
    target: &dyn Target,
    name: &'static str,
    hint: &'static str,
) -> Result<TargetAddr, DecodeError> {
    target
        .symbols()
        .lookup(name)
        .map(|s| s.addr)
        .ok_or_else(|| DecodeError::MissingSymbol {
            name,
            searched: mpidd_read::searched_summary(target.symbols()),
            hint,
        })
}

/// Open MPI's version (`4.1.4`), from libopen-pal's exported
/// `opal_version_string`, which every build keeps.
pub(crate) fn ompi_version(
    memory: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    limits: &Limits,
) -> Option<String> {
    let sym = symbols.lookup("opal_version_string")?;
    let text = TargetMemory::read_c_string(memory, sym.addr, limits.max_string_len.min(64)).ok()?;
    Some(String::from_utf8_lossy(&text).into_owned())
}

impl OmpiOb1 {
    /// A decoder for the Open MPI in `target`. Fails, naming what is
    /// missing, when a symbol or layout it needs is not there, and refuses
    /// a process whose selected PML is not ob1.
    pub fn new(target: &dyn Target, limits: &Limits) -> Result<Self, DecodeError> {
        const LIBMPI: &str = "Open MPI's libmpi.so exports it: no Open MPI library is loaded";
        let layout = Layout::resolve(target.layouts()).map_err(DecodeError::Layouts)?;
        let selected = symbol(target, "mca_pml_base_selected_component", LIBMPI)?;
        let len = layout.component_name.size.min(limits.max_string_len as u64);
        let raw = read_bytes(
            target.memory(),
            at(selected, layout.component_name.offset),
            len,
            "mca_pml_base_selected_component.pmlm_version.mca_component_name",
            limits,
        )?;
        let pml = c_text(&raw);
        if pml != "ob1" {
            let library = target
                .symbols()
                .lookup("mca_pml_base_selected_component")
                .map(|sym| {
                    let version = ompi_version(target.memory(), target.symbols(), limits)
                        .map(|v| format!("Open MPI {v}"));
                    Box::new(FoundLibrary::find(
                        target.memory(),
                        target.symbols(),
                        &sym.object,
                        Some(sym.addr),
                        version,
                        limits,
                    ))
                });
            let (reason, way_out) = match pml.as_str() {
                "" => (
                    "Open MPI has not selected a PML yet (before MPI_Init, or after \
                     MPI_Finalize)"
                        .to_string(),
                    "Read it again once MPI_Init has returned".to_string(),
                ),
                "ucx" => (
                    format!("Open MPI with the {pml:?} PML: only ob1 has a native decoder"),
                    "No decoder reads Open MPI's UCX PML yet (its pending operations are in \
                     UCX's worker, not in Open MPI's lists). Running the job with \
                     `mpirun --mca pml ob1` (Open MPI's own BTLs, e.g. `--mca btl \
                     self,vader,tcp`) makes its queues readable"
                        .to_string(),
                ),
                _ => (
                    format!("Open MPI with the {pml:?} PML: only ob1 has a native decoder"),
                    format!(
                        "{DECODED}. Running the job with `mpirun --mca pml ob1` makes its \
                         queues readable"
                    ),
                ),
            };
            return Err(DecodeError::Unsupported {
                reason,
                library,
                way_out: Some(way_out),
            });
        }
        Ok(OmpiOb1 {
            name: "native Open MPI ob1 decoder".to_string(),
            layout,
            globals: Globals {
                communicators: symbol(target, "ompi_mpi_communicators", LIBMPI)?,
                send_requests: symbol(target, "mca_pml_base_send_requests", LIBMPI)?,
            },
        })
    }

    /// Asks `layouts` every layout question of [`OB1_LAYOUT`], for a
    /// layout profile ([`DecoderKind::ask_layouts`](crate::DecoderKind)).
    pub fn ask_layouts(layouts: &dyn Layouts) {
        LayoutNeed::ask_all(OB1_LAYOUT, layouts);
    }

    /// The layouts this decoder cannot do without that `layouts` lacks
    /// (all of [`OB1_LAYOUT`]'s questions are needed).
    pub fn missing_layouts(layouts: &dyn Layouts) -> Vec<LayoutError> {
        Layout::resolve(layouts).err().unwrap_or_default()
    }

    /// Everything this decoder needs that the image lacks: symbols, types,
    /// members and enumerators, each named. Needs no process.
    pub fn missing(types: &dyn Layouts, symbols: &dyn SymbolSource) -> Vec<String> {
        let mut out: Vec<String> = OB1_SYMBOLS
            .iter()
            .filter(|(name, _)| symbols.lookup(name).is_none())
            .map(|(name, object)| format!("the symbol `{name}` (of {object})"))
            .collect();
        if let Err(missing) = Layout::resolve(types) {
            out.extend(missing.iter().map(|e| format!("the {e}")));
        }
        out
    }

    /// Every communicator of the table, and notes on the entries left out.
    fn read_communicators(
        &self,
        mem: &dyn TargetMemory,
        limits: &Limits,
    ) -> Result<(Vec<CommInfo>, Vec<String>), DecodeError> {
        let l = &self.layout;
        let array = self.globals.communicators;
        let word = mem.abi().address_bytes();
        let head = read_bytes(
            mem,
            array,
            [l.pa_size, l.pa_number_free, l.pa_addr]
                .iter()
                .map(|f| f.end())
                .max()
                .unwrap_or(0),
            "ompi_mpi_communicators (opal_pointer_array_t)",
            limits,
        )?;
        let r = Record {
            base: array,
            start: 0,
            bytes: &head,
            order: mem.abi().byte_order,
            what: "ompi_mpi_communicators (opal_pointer_array_t)",
        };
        let size = l.pa_size.int(&r)?;
        let n = checked_count(size, "ompi_mpi_communicators.size", array, limits)?;
        let table = l.pa_addr.addr(&r)?;
        let ptrs = read_bytes(
            mem,
            table,
            n.saturating_mul(word as u64),
            "ompi_mpi_communicators.addr",
            limits,
        )?;
        let t = Record {
            base: table,
            start: 0,
            bytes: &ptrs,
            order: mem.abi().byte_order,
            what: "ompi_mpi_communicators.addr",
        };
        let mut comms: Vec<CommInfo> = Vec::new();
        let mut notes = Vec::new();
        let mut seen: HashMap<i64, TargetAddr> = HashMap::new();
        for i in 0..n {
            let addr = TargetAddr(t.uint(i * word as u64, word)?);
            if addr.0 == 0 {
                continue;
            }
            let comm = self.read_communicator(mem, addr, limits)?;
            // A context id names one communicator (it is its index in this
            // table), and readings are paired by it: a second one with the
            // same id is a corrupt entry, not a second communicator.
            if let Some(first) = seen.insert(comm.context_id, addr) {
                seen.insert(comm.context_id, first);
                notes.push(format!(
                    "ompi_mpi_communicators[{i}] (ompi_communicator_t at {addr}) repeats the \
                     context id {} of the communicator at {first}: left out",
                    comm.context_id
                ));
                continue;
            }
            comms.push(comm);
        }
        Ok((comms, notes))
    }

    fn read_communicator(
        &self,
        mem: &dyn TargetMemory,
        addr: TargetAddr,
        limits: &Limits,
    ) -> Result<CommInfo, DecodeError> {
        let l = &self.layout;
        let span = l.comm_span;
        let bytes = read_bytes(
            mem,
            at(addr, span.start),
            span.end.saturating_sub(span.start),
            "ompi_communicator_t",
            limits,
        )?;
        let r = Record {
            base: addr,
            start: span.start,
            bytes: &bytes,
            order: mem.abi().byte_order,
            what: "ompi_communicator_t",
        };
        let name_len = usize::try_from(l.comm_name.size).unwrap_or(0);
        let name = r.chars(l.comm_name.offset, name_len)?;
        let flags = l.comm_flags.uint(&r)?;
        let inter = flags & OMPI_COMM_INTER != 0;
        let local_group = l.comm_local_group.addr(&r)?;
        let peers_group = if inter {
            l.comm_remote_group.addr(&r)?
        } else {
            local_group
        };
        let (size, world, world_error) = match self.group_world_ranks(mem, peers_group, limits) {
            Ok(world) => (world.len() as i64, Some(world), None),
            Err(e) => (
                -1,
                None,
                Some(format!(
                    "communicator `{name}` (ompi_communicator_t at {addr}): no world ranks: {e}"
                )),
            ),
        };
        Ok(CommInfo {
            addr,
            context_id: l.comm_contextid.uint(&r)? as i64,
            rank: l.comm_my_rank.int(&r)?,
            size,
            pml_comm: l.comm_pml_comm.addr(&r)?,
            name,
            world,
            world_error,
        })
    }

    /// The world rank of each process of a group, from its procs'
    /// `proc_name.vpid` (or from the pointer itself when Open MPI left a
    /// sentinel encoding the name there instead of a proc).
    fn group_world_ranks(
        &self,
        mem: &dyn TargetMemory,
        group: TargetAddr,
        limits: &Limits,
    ) -> Result<Vec<i64>, DecodeError> {
        let l = &self.layout;
        let end = l.group_count.end().max(l.group_procs.end());
        let bytes = read_bytes(mem, group, end, "ompi_group_t", limits)?;
        let abi = mem.abi();
        let word = abi.address_bytes();
        let r = Record {
            base: group,
            start: 0,
            bytes: &bytes,
            order: abi.byte_order,
            what: "ompi_group_t",
        };
        let count = l.group_count.int(&r)?;
        let n = checked_count(count, "ompi_group_t.grp_proc_count", group, limits)?;
        if n == 0 {
            // MPI_GROUP_EMPTY's, and MPI_COMM_NULL's, have no proc table.
            return Ok(Vec::new());
        }
        let procs = l.group_procs.addr(&r)?;
        let ptrs = read_bytes(
            mem,
            procs,
            n.saturating_mul(word as u64),
            "ompi_group_t.grp_proc_pointers",
            limits,
        )?;
        let p = Record {
            base: procs,
            start: 0,
            bytes: &ptrs,
            order: abi.byte_order,
            what: "ompi_group_t.grp_proc_pointers",
        };
        let vpid_span = span_of(&[l.proc_vpid]);
        (0..n)
            .map(|i| {
                let proc = p.uint(i * word as u64, word)?;
                if proc & 1 == 1 {
                    // `ompi_proc_sentinel_to_name` (proc.h): the vpid is
                    // the top 32 bits of a 64-bit sentinel, the bits above
                    // the flag of a 32-bit one.
                    return Ok(if word == 8 { proc >> 32 } else { proc >> 1 } as i64);
                }
                let v = read_bytes(
                    mem,
                    at(TargetAddr(proc), vpid_span.start),
                    vpid_span.end - vpid_span.start,
                    "ompi_proc_t.super.proc_name.vpid",
                    limits,
                )?;
                let r = Record {
                    base: TargetAddr(proc),
                    start: vpid_span.start,
                    bytes: &v,
                    order: abi.byte_order,
                    what: "ompi_proc_t",
                };
                Ok(l.proc_vpid.uint(&r)? as i64)
            })
            .collect()
    }

    /// The bytes per element of a datatype (`opal_datatype_t.size`).
    fn datatype_size(
        &self,
        mem: &dyn TargetMemory,
        datatype: TargetAddr,
        cache: &mut DatatypeSizes,
    ) -> Option<u64> {
        if let Some((addr, size)) = cache.last {
            if addr == datatype.0 {
                return size;
            }
        }
        let size = *cache.all.entry(datatype.0).or_insert_with(|| {
            let f = self.layout.datatype_size;
            let mut buf = [0u8; 8];
            let n = f.size.clamp(1, 8);
            mem.read_exact(
                at(datatype, f.offset),
                &mut buf[..n],
                "ompi_datatype_t.super.size",
            )
            .ok()?;
            Some(mpidd_read::decode_uint(&buf[..n], mem.abi().byte_order))
        });
        cache.last = Some((datatype.0, size));
        size
    }

    /// Walks an `opal_list_t` at `list`, visiting each item's span.
    fn walk_list(
        &self,
        mem: &dyn TargetMemory,
        list: TargetAddr,
        span: Span,
        what: &'static str,
        limits: &Limits,
        visit: impl FnMut(&Record<'_>) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let sentinel = at(list, l.list_sentinel);
        let first = read_pointer(mem, at(sentinel, l.item_next.offset), what)?;
        walk(
            mem,
            first,
            ListShape {
                next_offset: l.item_next.offset,
                span,
                what,
                end: sentinel,
            },
            limits,
            visit,
        )
    }

    /// A posted receive request of `comm`.
    fn posted_receive(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        comm: &CommInfo,
        types: &mut DatatypeSizes,
    ) -> Result<(u64, PendingOperation), DecodeError> {
        let f = &self.layout.recv;
        let peer = f.peer.int(r)?;
        let tag = f.tag.int(r)?;
        let count = f.count.int(r)?;
        let datatype = f.datatype.addr(r)?;
        let complete = f.complete.uint(r)? == REQUEST_COMPLETED;
        let any_source = peer == OMPI_ANY_SOURCE;
        let any_tag = tag == OMPI_ANY_TAG;
        let (length, extra) = match self.datatype_size(mem, datatype, types) {
            Some(size) => (count.saturating_mul(size as i64), Vec::new()),
            None => (
                count,
                vec![format!(
                    "length in elements: the datatype at {datatype} has no readable size"
                )],
            ),
        };
        let op = PendingOperation {
            status: if complete {
                OperationStatus::Complete
            } else {
                OperationStatus::Pending
            },
            desired_local_rank: if any_source { -1 } else { peer },
            desired_global_rank: if any_source { -1 } else { comm.world_of(peer) },
            tag_wild: any_tag,
            desired_tag: if any_tag { -1 } else { tag },
            desired_length: length,
            system_buffer: false,
            buffer: f.addr.uint(r)?,
            actual_local_rank: -1,
            actual_global_rank: -1,
            actual_tag: -1,
            actual_length: -1,
            extra_text: extra,
            desired_count: Some(count),
            protocol: None,
            synchronous: None,
        };
        Ok((f.sequence.uint(r)?, op))
    }

    /// A fragment that arrived before a receive matched it.
    fn fragment(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        comm: &CommInfo,
        limits: &Limits,
        out_of_order: bool,
    ) -> Result<PendingOperation, DecodeError> {
        let l = &self.layout;
        let f = &l.frag;
        let hdr_type = f.hdr_type.uint(r)?;
        let src = f.src.int(r)?;
        let tag = f.tag.int(r)?;
        let segments = f.num_segments.uint(r)?;
        if segments > f.segments_len {
            return Err(DecodeError::Corrupt {
                what: "mca_pml_ob1_recv_frag_t",
                addr: r.base,
                reason: format!(
                    "num_segments {segments} is more than the {} segments it has room for",
                    f.segments_len
                ),
            });
        }
        // What came with the envelope: the segments' bytes, headers
        // included.
        let mut carried: u64 = 0;
        let mut first_segment = 0u64;
        for i in 0..segments {
            let base = f.segments.saturating_add(i.saturating_mul(l.seg_size));
            let (addr, len) = if i == 0 {
                (
                    r.uint(base.saturating_add(l.seg_addr.offset), l.seg_addr.size)?,
                    r.uint(base.saturating_add(l.seg_len.offset), l.seg_len.size)?,
                )
            } else {
                let seg = read_bytes(
                    mem,
                    at(r.base, base),
                    l.seg_size,
                    "mca_pml_ob1_recv_frag_t.segments",
                    limits,
                )?;
                let s = Record {
                    base: at(r.base, base),
                    start: 0,
                    bytes: &seg,
                    order: mem.abi().byte_order,
                    what: "mca_btl_base_segment_t",
                };
                (l.seg_addr.uint(&s)?, l.seg_len.uint(&s)?)
            };
            if i == 0 {
                first_segment = addr;
            }
            carried = carried.saturating_add(len);
        }
        let (protocol, length, synchronous, header, kind) = match hdr_type {
            HDR_TYPE_MATCH => (
                Some(Protocol::Eager),
                carried.saturating_sub(MATCH_HDR_LEN),
                Some(false),
                MATCH_HDR_LEN,
                "eager",
            ),
            HDR_TYPE_RNDV => {
                let length = f.msg_length.uint(r)?;
                let data = carried.saturating_sub(l.rndv_hdr_size);
                // ob1 sends a message that fits the eager limit as a
                // rendezvous only when it is synchronous
                // (mca_pml_ob1_send_request_start_btl), and then whole.
                let sync = (data == length).then_some(true);
                (
                    Some(Protocol::Rendezvous),
                    length,
                    sync,
                    l.rndv_hdr_size,
                    "rendezvous",
                )
            }
            HDR_TYPE_RGET => (
                Some(Protocol::Rendezvous),
                f.msg_length.uint(r)?,
                None,
                0,
                "rendezvous (RDMA get)",
            ),
            other => {
                return Err(DecodeError::Corrupt {
                    what: "mca_pml_ob1_recv_frag_t",
                    addr: r.base,
                    reason: format!("header type {other:#x} is not a first fragment's"),
                })
            }
        };
        let length = i64::try_from(length).unwrap_or(i64::MAX);
        let mut extra = vec![format!(
            "{kind}, sequence {}, fragment at {}",
            f.seq.uint(r)?,
            r.base
        )];
        if out_of_order {
            extra.push(
                "arrived out of order: waits for an earlier message of its sender".to_string(),
            );
        }
        Ok(PendingOperation {
            status: OperationStatus::Pending,
            desired_local_rank: src,
            desired_global_rank: comm.world_of(src),
            tag_wild: false,
            desired_tag: tag,
            desired_length: length,
            system_buffer: true,
            buffer: if first_segment == 0 || header == 0 {
                0
            } else {
                first_segment.wrapping_add(header)
            },
            actual_local_rank: src,
            actual_global_rank: comm.world_of(src),
            actual_tag: tag,
            actual_length: length,
            extra_text: extra,
            desired_count: None,
            protocol,
            synchronous,
        })
    }

    /// The fragments of a peer's `frags_cant_match`: a ring of range heads
    /// linked through their list items, each head's `range` another ring
    /// of the fragments that follow it in sequence.
    fn cant_match(
        &self,
        mem: &dyn TargetMemory,
        first: TargetAddr,
        comm: &CommInfo,
        limits: &Limits,
        out: &mut QueueOps<PendingOperation>,
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let shape = |end: TargetAddr| ListShape {
            next_offset: l.frag.next.offset,
            span: l.frag_span,
            what: "frags_cant_match (mca_pml_ob1_recv_frag_t)",
            end,
        };
        let mut ranges = Vec::new();
        let mut heads = 0u64;
        // The first node is visited by hand: the ring ends where it began.
        let mut visit_one = |r: &Record<'_>, ranges: &mut Vec<TargetAddr>| {
            let range = l.frag.range.addr(r)?;
            if range.0 != 0 {
                ranges.push(range);
            }
            out.push(self.fragment(mem, r, comm, limits, true)?, r.base)
        };
        let buf = read_bytes(
            mem,
            at(first, l.frag_span.start),
            l.frag_span.end - l.frag_span.start,
            "frags_cant_match (mca_pml_ob1_recv_frag_t)",
            limits,
        )?;
        let rec = Record {
            base: first,
            start: l.frag_span.start,
            bytes: &buf,
            order: mem.abi().byte_order,
            what: "mca_pml_ob1_recv_frag_t",
        };
        visit_one(&rec, &mut ranges)?;
        let next = l.frag.next.addr(&rec)?;
        walk(mem, next, shape(first), limits, |r| {
            heads += 1;
            visit_one(r, &mut ranges)
        })?;
        for range in ranges {
            let buf = read_bytes(
                mem,
                at(range, l.frag_span.start),
                l.frag_span.end - l.frag_span.start,
                "frags_cant_match range (mca_pml_ob1_recv_frag_t)",
                limits,
            )?;
            let rec = Record {
                base: range,
                start: l.frag_span.start,
                bytes: &buf,
                order: mem.abi().byte_order,
                what: "mca_pml_ob1_recv_frag_t",
            };
            out.push(self.fragment(mem, &rec, comm, limits, true)?, range)?;
            let next = l.frag.next.addr(&rec)?;
            walk(mem, next, shape(range), limits, |r| {
                out.push(self.fragment(mem, r, comm, limits, true)?, r.base)
            })?;
        }
        Ok(())
    }

    /// The posted receives and unexpected messages of one communicator.
    fn receive_queues(
        &self,
        mem: &dyn TargetMemory,
        comm: &CommInfo,
        limits: &Limits,
        types: &mut DatatypeSizes,
    ) -> Result<(Vec<PendingOperation>, Vec<PendingOperation>), DecodeError> {
        let l = &self.layout;
        let mut posted = QueueOps::new(limits, "posted receives of one communicator");
        let mut unexpected = QueueOps::new(limits, "unexpected messages of one communicator");
        if comm.pml_comm.0 == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let pml = comm.pml_comm;
        self.walk_list(
            mem,
            at(pml, l.ob1_wild),
            l.recv_span,
            "wild_receives (mca_pml_ob1_recv_request_t)",
            limits,
            |r| posted.push(self.posted_receive(mem, r, comm, types)?, r.base),
        )?;
        let head_end = l.ob1_procs.end().max(l.ob1_num_procs.end());
        let head = read_bytes(mem, pml, head_end, "mca_pml_ob1_comm_t", limits)?;
        let order = mem.abi().byte_order;
        let word = mem.abi().address_bytes();
        let h = Record {
            base: pml,
            start: 0,
            bytes: &head,
            order,
            what: "mca_pml_ob1_comm_t",
        };
        let num_procs = l.ob1_num_procs.uint(&h)?;
        let n = checked_count(
            i64::try_from(num_procs).unwrap_or(i64::MAX),
            "mca_pml_ob1_comm_t.num_procs",
            pml,
            limits,
        )?;
        let procs = l.ob1_procs.addr(&h)?;
        if n == 0 || procs.0 == 0 {
            return Ok(in_order(posted, unexpected));
        }
        let table = read_bytes(
            mem,
            procs,
            n.saturating_mul(word as u64),
            "mca_pml_ob1_comm_t.procs",
            limits,
        )?;
        let t = Record {
            base: procs,
            start: 0,
            bytes: &table,
            order,
            what: "mca_pml_ob1_comm_t.procs",
        };
        for i in 0..n {
            // A peer gets its state on first contact (mca_pml_ob1_peer_lookup).
            let peer = TargetAddr(t.uint(i * word as u64, word)?);
            if peer.0 == 0 {
                continue;
            }
            self.walk_list(
                mem,
                at(peer, l.peer_specific),
                l.recv_span,
                "specific_receives (mca_pml_ob1_recv_request_t)",
                limits,
                |r| posted.push(self.posted_receive(mem, r, comm, types)?, r.base),
            )?;
            self.walk_list(
                mem,
                at(peer, l.peer_unexpected),
                l.frag_span,
                "unexpected_frags (mca_pml_ob1_recv_frag_t)",
                limits,
                |r| unexpected.push(self.fragment(mem, r, comm, limits, false)?, r.base),
            )?;
            let cant = read_pointer(
                mem,
                at(peer, l.peer_cant_match.offset),
                "mca_pml_ob1_comm_proc_t.frags_cant_match",
            )?;
            if cant.0 != 0 {
                self.cant_match(mem, cant, comm, limits, &mut unexpected)?;
            }
        }
        Ok(in_order(posted, unexpected))
    }

    /// The send requests in use, from the free list every ob1 send request
    /// is allocated from, by communicator address.
    fn pending_sends(
        &self,
        mem: &dyn TargetMemory,
        comms: &[CommInfo],
        limits: &Limits,
        types: &mut DatatypeSizes,
    ) -> Result<HashMap<u64, Vec<(u64, PendingOperation)>>, DecodeError> {
        let l = &self.layout;
        let fl = self.globals.send_requests;
        let order = mem.abi().byte_order;
        let end = [
            l.fl_num_allocated,
            l.fl_num_per_alloc,
            l.fl_frag_size,
            l.fl_frag_alignment,
            l.fl_frag_class,
        ]
        .iter()
        .map(|f| f.end())
        .max()
        .unwrap_or(0);
        let head = read_bytes(
            mem,
            fl,
            end,
            "mca_pml_base_send_requests (opal_free_list_t)",
            limits,
        )?;
        let h = Record {
            base: fl,
            start: 0,
            bytes: &head,
            order,
            what: "mca_pml_base_send_requests (opal_free_list_t)",
        };
        let allocated = l.fl_num_allocated.uint(&h)?;
        let per_alloc = l.fl_num_per_alloc.uint(&h)?;
        let frag_size = l.fl_frag_size.uint(&h)?;
        let align = l.fl_frag_alignment.uint(&h)?.max(1);
        let class = l.fl_frag_class.uint(&h)?;
        let corrupt = |reason: String| DecodeError::Corrupt {
            what: "mca_pml_base_send_requests (opal_free_list_t)",
            addr: fl,
            reason,
        };
        if allocated > limits.max_table_entries {
            return Err(ReadError::LimitExceeded {
                what: "mca_pml_base_send_requests.fl_num_allocated",
                addr: fl,
                count: allocated,
                max: limits.max_table_entries,
                limit: "max_table_entries",
            }
            .into());
        }
        if !align.is_power_of_two() {
            return Err(corrupt(format!(
                "fl_frag_alignment {align} is not a power of two"
            )));
        }
        let round = |v: u64| v.checked_add(align - 1).map(|v| v & !(align - 1));
        let stride = round(frag_size)
            .ok_or_else(|| corrupt(format!("fl_frag_size {frag_size} overflows")))?;
        if stride < l.send_span.end {
            return Err(corrupt(format!(
                "its elements ({frag_size} bytes) are smaller than an ob1 send request"
            )));
        }
        // The chunks, in allocation order: opal_free_list_grow_st puts
        // `num_elements` items after each chunk's head. The first chunk
        // holds the initial count; every later one fl_num_per_alloc (ob1's
        // lists have no maximum that would cut the last one short).
        let mut chunks = Vec::new();
        self.walk_list(
            mem,
            at(fl, l.fl_allocations),
            Span {
                start: 0,
                end: l.item_next.end(),
            },
            "mca_pml_base_send_requests.fl_allocations",
            limits,
            |r| {
                chunks.push(r.base);
                Ok(())
            },
        )?;
        let later = (chunks.len() as u64)
            .saturating_sub(1)
            .saturating_mul(per_alloc);
        let first_count = allocated.checked_sub(later).filter(|&n| n > 0 || chunks.is_empty()).ok_or_else(|| {
            corrupt(format!(
                "{} chunks of {per_alloc} after the first hold more than the {allocated} elements allocated",
                chunks.len().saturating_sub(1)
            ))
        })?;
        let f = &l.send;
        let len = l.send_span.end - l.send_span.start;
        let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
        limits.check_record_bytes("mca_pml_ob1_send_request_t", fl, len)?;
        let mut out: HashMap<u64, Vec<(u64, PendingOperation)>> = HashMap::new();
        for (ci, chunk) in chunks.iter().enumerate() {
            let count = if ci == 0 { first_count } else { per_alloc };
            let start = chunk
                .0
                .checked_add(l.free_list_item_size)
                .and_then(round)
                .ok_or_else(|| corrupt(format!("chunk at {chunk} overflows the address space")))?;
            for i in 0..count {
                let item = TargetAddr(start.wrapping_add(i.wrapping_mul(stride)));
                let bytes = mem.view(
                    at(item, l.send_span.start),
                    &mut buf,
                    "mca_pml_ob1_send_request_t",
                )?;
                let r = Record {
                    base: item,
                    start: l.send_span.start,
                    bytes,
                    order,
                    what: "mca_pml_ob1_send_request_t",
                };
                if f.class.uint(&r)? != class {
                    return Err(DecodeError::Corrupt {
                        what: "mca_pml_ob1_send_request_t",
                        addr: item,
                        reason: format!(
                            "element {i} of the free-list chunk at {chunk} is not of the list's class {class:#x}"
                        ),
                    });
                }
                let state = f.state.int(&r)?;
                if state == l.state_invalid
                    || f.ompi_type.int(&r)? != l.ompi_request_pml
                    || f.pml_type.int(&r)? != l.pml_request_send
                {
                    continue;
                }
                let comm_addr = f.comm.uint(&r)?;
                let Some(comm) = comms.iter().find(|c| c.addr.0 == comm_addr) else {
                    continue;
                };
                let op = self.send_operation(mem, &r, comm, state, limits, types)?;
                out.entry(comm_addr)
                    .or_default()
                    .push((f.sequence.uint(&r)?, op));
            }
        }
        for ops in out.values_mut() {
            ops.sort_by_key(|(seq, _)| *seq);
        }
        Ok(out)
    }

    fn send_operation(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        comm: &CommInfo,
        state: i64,
        limits: &Limits,
        types: &mut DatatypeSizes,
    ) -> Result<PendingOperation, DecodeError> {
        let l = &self.layout;
        let f = &l.send;
        let peer = f.peer.int(r)?;
        let tag = f.tag.int(r)?;
        let count = f.count.int(r)?;
        let packed = f.bytes_packed.uint(r)?;
        let mode = f.mode.int(r)?;
        let complete = f.complete.uint(r)? == REQUEST_COMPLETED;
        let pml_complete = f.pml_complete.int(r)? != 0;
        let acked = f.recv.uint(r)? != 0;
        let user = f.user_addr.uint(r)?;
        let buffer = f.addr.uint(r)?;
        let synchronous = mode == l.send_synchronous;
        // As mca_pml_ob1_send_request_start_btl decides: eager when the
        // packed size fits the first eager BTL's limit (less ob1's
        // largest header) and the send is not synchronous.
        let eager_limit = self.eager_limit(mem, f.endpoint.addr(r)?, limits);
        let protocol = match eager_limit {
            Some(limit) if !synchronous && packed <= limit && f.rdma_cnt.uint(r)? == 0 => {
                Some(Protocol::Eager)
            }
            Some(_) => Some(Protocol::Rendezvous),
            None => None,
        };
        let status = if complete {
            OperationStatus::Complete
        } else if acked {
            // The receiver's acknowledgement names its matched request.
            OperationStatus::Matched
        } else {
            OperationStatus::Pending
        };
        let length = i64::try_from(packed).unwrap_or(i64::MAX);
        let mut extra = Vec::new();
        if pml_complete && !complete {
            extra.push("data sent; completion not yet signalled".to_string());
        } else if pml_complete {
            extra.push("complete: the program has not waited for or tested it".to_string());
        }
        if f.free_called.int(r)? != 0 {
            extra.push("freed by the program (MPI_Request_free) before it completed".to_string());
        }
        if state == l.state_cancelled {
            extra.push("cancelled".to_string());
        }
        if mode == l.send_buffered && buffer != user {
            extra.push("buffered: the data is in the MPI_Buffer_attach buffer".to_string());
        }
        let delivered = f.delivered.uint(r)?;
        if !complete && delivered > 0 {
            extra.push(format!("{delivered} of {packed} bytes delivered"));
        }
        let datatype = f.datatype.addr(r)?;
        if self.datatype_size(mem, datatype, types).is_none() {
            extra.push(format!("the datatype at {datatype} has no readable size"));
        }
        Ok(PendingOperation {
            status,
            desired_local_rank: peer,
            desired_global_rank: comm.world_of(peer),
            tag_wild: false,
            desired_tag: tag,
            desired_length: length,
            system_buffer: buffer != user,
            buffer,
            actual_local_rank: peer,
            actual_global_rank: comm.world_of(peer),
            actual_tag: tag,
            actual_length: length,
            extra_text: extra,
            desired_count: Some(count),
            protocol,
            synchronous: Some(synchronous),
        })
    }

    /// The largest message the first eager BTL to a peer sends eagerly:
    /// its `btl_eager_limit` less `sizeof(mca_pml_ob1_hdr_t)`. `None` when
    /// the endpoint cannot be read, or its eager BTLs disagree.
    fn eager_limit(
        &self,
        mem: &dyn TargetMemory,
        endpoint: TargetAddr,
        limits: &Limits,
    ) -> Option<u64> {
        let l = &self.layout;
        if endpoint.0 == 0 {
            return None;
        }
        let arr = at(endpoint, l.endpoint_eager);
        let word = mem.abi().address_bytes();
        let read = |addr: TargetAddr, f: Field, what: &'static str| -> Option<u64> {
            let b = read_bytes(mem, at(addr, f.offset), f.size as u64, what, limits).ok()?;
            Some(mpidd_read::decode_uint(&b, mem.abi().byte_order))
        };
        let n = read(arr, l.btl_array_size, "mca_bml_base_btl_array_t.arr_size")?;
        let btls = TargetAddr(read(
            arr,
            l.btl_array_btls,
            "mca_bml_base_btl_array_t.bml_btls",
        )?);
        if n == 0 || n > 64 || l.bml_btl.size != word {
            return None;
        }
        let mut found: Option<u64> = None;
        for i in 0..n {
            let bml = at(btls, i.checked_mul(l.bml_btl_size)?);
            let btl = TargetAddr(read(bml, l.bml_btl, "mca_bml_base_btl_t.btl")?);
            let limit = read(
                btl,
                l.btl_eager_limit,
                "mca_btl_base_module_t.btl_eager_limit",
            )?
            .saturating_sub(l.ob1_hdr_size);
            match found {
                Some(f) if f != limit => return None,
                _ => found = Some(limit),
            }
        }
        found
    }
}

/// Receives match in the order they were posted, which their sequence
/// numbers keep across the wildcard and per-peer lists.
/// The sizes of the datatypes operations name, each read once. A queue's
/// operations mostly name one datatype, so the last one asked is kept
/// apart from the table, which hashing would otherwise dominate.
#[derive(Default)]
pub(crate) struct DatatypeSizes {
    last: Option<(u64, Option<u64>)>,
    all: HashMap<u64, Option<u64>>,
}

fn in_order(
    posted: QueueOps<(u64, PendingOperation)>,
    unexpected: QueueOps<PendingOperation>,
) -> (Vec<PendingOperation>, Vec<PendingOperation>) {
    let mut posted = posted.ops;
    // One list (the usual case) is in order already.
    if !posted.is_sorted_by_key(|(seq, _)| *seq) {
        posted.sort_by_key(|(seq, _)| *seq);
    }
    (
        posted.into_iter().map(|(_, op)| op).collect(),
        unexpected.ops,
    )
}

fn c_text(raw: &[u8]) -> String {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

fn checked_count(
    count: i64,
    what: &'static str,
    at: TargetAddr,
    limits: &Limits,
) -> Result<u64, DecodeError> {
    let n = u64::try_from(count).map_err(|_| ReadError::NegativeCount {
        what,
        addr: at,
        count,
    })?;
    if n > limits.max_table_entries {
        return Err(ReadError::LimitExceeded {
            what,
            addr: at,
            count: n,
            max: limits.max_table_entries,
            limit: "max_table_entries",
        }
        .into());
    }
    Ok(n)
}

impl QueueDecoder for OmpiOb1 {
    fn name(&self) -> &str {
        &self.name
    }

    fn read_queues(
        &self,
        target: &dyn Target,
        limits: &Limits,
    ) -> Result<ProcessQueues, DecodeError> {
        let budget = Budgeted::new(target.memory(), limits);
        let mem: &dyn TargetMemory = &budget;
        let (comms, notes) = self.read_communicators(mem, limits)?;
        let mut types = DatatypeSizes::default();
        let mut sends = self.pending_sends(mem, &comms, limits, &mut types)?;
        let global_rank = comms
            .iter()
            .find(|c| c.context_id == 0)
            .map_or(-1, |world| world.rank);
        let mut diagnostics = notes;
        diagnostics.extend(comms.iter().filter_map(|c| c.world_error.clone()));
        let read = |operations| Queue::Read {
            operations,
            truncated: false,
        };
        let mut out = Vec::with_capacity(comms.len());
        for c in &comms {
            let (posted, unexpected) = match self.receive_queues(mem, c, limits, &mut types) {
                Ok(q) => (read(q.0), read(q.1)),
                Err(e) => {
                    let failed = || Queue::Failed {
                        operations: Vec::new(),
                        error: e.to_string(),
                    };
                    diagnostics.push(format!("communicator `{}`: {e}", c.name));
                    (failed(), failed())
                }
            };
            let sent = sends
                .remove(&c.addr.0)
                .unwrap_or_default()
                .into_iter()
                .map(|(_, op)| op)
                .collect();
            out.push(Communicator {
                name: c.name.clone(),
                size: c.size,
                local_rank: c.rank,
                // Open MPI's own library identifies communicators by
                // context id; so does this, to pair the two readings.
                unique_id: c.context_id as u64,
                context_id: Some(c.context_id),
                recv_context_id: Some(c.context_id),
                group: c.world.clone(),
                pending_sends: read(sent),
                pending_receives: posted,
                unexpected_messages: unexpected,
            });
        }
        Ok(ProcessQueues {
            source: self.name.clone(),
            global_rank,
            communicators: out,
            truncated: false,
            diagnostics,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::BTreeSet;

    /// Answers every question with a small made-up layout and records it.
    #[derive(Default)]
    struct Recorder {
        asked: RefCell<BTreeSet<String>>,
    }

    impl Layouts for Recorder {
        fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
            self.asked.borrow_mut().insert(type_name.to_string());
            Ok(64)
        }
        fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
            self.asked
                .borrow_mut()
                .insert(format!("{type_name}.{path}"));
            Ok(Member {
                offset: 8,
                size: 8,
                array_len: None,
            })
        }
        fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
            self.asked.borrow_mut().insert(format!("{type_name}::"));
            // Every enumerator the decoder looks up by name, each distinct.
            Ok([
                "OMPI_REQUEST_INVALID",
                "OMPI_REQUEST_CANCELLED",
                "OMPI_REQUEST_PML",
                "MCA_PML_REQUEST_SEND",
                "MCA_PML_BASE_SEND_SYNCHRONOUS",
                "MCA_PML_BASE_SEND_BUFFERED",
            ]
            .iter()
            .zip(0..)
            .map(|(n, v)| (n.to_string(), v))
            .collect())
        }
        fn member_enumerators(
            &self,
            type_name: &str,
            path: &str,
        ) -> Result<Vec<(String, i128)>, LayoutError> {
            Err(LayoutError::new(type_name, Some(path), "not asked by ob1"))
        }
        fn member_fields(
            &self,
            type_name: &str,
            path: &str,
        ) -> Result<Vec<(String, Member)>, LayoutError> {
            Err(LayoutError::new(type_name, Some(path), "not asked by ob1"))
        }
    }

    /// The decoder asks exactly the questions of OB1_LAYOUT (sizes of the
    /// types listed with no members are asked; members are asked by path),
    /// so a profile generated for that list answers all of it.
    #[test]
    fn the_declared_questions_are_the_ones_asked() {
        let r = Recorder::default();
        Layout::resolve(&r).expect("every question answered");
        let asked = r.asked.into_inner();
        let mut declared = BTreeSet::new();
        for need in OB1_LAYOUT {
            let ty = need.type_name;
            if need.is_enum {
                declared.insert(format!("{ty}::"));
                continue;
            }
            if need.members.is_empty() {
                declared.insert(ty.to_string());
            }
            for p in need.members {
                declared.insert(format!("{ty}.{p}"));
            }
        }
        // A type listed with members whose size is also asked is fine;
        // anything asked beyond that is not declared.
        let undeclared: Vec<_> = asked
            .iter()
            .filter(|q| !declared.contains(*q) && !OB1_LAYOUT.iter().any(|n| n.type_name == *q))
            .collect();
        assert!(
            undeclared.is_empty(),
            "asked but not declared: {undeclared:?}"
        );
        let unasked: Vec<_> = declared.iter().filter(|q| !asked.contains(*q)).collect();
        assert!(unasked.is_empty(), "declared but never asked: {unasked:?}");
    }

    /// A layout source that knows nothing makes the decoder list every
    /// missing answer, not just the first.
    #[test]
    fn missing_layouts_are_all_named() {
        let empty = mpidd_read::LayoutTable::default();
        let missing = Layout::resolve(&empty).unwrap_err();
        assert!(missing.len() > 40, "{}", missing.len());
        assert!(missing
            .iter()
            .any(|e| e.type_name == "mca_pml_ob1_recv_frag_t"));
    }
}
