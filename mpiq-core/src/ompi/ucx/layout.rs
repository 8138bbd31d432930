//! What the UCX PML's decoder asks of Open MPI's layouts, and the answers
//! it reads with: [`OMPI_UCX_LAYOUT`] lists every question (UCX's own
//! types are the UCX worker reader's, asked of the layouts under it) and
//! [`Layout`] keeps the answers.

use mpidd_read::{LayoutError, LayoutNeed, Layouts, Member};

use crate::ompi::communicators::CommLayout;
use crate::ompi::layout::{Asker, Field};

/// The symbols the decoder starts from, and the object each is in (all in
/// `.dynsym`, so Debian's stripped libraries have them too). The types
/// are in libmpi's debug info (`ompi_*`, `mca_pml_base_*`), libopen-pal's
/// (`opal_*`) and mca_pml_ucx.so's (`mca_pml_ucx_module_t`).
pub const OMPI_UCX_SYMBOLS: [(&str, &str); 4] = [
    ("ompi_mpi_communicators", "libmpi.so.40"),
    ("mca_pml_base_selected_component", "libmpi.so.40"),
    ("ompi_request_t_class", "libmpi.so.40"),
    ("ompi_pml_ucx", "mca_pml_ucx.so"),
];

/// Every layout question the UCX PML's decoder asks of Open MPI's types.
/// Nothing else of Open MPI's is asked, so a layout profile holding these
/// answers suffices; UCX's own types (`ucp_worker_t`, `ucp_request_t`,
/// ...) are asked by mpihandles' UCX worker reader.
pub const OMPI_UCX_LAYOUT: &[LayoutNeed] = &[
    LayoutNeed::members("opal_pointer_array_t", &["number_free", "size", "addr"]),
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
    LayoutNeed::members("ompi_group_t", &["grp_proc_count", "grp_proc_pointers"]),
    LayoutNeed::members("ompi_proc_t", &["super.proc_name.vpid", "proc_endpoints"]),
    LayoutNeed::members("ompi_request_t", &["super.super.super.obj_class"]),
    LayoutNeed::members(
        "mca_pml_base_component_t",
        &["pmlm_version.mca_component_name"],
    ),
    LayoutNeed::members("mca_pml_ucx_module_t", &["ucp_worker"]),
];

/// Offsets and widths of everything the decoder reads of Open MPI's.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    /// The communicators, groups and procs, as every PML's decoder reads
    /// them.
    pub(super) comm: CommLayout,
    /// `ompi_proc_t.proc_endpoints`, one pointer per endpoint tag; the
    /// PML's slot holds the peer's `ucp_ep_h`.
    pub(super) proc_endpoints: Member,
    /// `ompi_request_t`'s class pointer, which tells an MPI request from
    /// the uninitialised user part of a request on a blocking call's
    /// stack.
    pub(super) request_class: Field,
    /// `ompi_pml_ucx.ucp_worker`.
    pub(super) worker: Field,
}

impl Layout {
    pub(super) fn resolve(src: &dyn Layouts) -> Result<Layout, Vec<LayoutError>> {
        let mut a = Asker::new(src, OMPI_UCX_LAYOUT);
        let l = Layout {
            comm: CommLayout::resolve(&mut a),
            proc_endpoints: a.member("ompi_proc_t", "proc_endpoints"),
            request_class: a.field("ompi_request_t", "super.super.super.obj_class"),
            worker: a.field("mca_pml_ucx_module_t", "ucp_worker"),
        };
        a.finish(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ompi::communicators::COMM_QUESTIONS;
    use crate::ompi::layout::testing::{undeclared_and_unasked, Recorder};

    /// The decoder asks exactly the questions of OMPI_UCX_LAYOUT, so a
    /// profile generated for that list answers all of it.
    #[test]
    fn the_declared_questions_are_the_ones_asked() {
        let r = Recorder {
            asked: Default::default(),
            enumerators: &[],
        };
        Layout::resolve(&r).expect("every question answered");
        let asked = r.asked.into_inner();
        let (undeclared, unasked) = undeclared_and_unasked(&asked, OMPI_UCX_LAYOUT);
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
    /// missing answer.
    #[test]
    fn missing_layouts_are_all_named() {
        let empty = mpidd_read::LayoutTable::default();
        let missing = Layout::resolve(&empty).unwrap_err();
        assert_eq!(missing.len(), 17, "{missing:?}");
        assert!(missing
            .iter()
            .any(|e| e.type_name == "mca_pml_ucx_module_t"));
    }
}
