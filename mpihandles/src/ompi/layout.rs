//! The answers the Open MPI handle decoders read with: every question of
//! [`OMPI_HANDLE_LAYOUT`](crate::OMPI_HANDLE_LAYOUT) answered once, when
//! the resolver is made, into an [`OmpiLayout`] of the types, members and
//! enumerations each object family needs.

use mpidd_read::{LayoutError, Layouts, Member};

use crate::ompi::questions::{Asker, Enum, Ty};

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
    /// Open MPI 5.0's `opal_cstring_t.string`: 5.0's info entries point to
    /// such strings for both key and value, 4.1's hold the key and point
    /// to the value's text.
    pub(crate) cstring_text: Option<u64>,
    /// The `opal_list_t` inside an `opal_info_t`.
    pub(crate) info_list: Member,
    pub(crate) proc_vpid: Member,
}

#[derive(Clone, Debug)]
pub(crate) struct CommL {
    pub(crate) name: Member,
    pub(crate) contextid: Member,
    /// Open MPI 5.0's `c_index`, its local context id (5.0's
    /// `c_contextid` is an extended id of two 64-bit words).
    pub(crate) index: Option<Member>,
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

impl OmpiLayout {
    /// Every answer, or every required question `src` cannot answer.
    pub(crate) fn resolve(src: &dyn Layouts) -> Result<OmpiLayout, Vec<LayoutError>> {
        let mut a = Asker::new(src);
        let l = Self::ask(&mut a);
        let required = a.required_missing();
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
            cstring_text: a
                .optional(|a| {
                    let _ = a.size("opal_cstring_t");
                    a.offset("opal_cstring_t", "string")
                })
                .ok(),
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
            index: a.optional(|a| a.m(c, "c_index")).ok(),
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
        let cart = a.members(
            "mca_topo_base_comm_cart_2_2_0_t",
            ["ndims", "dims", "periods", "coords"],
        );
        let graph = a.members(
            "mca_topo_base_comm_graph_2_2_0_t",
            ["nnodes", "index", "edges"],
        );
        let dist = a.members(
            "mca_topo_base_comm_dist_graph_2_2_0_t",
            ["in", "out", "indegree", "outdegree", "weighted"],
        );
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
        let ompio = a.optional(|a| {
            let o = "mca_common_ompio_data_t";
            let atomicity = a.m(o, "ompio_fh.f_atomicity");
            let _ = a.size(o);
            OmpioL { atomicity }
        });
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

/// The questions of [`OMPI_HANDLE_LAYOUT`](crate::OMPI_HANDLE_LAYOUT)
/// the decoders cannot do without that `layouts` cannot answer, each
/// named; empty when the handle decoders can work with `layouts` (OMPIO's
/// questions may stay unanswered).
pub fn ompi_missing_layouts(layouts: &dyn Layouts) -> Vec<LayoutError> {
    OmpiLayout::resolve(layouts).err().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ompi::questions::{ompi_ask_layouts, OMPI_HANDLE_LAYOUT};
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
