//! `mpidd handle` against a real 4-rank MPICH job built with the reference
//! MPICH (scripts/build-ref-mpich.sh), live and from gcore cores.
//!
//! tests/mpich/handles.c makes handles of every kind with known properties
//! and writes each handle's C and Fortran values, the addresses of its user
//! functions, buffers and status, and the offsets and extents its compiler
//! and MPI computed, to a file per rank. The expectations below come from
//! that file and from the constants of the C source (names, dimensions,
//! tags, info keys), never from mpidd's own output.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::mpich_job::{gcore, mpidd, wait_stopped, Job};

use serde_json::{json, Value};

/// What one rank wrote to DIR/handles.RANK.
struct Written {
    /// name -> (C value, Fortran value)
    handles: HashMap<String, (i64, i64)>,
    /// name -> address
    addrs: HashMap<String, u64>,
    /// name -> value
    consts: HashMap<String, i64>,
    file: (u64, i64),
    filename: String,
}

impl Written {
    fn read(dir: &Path, rank: i64) -> Written {
        let text = std::fs::read_to_string(dir.join(format!("handles.{rank}"))).unwrap();
        let mut w = Written {
            handles: HashMap::new(),
            addrs: HashMap::new(),
            consts: HashMap::new(),
            file: (0, 0),
            filename: String::new(),
        };
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words[..] {
                ["addr", name, v] => {
                    w.addrs.insert(name.into(), v.parse().unwrap());
                }
                ["const", name, v] => {
                    w.consts.insert(name.into(), v.parse().unwrap());
                }
                ["file", c, f] => w.file = (c.parse().unwrap(), f.parse().unwrap()),
                ["filename", name] => w.filename = name.to_string(),
                [name, c, f] => {
                    w.handles
                        .insert(name.into(), (c.parse().unwrap(), f.parse().unwrap()));
                }
                _ => panic!("cannot parse {line:?}"),
            }
        }
        w
    }

    fn c(&self, name: &str) -> i64 {
        self.handles[name].0
    }

    fn k(&self, name: &str) -> i64 {
        self.consts[name]
    }
}

/// Runs `mpidd handle SOURCE ARGS --json`.
fn handle(source: &[String], args: &[&str]) -> Value {
    let out = mpidd()
        .arg("handle")
        .args(source)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpidd handle {source:?} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// `mpidd handle SOURCE ARGS`, which must fail: its message.
fn handle_error(source: &[String], args: &[&str]) -> String {
    let out = mpidd()
        .arg("handle")
        .args(source)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "mpidd handle {args:?} should fail cleanly: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn view(source: &[String], kind: &str, value: i64) -> Value {
    handle(source, &["--kind", kind, "--value", &value.to_string()])
}

/// The value of an available field.
fn val(v: &Value) -> &Value {
    assert!(v.get("value").is_some(), "expected a value, found {v:#}");
    &v["value"]
}

/// The reason of a field that is not available.
fn reason(v: &Value) -> &str {
    v["not_available"]["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("expected not available, found {v:#}"))
}

/// A reference's C handle.
fn ref_handle(r: &Value) -> i64 {
    r["c_handle"]["int"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an int handle reference: {r:#}"))
}

fn int_handle(v: &Value) -> i64 {
    val(&v["c_handle"])["int"].as_i64().unwrap()
}

/// Checks the common part of a user object's view.
fn check_user_object(v: &Value, c: i64, f: i64) {
    assert_eq!(int_handle(v), c, "{v:#}");
    assert_eq!(val(&v["fortran_index"]), f, "MPI_*_c2f");
    assert_eq!(v["predefined"], false);
    assert_eq!(val(&v["state"]), "live", "{v:#}");
    assert_eq!(val(&v["freed_by_implementation"]), false);
}

/// The holes of one `struct rec` element, from the offsets the compiler
/// chose and the extent MPI computed.
fn rec_holes(w: &Written, base: i64) -> Vec<Value> {
    let mut holes = Vec::new();
    let (c, d, i) = (w.k("rec_c"), w.k("rec_d"), w.k("rec_i"));
    let end_c = c + 1;
    if d > end_c {
        holes.push(json!({"offset": base + end_c, "length": d - end_c}));
    }
    let end_d = d + w.k("sizeof_double");
    if i > end_d {
        holes.push(json!({"offset": base + end_d, "length": i - end_d}));
    }
    let end_i = i + w.k("sizeof_int");
    let extent = w.k("struct_extent");
    if extent > end_i {
        holes.push(json!({"offset": base + end_i, "length": extent - end_i}));
    }
    holes
}

/// The MPICH device a job runs on, where what MPICH keeps differs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Device {
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
}

/// Everything tests/mpich/handles.c set up on rank `rank`, read from
/// `source` (`--pid P` or `--core C`). `full` adds the handles whose
/// properties do not depend on the rank.
fn check_rank(rank: i64, source: &[String], w: &Written, full: bool, device: Device) {
    let world = w.c("world");

    // The Cartesian communicator over the split (split rank 3 - rank).
    let v = view(source, "comm", w.c("cart"));
    check_user_object(&v, w.c("cart"), w.handles["cart"].1);
    let d = &v["details"];
    assert_eq!(d["kind"], "comm");
    assert_eq!(val(&d["name"]), "mpidd_cart");
    assert_eq!(val(&d["rank"]), 3 - rank);
    assert_eq!(val(&d["size"]), 4);
    assert_eq!(val(&d["world_rank"]), rank);
    assert_eq!(val(&d["comm_kind"]), "intracommunicator");
    assert_eq!(val(&d["local_world_ranks"]), &json!([3, 2, 1, 0]));
    assert!(reason(&d["remote_size"]).contains("intracommunicator"));
    let split_rank = 3 - rank;
    assert_eq!(
        val(&d["topology"]),
        &json!({"type": "cartesian", "ndims": 2, "dims": [2, 2], "periods": [true, true],
                "coords": [split_rank / 2, split_rank % 2]})
    );
    assert_eq!(ref_handle(val(&d["errhandler"])), w.c("errh"));
    assert!(
        val(&d["attributes"])
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["internal"] == true),
        "the topology is an attribute MPICH keeps for itself"
    );
    assert_eq!(val(&d["requests"]), &json!([]));
    // Its Fortran INTEGER and the global variable that holds it name the
    // same object.
    let fortran = handle(
        source,
        &[
            "--kind",
            "comm",
            "--fortran",
            "--value",
            &w.handles["cart"].1.to_string(),
        ],
    );
    assert_eq!(fortran["object_address"], v["object_address"]);
    let by_var = handle(source, &["--kind", "comm", "--var", "mpidd_cart_comm"]);
    assert_eq!(by_var["object_address"], v["object_address"]);

    // The split, whose group MPI_Comm_group made.
    let v = view(source, "comm", w.c("split"));
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_split");
    assert_eq!(val(&d["rank"]), 3 - rank);
    assert_eq!(val(&d["topology"]), &json!({"type": "none"}));
    assert_eq!(ref_handle(val(&d["local_group"])), w.c("group"));

    // The intercommunicator between even and odd world ranks.
    let v = view(source, "comm", w.c("inter"));
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_inter");
    assert_eq!(val(&d["comm_kind"]), "intercommunicator");
    assert_eq!(
        (val(&d["size"]), val(&d["remote_size"])),
        (&json!(2), &json!(2))
    );
    assert_eq!(val(&d["rank"]), rank / 2);
    let (mine, theirs) = if rank % 2 == 0 {
        (json!([0, 2]), json!([1, 3]))
    } else {
        (json!([1, 3]), json!([0, 2]))
    };
    assert_eq!(val(&d["local_world_ranks"]), &mine);
    assert_eq!(val(&d["remote_world_ranks"]), &theirs);

    // The duplicate every rank but 1 freed; under CH3 rank 0's pending
    // receive keeps its object alive there. Under ch4:ucx the receive holds
    // no reference (see `Device::Ch4Ucx`), so MPI_Comm_free on rank 0
    // dropped the last one and MPICH returned the object to its allocator
    // with the receive still pending in UCX.
    let v = view(source, "comm", w.c("doomed"));
    match rank {
        0 if device != Device::Ch3 => {
            assert_eq!(val(&v["state"]), "freed", "{v:#}");
            assert_eq!(val(&v["freed_by_implementation"]), true);
            assert_eq!(val(&v["freed_by_application"]), true);
            assert_eq!(v["details"]["kind"], "undecoded");
            let r = view(source, "request", w.c("doomed_req"));
            check_user_object(&r, w.c("doomed_req"), w.handles["doomed_req"].1);
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
            check_user_object(&v, w.c("doomed"), w.handles["doomed"].1);
            assert!(reason(&v["freed_by_application"]).contains("MPI_Comm_free"));
            assert_eq!(val(&v["reference_count"]), 1, "only the request holds it");
            let d = &v["details"];
            assert_eq!(val(&d["name"]), "mpidd_doomed");
            let requests: Vec<i64> = val(&d["requests"])
                .as_array()
                .unwrap()
                .iter()
                .map(ref_handle)
                .collect();
            assert_eq!(requests, [w.c("doomed_req")]);
            let r = view(source, "request", w.c("doomed_req"));
            let d = &r["details"];
            assert_eq!(val(&d["request_kind"]), "receive");
            assert_eq!(val(&d["complete"]), false);
            assert_eq!(val(&d["persistent"]), false);
            assert_eq!(ref_handle(val(&d["communicator"])), w.c("doomed"));
            assert_eq!(val(&d["peer"]), &json!({"rank": 1}));
            assert_eq!(val(&d["tag"]), w.k("tag_doomed"));
        }
        1 => {
            check_user_object(&v, w.c("doomed"), w.handles["doomed"].1);
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
    let v = handle(source, &["--kind", "request", "--var", "mpidd_persistent"]);
    check_user_object(&v, w.c("preq"), w.handles["preq"].1);
    let d = &v["details"];
    assert_eq!(val(&d["request_kind"]), "persistent_receive");
    assert_eq!(val(&d["persistent"]), true);
    assert_eq!(val(&d["active"]), true);
    assert_eq!(
        val(&d["complete"]),
        false,
        "its sender sends after the stop"
    );
    assert_eq!(val(&d["created_by"]), "MPI_Recv_init");
    assert_eq!(val(&d["peer"]), &json!({"rank": (rank + 1) % 4}));
    assert_eq!(val(&d["tag"]), w.k("tag_persist"));
    let comm = val(&d["communicator"]);
    assert_eq!(ref_handle(comm), world);
    assert_eq!(comm["predefined_name"], "MPI_COMM_WORLD");

    // The large send, pending at the stop.
    let v = view(source, "request", w.c("sreq"));
    check_user_object(&v, w.c("sreq"), w.handles["sreq"].1);
    let d = &v["details"];
    assert_eq!(val(&d["request_kind"]), "send");
    assert_eq!(
        val(&d["complete"]),
        false,
        "its receiver receives after the stop"
    );
    assert_eq!(val(&d["peer"]), &json!({"rank": (rank + 2) % 4}));
    assert_eq!(val(&d["tag"]), w.k("tag_big"));
    assert_eq!(ref_handle(val(&d["communicator"])), world);

    // The generalized request, completed only after the stop.
    let v = view(source, "request", w.c("greq"));
    check_user_object(&v, w.c("greq"), w.handles["greq"].1);
    let d = &v["details"];
    assert_eq!(val(&d["request_kind"]), "generalized");
    assert_eq!(val(&d["complete"]), false);
    assert_eq!(val(&d["created_by"]), "MPI_Grequest_start");
    let g = val(&d["generalized"]);
    assert_eq!(g["query_fn"], w.addrs["query_fn"]);
    assert_eq!(g["free_fn"], w.addrs["free_fn"]);
    assert_eq!(g["cancel_fn"], w.addrs["cancel_fn"]);
    assert_eq!(g["extra_state"], w.addrs["greq_state"]);
    assert_eq!(val(&g["language"]), "C");

    // The completed receive's status, by address and by variable.
    let sender = (rank + 3) % 4;
    let expect_status = |s: &Value| {
        assert_eq!(s["source"], sender);
        assert_eq!(s["tag"], w.k("tag_status") + sender);
        assert_eq!(s["error"], 0);
        assert_eq!(val(&s["count_bytes"]), 3 * w.k("sizeof_int"));
        assert_eq!(val(&s["cancelled"]), false);
        assert_eq!(s["address"], w.addrs["status"]);
    };
    let s = handle(
        source,
        &[
            "--kind",
            "status",
            "--address",
            &w.addrs["status"].to_string(),
        ],
    );
    expect_status(&s);
    assert!(reason(&s["elements"]).contains("datatype"));
    let s = handle(
        source,
        &[
            "--kind",
            "status",
            "--var",
            "mpidd_done_status",
            "--datatype",
            &w.c("mpi_int").to_string(),
        ],
    );
    expect_status(&s);
    assert_eq!(val(&s["elements"]), 3);

    if !full {
        return;
    }

    // MPI_COMM_WORLD.
    let v = view(source, "comm", world);
    assert_eq!(v["predefined"], true);
    assert_eq!(v["predefined_name"], "MPI_COMM_WORLD");
    assert_eq!(val(&v["freed_by_application"]), false);
    assert_eq!(val(&v["details"]["rank"]), rank);
    assert_eq!(
        val(&v["details"]["local_world_ranks"]),
        &json!([0, 1, 2, 3])
    );

    // The group of the split.
    let v = view(source, "group", w.c("group"));
    check_user_object(&v, w.c("group"), w.handles["group"].1);
    let d = &v["details"];
    assert_eq!(val(&d["size"]), 4);
    assert_eq!(val(&d["rank"]), 3 - rank);
    assert_eq!(val(&d["world_ranks"]), &json!([3, 2, 1, 0]));
    let users: Vec<i64> = val(&d["communicators"])
        .as_array()
        .unwrap()
        .iter()
        .map(ref_handle)
        .collect();
    assert!(users.contains(&w.c("split")), "{users:?}");

    // The graph communicator.
    let v = view(source, "comm", w.c("graph"));
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_graph");
    assert_eq!(val(&d["rank"]), rank);
    assert_eq!(
        val(&d["topology"]),
        &json!({"type": "graph", "nnodes": 4, "index": [2, 4, 6, 8],
                "edges": [1, 3, 0, 2, 1, 3, 2, 0]})
    );

    // The struct with holes, its contiguous pair, the uncommitted vector,
    // the freed type and a predefined one.
    let (int, dbl, chr) = (w.c("mpi_int"), w.c("mpi_double"), w.c("mpi_char"));
    let extent = w.k("struct_extent");
    let v = view(source, "datatype", w.c("strct"));
    check_user_object(&v, w.c("strct"), w.handles["strct"].1);
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_struct");
    assert_eq!(
        val(&d["size"]),
        1 + w.k("sizeof_double") + w.k("sizeof_int")
    );
    assert_eq!(val(&d["extent"]), extent);
    assert_eq!(val(&d["lb"]), w.k("struct_lb"));
    assert_eq!(val(&d["committed"]), true);
    let cons = val(&d["constructor"]);
    assert_eq!(cons["combiner"], "MPI_COMBINER_STRUCT");
    assert_eq!(cons["integers"], json!([3, 1, 1, 1]));
    assert_eq!(
        cons["addresses"],
        json!([w.k("rec_c"), w.k("rec_d"), w.k("rec_i")])
    );
    let args: Vec<i64> = cons["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| ref_handle(&t["handle"]))
        .collect();
    assert_eq!(args, [chr, dbl, int]);
    let entries: Vec<(i64, String, i64)> = val(&d["type_map"])["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["offset"].as_i64().unwrap(),
                e["datatype"].as_str().unwrap().to_string(),
                e["count"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            (w.k("rec_c"), "MPI_CHAR".to_string(), 1),
            (w.k("rec_d"), "MPI_DOUBLE".to_string(), 1),
            (w.k("rec_i"), "MPI_INT".to_string(), 1)
        ]
    );
    assert_eq!(val(&d["holes"]).as_array().unwrap(), &rec_holes(w, 0));

    let v = view(source, "datatype", w.c("pair"));
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_pair");
    assert_eq!(val(&d["extent"]), 2 * extent);
    let cons = val(&d["constructor"]);
    assert_eq!(cons["combiner"], "MPI_COMBINER_CONTIGUOUS");
    assert_eq!(cons["integers"], json!([2]));
    assert_eq!(ref_handle(&cons["types"][0]["handle"]), w.c("strct"));
    assert_eq!(
        val(&cons["types"][0]["constructor"])["combiner"],
        "MPI_COMBINER_STRUCT",
        "constructors nest down to the predefined types"
    );
    let mut holes = rec_holes(w, 0);
    holes.extend(rec_holes(w, extent));
    assert_eq!(val(&d["holes"]).as_array().unwrap(), &holes);

    // MPI_Type_vector(3, 1, 2, MPI_INT): ints at 0, 2 and 4 ints.
    let v = view(source, "datatype", w.c("vector"));
    let d = &v["details"];
    let sz = w.k("sizeof_int");
    assert_eq!(val(&d["committed"]), false);
    assert_eq!(val(&d["extent"]), 5 * sz);
    assert_eq!(val(&d["constructor"])["integers"], json!([3, 1, 2]));
    assert_eq!(
        val(&d["holes"]),
        &json!([{"offset": sz, "length": sz}, {"offset": 3 * sz, "length": sz}])
    );

    let v = view(source, "datatype", w.c("gone"));
    assert_eq!(val(&v["state"]), "freed");
    assert_eq!(val(&v["freed_by_implementation"]), true);

    let v = view(source, "datatype", int);
    assert_eq!(v["predefined"], true);
    assert_eq!(v["predefined_name"], "MPI_INT");
    assert_eq!(val(&v["details"]["size"]), sz);
    assert_eq!(
        val(&v["details"]["constructor"])["combiner"],
        "MPI_COMBINER_NAMED"
    );

    // The non-commutative user operation, and MPI_SUM.
    let v = view(source, "op", w.c("op"));
    check_user_object(&v, w.c("op"), w.handles["op"].1);
    let d = &v["details"];
    assert_eq!(val(&d["commutative"]), false);
    assert_eq!(val(&d["user_function"]), w.addrs["op_fn"]);
    assert_eq!(val(&d["language"]), "C");
    let v = view(source, "op", w.c("op_sum"));
    assert_eq!(
        (&v["predefined"], &v["predefined_name"]),
        (&json!(true), &json!("MPI_SUM"))
    );
    assert_eq!(val(&v["details"]["commutative"]), true);

    // The user error handler, set on the Cartesian communicator.
    let v = view(source, "errhandler", w.c("errh"));
    check_user_object(&v, w.c("errh"), w.handles["errh"].1);
    let d = &v["details"];
    assert_eq!(val(&d["object_kind"]), "communicator");
    assert_eq!(val(&d["language"]), "C");
    assert_eq!(val(&d["user_function"]), w.addrs["errh_fn"]);
    let attached: Vec<i64> = val(&d["attached_to"])
        .as_array()
        .unwrap()
        .iter()
        .map(ref_handle)
        .collect();
    assert_eq!(attached, [w.c("cart")]);

    // The info object with three keys, in the order they were set.
    let v = view(source, "info", w.c("info"));
    check_user_object(&v, w.c("info"), w.handles["info"].1);
    assert_eq!(
        val(&v["details"]["entries"]),
        &json!([{"key": "mpidd_alpha", "value": "1"}, {"key": "mpidd_beta", "value": "two"},
                {"key": "mpidd_gamma", "value": "3.0"}])
    );

    // The window over the 64-int buffer.
    let v = view(source, "win", w.c("win"));
    check_user_object(&v, w.c("win"), w.handles["win"].1);
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_win");
    assert_eq!(val(&d["base"]), w.addrs["winbuf"]);
    assert_eq!(val(&d["size"]), w.k("winbuf_bytes"));
    assert_eq!(val(&d["disp_unit"]), sz);
    assert_eq!(val(&d["flavor"]), "MPI_WIN_FLAVOR_CREATE");
    let comm = view(source, "comm", ref_handle(val(&d["communicator"])));
    assert_eq!(
        val(&comm["details"]["local_world_ranks"]),
        &json!([0, 1, 2, 3]),
        "MPICH's duplicate of MPI_COMM_WORLD"
    );

    // The file, by pointer, by its Fortran INTEGER and by variable.
    let v = handle(
        source,
        &["--kind", "file", "--value", &w.file.0.to_string()],
    );
    assert_eq!(val(&v["c_handle"])["pointer"], w.file.0);
    assert_eq!(val(&v["fortran_index"]), w.file.1);
    let d = &v["details"];
    assert_eq!(val(&d["filename"]), w.filename.as_str());
    assert_eq!(val(&d["access_mode"])["bits"], w.k("amode"));
    assert_eq!(
        val(&d["access_mode"])["names"],
        json!(["MPI_MODE_CREATE", "MPI_MODE_RDWR"])
    );
    assert!(
        val(&d["info"])
            .as_array()
            .unwrap()
            .contains(&json!({"key": "cb_buffer_size", "value": "65536"})),
        "the hint given to MPI_File_open: {d:#}"
    );
    let comm = view(source, "comm", ref_handle(val(&d["communicator"])));
    assert_eq!(val(&comm["details"]["size"]), 4);
    let by_fortran = handle(
        source,
        &[
            "--kind",
            "file",
            "--fortran",
            "--value",
            &w.file.1.to_string(),
        ],
    );
    assert_eq!(by_fortran["c_handle"], v["c_handle"]);
    let by_var = handle(source, &["--kind", "file", "--var", "mpidd_file"]);
    assert_eq!(by_var["c_handle"], v["c_handle"]);

    // The text form says the same, and says what is not available.
    let out = mpidd()
        .arg("handle")
        .args(source)
        .args(["--kind", "comm", "--value", &w.c("cart").to_string()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "  name: mpidd_cart\n",
        "    periods: [true, true]\n",
        "freed by application: not available: MPICH keeps no mark of MPI_Comm_free",
    ] {
        assert!(text.contains(line), "{line:?} is not in:\n{text}");
    }

    // Wrong kind, null handle, out of range.
    let e = handle_error(
        source,
        &["--kind", "group", "--value", &w.c("cart").to_string()],
    );
    assert!(
        e.contains("not an MPI_Group handle") && e.contains("MPIR_COMM"),
        "{e}"
    );
    let e = handle_error(
        source,
        &["--kind", "comm", "--value", &w.c("comm_null").to_string()],
    );
    assert!(e.contains("MPI_COMM_NULL"), "{e}");
    // The last index of the direct communicator array's handle bits
    // (mpich_handle_bits: storage 2, kind 1, index 0x3ffffff).
    let e = handle_error(source, &["--kind", "comm", "--value", "0x87ffffff"]);
    assert!(e.contains("out of range"), "{e}");
}

/// Every rank of `job` (tests/mpich/handles.c, started with its directory
/// as argument), live and then from its gcore core, checked against what
/// the rank wrote down; the job must then complete.
fn every_handle_kind(job: Job, device: Device) {
    let written: Vec<Written> = (0..4).map(|r| Written::read(&job.dir, r)).collect();
    for rank in 0..4 {
        let pid = job.pid(rank);
        let source = vec!["--pid".to_string(), pid.to_string()];
        let full = rank == 0 || rank == 3;
        check_rank(rank, &source, &written[rank as usize], full, device);
        wait_stopped(pid);
    }
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        let source = vec!["--core".to_string(), core.display().to_string()];
        let full = rank == 0 || rank == 3;
        check_rank(rank, &source, &written[rank as usize], full, device);
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn every_handle_kind_live_and_from_gcore_cores() {
    // handles.c writes what it made to the directory it is given.
    let job = Job::start_program("mpich-handles", "handles", &["{dir}"], &[]);
    every_handle_kind(job, Device::Ch3);
}

/// The same program and expectations on the reference MPICH with the CH4
/// device (`scripts/build-ref-mpich.sh ch4`), where requests keep their
/// peer and tag elsewhere (see [`Device::Ch4Ucx`]).
#[test]
fn every_handle_kind_on_ch4_live_and_from_gcore_cores() {
    let prefix = common::mpich_job::ref_mpich_ch4();
    let job = Job::start_on(
        &prefix,
        "mpich-handles-ch4",
        "handles",
        &[],
        &["{dir}"],
        &[] as &[(&str, &str)],
    );
    every_handle_kind(job, Device::Ch4Ucx);
}

/// The same program and expectations on Debian's own MPICH (`libmpich12`,
/// ch4:ucx, stripped, no debugger support), compiled by `mpicc.mpich`
/// without `-g`: the layouts and the hidden pools' addresses come from the
/// profile mpidd ships for that build (docs/stock-mpich.md), which also
/// describes UCX's request (see [`Device::Ch4UcxWithUcxTypes`]).
#[test]
fn every_handle_kind_on_debian_stock_mpich_live_and_from_gcore_cores() {
    let job = Job::start_with(
        &common::mpich_job::stock_mpich(),
        "mpich-handles-stock",
        "handles",
        &[],
        &["{dir}"],
        &[] as &[(&str, &str)],
    );
    every_handle_kind(job, Device::Ch4UcxWithUcxTypes);
}
