//! What tests/mpich/handles.c set up on each rank of an MPICH job, checked
//! against what the rank wrote down (`handle_checks`), for the devices
//! whose requests keep different things: shared by the tests that run
//! the program on the reference builds, Debian's and a site's
//! (`mpich_handles.rs`, `debian13_mpich.rs`).

use serde_json::{json, Value};

use super::handle_checks::{
    check_cart, check_derived_types, check_file, check_generalized_request, check_graph,
    check_group, check_info, check_inter, check_large_send, check_mpi_int, check_ops,
    check_persistent_receive, check_split, check_status, check_text_form, check_user_errhandler,
    check_user_object, check_window, check_world, reason, ref_int, val, Source, Written,
};

/// The MPICH device a job runs on, where what MPICH keeps differs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Device {
    /// ch3:nemesis: a receive's request holds its communicator.
    Ch3,
    /// ch4:ucx, a direct-netmod build (docs/ch4.md): every point-to-point
    /// operation goes to UCX, and `MPIDI_UCX_recv`
    /// (src/mpid/ch4/netmod/ucx/ucx_recv.h) neither sets the request's
    /// `comm` (`MPIR_Request_create_from_pool` leaves it NULL) nor takes a
    /// reference on the communicator; the peer and tag of a receive are
    /// then only in UCX's request.
    Ch4Ucx,
    /// ch4:ucx where UCX's request is described too (Debian's own MPICH
    /// and UCX, through the profile mpidd ships for them): a receive's
    /// peer, tag and context id come from UCX's tag.
    Ch4UcxWithUcxTypes,
    /// ch4:ucx from MPICH 4.1, UCX's request described too (Debian 13's
    /// MPICH 4.2.1): `MPIDI_UCX_recv` sets a receive's `comm` and takes a
    /// reference on it, as CH3 does, so a receive keeps its communicator.
    Ch4UcxKeepsComm,
}

/// Everything tests/mpich/handles.c set up on rank `rank`, read from
/// `source` (`--pid P` or `--core C`). `full` adds the handles whose
/// properties do not depend on the rank.
pub fn check_rank(rank: i64, source: &Source, w: &Written<i64>, full: bool, device: Device) {
    let user_object = |v: &Value, name: &str| check_user_object(v, w, name);

    // The Cartesian communicator over the split (split rank 3 - rank).
    let v = check_cart(rank, source, w, &user_object);
    let d = &v["details"];
    assert!(
        val(&d["attributes"])
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["internal"] == true),
        "the topology is an attribute MPICH keeps for itself"
    );
    assert_eq!(val(&d["requests"]), &json!([]));

    // The split, whose group MPI_Comm_group made.
    check_split(rank, source, w, &user_object);

    // The intercommunicator between even and odd world ranks.
    check_inter(rank, source, w, &user_object);

    // The duplicate every rank but 1 freed; under CH3 (and ch4:ucx from
    // 4.1) rank 0's pending receive keeps its object alive there. Under ch4:ucx the receive holds
    // no reference (see `Device::Ch4Ucx`), so MPI_Comm_free on rank 0
    // dropped the last one and MPICH returned the object to its allocator
    // with the receive still pending in UCX.
    let v = source.view("comm", w.c("doomed"));
    match rank {
        0 if !matches!(device, Device::Ch3 | Device::Ch4UcxKeepsComm) => {
            assert_eq!(val(&v["state"]), "freed", "{v:#}");
            assert_eq!(val(&v["freed_by_implementation"]), true);
            assert_eq!(val(&v["freed_by_application"]), true);
            assert_eq!(v["details"]["kind"], "undecoded");
            let r = source.view("request", w.c("doomed_req"));
            check_user_object(&r, w, "doomed_req");
            let d = &r["details"];
            assert_eq!(val(&d["request_kind"]), "receive");
            assert_eq!(val(&d["complete"]), false);
            assert_eq!(val(&d["persistent"]), false);
            if device == Device::Ch4UcxWithUcxTypes {
                assert_eq!(val(&d["peer"]), &json!({"rank": 1}));
                assert_eq!(val(&d["tag"]), w.k("tag_doomed"));
                let why = reason(&d["communicator"]);
                assert!(
                    why.contains("UCX's tag") && why.contains("freed"),
                    "the freed communicator, by the context id in UCX's tag: {d:#}"
                );
            } else {
                for field in ["communicator", "peer", "tag"] {
                    assert!(
                        reason(&d[field]).contains("UCX"),
                        "{field} of a receive posted to UCX: {d:#}"
                    );
                }
            }
        }
        0 => {
            check_user_object(&v, w, "doomed");
            assert!(reason(&v["freed_by_application"]).contains("MPI_Comm_free"));
            assert_eq!(val(&v["reference_count"]), 1, "only the request holds it");
            let d = &v["details"];
            assert_eq!(val(&d["name"]), "mpidd_doomed");
            let requests: Vec<i64> = val(&d["requests"])
                .as_array()
                .unwrap()
                .iter()
                .map(ref_int)
                .collect();
            assert_eq!(requests, [w.c("doomed_req")]);
            let r = source.view("request", w.c("doomed_req"));
            let d = &r["details"];
            assert_eq!(val(&d["request_kind"]), "receive");
            assert_eq!(val(&d["complete"]), false);
            assert_eq!(val(&d["persistent"]), false);
            assert_eq!(ref_int(val(&d["communicator"])), w.c("doomed"));
            assert_eq!(val(&d["peer"]), &json!({"rank": 1}));
            assert_eq!(val(&d["tag"]), w.k("tag_doomed"));
        }
        1 => {
            check_user_object(&v, w, "doomed");
            assert_eq!(val(&v["details"]["requests"]), &json!([]));
        }
        _ => {
            assert_eq!(val(&v["state"]), "freed", "{v:#}");
            assert_eq!(val(&v["freed_by_implementation"]), true);
            assert_eq!(val(&v["freed_by_application"]), true);
            assert_eq!(v["details"]["kind"], "undecoded");
        }
    }

    // The started persistent receive from rank + 1.
    check_persistent_receive(rank, source, w, &user_object);

    // The large send, pending at the stop.
    check_large_send(rank, source, w, &user_object);

    // The generalized request, completed only after the stop.
    check_generalized_request(source, w, &user_object);

    // The completed receive's status, by address and by variable.
    check_status(rank, source, w);

    if !full {
        return;
    }

    // MPI_COMM_WORLD.
    check_world(rank, source, w);

    // The group of the split.
    check_group(rank, source, w, &user_object);

    // The graph communicator.
    check_graph(rank, source, w, &user_object);

    // The struct with holes, its contiguous pair, the uncommitted vector,
    // the freed type and a predefined one.
    check_derived_types(source, w, &user_object);
    let v = source.view("datatype", w.c("gone"));
    assert_eq!(val(&v["state"]), "freed");
    assert_eq!(val(&v["freed_by_implementation"]), true);

    check_mpi_int(source, w);

    // The non-commutative user operation, and MPI_SUM.
    check_ops(source, w, &user_object);

    // The user error handler, set on the Cartesian communicator.
    check_user_errhandler(source, w, &user_object);

    // The info object with three keys, in the order they were set.
    check_info(source, w, &user_object);

    // The window over the 64-int buffer.
    let v = check_window(source, w, &user_object);
    let d = &v["details"];
    let comm = source.view("comm", ref_int(val(&d["communicator"])));
    assert_eq!(
        val(&comm["details"]["local_world_ranks"]),
        &json!([0, 1, 2, 3]),
        "MPICH's duplicate of MPI_COMM_WORLD"
    );

    // The file, by pointer, by its Fortran INTEGER and by variable.
    let v = source.json(&["--kind", "file", "--value", &w.value("file")]);
    assert_eq!(val(&v["c_handle"])["pointer"], w.c("file"));
    assert_eq!(val(&v["fortran_index"]), w.f("file"));
    check_file(source, w, &v);
    let comm = source.view("comm", ref_int(val(&v["details"]["communicator"])));
    assert_eq!(val(&comm["details"]["size"]), 4);

    // The text form says the same, and says what is not available.
    check_text_form(source, w, "MPICH keeps no mark of MPI_Comm_free");

    // Wrong kind, null handle, out of range.
    let e = source.error(&["--kind", "group", "--value", &w.c("cart").to_string()]);
    assert!(
        e.contains("not an MPI_Group handle") && e.contains("MPIR_COMM"),
        "{e}"
    );
    let e = source.error(&["--kind", "comm", "--value", &w.c("comm_null").to_string()]);
    assert!(e.contains("MPI_COMM_NULL"), "{e}");
    // The last index of the direct communicator array's handle bits
    // (mpich_handle_bits: storage 2, kind 1, index 0x3ffffff).
    let e = source.error(&["--kind", "comm", "--value", "0x87ffffff"]);
    assert!(e.contains("out of range"), "{e}");
}
