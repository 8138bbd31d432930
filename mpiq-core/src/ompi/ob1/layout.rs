//! What the ob1 decoder asks of the layouts, and the answers it reads
//! with: [`OB1_LAYOUT`] lists every question, the shared `Asker` asks
//! exactly those (noting every one that fails) and [`Layout`] keeps the
//! answers, with the windows of each record the decoder reads.

use mpidd_read::{LayoutError, LayoutNeed, Layouts};

use crate::list_walk::Span;
use crate::ompi::communicators::CommLayout;
use crate::ompi::layout::Asker;
pub(super) use crate::ompi::layout::{span_of, Field};

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
            // Open MPI 5.0 only: the communicator's slot in the table.
            "c_index",
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

/// Offsets, widths and enumerator values of everything the decoder reads.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    /// The communicators, groups and procs, as every PML's decoder reads
    /// them.
    pub(super) comm: CommLayout,
    pub(super) list_sentinel: u64,
    pub(super) item_next: Field,
    pub(super) fl_num_allocated: Field,
    pub(super) fl_num_per_alloc: Field,
    pub(super) fl_frag_size: Field,
    pub(super) fl_frag_alignment: Field,
    pub(super) fl_frag_class: Field,
    pub(super) fl_allocations: u64,
    pub(super) free_list_item_size: u64,
    pub(super) datatype_size: Field,
    pub(super) ob1_wild: u64,
    pub(super) ob1_procs: Field,
    pub(super) ob1_num_procs: Field,
    pub(super) peer_cant_match: Field,
    pub(super) peer_specific: u64,
    pub(super) peer_unexpected: u64,
    pub(super) recv: RecvFields,
    pub(super) recv_span: Span,
    pub(super) send: SendFields,
    pub(super) send_span: Span,
    pub(super) frag: FragFields,
    pub(super) frag_span: Span,
    pub(super) rndv_hdr_size: u64,
    pub(super) ob1_hdr_size: u64,
    pub(super) seg_addr: Field,
    pub(super) seg_len: Field,
    pub(super) seg_size: u64,
    pub(super) endpoint_eager: u64,
    pub(super) btl_array_size: Field,
    pub(super) btl_array_btls: Field,
    pub(super) bml_btl: Field,
    pub(super) bml_btl_size: u64,
    pub(super) btl_eager_limit: Field,
    pub(super) state_invalid: i64,
    pub(super) state_cancelled: i64,
    pub(super) ompi_request_pml: i64,
    pub(super) pml_request_send: i64,
    pub(super) send_synchronous: i64,
    pub(super) send_buffered: i64,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct RecvFields {
    pub(super) next: Field,
    pub(super) complete: Field,
    pub(super) state: Field,
    pub(super) datatype: Field,
    pub(super) addr: Field,
    pub(super) count: Field,
    pub(super) peer: Field,
    pub(super) tag: Field,
    pub(super) sequence: Field,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct SendFields {
    pub(super) class: Field,
    pub(super) ompi_type: Field,
    pub(super) complete: Field,
    pub(super) state: Field,
    pub(super) pml_complete: Field,
    pub(super) free_called: Field,
    pub(super) pml_type: Field,
    pub(super) comm: Field,
    pub(super) datatype: Field,
    pub(super) user_addr: Field,
    pub(super) count: Field,
    pub(super) peer: Field,
    pub(super) tag: Field,
    pub(super) sequence: Field,
    pub(super) addr: Field,
    pub(super) bytes_packed: Field,
    pub(super) mode: Field,
    pub(super) endpoint: Field,
    pub(super) recv: Field,
    pub(super) delivered: Field,
    pub(super) rdma_cnt: Field,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct FragFields {
    pub(super) next: Field,
    pub(super) prev: Field,
    pub(super) hdr_type: Field,
    pub(super) ctx: Field,
    pub(super) src: Field,
    pub(super) tag: Field,
    pub(super) seq: Field,
    pub(super) msg_length: Field,
    pub(super) num_segments: Field,
    pub(super) range: Field,
    pub(super) segments: u64,
    /// How many segments the fragment has room for.
    pub(super) segments_len: u64,
}

impl Layout {
    pub(super) fn resolve(src: &dyn Layouts) -> Result<Layout, Vec<LayoutError>> {
        let mut a = Asker::new(src, OB1_LAYOUT);
        let pa = "opal_pointer_array_t";
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
            comm: CommLayout::resolve(&mut a),
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
            datatype_size: a.field("ompi_datatype_t", "super.size"),
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
        a.finish(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ompi::communicators::COMM_QUESTIONS;
    use crate::ompi::layout::testing::{undeclared_and_unasked, Recorder};

    /// The decoder asks exactly the questions of OB1_LAYOUT (sizes of the
    /// types listed with no members are asked; members are asked by path),
    /// so a profile generated for that list answers all of it.
    #[test]
    fn the_declared_questions_are_the_ones_asked() {
        let r = Recorder {
            asked: Default::default(),
            // Every enumerator the decoder looks up by name, each distinct.
            enumerators: &[
                "OMPI_REQUEST_INVALID",
                "OMPI_REQUEST_CANCELLED",
                "OMPI_REQUEST_PML",
                "MCA_PML_REQUEST_SEND",
                "MCA_PML_BASE_SEND_SYNCHRONOUS",
                "MCA_PML_BASE_SEND_BUFFERED",
            ],
        };
        Layout::resolve(&r).expect("every question answered");
        let asked = r.asked.into_inner();
        let (undeclared, unasked) = undeclared_and_unasked(&asked, OB1_LAYOUT);
        assert!(
            undeclared.is_empty(),
            "asked but not declared: {undeclared:?}"
        );
        assert!(unasked.is_empty(), "declared but never asked: {unasked:?}");
        for (ty, path) in COMM_QUESTIONS {
            assert!(asked.contains(&format!("{ty}.{path}")), "{ty}.{path}");
        }
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
