//! `mpidd handle` against real 4-rank Open MPI jobs run by Debian's
//! mpirun, live and from gcore cores, on two builds of Open MPI 4.1.4:
//! the reference build (scripts/build-ref-ompi.sh), read through its
//! DWARF, and Debian's own stripped packages, read through a layout
//! profile that `mpidd profile write` makes from the reference build's
//! DWARF for the build-ids of Debian's libraries.
//!
//! tests/openmpi/handles.c makes handles of every kind with known
//! properties and writes each handle's C value (a pointer) and Fortran
//! INTEGER, the addresses of its user functions, buffers and status, and
//! the offsets, extents and tags it used, to a file per rank. The
//! expectations below come from that file and from the constants of the C
//! source (names, dimensions, info keys), never from mpidd's own output.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::mpich_job::{gcore, mpidd, wait_stopped};
use common::ompi_job::{ref_ompi, OmpiBuild, OmpiJob, DEBIAN_LIBDIR};

use serde_json::{json, Value};

/// What one rank wrote to DIR/handles.RANK.
struct Written {
    /// name -> (C pointer, Fortran INTEGER)
    handles: HashMap<String, (u64, i64)>,
    /// name -> address
    addrs: HashMap<String, u64>,
    /// name -> value
    consts: HashMap<String, i64>,
    filename: String,
}

impl Written {
    fn read(dir: &Path, rank: i64) -> Written {
        let text = std::fs::read_to_string(dir.join(format!("handles.{rank}"))).unwrap();
        let mut w = Written {
            handles: HashMap::new(),
            addrs: HashMap::new(),
            consts: HashMap::new(),
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

    /// The C handle, as `--value` takes it.
    fn c(&self, name: &str) -> String {
        self.handles[name].0.to_string()
    }

    fn ptr(&self, name: &str) -> u64 {
        self.handles[name].0
    }

    fn f(&self, name: &str) -> i64 {
        self.handles[name].1
    }

    fn k(&self, name: &str) -> i64 {
        self.consts[name]
    }
}

/// How to run mpidd on one rank: the target and any profile.
struct Source {
    args: Vec<String>,
}

impl Source {
    fn cmd(&self) -> Command {
        let mut c = mpidd();
        c.arg("handle").args(&self.args);
        c
    }

    /// `mpidd handle SOURCE ARGS --json`.
    fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd().args(args).arg("--json").output().unwrap();
        assert!(
            out.status.success(),
            "mpidd handle {:?} {args:?} failed: {}",
            self.args,
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON")
    }

    fn view(&self, kind: &str, value: &str) -> Value {
        self.json(&["--kind", kind, "--value", value])
    }

    /// `mpidd handle SOURCE ARGS`, which must fail: its message.
    fn error(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "mpidd handle {args:?} should fail cleanly: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
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

/// A reference's pointer.
fn ref_ptr(r: &Value) -> u64 {
    r["c_handle"]["pointer"]
        .as_u64()
        .unwrap_or_else(|| panic!("not a pointer handle reference: {r:#}"))
}

/// Checks the common part of a user object's view.
fn check_user_object(v: &Value, w: &Written, name: &str) {
    assert_eq!(val(&v["c_handle"])["pointer"], w.ptr(name), "{v:#}");
    assert_eq!(val(&v["object_address"]), w.ptr(name));
    assert_eq!(val(&v["fortran_index"]), w.f(name), "MPI_*_c2f of {name}");
    assert_eq!(v["predefined"], false);
    assert_eq!(val(&v["state"]), "live", "{v:#}");
    assert_eq!(val(&v["freed_by_implementation"]), false);
    assert!(v["implementation"]
        .as_str()
        .unwrap()
        .starts_with("Open MPI 4.1.4"));
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

/// Everything tests/openmpi/handles.c set up on rank `rank`, read from
/// `s`. `full` adds the handles whose properties do not depend on the
/// rank.
fn check_rank(rank: i64, s: &Source, w: &Written, full: bool) {
    let world = w.ptr("world");
    let split_rank = 3 - rank;

    // The Cartesian communicator over the split.
    let v = s.view("comm", &w.c("cart"));
    check_user_object(&v, w, "cart");
    let d = &v["details"];
    assert_eq!(d["kind"], "comm");
    assert_eq!(val(&d["name"]), "mpidd_cart");
    assert_eq!(val(&d["rank"]), split_rank);
    assert_eq!(val(&d["size"]), 4);
    assert_eq!(val(&d["world_rank"]), rank);
    assert_eq!(val(&d["comm_kind"]), "intracommunicator");
    assert_eq!(val(&d["local_world_ranks"]), &json!([3, 2, 1, 0]));
    assert!(reason(&d["remote_size"]).contains("intracommunicator"));
    assert_eq!(
        val(&d["topology"]),
        &json!({"type": "cartesian", "ndims": 2, "dims": [2, 2], "periods": [true, true],
                "coords": [split_rank / 2, split_rank % 2]})
    );
    assert_eq!(ref_ptr(val(&d["errhandler"])), w.ptr("errh"));
    // Open MPI keeps no mark of MPI_Comm_free, and says so.
    assert!(reason(&v["freed_by_application"]).contains("OMPI_COMM_ISFREED"));
    // Its Fortran INTEGER and the global that holds it name the same
    // object.
    let fortran = s.json(&[
        "--kind",
        "comm",
        "--fortran",
        "--value",
        &w.f("cart").to_string(),
    ]);
    assert_eq!(fortran["object_address"], v["object_address"]);
    let by_var = s.json(&["--kind", "comm", "--var", "mpidd_cart_comm"]);
    assert_eq!(by_var["object_address"], v["object_address"]);

    // The split, whose group MPI_Comm_group handed out.
    let v = s.view("comm", &w.c("split"));
    check_user_object(&v, w, "split");
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_split");
    assert_eq!(val(&d["rank"]), split_rank);
    assert_eq!(val(&d["topology"]), &json!({"type": "none"}));
    assert_eq!(ref_ptr(val(&d["local_group"])), w.ptr("group"));

    // The distributed graph: from rank - 1 to rank + 1, unweighted.
    let v = s.view("comm", &w.c("dist"));
    check_user_object(&v, w, "dist");
    assert_eq!(val(&v["details"]["name"]), "mpidd_dist");
    assert_eq!(
        val(&v["details"]["topology"]),
        &json!({"type": "dist_graph", "sources": [(rank + 3) % 4],
                "destinations": [(rank + 1) % 4], "weighted": false})
    );

    // The intercommunicator between even and odd world ranks.
    let v = s.view("comm", &w.c("inter"));
    check_user_object(&v, w, "inter");
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
    assert_ne!(
        ref_ptr(val(&d["local_group"])),
        ref_ptr(val(&d["remote_group"]))
    );

    // The duplicate every rank but 1 freed; rank 0's pending receive
    // keeps its object alive there; on ranks 2 and 3 its memory went back
    // to malloc.
    match rank {
        0 => {
            let v = s.view("comm", &w.c("doomed"));
            check_user_object(&v, w, "doomed");
            assert_eq!(val(&v["reference_count"]), 1, "only the request holds it");
            assert_eq!(val(&v["details"]["name"]), "mpidd_doomed");
            let r = s.view("request", &w.c("doomed_req"));
            check_user_object(&r, w, "doomed_req");
            let d = &r["details"];
            assert_eq!(val(&d["request_kind"]), "receive");
            assert_eq!(val(&d["created_by"]), "MPI_Irecv");
            assert_eq!(val(&d["complete"]), false);
            assert_eq!(val(&d["persistent"]), false);
            assert_eq!(ref_ptr(val(&d["communicator"])), w.ptr("doomed"));
            assert_eq!(val(&d["communicator"])["name"], "mpidd_doomed");
            assert_eq!(val(&d["peer"]), &json!({"rank": 1}));
            assert_eq!(val(&d["tag"]), w.k("tag_doomed"));
            assert_eq!(val(&r["freed_by_application"]), false);
        }
        1 => {
            let v = s.view("comm", &w.c("doomed"));
            check_user_object(&v, w, "doomed");
            assert_eq!(val(&v["details"]["name"]), "mpidd_doomed");
        }
        _ => {
            let e = s.error(&["--kind", "comm", "--value", &w.c("doomed")]);
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
    let v = s.json(&["--kind", "request", "--var", "mpidd_persistent"]);
    check_user_object(&v, w, "preq");
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
    assert_eq!(ref_ptr(comm), world);
    assert_eq!(comm["predefined_name"], "MPI_COMM_WORLD");

    // The large synchronous send, pending at the stop.
    let v = s.view("request", &w.c("sreq"));
    check_user_object(&v, w, "sreq");
    let d = &v["details"];
    assert_eq!(val(&d["request_kind"]), "send");
    assert_eq!(val(&d["created_by"]), "MPI_Issend");
    assert_eq!(
        val(&d["complete"]),
        false,
        "its receiver receives after the stop"
    );
    assert_eq!(val(&d["peer"]), &json!({"rank": (rank + 2) % 4}));
    assert_eq!(val(&d["tag"]), w.k("tag_big"));
    assert_eq!(ref_ptr(val(&d["communicator"])), world);

    // The generalized request, completed only after the stop.
    let v = s.view("request", &w.c("greq"));
    check_user_object(&v, w, "greq");
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

    // The send that MPI_Wait completed and freed: back in ob1's free list.
    let v = s.view("request", &w.c("waited"));
    assert_eq!(val(&v["state"]), "freed", "{v:#}");
    assert_eq!(val(&v["freed_by_implementation"]), true);
    assert_eq!(v["details"]["kind"], "undecoded");

    // The completed receive's status, by address and by variable.
    let sender = (rank + 3) % 4;
    let expect_status = |st: &Value| {
        assert_eq!(st["source"], sender);
        assert_eq!(st["tag"], w.k("tag_status") + sender);
        assert_eq!(st["error"], 0);
        assert_eq!(val(&st["count_bytes"]), 3 * w.k("sizeof_int"));
        assert_eq!(val(&st["cancelled"]), false);
        assert_eq!(st["address"], w.addrs["status"]);
    };
    let st = s.json(&[
        "--kind",
        "status",
        "--address",
        &w.addrs["status"].to_string(),
    ]);
    expect_status(&st);
    assert!(reason(&st["elements"]).contains("datatype"));
    let st = s.json(&[
        "--kind",
        "status",
        "--var",
        "mpidd_done_status",
        "--datatype",
        &w.c("mpi_int"),
    ]);
    expect_status(&st);
    assert_eq!(val(&st["elements"]), 3);

    if !full {
        return;
    }

    // MPI_COMM_WORLD, and MPI_COMM_SELF by its Fortran INTEGER.
    let v = s.view("comm", &w.c("world"));
    assert_eq!(v["predefined"], true);
    assert_eq!(v["predefined_name"], "MPI_COMM_WORLD");
    assert_eq!(val(&v["fortran_index"]), w.f("world"));
    assert_eq!(val(&v["freed_by_application"]), false);
    assert_eq!(val(&v["details"]["rank"]), rank);
    assert_eq!(
        val(&v["details"]["local_world_ranks"]),
        &json!([0, 1, 2, 3])
    );
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
    let v = s.view("group", &w.c("group"));
    check_user_object(&v, w, "group");
    let d = &v["details"];
    assert_eq!(val(&d["size"]), 4);
    assert_eq!(val(&d["rank"]), split_rank);
    assert_eq!(val(&d["world_ranks"]), &json!([3, 2, 1, 0]));
    let users: Vec<u64> = val(&d["communicators"])
        .as_array()
        .unwrap()
        .iter()
        .map(ref_ptr)
        .collect();
    assert!(users.contains(&w.ptr("split")), "{users:?}");
    let v = s.view("group", &w.c("group_empty"));
    assert_eq!(v["predefined_name"], "MPI_GROUP_EMPTY");
    assert_eq!(val(&v["details"]["size"]), 0);
    assert_eq!(val(&v["details"]["rank"]), &Value::Null);

    // The graph communicator.
    let v = s.view("comm", &w.c("graph"));
    check_user_object(&v, w, "graph");
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
    let (int, dbl, chr) = (w.ptr("mpi_int"), w.ptr("mpi_double"), w.ptr("mpi_char"));
    let extent = w.k("struct_extent");
    let v = s.view("datatype", &w.c("strct"));
    check_user_object(&v, w, "strct");
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
    let args: Vec<u64> = cons["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| ref_ptr(&t["handle"]))
        .collect();
    assert_eq!(args, [chr, dbl, int]);
    assert_eq!(cons["types"][2]["handle"]["predefined_name"], "MPI_INT");
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

    let v = s.view("datatype", &w.c("pair"));
    check_user_object(&v, w, "pair");
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_pair");
    assert_eq!(val(&d["extent"]), 2 * extent);
    let cons = val(&d["constructor"]);
    assert_eq!(cons["combiner"], "MPI_COMBINER_CONTIGUOUS");
    assert_eq!(cons["integers"], json!([2]));
    assert_eq!(ref_ptr(&cons["types"][0]["handle"]), w.ptr("strct"));
    assert_eq!(
        val(&cons["types"][0]["constructor"])["combiner"],
        "MPI_COMBINER_STRUCT",
        "constructors nest down to the predefined types"
    );
    let mut holes = rec_holes(w, 0);
    holes.extend(rec_holes(w, extent));
    assert_eq!(val(&d["holes"]).as_array().unwrap(), &holes);

    // MPI_Type_vector(3, 1, 2, MPI_INT): ints at 0, 2 and 4 ints.
    let v = s.view("datatype", &w.c("vector"));
    check_user_object(&v, w, "vector");
    let d = &v["details"];
    let sz = w.k("sizeof_int");
    assert_eq!(val(&d["committed"]), false);
    assert_eq!(val(&d["extent"]), 5 * sz);
    assert_eq!(val(&d["constructor"])["integers"], json!([3, 1, 2]));
    assert_eq!(
        val(&d["holes"]),
        &json!([{"offset": sz, "length": sz}, {"offset": 3 * sz, "length": sz}])
    );

    // The freed type: its memory went back to malloc, and its Fortran slot
    // was cleared.
    let e = s.error(&["--kind", "datatype", "--value", &w.c("gone")]);
    assert!(e.contains("freed"), "{e}");
    let e = s.error(&[
        "--kind",
        "datatype",
        "--fortran",
        "--value",
        &w.f("gone").to_string(),
    ]);
    assert!(e.contains("is empty"), "{e}");

    let v = s.view("datatype", &w.c("mpi_int"));
    assert_eq!(v["predefined"], true);
    assert_eq!(v["predefined_name"], "MPI_INT");
    assert_eq!(val(&v["fortran_index"]), w.f("mpi_int"));
    assert_eq!(val(&v["details"]["size"]), sz);
    assert_eq!(
        val(&v["details"]["constructor"])["combiner"],
        "MPI_COMBINER_NAMED"
    );

    // The non-commutative user operation, and MPI_SUM.
    let v = s.view("op", &w.c("op"));
    check_user_object(&v, w, "op");
    let d = &v["details"];
    assert_eq!(val(&d["commutative"]), false);
    assert_eq!(val(&d["user_function"]), w.addrs["op_fn"]);
    assert_eq!(val(&d["language"]), "C");
    let v = s.view("op", &w.c("op_sum"));
    assert_eq!(
        (&v["predefined"], &v["predefined_name"]),
        (&json!(true), &json!("MPI_SUM"))
    );
    assert_eq!(val(&v["fortran_index"]), w.f("op_sum"));
    assert_eq!(val(&v["details"]["commutative"]), true);
    assert_eq!(val(&v["details"]["user_function"]), &Value::Null);

    // The user error handler, set on the Cartesian communicator, and
    // MPI_ERRORS_ARE_FATAL.
    let v = s.view("errhandler", &w.c("errh"));
    check_user_object(&v, w, "errh");
    let d = &v["details"];
    assert_eq!(val(&d["object_kind"]), "communicator");
    assert_eq!(val(&d["language"]), "C");
    assert_eq!(val(&d["user_function"]), w.addrs["errh_fn"]);
    let attached: Vec<u64> = val(&d["attached_to"])
        .as_array()
        .unwrap()
        .iter()
        .map(ref_ptr)
        .collect();
    assert_eq!(attached, [w.ptr("cart")]);
    let v = s.view("errhandler", &w.c("errors_are_fatal"));
    assert_eq!(v["predefined_name"], "MPI_ERRORS_ARE_FATAL");
    assert_eq!(val(&v["fortran_index"]), w.f("errors_are_fatal"));

    // The info object with three keys, in the order they were set.
    let v = s.view("info", &w.c("info"));
    check_user_object(&v, w, "info");
    assert_eq!(val(&v["freed_by_application"]), false, "Open MPI's i_freed");
    assert_eq!(
        val(&v["details"]["entries"]),
        &json!([{"key": "mpidd_alpha", "value": "1"}, {"key": "mpidd_beta", "value": "two"},
                {"key": "mpidd_gamma", "value": "3.0"}])
    );

    // The window over the 64-int buffer.
    let v = s.view("win", &w.c("win"));
    check_user_object(&v, w, "win");
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_win");
    assert_eq!(val(&d["base"]), w.addrs["winbuf"]);
    assert_eq!(val(&d["size"]), w.k("winbuf_bytes"));
    assert_eq!(val(&d["disp_unit"]), sz);
    assert_eq!(val(&d["flavor"]), "MPI_WIN_FLAVOR_CREATE");
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
    let v = s.view("file", &w.c("file"));
    check_user_object(&v, w, "file");
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
    let by_fortran = s.json(&[
        "--kind",
        "file",
        "--fortran",
        "--value",
        &w.f("file").to_string(),
    ]);
    assert_eq!(by_fortran["c_handle"], v["c_handle"]);
    let by_var = s.json(&["--kind", "file", "--var", "mpidd_file"]);
    assert_eq!(by_var["c_handle"], v["c_handle"]);
    let world_files: Vec<u64> = val(&s.view("comm", &w.c("world"))["details"]["files"])
        .as_array()
        .unwrap()
        .iter()
        .map(ref_ptr)
        .collect();
    assert_eq!(
        world_files,
        [w.ptr("file")],
        "the files opened over MPI_COMM_WORLD"
    );

    // The text form says the same, and says what is not available.
    let out = s
        .cmd()
        .args(["--kind", "comm", "--value", &w.c("cart")])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "  name: mpidd_cart\n",
        "    periods: [true, true]\n",
        "freed by application: not available: Open MPI 4.1 defines a freed flag",
    ] {
        assert!(text.contains(line), "{line:?} is not in:\n{text}");
    }

    // Wrong kind, null handles, a pointer that is no object.
    let e = s.error(&["--kind", "group", "--value", &w.c("cart")]);
    assert!(
        e.contains("not point at one") && e.contains("ompi_communicator_t"),
        "{e}"
    );
    let e = s.error(&["--kind", "comm", "--value", &w.c("comm_null")]);
    assert!(e.contains("MPI_COMM_NULL"), "{e}");
    let e = s.error(&["--kind", "request", "--value", &w.c("request_null")]);
    assert!(e.contains("MPI_REQUEST_NULL"), "{e}");
    let e = s.error(&["--kind", "comm", "--value", "16"]);
    assert!(e.contains("cannot be read"), "{e}");
}

/// Checks every rank, live (each stopped and let go) and then from a gcore
/// core of each.
fn check_job(job: &OmpiJob, extra: &[String]) {
    let written: Vec<Written> = (0..4).map(|r| Written::read(&job.dir, r)).collect();
    for rank in 0..4 {
        let pid = job.pid(rank);
        let mut args = vec!["--pid".to_string(), pid.to_string()];
        args.extend_from_slice(extra);
        check_rank(
            rank,
            &Source { args },
            &written[rank as usize],
            rank == 0 || rank == 3,
        );
        wait_stopped(pid);
    }
    for rank in 0..4 {
        let core = gcore(&job.dir, job.pid(rank));
        let mut args = vec!["--core".to_string(), core.display().to_string()];
        args.extend_from_slice(extra);
        check_rank(
            rank,
            &Source { args },
            &written[rank as usize],
            rank == 0 || rank == 3,
        );
    }
}

#[test]
fn every_handle_kind_on_the_reference_build_live_and_from_gcore_cores() {
    let job = OmpiJob::start_on(OmpiBuild::Reference, "ompi-handles-ref", "handles");
    check_job(&job, &[]);
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The file an object name resolves to: the name a process's mappings
/// give the library, and so the one a profile is chosen by.
fn real(path: PathBuf) -> PathBuf {
    std::fs::canonicalize(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A profile of the handle decoders' layouts for Debian's libraries,
/// from the reference build's DWARF, checked against that DWARF.
fn debian_profile(dir: &Path) -> PathBuf {
    let ref_lib = ref_ompi().join("lib");
    let debian = Path::new(DEBIAN_LIBDIR);
    let objects = [
        (ref_lib.join("libmpi.so.40"), debian.join("libmpi.so.40")),
        (
            ref_lib.join("libopen-pal.so.40"),
            debian.join("libopen-pal.so.40"),
        ),
        (
            ref_lib.join("openmpi/mca_io_ompio.so"),
            debian.join("openmpi/lib/openmpi3/mca_io_ompio.so"),
        ),
    ];
    let profile = dir.join("ompi-handles.json");
    let mut write = mpidd();
    write.args(["profile", "write", "--decoder", "ompi-handles"]);
    for (debug, stripped) in &objects {
        write.arg("--object").arg(real(debug.clone()));
        write.arg("--for-build").arg(real(stripped.clone()));
    }
    write
        .args(["--implementation", "Open MPI", "--impl-version", "4.1.4"])
        .args([
            "--build",
            "Debian 12 openmpi 4.1.4-3, from the reference build",
        ])
        .arg("--output")
        .arg(&profile);
    let (ok, _, err) = run(&mut write);
    assert!(ok, "profile write: {err}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    assert!(
        json["layouts"]["mca_common_ompio_data_t"]["members"]["ompio_fh.f_atomicity"].is_object(),
        "the profile holds OMPIO's answer too"
    );
    let mut check = mpidd();
    check.args(["profile", "check"]).arg(&profile);
    for (debug, _) in &objects {
        check.arg("--object").arg(real(debug.clone()));
    }
    let (ok, out, err) = run(&mut check);
    assert!(ok, "profile check: {out}{err}");
    profile
}

#[test]
fn every_handle_kind_on_debians_stripped_build_through_a_profile() {
    let job = OmpiJob::start_on(OmpiBuild::Debian, "ompi-handles-debian", "handles");
    let profile = debian_profile(&job.dir);

    // The profile mpidd ships for this build, with no --profile.
    check_job(&job, &[]);
    // And one written here from the reference DWARF (the path a user
    // takes for a build mpidd has no profile for).
    check_job(
        &job,
        &["--profile".to_string(), profile.display().to_string()],
    );
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
