//! Every layout question the Open MPI handle decoders ask, declared in one
//! list ([`OMPI_HANDLE_LAYOUT`]), and the asking of it: an [`Asker`]
//! answers each question from a [`Layouts`] and notes every one that
//! fails, so that all that is missing is named at once.
//!
//! The answers come from the library's DWARF (a debug build, or installed
//! debug info), or a layout profile written from a debug build for a
//! distribution's stripped library. A profile holds exactly the answers to
//! this list, so nothing is asked outside it (a test checks that the
//! questions asked are the ones declared, and the asker refuses, in debug
//! builds, any that is not).
//!
//! The types of `libmpi.so.40` and `libopen-pal.so.40` are required: a
//! source that lacks one cannot be used. OMPIO's own (`mca_io_ompio.so`,
//! loaded only once a file is opened) are optional: without them only a
//! file's atomic mode is not shown.

use mpidd_read::{LayoutError, LayoutNeed, Layouts, Member};

/// Every layout question the Open MPI handle decoders ask: the sizes of
/// these types, the members at these paths, the enumerators of these
/// enumerations and of these members' types. Nothing else is asked, so a
/// layout profile holding these answers serves them. All but OMPIO's
/// (`mca_common_ompio_data_t`, in `mca_io_ompio.so`) are required.
pub const OMPI_HANDLE_LAYOUT: &[LayoutNeed] = &[
    LayoutNeed::members("opal_object_t", &["obj_class", "obj_reference_count"]),
    LayoutNeed::members("opal_class_t", &["cls_name", "cls_parent"]),
    LayoutNeed::members("opal_pointer_array_t", &["size", "addr"]),
    LayoutNeed::members("opal_list_t", &["opal_list_sentinel"]),
    LayoutNeed::members("opal_list_item_t", &["opal_list_next"]),
    LayoutNeed::members("opal_hash_table_t", &["ht_table", "ht_capacity"]),
    LayoutNeed::members("opal_hash_element_t", &["valid", "key.u32", "value"]),
    LayoutNeed::members("opal_info_t", &["super"]),
    LayoutNeed::members("opal_info_entry_t", &["ie_value", "ie_key"]),
    // Open MPI 5.0 only: an info entry's key and value.
    LayoutNeed::members("opal_cstring_t", &["string"]),
    LayoutNeed::members("ompi_proc_t", &["super.proc_name.vpid"]),
    LayoutNeed::members(
        "ompi_communicator_t",
        &[
            "c_name",
            "c_contextid",
            "c_my_rank",
            "c_flags",
            "c_local_group",
            "c_remote_group",
            "c_keyhash",
            "c_topo",
            "c_f_to_c_index",
            "error_handler",
            // Open MPI 5.0 only.
            "c_index",
        ],
    ),
    LayoutNeed::members(
        "ompi_group_t",
        &[
            "grp_proc_count",
            "grp_my_rank",
            "grp_f_to_c_index",
            "grp_proc_pointers",
            "grp_flags",
        ],
    ),
    LayoutNeed::members(
        "ompi_datatype_t",
        &[
            "super.flags",
            "super.size",
            "super.true_lb",
            "super.true_ub",
            "super.lb",
            "super.ub",
            "d_f_to_c_index",
            "d_keyhash",
            "args",
            "name",
        ],
    ),
    LayoutNeed::members(
        "ompi_datatype_args_t",
        &["create_type", "ci", "ca", "cd", "i", "a", "d"],
    ),
    LayoutNeed::members(
        "ompi_request_t",
        &[
            "req_type",
            "req_status",
            "req_complete",
            "req_state",
            "req_persistent",
            "req_f_to_c_index",
            "req_mpi_object",
        ],
    ),
    LayoutNeed::members(
        "ompi_status_public_t",
        &[
            "MPI_SOURCE",
            "MPI_TAG",
            "MPI_ERROR",
            "_cancelled",
            "_ucount",
        ],
    ),
    LayoutNeed::members(
        "mca_pml_base_request_t",
        &[
            "req_free_called",
            "req_type",
            "req_comm",
            "req_peer",
            "req_tag",
        ],
    ),
    LayoutNeed::members("mca_pml_base_send_request_t", &["req_send_mode"]),
    LayoutNeed::members(
        "ompi_grequest_t",
        &[
            "greq_query",
            "greq_free",
            "greq_cancel",
            "greq_state",
            "greq_funcs_are_c",
        ],
    ),
    LayoutNeed::members(
        "mca_pml_base_component_t",
        &["pmlm_version.mca_component_name"],
    ),
    LayoutNeed::members(
        "ompi_op_t",
        &[
            "o_name",
            "op_type",
            "o_flags",
            "o_f_to_c_index",
            "o_func.c_fn",
        ],
    )
    .with_member_enums(&["op_type"]),
    LayoutNeed::members(
        "ompi_errhandler_t",
        &[
            "eh_name",
            "eh_mpi_object_type",
            "eh_lang",
            "eh_comm_fn",
            "eh_file_fn",
            "eh_win_fn",
            "eh_fort_fn",
            "eh_f_to_c_index",
        ],
    ),
    LayoutNeed::members("ompi_info_t", &["super", "i_f_to_c_index", "i_freed"]),
    LayoutNeed::members(
        "ompi_win_t",
        &[
            "super.s_info",
            "w_name",
            "w_group",
            "w_flavor",
            "w_keyhash",
            "w_f_to_c_index",
            "error_handler",
        ],
    ),
    LayoutNeed::members(
        "ompi_file_t",
        &[
            "super.s_info",
            "f_comm",
            "f_filename",
            "f_amode",
            "f_f_to_c_index",
            "error_handler",
            "f_io_selected_component.v2_0_0.io_version.mca_component_name",
            "f_io_selected_data",
        ],
    ),
    LayoutNeed::members("mca_topo_base_module_t", &["type", "mtc.cart"]),
    LayoutNeed::members(
        "mca_topo_base_comm_cart_2_2_0_t",
        &["ndims", "dims", "periods", "coords"],
    ),
    LayoutNeed::members(
        "mca_topo_base_comm_graph_2_2_0_t",
        &["nnodes", "index", "edges"],
    ),
    LayoutNeed::members(
        "mca_topo_base_comm_dist_graph_2_2_0_t",
        &["in", "out", "indegree", "outdegree", "weighted"],
    ),
    LayoutNeed::members(
        "attribute_key_value_t",
        &["av_key", "av_value", "av_set_from"],
    )
    .with_member_enums(&["av_set_from"]),
    LayoutNeed::enumeration("ompi_request_type_t"),
    LayoutNeed::enumeration("ompi_request_state_t"),
    LayoutNeed::enumeration("mca_pml_base_request_type_t"),
    LayoutNeed::enumeration("mca_pml_base_send_mode_t"),
    LayoutNeed::enumeration("ompi_errhandler_type_t"),
    LayoutNeed::enumeration("ompi_errhandler_lang_t"),
    LayoutNeed::members("mca_common_ompio_data_t", &["ompio_fh.f_atomicity"]),
];

/// The types whose questions may go unanswered: OMPIO's, whose component
/// is loaded only once a file is opened, and `opal_cstring_t`, which
/// Open MPI 4.1 does not have.
pub(crate) const OPTIONAL: &[&str] = &["mca_common_ompio_data_t", "opal_cstring_t"];

/// The members whose offset alone is asked ([`Asker::offset`]).
const OFFSET_ONLY: &[(&str, &str)] = &[("opal_cstring_t", "string")];

/// The members only some versions have: Open MPI 5.0's communicator slot
/// (`c_index`, its local context id).
const OPTIONAL_MEMBERS: &[(&str, &str)] = &[("ompi_communicator_t", "c_index")];

/// An enumeration's enumerators, by value.
#[derive(Clone, Debug, Default)]
pub(crate) struct Enum(pub(crate) Vec<(String, i128)>);

impl Enum {
    /// The name of `value`, or the number when no enumerator has it.
    pub(crate) fn name(&self, value: i64) -> String {
        self.0
            .iter()
            .find(|(_, v)| *v == i128::from(value))
            .map(|(n, _)| n.clone())
            .unwrap_or_else(|| value.to_string())
    }
}

/// A type's size and the members read of it.
#[derive(Clone, Debug)]
pub(crate) struct Ty<T> {
    pub(crate) name: &'static str,
    pub(crate) size: u64,
    pub(crate) m: T,
}

/// Answers the questions of [`OMPI_HANDLE_LAYOUT`], noting every one that
/// fails; asking anything outside the list is a bug the tests catch.
pub(crate) struct Asker<'a> {
    src: &'a dyn Layouts,
    missing: Vec<LayoutError>,
}

fn declared(ty: &str, path: Option<&str>) -> bool {
    OMPI_HANDLE_LAYOUT
        .iter()
        .any(|n| !n.is_enum && n.type_name == ty && path.is_none_or(|p| n.members.contains(&p)))
}

const NO_MEMBER: Member = Member {
    offset: 0,
    size: 0,
    array_len: None,
};

impl<'a> Asker<'a> {
    pub(crate) fn new(src: &'a dyn Layouts) -> Asker<'a> {
        Asker {
            src,
            missing: Vec::new(),
        }
    }

    /// The answer, or `fallback` with the failure noted.
    fn answer<T>(&mut self, answer: Result<T, LayoutError>, fallback: T) -> T {
        answer.unwrap_or_else(|e| {
            self.missing.push(e);
            fallback
        })
    }

    /// The member at `path` of `ty`.
    pub(crate) fn m(&mut self, ty: &'static str, path: &'static str) -> Member {
        debug_assert!(
            declared(ty, Some(path)),
            "{ty}.{path} is not in OMPI_HANDLE_LAYOUT"
        );
        let m = self.src.member(ty, path).and_then(|m| {
            // A member must lie inside some record; one past 2^32 bytes
            // is a corrupt source.
            if m.offset.checked_add(m.size).is_some_and(|e| e < 1 << 32) {
                Ok(m)
            } else {
                Err(LayoutError::new(
                    ty,
                    Some(path),
                    "its offset or size is absurd",
                ))
            }
        });
        self.answer(m, NO_MEMBER)
    }

    /// The offset alone of the member at `path` of `ty`: for a flexible
    /// array member (`opal_cstring_t.string`), which has no size.
    pub(crate) fn offset(&mut self, ty: &'static str, path: &'static str) -> u64 {
        debug_assert!(
            declared(ty, Some(path)),
            "{ty}.{path} is not in OMPI_HANDLE_LAYOUT"
        );
        let offset = self.src.member_offset(ty, path);
        self.answer(offset, 0)
    }

    /// `sizeof ty`, never 0.
    pub(crate) fn size(&mut self, ty: &'static str) -> u64 {
        debug_assert!(declared(ty, None), "{ty} is not in OMPI_HANDLE_LAYOUT");
        let size = self.src.size_of(ty).and_then(|n| match n {
            0 => Err(LayoutError::new(ty, None, "its size is 0")),
            n => Ok(n),
        });
        self.answer(size, 0)
    }

    /// `name`'s size, with the members `m` read of it.
    pub(crate) fn ty<T>(&mut self, name: &'static str, m: T) -> Ty<T> {
        Ty {
            name,
            size: self.size(name),
            m,
        }
    }

    /// `name`'s size, with its members at `paths`, in that order.
    pub(crate) fn members<const N: usize>(
        &mut self,
        name: &'static str,
        paths: [&'static str; N],
    ) -> Ty<[Member; N]> {
        let m = paths.map(|path| self.m(name, path));
        self.ty(name, m)
    }

    /// The enumerators of the enumeration `ty`.
    pub(crate) fn enumeration(&mut self, ty: &'static str) -> Enum {
        debug_assert!(
            OMPI_HANDLE_LAYOUT
                .iter()
                .any(|n| n.is_enum && n.type_name == ty),
            "{ty} is not an enumeration of OMPI_HANDLE_LAYOUT"
        );
        let found = self.src.enumerators(ty).map(Enum);
        self.answer(found, Enum::default())
    }

    /// The enumerators of the member `path` of `ty`, an enumeration.
    pub(crate) fn member_enum(&mut self, ty: &'static str, path: &'static str) -> Enum {
        debug_assert!(
            OMPI_HANDLE_LAYOUT
                .iter()
                .any(|n| n.type_name == ty && n.member_enums.contains(&path)),
            "{ty}.{path} has no enumerators in OMPI_HANDLE_LAYOUT"
        );
        let found = self.src.member_enumerators(ty, path).map(Enum);
        self.answer(found, Enum::default())
    }

    /// What `ask` answers, or the first of its questions that failed: for
    /// the questions of an optional type.
    pub(crate) fn optional<T>(
        &mut self,
        ask: impl FnOnce(&mut Self) -> T,
    ) -> Result<T, LayoutError> {
        let before = self.missing.len();
        let answer = ask(self);
        match self.missing.get(before) {
            None => Ok(answer),
            Some(e) => Err(e.clone()),
        }
    }

    /// Every question that failed but those of the [`OPTIONAL`] types.
    pub(crate) fn required_missing(self) -> Vec<LayoutError> {
        self.missing
            .into_iter()
            .filter(|e| !OPTIONAL.contains(&e.type_name.as_str()))
            .filter(|e| {
                !OPTIONAL_MEMBERS
                    .iter()
                    .any(|(ty, path)| e.type_name == *ty && e.member.as_deref() == Some(*path))
            })
            .collect()
    }
}

/// Asks `layouts` every question of [`OMPI_HANDLE_LAYOUT`], ignoring the
/// answers: for writing a layout profile that serves the Open MPI handle
/// decoders ([`mpidd_read::LayoutProfile::write`]).
pub fn ompi_ask_layouts(layouts: &dyn Layouts) {
    LayoutNeed::ask_all(OMPI_HANDLE_LAYOUT, layouts);
    // A flexible array member has an offset and no size: asked as such.
    for (ty, path) in OFFSET_ONLY {
        let _ = layouts.member_offset(ty, path);
    }
}
