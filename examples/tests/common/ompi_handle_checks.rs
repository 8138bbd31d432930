//! What tests/openmpi/handles.c set up on a rank, checked against
//! `mpidd handle`'s views of it on any Open MPI build (4.1's, 5.0's).
//! The expectations come from what the program wrote and from the
//! constants of its C source, never from mpidd's own output.

use serde_json::{json, Value};

use super::handle_checks::{
    self, check_cart, check_derived_types, check_file, check_generalized_request, check_graph,
    check_group, check_info, check_inter, check_large_send, check_mpi_int, check_ops,
    check_persistent_receive, check_split, check_status, check_text_form, check_user_errhandler,
    check_window, check_world, reason, ref_ptr, val, Source, Written,
};

/// Checks the common part of a user object's view: what every
/// implementation's says, and that its handle is its object's address.
fn check_user_object(version: &str, v: &Value, w: &Written<u64>, name: &str) {
    handle_checks::check_user_object(v, w, name);
    assert_eq!(val(&v["object_address"]), w.c(name));
    assert!(v["implementation"]
        .as_str()
        .unwrap()
        .starts_with(&format!("Open MPI {version}")));
}

/// Everything tests/openmpi/handles.c set up on rank `rank`, read from
/// `s`. `full` adds the handles whose properties do not depend on the
/// rank.
pub fn check_rank(version: &str, rank: i64, s: &Source, w: &Written<u64>, full: bool) {
    let world = w.c("world");
    let user_object = |v: &Value, name: &str| check_user_object(version, v, w, name);

    // The Cartesian communicator over the split.
    let v = check_cart(rank, s, w, &user_object);
    // Open MPI keeps no mark of MPI_Comm_free, and says so.
    assert!(reason(&v["freed_by_application"]).contains("OMPI_COMM_ISFREED"));

    // The split, whose group MPI_Comm_group handed out.
    check_split(rank, s, w, &user_object);

    // The distributed graph: from rank - 1 to rank + 1, unweighted.
    let v = s.view("comm", w.c("dist"));
    check_user_object(version, &v, w, "dist");
    assert_eq!(val(&v["details"]["name"]), "mpidd_dist");
    assert_eq!(
        val(&v["details"]["topology"]),
        &json!({"type": "dist_graph", "sources": [(rank + 3) % 4],
                "destinations": [(rank + 1) % 4], "weighted": false})
    );

    // The intercommunicator between even and odd world ranks.
    let v = check_inter(rank, s, w, &user_object);
    let d = &v["details"];
    assert_ne!(
        ref_ptr(val(&d["local_group"])),
        ref_ptr(val(&d["remote_group"]))
    );

    // The duplicate every rank but 1 freed; rank 0's pending receive
    // keeps its object alive there; on ranks 2 and 3 its memory went back
    // to malloc.
    match rank {
        0 => {
            let v = s.view("comm", w.c("doomed"));
            check_user_object(version, &v, w, "doomed");
            assert_eq!(val(&v["reference_count"]), 1, "only the request holds it");
            assert_eq!(val(&v["details"]["name"]), "mpidd_doomed");
            let r = s.view("request", w.c("doomed_req"));
            check_user_object(version, &r, w, "doomed_req");
            let d = &r["details"];
            assert_eq!(val(&d["request_kind"]), "receive");
            assert_eq!(val(&d["created_by"]), "MPI_Irecv");
            assert_eq!(val(&d["complete"]), false);
            assert_eq!(val(&d["persistent"]), false);
            assert_eq!(ref_ptr(val(&d["communicator"])), w.c("doomed"));
            assert_eq!(val(&d["communicator"])["name"], "mpidd_doomed");
            assert_eq!(val(&d["peer"]), &json!({"rank": 1}));
            assert_eq!(val(&d["tag"]), w.k("tag_doomed"));
            assert_eq!(val(&r["freed_by_application"]), false);
        }
        1 => {
            let v = s.view("comm", w.c("doomed"));
            check_user_object(version, &v, w, "doomed");
            assert_eq!(val(&v["details"]["name"]), "mpidd_doomed");
        }
        _ => {
            let e = s.error(&["--kind", "comm", "--value", &w.value("doomed")]);
            assert!(
                e.contains("does not point at one") && e.contains("freed"),
                "{e}"
            );
            let e = s.error(&[
                "--kind",
                "comm",
                "--fortran",
                "--value",
                &w.f("doomed").to_string(),
            ]);
            assert!(e.contains("is empty"), "its Fortran slot was cleared: {e}");
        }
    }

    // The started persistent receive from rank + 1, through its global.
    check_persistent_receive(rank, s, w, &user_object);

    // The large synchronous send, pending at the stop.
    let v = check_large_send(rank, s, w, &user_object);
    assert_eq!(val(&v["details"]["created_by"]), "MPI_Issend");

    // The generalized request, completed only after the stop.
    check_generalized_request(s, w, &user_object);

    // The send that MPI_Wait completed and freed: back in ob1's free list.
    let v = s.view("request", w.c("waited"));
    assert_eq!(val(&v["state"]), "freed", "{v:#}");
    assert_eq!(val(&v["freed_by_implementation"]), true);
    assert_eq!(v["details"]["kind"], "undecoded");

    // The completed receive's status, by address and by variable.
    check_status(rank, s, w);

    if !full {
        return;
    }

    // MPI_COMM_WORLD, and MPI_COMM_SELF by its Fortran INTEGER.
    let v = check_world(rank, s, w);
    assert_eq!(val(&v["fortran_index"]), w.f("world"));
    let v = s.json(&[
        "--kind",
        "comm",
        "--fortran",
        "--value",
        &w.f("self").to_string(),
    ]);
    assert_eq!(v["predefined_name"], "MPI_COMM_SELF");
    assert_eq!(val(&v["details"]["local_world_ranks"]), &json!([rank]));

    // The group of the split, and MPI_GROUP_EMPTY.
    check_group(rank, s, w, &user_object);
    let v = s.view("group", w.c("group_empty"));
    assert_eq!(v["predefined_name"], "MPI_GROUP_EMPTY");
    assert_eq!(val(&v["details"]["size"]), 0);
    assert_eq!(val(&v["details"]["rank"]), &Value::Null);

    // The graph communicator.
    check_graph(rank, s, w, &user_object);

    // The struct with holes, its contiguous pair, the uncommitted vector,
    // the freed type and a predefined one.
    check_derived_types(s, w, &user_object);

    // The freed type: its memory went back to malloc, and its Fortran slot
    // was cleared.
    let e = s.error(&["--kind", "datatype", "--value", &w.value("gone")]);
    assert!(e.contains("freed"), "{e}");
    let e = s.error(&[
        "--kind",
        "datatype",
        "--fortran",
        "--value",
        &w.f("gone").to_string(),
    ]);
    assert!(e.contains("is empty"), "{e}");

    let v = check_mpi_int(s, w);
    assert_eq!(val(&v["fortran_index"]), w.f("mpi_int"));

    // The non-commutative user operation, and MPI_SUM.
    let v = check_ops(s, w, &user_object);
    assert_eq!(val(&v["fortran_index"]), w.f("op_sum"));
    assert_eq!(val(&v["details"]["user_function"]), &Value::Null);

    // The user error handler, set on the Cartesian communicator, and
    // MPI_ERRORS_ARE_FATAL.
    check_user_errhandler(s, w, &user_object);
    let v = s.view("errhandler", w.c("errors_are_fatal"));
    assert_eq!(v["predefined_name"], "MPI_ERRORS_ARE_FATAL");
    assert_eq!(val(&v["fortran_index"]), w.f("errors_are_fatal"));

    // The info object with three keys, in the order they were set.
    let v = check_info(s, w, &user_object);
    assert_eq!(val(&v["freed_by_application"]), false, "Open MPI's i_freed");

    // The window over the 64-int buffer.
    let v = check_window(s, w, &user_object);
    let d = &v["details"];
    // MPI_WIN_UNIFIED or MPI_WIN_SEPARATE, as the component chose.
    assert!(
        [0, 1].contains(&val(&d["model"]).as_i64().unwrap()),
        "{d:#}"
    );
    assert_eq!(
        val(&d["errhandler"])["predefined_name"],
        "MPI_ERRORS_ARE_FATAL"
    );

    // The file, by pointer, by its Fortran INTEGER and by variable.
    let v = s.view("file", w.c("file"));
    check_user_object(version, &v, w, "file");
    check_file(s, w, &v);
    let d = &v["details"];
    assert_eq!(ref_ptr(val(&d["communicator"])), world);
    assert_eq!(
        val(&d["atomic"]),
        false,
        "OMPIO's atomic mode is off by default"
    );
    assert_eq!(
        val(&d["errhandler"])["predefined_name"],
        "MPI_ERRORS_RETURN"
    );
    let world_files: Vec<u64> = val(&s.view("comm", w.c("world"))["details"]["files"])
        .as_array()
        .unwrap()
        .iter()
        .map(ref_ptr)
        .collect();
    assert_eq!(
        world_files,
        [w.c("file")],
        "the files opened over MPI_COMM_WORLD"
    );

    // The text form says the same, and says what is not available.
    check_text_form(s, w, "Open MPI (4.1 and 5.0) defines a freed flag");

    // Wrong kind, null handles, a pointer that is no object.
    let e = s.error(&["--kind", "group", "--value", &w.value("cart")]);
    assert!(
        e.contains("not point at one") && e.contains("ompi_communicator_t"),
        "{e}"
    );
    let e = s.error(&["--kind", "comm", "--value", &w.value("comm_null")]);
    assert!(e.contains("MPI_COMM_NULL"), "{e}");
    let e = s.error(&["--kind", "request", "--value", &w.value("request_null")]);
    assert!(e.contains("MPI_REQUEST_NULL"), "{e}");
    let e = s.error(&["--kind", "comm", "--value", "16"]);
    assert!(e.contains("cannot be read"), "{e}");
}
