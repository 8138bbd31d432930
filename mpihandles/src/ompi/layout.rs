//! Every layout question the Open MPI handle decoders ask, declared in one
//! list ([`OMPI_HANDLE_LAYOUT`]) and answered once, when the resolver is
//! made, into [`OmpiLayout`].
//!
//! The answers come from a [`Layouts`]: the library's DWARF (a debug build,
//! or installed debug info), or a layout profile written from a debug
//! build for a distribution's stripped library. A profile holds exactly the
//! answers to this list, so nothing is asked outside it (a test checks
//! that the questions asked are the ones declared).
//!
//! The types of `libmpi.so.40` and `libopen-pal.so.40` are required: a
//! source that lacks one cannot be used. OMPIO's own (`mca_io_ompio.so`,
//! loaded only once a file is opened) are optional: without them only a
//! file's atomic mode is not shown.
//!
//! The values Open MPI keeps only as preprocessor constants (flag bits, the
//! combiners of `mpi.h`'s anonymous enumeration, `MPI_UNDEFINED`) are in no
//! debug info; they are named here, with where they come from.

use mpidd_read::{LayoutError, LayoutNeed, Layouts, Member};

/// `OMPI_COMM_INTER` (`communicator.h`): an intercommunicator.
pub(crate) const COMM_INTER: u64 = 0x1;
/// `OMPI_COMM_INTRINSIC`: a predefined communicator.
pub(crate) const COMM_INTRINSIC: u64 = 0x4;
/// `OMPI_COMM_ISFREED`: defined beside the others, but Open MPI 4.1 never
/// sets it.
pub(crate) const COMM_ISFREED: u64 = 0x10;
/// `OMPI_COMM_CART`, `OMPI_COMM_GRAPH` and `OMPI_COMM_DIST_GRAPH`: the
/// topology, also `mca_topo_base_module_t.type`.
pub(crate) const COMM_CART: u64 = 0x100;
pub(crate) const COMM_GRAPH: u64 = 0x200;
pub(crate) const COMM_DIST_GRAPH: u64 = 0x400;
/// `OMPI_GROUP_INTRINSIC` (`group_dbg.h`).
pub(crate) const GROUP_INTRINSIC: u64 = 0x2;
/// `OMPI_GROUP_SPORADIC`, `_STRIDED` and `_BITMAP`: sparse storage, with
/// no proc table.
pub(crate) const GROUP_SPARSE: u64 = 0x8 | 0x10 | 0x20;
/// `OPAL_DATATYPE_FLAG_PREDEFINED`, `_COMMITTED` and `_CONTIGUOUS`
/// (`opal_datatype.h`).
pub(crate) const DT_PREDEFINED: u64 = 0x2;
pub(crate) const DT_COMMITTED: u64 = 0x4;
pub(crate) const DT_CONTIGUOUS: u64 = 0x10;
/// `OMPI_OP_FLAGS_*` (`op.h`).
pub(crate) const OP_INTRINSIC: u64 = 0x1;
pub(crate) const OP_FORTRAN: u64 = 0x2;
pub(crate) const OP_CXX: u64 = 0x4;
pub(crate) const OP_JAVA: u64 = 0x8;
pub(crate) const OP_COMMUTE: u64 = 0x40;
/// `REQUEST_COMPLETED` (`request.h`): `req_complete` once the request is
/// complete for MPI.
pub(crate) const REQUEST_COMPLETED: u64 = 1;
/// `MPI_UNDEFINED` (`mpi.h`), also a request's Fortran index until
/// `MPI_Request_c2f` gives it one.
pub(crate) const MPI_UNDEFINED: i64 = -32766;
/// `MPI_ANY_SOURCE`, `MPI_PROC_NULL` and `MPI_ANY_TAG` (`mpi.h`).
pub(crate) const ANY_SOURCE: i64 = -1;
pub(crate) const PROC_NULL: i64 = -2;
pub(crate) const ANY_TAG: i64 = -1;
/// The combiners of `mpi.h`, an anonymous enumeration (so no debug info
/// names it) whose order Open MPI keeps for its ABI, by value.
pub(crate) const COMBINERS: [&str; 19] = [
    "MPI_COMBINER_NAMED",
    "MPI_COMBINER_DUP",
    "MPI_COMBINER_CONTIGUOUS",
    "MPI_COMBINER_VECTOR",
    "MPI_COMBINER_HVECTOR_INTEGER",
    "MPI_COMBINER_HVECTOR",
    "MPI_COMBINER_INDEXED",
    "MPI_COMBINER_HINDEXED_INTEGER",
    "MPI_COMBINER_HINDEXED",
    "MPI_COMBINER_INDEXED_BLOCK",
    "MPI_COMBINER_STRUCT_INTEGER",
    "MPI_COMBINER_STRUCT",
    "MPI_COMBINER_SUBARRAY",
    "MPI_COMBINER_DARRAY",
    "MPI_COMBINER_F90_REAL",
    "MPI_COMBINER_F90_COMPLEX",
    "MPI_COMBINER_F90_INTEGER",
    "MPI_COMBINER_RESIZED",
    "MPI_COMBINER_HINDEXED_BLOCK",
];
/// The predefined attribute keys of `mpi.h`'s anonymous enumeration
/// (`MPI_TAG_UB` = 0 ... `IMPI_HOST_COLOR` = 14): the window's are how
/// Open MPI keeps its base, size, displacement unit and memory model.
pub(crate) const KEY_WIN_BASE: i64 = 7;
pub(crate) const KEY_WIN_SIZE: i64 = 8;
pub(crate) const KEY_WIN_DISP_UNIT: i64 = 9;
pub(crate) const KEY_WIN_MODEL: i64 = 11;
pub(crate) const LAST_PREDEFINED_KEY: i64 = 14;

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
/// is loaded only once a file is opened.
const OPTIONAL: &[&str] = &["mca_common_ompio_data_t"];

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

/// `opal_object_t` and `opal_class_t`.
#[derive(Clone, Debug)]
pub(crate) struct ObjectL {
    pub(crate) class: Member,
    pub(crate) refcount: Member,
    pub(crate) cls_name: Member,
    pub(crate) cls_parent: Member,
    pub(crate) class_size: u64,
}

/// The containers of libopen-pal.
#[derive(Clone, Debug)]
pub(crate) struct OpalL {
    pub(crate) pa_size: Member,
    pub(crate) pa_addr: Member,
    pub(crate) pa_record: u64,
    pub(crate) list_sentinel: Member,
    pub(crate) item_next: Member,
    pub(crate) ht_table: Member,
    pub(crate) ht_capacity: Member,
    pub(crate) ht_record: u64,
    pub(crate) he_size: u64,
    pub(crate) he_valid: Member,
    pub(crate) he_key: Member,
    pub(crate) he_value: Member,
    pub(crate) ie_value: Member,
    pub(crate) ie_key: Member,
    pub(crate) ie_size: u64,
    /// The `opal_list_t` inside an `opal_info_t`.
    pub(crate) info_list: Member,
    pub(crate) proc_vpid: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct CommL {
    pub(crate) name: Member,
    pub(crate) contextid: Member,
    pub(crate) my_rank: Member,
    pub(crate) flags: Member,
    pub(crate) local_group: Member,
    pub(crate) remote_group: Member,
    pub(crate) keyhash: Member,
    pub(crate) topo: Member,
    pub(crate) f2c: Member,
    pub(crate) errhandler: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct GroupL {
    pub(crate) count: Member,
    pub(crate) my_rank: Member,
    pub(crate) f2c: Member,
    pub(crate) procs: Member,
    pub(crate) flags: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct DatatypeL {
    pub(crate) flags: Member,
    pub(crate) size: Member,
    pub(crate) true_lb: Member,
    pub(crate) true_ub: Member,
    pub(crate) lb: Member,
    pub(crate) ub: Member,
    pub(crate) f2c: Member,
    pub(crate) keyhash: Member,
    pub(crate) args: Member,
    pub(crate) name: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct ArgsL {
    pub(crate) create_type: Member,
    pub(crate) ci: Member,
    pub(crate) ca: Member,
    pub(crate) cd: Member,
    pub(crate) i: Member,
    pub(crate) a: Member,
    pub(crate) d: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct RequestL {
    pub(crate) req_type: Member,
    pub(crate) status: Member,
    pub(crate) complete: Member,
    pub(crate) state: Member,
    pub(crate) persistent: Member,
    pub(crate) f2c: Member,
    pub(crate) mpi_object: Member,
    pub(crate) types: Enum,
    pub(crate) states: Enum,
}

#[derive(Clone, Debug)]
pub(crate) struct StatusL {
    pub(crate) source: Member,
    pub(crate) tag: Member,
    pub(crate) error: Member,
    pub(crate) cancelled: Member,
    pub(crate) ucount: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct PmlL {
    pub(crate) free_called: Member,
    pub(crate) req_type: Member,
    pub(crate) comm: Member,
    pub(crate) peer: Member,
    pub(crate) tag: Member,
    pub(crate) send_mode: Member,
    pub(crate) types: Enum,
    pub(crate) send_modes: Enum,
    pub(crate) component_name: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct GreqL {
    pub(crate) query: Member,
    pub(crate) free: Member,
    pub(crate) cancel: Member,
    pub(crate) state: Member,
    pub(crate) funcs_are_c: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct OpL {
    pub(crate) name: Member,
    pub(crate) op_type: Member,
    pub(crate) flags: Member,
    pub(crate) f2c: Member,
    pub(crate) func: Member,
    pub(crate) types: Enum,
}

#[derive(Clone, Debug)]
pub(crate) struct ErrhandlerL {
    pub(crate) name: Member,
    pub(crate) object_type: Member,
    pub(crate) lang: Member,
    pub(crate) comm_fn: Member,
    pub(crate) file_fn: Member,
    pub(crate) win_fn: Member,
    pub(crate) fort_fn: Member,
    pub(crate) f2c: Member,
    pub(crate) types: Enum,
    pub(crate) langs: Enum,
}

#[derive(Clone, Debug)]
pub(crate) struct InfoL {
    /// The `opal_info_t` inside.
    pub(crate) opal: Member,
    pub(crate) f2c: Member,
    pub(crate) freed: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct WinL {
    pub(crate) info: Member,
    pub(crate) name: Member,
    pub(crate) group: Member,
    pub(crate) flavor: Member,
    pub(crate) keyhash: Member,
    pub(crate) f2c: Member,
    pub(crate) errhandler: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct FileL {
    pub(crate) info: Member,
    pub(crate) comm: Member,
    pub(crate) filename: Member,
    pub(crate) amode: Member,
    pub(crate) f2c: Member,
    pub(crate) errhandler: Member,
    pub(crate) component: Member,
    pub(crate) selected_data: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct TopoL {
    pub(crate) topo_type: Member,
    pub(crate) mtc: Member,
    pub(crate) cart: Ty<[Member; 4]>,
    pub(crate) graph: Ty<[Member; 3]>,
    pub(crate) dist: Ty<[Member; 5]>,
}

#[derive(Clone, Debug)]
pub(crate) struct AttrL {
    pub(crate) key: Member,
    pub(crate) value: Member,
    pub(crate) set_from: Member,
    pub(crate) set_froms: Enum,
}

/// Where OMPIO keeps the atomic mode (`mca_io_ompio.so`).
#[derive(Clone, Debug)]
pub(crate) struct OmpioL {
    pub(crate) atomicity: Member,
}

/// Every answer the decoders use.
#[derive(Clone, Debug)]
pub(crate) struct OmpiLayout {
    pub(crate) object: ObjectL,
    pub(crate) opal: OpalL,
    pub(crate) comm: Ty<CommL>,
    pub(crate) group: Ty<GroupL>,
    pub(crate) datatype: Ty<DatatypeL>,
    pub(crate) args: Ty<ArgsL>,
    pub(crate) request: Ty<RequestL>,
    pub(crate) status: Ty<StatusL>,
    pub(crate) pml: Ty<PmlL>,
    pub(crate) greq: Ty<GreqL>,
    pub(crate) op: Ty<OpL>,
    pub(crate) errhandler: Ty<ErrhandlerL>,
    pub(crate) info: Ty<InfoL>,
    pub(crate) win: Ty<WinL>,
    pub(crate) file: Ty<FileL>,
    pub(crate) topo: Ty<TopoL>,
    pub(crate) attr: Ty<AttrL>,
    /// OMPIO's, or why it is not there.
    pub(crate) ompio: Result<OmpioL, LayoutError>,
}

/// Answers the questions of [`OMPI_HANDLE_LAYOUT`], noting every one that
/// fails; asking anything outside the list is a bug the tests catch.
struct Asker<'a> {
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

impl Asker<'_> {
    fn m(&mut self, ty: &'static str, path: &'static str) -> Member {
        debug_assert!(
            declared(ty, Some(path)),
            "{ty}.{path} is not in OMPI_HANDLE_LAYOUT"
        );
        match self.src.member(ty, path) {
            // A member must lie inside some record; one past 2^32 bytes
            // is a corrupt source.
            Ok(m) if m.offset.checked_add(m.size).is_some_and(|e| e < 1 << 32) => m,
            Ok(_) => {
                self.missing.push(LayoutError::new(
                    ty,
                    Some(path),
                    "its offset or size is absurd",
                ));
                NO_MEMBER
            }
            Err(e) => {
                self.missing.push(e);
                NO_MEMBER
            }
        }
    }

    fn size(&mut self, ty: &'static str) -> u64 {
        debug_assert!(declared(ty, None), "{ty} is not in OMPI_HANDLE_LAYOUT");
        match self.src.size_of(ty) {
            Ok(0) => {
                self.missing
                    .push(LayoutError::new(ty, None, "its size is 0"));
                0
            }
            Ok(n) => n,
            Err(e) => {
                self.missing.push(e);
                0
            }
        }
    }

    fn ty<T>(&mut self, name: &'static str, m: T) -> Ty<T> {
        Ty {
            name,
            size: self.size(name),
            m,
        }
    }

    fn enumeration(&mut self, ty: &'static str) -> Enum {
        debug_assert!(
            OMPI_HANDLE_LAYOUT
                .iter()
                .any(|n| n.is_enum && n.type_name == ty),
            "{ty} is not an enumeration of OMPI_HANDLE_LAYOUT"
        );
        match self.src.enumerators(ty) {
            Ok(v) => Enum(v),
            Err(e) => {
                self.missing.push(e);
                Enum::default()
            }
        }
    }

    fn member_enum(&mut self, ty: &'static str, path: &'static str) -> Enum {
        debug_assert!(
            OMPI_HANDLE_LAYOUT
                .iter()
                .any(|n| n.type_name == ty && n.member_enums.contains(&path)),
            "{ty}.{path} has no enumerators in OMPI_HANDLE_LAYOUT"
        );
        match self.src.member_enumerators(ty, path) {
            Ok(v) => Enum(v),
            Err(e) => {
                self.missing.push(e);
                Enum::default()
            }
        }
    }
}

impl OmpiLayout {
    /// Every answer, or every required question `src` cannot answer.
    pub(crate) fn resolve(src: &dyn Layouts) -> Result<OmpiLayout, Vec<LayoutError>> {
        let mut a = Asker {
            src,
            missing: Vec::new(),
        };
        let l = Self::ask(&mut a);
        let required: Vec<LayoutError> = a
            .missing
            .into_iter()
            .filter(|e| !OPTIONAL.contains(&e.type_name.as_str()))
            .collect();
        if required.is_empty() {
            Ok(l)
        } else {
            Err(required)
        }
    }

    fn ask(a: &mut Asker<'_>) -> OmpiLayout {
        let object = ObjectL {
            class: a.m("opal_object_t", "obj_class"),
            refcount: a.m("opal_object_t", "obj_reference_count"),
            cls_name: a.m("opal_class_t", "cls_name"),
            cls_parent: a.m("opal_class_t", "cls_parent"),
            class_size: a.size("opal_class_t"),
        };
        let _ = a.size("opal_object_t");
        let opal = OpalL {
            pa_size: a.m("opal_pointer_array_t", "size"),
            pa_addr: a.m("opal_pointer_array_t", "addr"),
            pa_record: a.size("opal_pointer_array_t"),
            list_sentinel: a.m("opal_list_t", "opal_list_sentinel"),
            item_next: a.m("opal_list_item_t", "opal_list_next"),
            ht_table: a.m("opal_hash_table_t", "ht_table"),
            ht_capacity: a.m("opal_hash_table_t", "ht_capacity"),
            ht_record: a.size("opal_hash_table_t"),
            he_size: a.size("opal_hash_element_t"),
            he_valid: a.m("opal_hash_element_t", "valid"),
            he_key: a.m("opal_hash_element_t", "key.u32"),
            he_value: a.m("opal_hash_element_t", "value"),
            ie_value: a.m("opal_info_entry_t", "ie_value"),
            ie_key: a.m("opal_info_entry_t", "ie_key"),
            ie_size: a.size("opal_info_entry_t"),
            info_list: a.m("opal_info_t", "super"),
            proc_vpid: a.m("ompi_proc_t", "super.proc_name.vpid"),
        };
        let _ = a.size("opal_list_t");
        let _ = a.size("opal_list_item_t");
        let _ = a.size("ompi_proc_t");
        let _ = a.size("opal_info_t");
        let c = "ompi_communicator_t";
        let comm = CommL {
            name: a.m(c, "c_name"),
            contextid: a.m(c, "c_contextid"),
            my_rank: a.m(c, "c_my_rank"),
            flags: a.m(c, "c_flags"),
            local_group: a.m(c, "c_local_group"),
            remote_group: a.m(c, "c_remote_group"),
            keyhash: a.m(c, "c_keyhash"),
            topo: a.m(c, "c_topo"),
            f2c: a.m(c, "c_f_to_c_index"),
            errhandler: a.m(c, "error_handler"),
        };
        let comm = a.ty(c, comm);
        let g = "ompi_group_t";
        let group = GroupL {
            count: a.m(g, "grp_proc_count"),
            my_rank: a.m(g, "grp_my_rank"),
            f2c: a.m(g, "grp_f_to_c_index"),
            procs: a.m(g, "grp_proc_pointers"),
            flags: a.m(g, "grp_flags"),
        };
        let group = a.ty(g, group);
        let d = "ompi_datatype_t";
        let datatype = DatatypeL {
            flags: a.m(d, "super.flags"),
            size: a.m(d, "super.size"),
            true_lb: a.m(d, "super.true_lb"),
            true_ub: a.m(d, "super.true_ub"),
            lb: a.m(d, "super.lb"),
            ub: a.m(d, "super.ub"),
            f2c: a.m(d, "d_f_to_c_index"),
            keyhash: a.m(d, "d_keyhash"),
            args: a.m(d, "args"),
            name: a.m(d, "name"),
        };
        let datatype = a.ty(d, datatype);
        let g = "ompi_datatype_args_t";
        let args = ArgsL {
            create_type: a.m(g, "create_type"),
            ci: a.m(g, "ci"),
            ca: a.m(g, "ca"),
            cd: a.m(g, "cd"),
            i: a.m(g, "i"),
            a: a.m(g, "a"),
            d: a.m(g, "d"),
        };
        let args = a.ty(g, args);
        let r = "ompi_request_t";
        let request = RequestL {
            req_type: a.m(r, "req_type"),
            status: a.m(r, "req_status"),
            complete: a.m(r, "req_complete"),
            state: a.m(r, "req_state"),
            persistent: a.m(r, "req_persistent"),
            f2c: a.m(r, "req_f_to_c_index"),
            mpi_object: a.m(r, "req_mpi_object"),
            types: a.enumeration("ompi_request_type_t"),
            states: a.enumeration("ompi_request_state_t"),
        };
        let request = a.ty(r, request);
        let s = "ompi_status_public_t";
        let status = StatusL {
            source: a.m(s, "MPI_SOURCE"),
            tag: a.m(s, "MPI_TAG"),
            error: a.m(s, "MPI_ERROR"),
            cancelled: a.m(s, "_cancelled"),
            ucount: a.m(s, "_ucount"),
        };
        let status = a.ty(s, status);
        let p = "mca_pml_base_request_t";
        let pml = PmlL {
            free_called: a.m(p, "req_free_called"),
            req_type: a.m(p, "req_type"),
            comm: a.m(p, "req_comm"),
            peer: a.m(p, "req_peer"),
            tag: a.m(p, "req_tag"),
            send_mode: a.m("mca_pml_base_send_request_t", "req_send_mode"),
            types: a.enumeration("mca_pml_base_request_type_t"),
            send_modes: a.enumeration("mca_pml_base_send_mode_t"),
            component_name: a.m(
                "mca_pml_base_component_t",
                "pmlm_version.mca_component_name",
            ),
        };
        let _ = a.size("mca_pml_base_component_t");
        let _ = a.size("mca_pml_base_send_request_t");
        let pml = a.ty(p, pml);
        let q = "ompi_grequest_t";
        let greq = GreqL {
            query: a.m(q, "greq_query"),
            free: a.m(q, "greq_free"),
            cancel: a.m(q, "greq_cancel"),
            state: a.m(q, "greq_state"),
            funcs_are_c: a.m(q, "greq_funcs_are_c"),
        };
        let greq = a.ty(q, greq);
        let o = "ompi_op_t";
        let op = OpL {
            name: a.m(o, "o_name"),
            op_type: a.m(o, "op_type"),
            flags: a.m(o, "o_flags"),
            f2c: a.m(o, "o_f_to_c_index"),
            func: a.m(o, "o_func.c_fn"),
            types: a.member_enum(o, "op_type"),
        };
        let op = a.ty(o, op);
        let e = "ompi_errhandler_t";
        let errhandler = ErrhandlerL {
            name: a.m(e, "eh_name"),
            object_type: a.m(e, "eh_mpi_object_type"),
            lang: a.m(e, "eh_lang"),
            comm_fn: a.m(e, "eh_comm_fn"),
            file_fn: a.m(e, "eh_file_fn"),
            win_fn: a.m(e, "eh_win_fn"),
            fort_fn: a.m(e, "eh_fort_fn"),
            f2c: a.m(e, "eh_f_to_c_index"),
            types: a.enumeration("ompi_errhandler_type_t"),
            langs: a.enumeration("ompi_errhandler_lang_t"),
        };
        let errhandler = a.ty(e, errhandler);
        let i = "ompi_info_t";
        let info = InfoL {
            opal: a.m(i, "super"),
            f2c: a.m(i, "i_f_to_c_index"),
            freed: a.m(i, "i_freed"),
        };
        let info = a.ty(i, info);
        let w = "ompi_win_t";
        let win = WinL {
            info: a.m(w, "super.s_info"),
            name: a.m(w, "w_name"),
            group: a.m(w, "w_group"),
            flavor: a.m(w, "w_flavor"),
            keyhash: a.m(w, "w_keyhash"),
            f2c: a.m(w, "w_f_to_c_index"),
            errhandler: a.m(w, "error_handler"),
        };
        let win = a.ty(w, win);
        let f = "ompi_file_t";
        let file = FileL {
            info: a.m(f, "super.s_info"),
            comm: a.m(f, "f_comm"),
            filename: a.m(f, "f_filename"),
            amode: a.m(f, "f_amode"),
            f2c: a.m(f, "f_f_to_c_index"),
            errhandler: a.m(f, "error_handler"),
            component: a.m(
                f,
                "f_io_selected_component.v2_0_0.io_version.mca_component_name",
            ),
            selected_data: a.m(f, "f_io_selected_data"),
        };
        let file = a.ty(f, file);
        let t = "mca_topo_base_module_t";
        let cart = "mca_topo_base_comm_cart_2_2_0_t";
        let cart = {
            let m = [
                a.m(cart, "ndims"),
                a.m(cart, "dims"),
                a.m(cart, "periods"),
                a.m(cart, "coords"),
            ];
            a.ty(cart, m)
        };
        let graph = "mca_topo_base_comm_graph_2_2_0_t";
        let graph = {
            let m = [
                a.m(graph, "nnodes"),
                a.m(graph, "index"),
                a.m(graph, "edges"),
            ];
            a.ty(graph, m)
        };
        let dist = "mca_topo_base_comm_dist_graph_2_2_0_t";
        let dist = {
            let m = [
                a.m(dist, "in"),
                a.m(dist, "out"),
                a.m(dist, "indegree"),
                a.m(dist, "outdegree"),
                a.m(dist, "weighted"),
            ];
            a.ty(dist, m)
        };
        let topo = TopoL {
            topo_type: a.m(t, "type"),
            mtc: a.m(t, "mtc.cart"),
            cart,
            graph,
            dist,
        };
        let topo = a.ty(t, topo);
        let k = "attribute_key_value_t";
        let attr = AttrL {
            key: a.m(k, "av_key"),
            value: a.m(k, "av_value"),
            set_from: a.m(k, "av_set_from"),
            set_froms: a.member_enum(k, "av_set_from"),
        };
        let attr = a.ty(k, attr);
        let before = a.missing.len();
        let o = "mca_common_ompio_data_t";
        let atomicity = a.m(o, "ompio_fh.f_atomicity");
        let _ = a.size(o);
        let ompio = match a.missing.get(before) {
            None => Ok(OmpioL { atomicity }),
            Some(e) => Err(e.clone()),
        };
        OmpiLayout {
            object,
            opal,
            comm,
            group,
            datatype,
            args,
            request,
            status,
            pml,
            greq,
            op,
            errhandler,
            info,
            win,
            file,
            topo,
            attr,
            ompio,
        }
    }
}

/// Asks `layouts` every question of [`OMPI_HANDLE_LAYOUT`], ignoring the
/// answers: for writing a layout profile that serves the Open MPI handle
/// decoders ([`mpidd_read::LayoutProfile::write`]).
pub fn ompi_ask_layouts(layouts: &dyn Layouts) {
    LayoutNeed::ask_all(OMPI_HANDLE_LAYOUT, layouts);
}

/// The questions of [`OMPI_HANDLE_LAYOUT`] the decoders cannot do without
/// that `layouts` cannot answer, each named; empty when the handle
/// decoders can work with `layouts` (OMPIO's questions may stay
/// unanswered).
pub fn ompi_missing_layouts(layouts: &dyn Layouts) -> Vec<LayoutError> {
    OmpiLayout::resolve(layouts).err().unwrap_or_default()
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
            Ok(vec![("X".to_string(), 0)])
        }
        fn member_enumerators(
            &self,
            type_name: &str,
            path: &str,
        ) -> Result<Vec<(String, i128)>, LayoutError> {
            self.asked
                .borrow_mut()
                .insert(format!("{type_name}.{path}::"));
            Ok(vec![("X".to_string(), 0)])
        }
        fn member_fields(
            &self,
            type_name: &str,
            path: &str,
        ) -> Result<Vec<(String, Member)>, LayoutError> {
            Err(LayoutError::new(
                type_name,
                Some(path),
                "not asked by the handle decoders",
            ))
        }
    }

    /// The decoders ask exactly the questions of OMPI_HANDLE_LAYOUT (the
    /// size of every type listed, members by path, the enumerators of
    /// enumerations and of members listed for them), so a profile written
    /// for that list answers all of it.
    #[test]
    fn the_declared_questions_are_the_ones_asked() {
        let r = Recorder::default();
        OmpiLayout::resolve(&r).expect("every question answered");
        let asked = r.asked.into_inner();
        let mut declared = BTreeSet::new();
        for need in OMPI_HANDLE_LAYOUT {
            let ty = need.type_name;
            if need.is_enum {
                declared.insert(format!("{ty}::"));
                continue;
            }
            declared.insert(ty.to_string());
            for p in need.members {
                declared.insert(format!("{ty}.{p}"));
            }
            for p in need.member_enums {
                declared.insert(format!("{ty}.{p}::"));
            }
            assert!(need.member_fields.is_empty(), "{ty}: no member lists");
        }
        let undeclared: Vec<_> = asked.difference(&declared).collect();
        assert!(
            undeclared.is_empty(),
            "asked but not declared: {undeclared:?}"
        );
        let unasked: Vec<_> = declared.difference(&asked).collect();
        assert!(unasked.is_empty(), "declared but never asked: {unasked:?}");
        // And the list's own asker asks the same.
        let again = Recorder::default();
        ompi_ask_layouts(&again);
        assert_eq!(again.asked.into_inner(), declared);
    }

    /// A layout source that knows nothing makes the decoders list every
    /// missing answer, and OMPIO's are not among the required.
    #[test]
    fn missing_layouts_are_all_named_and_ompio_is_optional() {
        let empty = mpidd_read::LayoutTable::default();
        let missing = ompi_missing_layouts(&empty);
        assert!(missing.len() > 100, "{}", missing.len());
        assert!(missing.iter().any(|e| e.type_name == "ompi_communicator_t"));
        assert!(!missing
            .iter()
            .any(|e| e.type_name == "mca_common_ompio_data_t"));
        // Everything but OMPIO's: the decoders work, without a file's
        // atomic mode.
        let full = Recorder::default();
        let (mut table, unanswered) =
            mpidd_read::LayoutTable::record(&full, &|l| ompi_ask_layouts(l));
        assert!(unanswered.is_empty());
        let l = OmpiLayout::resolve(&table).expect("a full table serves");
        assert!(l.ompio.is_ok());
        let json = serde_json::to_value(&table).unwrap();
        let mut json = json.as_object().unwrap().clone();
        json.remove("mca_common_ompio_data_t");
        table = serde_json::from_value(serde_json::Value::Object(json)).unwrap();
        assert!(ompi_missing_layouts(&table).is_empty());
        let l = OmpiLayout::resolve(&table).expect("OMPIO's are optional");
        assert_eq!(l.ompio.unwrap_err().type_name, "mca_common_ompio_data_t");
    }
}
