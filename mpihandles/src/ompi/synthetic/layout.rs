//! A made-up layout of every type the Open MPI handle decoders read, for
//! any pointer width: each member in a slot of its own, laid out from the
//! question list alone (the decoders' answer structs are not used), with
//! the enumerations as Open MPI 4.1 declares them.

use std::collections::BTreeMap;

use mpidd_read::LayoutTable;

use crate::ompi::questions::OMPI_HANDLE_LAYOUT;
use crate::ompi::synthetic::process::SyntheticOmpi;

/// The members that hold a pointer (or a `size_t`), as opposed to an int.
const WORDS: &[&str] = &[
    "obj_class",
    "cls_name",
    "cls_parent",
    "addr",
    "opal_list_next",
    "ht_table",
    "ht_capacity",
    "value",
    "ie_value",
    "c_local_group",
    "c_remote_group",
    "c_keyhash",
    "c_topo",
    "error_handler",
    "grp_proc_pointers",
    "super.size",
    "super.true_lb",
    "super.true_ub",
    "super.lb",
    "super.ub",
    "d_keyhash",
    "args",
    "i",
    "a",
    "d",
    "req_complete",
    "req_mpi_object",
    "_ucount",
    "req_comm",
    "greq_query",
    "greq_free",
    "greq_cancel",
    "greq_state",
    "o_func.c_fn",
    "eh_comm_fn",
    "eh_file_fn",
    "eh_win_fn",
    "eh_fort_fn",
    "super.s_info",
    "w_group",
    "w_keyhash",
    "f_comm",
    "f_filename",
    "f_io_selected_data",
    "mtc.cart",
    "dims",
    "periods",
    "coords",
    "index",
    "edges",
    "in",
    "out",
    "av_value",
];

/// Open MPI 5.0's own types and members, which the synthetic process
/// (4.1's shape) does not have.
const ONLY_5_0_TYPES: &[&str] = &["opal_cstring_t"];
const ONLY_5_0_MEMBERS: &[&str] = &["c_index"];

/// The members that are character arrays, and how long each is here.
const CHARS: u64 = 24;
const NAMES: &[&str] = &[
    "c_name",
    "name",
    "o_name",
    "eh_name",
    "w_name",
    "ie_key",
    "pmlm_version.mca_component_name",
    "f_io_selected_component.v2_0_0.io_version.mca_component_name",
];

/// Types whose members follow another type's (their C struct begins with
/// it): (type, the type it begins with).
const DERIVED: &[(&str, &str)] = &[
    ("opal_info_entry_t", "opal_list_item_t"),
    ("mca_pml_base_request_t", "ompi_request_t"),
    ("mca_pml_base_send_request_t", "mca_pml_base_request_t"),
    ("ompi_grequest_t", "ompi_request_t"),
];

/// Types that are no object (no `opal_object_t` header first).
const PLAIN: &[&str] = &[
    "opal_object_t",
    "opal_class_t",
    "opal_hash_element_t",
    "ompi_datatype_args_t",
    "ompi_status_public_t",
    "mca_pml_base_component_t",
    "mca_common_ompio_data_t",
];

/// Members that are another type, by (type, member, that type).
const NESTED: &[(&str, &str, &str)] = &[
    ("opal_list_t", "opal_list_sentinel", "opal_list_item_t"),
    ("opal_info_t", "super", "opal_list_t"),
    ("ompi_info_t", "super", "opal_info_t"),
    ("ompi_request_t", "req_status", "ompi_status_public_t"),
];

/// The enumerations, as Open MPI 4.1 declares them.
const ENUMS: &[(&str, &[&str])] = &[
    (
        "ompi_request_type_t",
        &[
            "OMPI_REQUEST_PML",
            "OMPI_REQUEST_IO",
            "OMPI_REQUEST_GEN",
            "OMPI_REQUEST_WIN",
            "OMPI_REQUEST_COLL",
            "OMPI_REQUEST_NULL",
            "OMPI_REQUEST_NOOP",
            "OMPI_REQUEST_COMM",
            "OMPI_REQUEST_MAX",
        ],
    ),
    (
        "ompi_request_state_t",
        &[
            "OMPI_REQUEST_INVALID",
            "OMPI_REQUEST_INACTIVE",
            "OMPI_REQUEST_ACTIVE",
            "OMPI_REQUEST_CANCELLED",
        ],
    ),
    (
        "mca_pml_base_request_type_t",
        &[
            "MCA_PML_REQUEST_NULL",
            "MCA_PML_REQUEST_SEND",
            "MCA_PML_REQUEST_RECV",
            "MCA_PML_REQUEST_IPROBE",
            "MCA_PML_REQUEST_PROBE",
            "MCA_PML_REQUEST_IMPROBE",
            "MCA_PML_REQUEST_MPROBE",
        ],
    ),
    (
        "mca_pml_base_send_mode_t",
        &[
            "MCA_PML_BASE_SEND_SYNCHRONOUS",
            "MCA_PML_BASE_SEND_COMPLETE",
            "MCA_PML_BASE_SEND_BUFFERED",
            "MCA_PML_BASE_SEND_READY",
            "MCA_PML_BASE_SEND_STANDARD",
            "MCA_PML_BASE_SEND_SIZE",
        ],
    ),
    (
        "ompi_errhandler_type_t",
        &[
            "OMPI_ERRHANDLER_TYPE_PREDEFINED",
            "OMPI_ERRHANDLER_TYPE_COMM",
            "OMPI_ERRHANDLER_TYPE_WIN",
            "OMPI_ERRHANDLER_TYPE_FILE",
        ],
    ),
    (
        "ompi_errhandler_lang_t",
        &[
            "OMPI_ERRHANDLER_LANG_C",
            "OMPI_ERRHANDLER_LANG_CXX",
            "OMPI_ERRHANDLER_LANG_FORTRAN",
        ],
    ),
    (
        "ompi_op_t.op_type",
        &[
            "OMPI_OP_NULL",
            "OMPI_OP_MAX",
            "OMPI_OP_MIN",
            "OMPI_OP_SUM",
            "OMPI_OP_NUM_OF_TYPES",
        ],
    ),
    (
        "attribute_key_value_t.av_set_from",
        &[
            "OMPI_ATTRIBUTE_C",
            "OMPI_ATTRIBUTE_INT",
            "OMPI_ATTRIBUTE_FINT",
            "OMPI_ATTRIBUTE_AINT",
        ],
    ),
];

impl SyntheticOmpi {
    /// A made-up layout of every type the handle decoders read, for
    /// pointers of `word` bytes: each member in a slot of its own, 8 bytes
    /// for an int or a pointer, 24 for a name.
    pub fn layouts(word: u64) -> LayoutTable {
        let mut t = LayoutTable::default();
        let mut sizes: BTreeMap<&str, u64> = BTreeMap::new();
        // A type is laid out after those it is made of.
        // Open MPI 4.1's shape: none of 5.0's own questions is answered.
        let mut pending: Vec<&mpidd_read::LayoutNeed> = OMPI_HANDLE_LAYOUT
            .iter()
            .filter(|n| !n.is_enum && !ONLY_5_0_TYPES.contains(&n.type_name))
            .collect();
        while !pending.is_empty() {
            let before = pending.len();
            pending.retain(|need| {
                let ty = need.type_name;
                let parent = DERIVED.iter().find(|(t, _)| *t == ty).map(|(_, p)| *p);
                let nested: Vec<&str> = NESTED
                    .iter()
                    .filter(|(t, _, _)| *t == ty)
                    .map(|(_, _, n)| *n)
                    .collect();
                if parent.is_some_and(|p| !sizes.contains_key(p))
                    || nested.iter().any(|n| !sizes.contains_key(n))
                {
                    return true;
                }
                let mut at = match parent {
                    Some(p) => sizes[p],
                    None if PLAIN.contains(&ty) => 0,
                    None => 16,
                };
                if ty == "opal_object_t" {
                    t.add_member(ty, "obj_class", 0, word);
                    t.add_member(ty, "obj_reference_count", 8, 4);
                    t.add_type(ty, 16);
                    sizes.insert(ty, 16);
                    return false;
                }
                for &path in need
                    .members
                    .iter()
                    .filter(|&&p| !ONLY_5_0_MEMBERS.contains(&p))
                {
                    if let Some((_, _, inner)) =
                        NESTED.iter().find(|(t, m, _)| *t == ty && *m == path)
                    {
                        let size = sizes[inner];
                        // A type that begins with another has it at 0.
                        let offset = if path == "super" { 0 } else { at };
                        t.add_member(ty, path, offset, size);
                        at = at.max(offset + size);
                        continue;
                    }
                    if NAMES.contains(&path) {
                        t.add_array(ty, path, at, CHARS, CHARS);
                        at += CHARS;
                    } else {
                        let width = if WORDS.contains(&path) { word } else { 4 };
                        t.add_member(ty, path, at, width);
                        at += 8;
                    }
                }
                let size = at.max(8).div_ceil(8) * 8;
                t.add_type(ty, size);
                sizes.insert(ty, size);
                false
            });
            assert!(pending.len() < before, "the synthetic layout has a loop");
        }
        // Each class gives its objects' size last, as Open MPI's do; the
        // decoders do not ask it, but the check on the process reads it.
        let class = sizes.get("opal_class_t").copied().unwrap_or(16);
        t.add_member("opal_class_t", "cls_sizeof", class, word);
        t.add_type("opal_class_t", class + 8);
        for (name, list) in ENUMS {
            let values: Vec<(&str, i128)> = list.iter().zip(0..).map(|(n, v)| (*n, v)).collect();
            t.add_enum(name, &values);
            if let Some((ty, path)) = name.split_once('.') {
                t.add_member_enum(ty, path, name);
            }
        }
        t
    }
}
