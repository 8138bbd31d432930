//! The type questions Open MPI's own message-queue library,
//! `libompi_dbg_msgq.so` (4.1 and 5.0), asks its debugger through
//! `mqs_find_type`, `mqs_sizeof` and `mqs_field_offset`, when it checks an
//! image.
//!
//! A debugger answers them from the MPI library's DWARF. Distributions
//! strip it (Debian 12's and 13's Open MPI, pip's wheel), and the library
//! then refuses the image ("type missing"). A layout profile written with
//! these questions (`mpidd profile write --decoder ompi-msgq`) lets mpidd's
//! host answer them from the profile of the very build the process loaded,
//! the one its native decoder reads the process with (see
//! `queue_reading::library_layouts`).

use mpidd_read::{LayoutError, LayoutTable, Layouts};

/// Each type the library looks up, with the members whose offsets it asks.
/// It asks the size of every type it finds. Its questions about ob1's
/// receive fragments and their headers are compiled out, and it has no
/// code for unexpected messages: it answers `mqs_no_information` for them.
pub(crate) const OMPI_MSGQ_QUESTIONS: &[(&str, &[&str])] = &[
    ("opal_list_item_t", &["opal_list_next"]),
    ("opal_list_t", &["opal_list_sentinel"]),
    ("opal_free_list_item_t", &[]),
    (
        "opal_free_list_t",
        &[
            "fl_mpool",
            "fl_allocations",
            "fl_frag_class",
            "fl_frag_size",
            "fl_frag_alignment",
            "fl_max_to_alloc",
            "fl_num_per_alloc",
            "fl_num_allocated",
        ],
    ),
    ("opal_hash_table_t", &["ht_table", "ht_size"]),
    (
        "ompi_request_t",
        &[
            "req_type",
            "req_status",
            "req_complete",
            "req_state",
            "req_f_to_c_index",
        ],
    ),
    (
        "mca_pml_base_request_t",
        &[
            "req_addr",
            "req_count",
            "req_peer",
            "req_tag",
            "req_comm",
            "req_datatype",
            "req_proc",
            "req_sequence",
            "req_type",
            "req_pml_complete",
        ],
    ),
    (
        "mca_pml_base_send_request_t",
        &["req_addr", "req_bytes_packed", "req_send_mode"],
    ),
    ("mca_pml_base_recv_request_t", &["req_bytes_packed"]),
    (
        "opal_pointer_array_t",
        &["lowest_free", "number_free", "size", "addr"],
    ),
    (
        "ompi_communicator_t",
        &[
            "c_name",
            "c_contextid",
            "c_contextidb",
            "c_index",
            "c_my_rank",
            "c_local_group",
            "c_remote_group",
            "c_flags",
            "c_f_to_c_index",
            "c_topo",
            "c_keyhash",
        ],
    ),
    ("mca_topo_base_module_t", &["mtc", "reorder"]),
    (
        "mca_topo_base_comm_cart_2_2_0_t",
        &["ndims", "dims", "periods", "coords"],
    ),
    (
        "mca_topo_base_comm_graph_2_2_0_t",
        &["nnodes", "index", "edges"],
    ),
    (
        "mca_topo_base_comm_dist_graph_2_2_0_t",
        &[
            "in",
            "inw",
            "out",
            "outw",
            "indegree",
            "outdegree",
            "weighted",
        ],
    ),
    (
        "ompi_group_t",
        &[
            "grp_proc_count",
            "grp_proc_pointers",
            "grp_my_rank",
            "grp_flags",
        ],
    ),
    (
        "ompi_status_public_t",
        &[
            "MPI_SOURCE",
            "MPI_TAG",
            "MPI_ERROR",
            "_ucount",
            "_cancelled",
        ],
    ),
    ("ompi_datatype_t", &["name", "super"]),
    ("opal_datatype_t", &["size"]),
];

/// Asks `layouts` every question of [`OMPI_MSGQ_QUESTIONS`] as the
/// library's callbacks carry them (a size, offsets), ignoring the answers.
pub(crate) fn ompi_msgq_ask_layouts(layouts: &dyn Layouts) {
    for (type_name, members) in OMPI_MSGQ_QUESTIONS {
        let _ = layouts.size_of(type_name);
        for member in *members {
            let _ = layouts.member_offset(type_name, member);
        }
    }
}

/// Members only Open MPI 5.0's library asks about: 4.1's communicator has
/// neither, and 4.1's library does not ask (its `ompi_common_dll.c`).
const ASKED_BY_5_0_ONLY: &[(&str, &str)] = &[
    ("ompi_communicator_t", "c_contextidb"),
    ("ompi_communicator_t", "c_index"),
];

/// The questions `layouts` cannot answer: the library refuses an image
/// whose type it cannot find, and reads at offset −1 for a member it
/// cannot. A member only 5.0's library asks is not counted missing, so
/// that a 4.1 build's layouts, which lack it, answer 4.1's library whole;
/// 5.0's library only warns when it goes unanswered.
pub(crate) fn ompi_msgq_missing_layouts(layouts: &dyn Layouts) -> Vec<LayoutError> {
    let mut missing = LayoutTable::record(layouts, &ompi_msgq_ask_layouts).1;
    missing.retain(|e| {
        !ASKED_BY_5_0_ONLY
            .iter()
            .any(|(t, m)| e.type_name == *t && e.member.as_deref() == Some(m))
    });
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of every question but `skip`, with made-up answers.
    fn answers_but(skip: &[(&str, &str)]) -> LayoutTable {
        let mut table = LayoutTable::default();
        for (type_name, members) in OMPI_MSGQ_QUESTIONS {
            let kept: Vec<(&str, u64)> = members
                .iter()
                .filter(|m| !skip.contains(&(*type_name, **m)))
                .map(|m| (*m, 8))
                .collect();
            table.add_offsets(type_name, 64, &kept);
        }
        table
    }

    #[test]
    fn every_question_is_required() {
        assert_eq!(ompi_msgq_missing_layouts(&answers_but(&[])), Vec::new());
        // One member fewer is missed, by name.
        let missing =
            ompi_msgq_missing_layouts(&answers_but(&[("opal_free_list_t", "fl_num_allocated")]));
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert_eq!(missing[0].member.as_deref(), Some("fl_num_allocated"));
    }

    #[test]
    fn a_4_1_communicator_without_the_5_0_members_is_whole() {
        let table = answers_but(&[
            ("ompi_communicator_t", "c_contextidb"),
            ("ompi_communicator_t", "c_index"),
        ]);
        assert_eq!(ompi_msgq_missing_layouts(&table), Vec::new());
    }
}
