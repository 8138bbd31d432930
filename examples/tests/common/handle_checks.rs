//! Helpers shared by the handle tests (`mpich_handles.rs`,
//! `ompi_handles.rs`): what tests/mpich/handles.c and
//! tests/openmpi/handles.c wrote down for each rank, `mpidd handle` on one
//! rank, the fields of its JSON views, every rank checked live and from
//! its core, and the checks of the handles both programs make alike.
//! Every expectation comes from what the programs wrote and from the
//! constants of their C sources, never from mpidd's own output.

use std::collections::HashMap;
use std::fmt::{Debug, Display};
use std::path::Path;
use std::process::Command;
use std::str::FromStr;

use serde_json::{json, Value};

use super::mpich_job::{gcore_each, mpidd, wait_stopped};

/// A handle's C value, as handles.c prints it and the views give it:
/// MPICH's int handle (`i64`) or Open MPI's pointer (`u64`).
pub trait CValue: Copy + PartialEq + Debug + Display + FromStr<Err: Debug> {
    /// The value of a view's `c_handle` (`{"int": N}` or `{"pointer": P}`).
    fn of_c_handle(c: &Value) -> Self;
}

impl CValue for i64 {
    fn of_c_handle(c: &Value) -> i64 {
        c["int"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an int handle: {c:#}"))
    }
}

impl CValue for u64 {
    fn of_c_handle(c: &Value) -> u64 {
        c["pointer"]
            .as_u64()
            .unwrap_or_else(|| panic!("not a pointer handle: {c:#}"))
    }
}

/// A reference's C value.
pub fn ref_c<C: CValue>(r: &Value) -> C {
    C::of_c_handle(&r["c_handle"])
}

/// A reference's int handle (MPICH's).
pub fn ref_int(r: &Value) -> i64 {
    ref_c(r)
}

/// A reference's pointer (Open MPI's, ROMIO's files).
pub fn ref_ptr(r: &Value) -> u64 {
    ref_c(r)
}

/// The value of an available field.
pub fn val(v: &Value) -> &Value {
    assert!(v.get("value").is_some(), "expected a value, found {v:#}");
    &v["value"]
}

/// The reason of a field that is not available.
pub fn reason(v: &Value) -> &str {
    v["not_available"]["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("expected not available, found {v:#}"))
}

/// What one rank wrote to DIR/handles.RANK.
pub struct Written<C> {
    /// name -> (C value, Fortran INTEGER); MPICH's `file` is ROMIO's
    /// pointer.
    pub handles: HashMap<String, (C, i64)>,
    /// name -> address
    pub addrs: HashMap<String, u64>,
    /// name -> value
    pub consts: HashMap<String, i64>,
    pub filename: String,
}

impl<C: CValue> Written<C> {
    pub fn read(dir: &Path, rank: i64) -> Written<C> {
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

    /// The C value of the handle `name`.
    pub fn c(&self, name: &str) -> C {
        self.handles[name].0
    }

    /// The C value of the handle `name`, as `--value` takes it.
    pub fn value(&self, name: &str) -> String {
        self.c(name).to_string()
    }

    /// The Fortran INTEGER of the handle `name`.
    pub fn f(&self, name: &str) -> i64 {
        self.handles[name].1
    }

    pub fn k(&self, name: &str) -> i64 {
        self.consts[name]
    }
}

/// How to run `mpidd handle` on one rank: the target (`--pid P` or
/// `--core C`) and any other arguments (a profile).
pub struct Source {
    pub args: Vec<String>,
}

impl Source {
    /// `mpidd handle SOURCE`.
    pub fn cmd(&self) -> Command {
        let mut c = mpidd();
        c.arg("handle").args(&self.args);
        c
    }

    /// `mpidd handle SOURCE ARGS --json`.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd().args(args).arg("--json").output().unwrap();
        assert!(
            out.status.success(),
            "mpidd handle {:?} {args:?} failed: {}",
            self.args,
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON")
    }

    /// The view of the handle of `kind` whose C value is `value`.
    pub fn view(&self, kind: &str, value: impl Display) -> Value {
        self.json(&["--kind", kind, "--value", &value.to_string()])
    }

    /// `mpidd handle SOURCE ARGS`, which must fail: its message.
    pub fn error(&self, args: &[&str]) -> String {
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

/// Checks every rank of a 4-rank job whose ranks wrote to `dir`: live
/// (each stopped, checked, then let go to its next stop) and then from a
/// gcore core of each, with `extra` arguments to mpidd. `check` gets the
/// rank, how to read it, what it wrote, and whether to check everything
/// (ranks 0 and 3) or only what depends on the rank.
pub fn check_every_rank<C: CValue>(
    dir: &Path,
    pid: impl Fn(i64) -> i32,
    extra: &[String],
    check: impl Fn(i64, &Source, &Written<C>, bool),
) {
    let written: Vec<Written<C>> = (0..4).map(|r| Written::read(dir, r)).collect();
    let source = |target: &str, at: String| {
        let mut args = vec![target.to_string(), at];
        args.extend_from_slice(extra);
        Source { args }
    };
    for rank in 0..4 {
        let s = source("--pid", pid(rank).to_string());
        check(rank, &s, &written[rank as usize], rank == 0 || rank == 3);
        wait_stopped(pid(rank));
    }
    let rank_cores = gcore_each(dir, &[pid(0), pid(1), pid(2), pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let s = source("--core", core.display().to_string());
        check(rank, &s, &written[rank as usize], rank == 0 || rank == 3);
    }
}

/// What every user object's view says alike: its handle and Fortran
/// INTEGER as the program wrote them, not predefined, live.
pub fn check_user_object<C: CValue>(v: &Value, w: &Written<C>, name: &str) {
    assert_eq!(C::of_c_handle(val(&v["c_handle"])), w.c(name), "{v:#}");
    assert_eq!(val(&v["fortran_index"]), w.f(name), "MPI_*_c2f of {name}");
    assert_eq!(v["predefined"], false);
    assert_eq!(val(&v["state"]), "live", "{v:#}");
    assert_eq!(val(&v["freed_by_implementation"]), false);
}

/// A check of a user object's view by its name in what the program
/// wrote: [`check_user_object`] and what the implementation adds.
pub type UserObject<'a> = &'a dyn Fn(&Value, &str);

/// The holes of one `struct rec` element, from the offsets the compiler
/// chose and the extent MPI computed.
pub fn rec_holes<C>(w: &Written<C>, base: i64) -> Vec<Value> {
    let k = |name: &str| w.consts[name];
    let mut holes = Vec::new();
    let (c, d, i) = (k("rec_c"), k("rec_d"), k("rec_i"));
    let end_c = c + 1;
    if d > end_c {
        holes.push(json!({"offset": base + end_c, "length": d - end_c}));
    }
    let end_d = d + k("sizeof_double");
    if i > end_d {
        holes.push(json!({"offset": base + end_d, "length": i - end_d}));
    }
    let end_i = i + k("sizeof_int");
    let extent = k("struct_extent");
    if extent > end_i {
        holes.push(json!({"offset": base + end_i, "length": extent - end_i}));
    }
    holes
}

/// The started persistent receive from rank + 1 on `MPI_COMM_WORLD`,
/// through its global `mpidd_persistent`.
pub fn check_persistent_receive<C: CValue>(
    rank: i64,
    s: &Source,
    w: &Written<C>,
    user_object: UserObject,
) {
    let v = s.json(&["--kind", "request", "--var", "mpidd_persistent"]);
    user_object(&v, "preq");
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
    assert_eq!(ref_c::<C>(comm), w.c("world"));
    assert_eq!(comm["predefined_name"], "MPI_COMM_WORLD");
}

/// The generalized request, completed only after the stop, with the
/// functions and extra state the program gave it.
pub fn check_generalized_request<C: CValue>(s: &Source, w: &Written<C>, user_object: UserObject) {
    let v = s.view("request", w.c("greq"));
    user_object(&v, "greq");
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
}

/// The status of the receive from rank + 3 that completed, by address
/// and, with its datatype to count elements, by variable.
pub fn check_status<C: CValue>(rank: i64, s: &Source, w: &Written<C>) {
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
        &w.value("mpi_int"),
    ]);
    expect_status(&st);
    assert_eq!(val(&st["elements"]), 3);
}

/// The struct with holes (a char, a double and an int where the compiler
/// put them), its contiguous pair, and the uncommitted vector of 3 ints
/// at a stride of 2: constructors, type maps and holes.
pub fn check_derived_types<C: CValue>(s: &Source, w: &Written<C>, user_object: UserObject) {
    let (int, dbl, chr) = (w.c("mpi_int"), w.c("mpi_double"), w.c("mpi_char"));
    let extent = w.k("struct_extent");
    let v = s.view("datatype", w.c("strct"));
    user_object(&v, "strct");
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
    let args: Vec<C> = cons["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| ref_c(&t["handle"]))
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

    let v = s.view("datatype", w.c("pair"));
    user_object(&v, "pair");
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_pair");
    assert_eq!(val(&d["extent"]), 2 * extent);
    let cons = val(&d["constructor"]);
    assert_eq!(cons["combiner"], "MPI_COMBINER_CONTIGUOUS");
    assert_eq!(cons["integers"], json!([2]));
    assert_eq!(ref_c::<C>(&cons["types"][0]["handle"]), w.c("strct"));
    assert_eq!(
        val(&cons["types"][0]["constructor"])["combiner"],
        "MPI_COMBINER_STRUCT",
        "constructors nest down to the predefined types"
    );
    let mut holes = rec_holes(w, 0);
    holes.extend(rec_holes(w, extent));
    assert_eq!(val(&d["holes"]).as_array().unwrap(), &holes);

    // MPI_Type_vector(3, 1, 2, MPI_INT): ints at 0, 2 and 4 ints.
    let v = s.view("datatype", w.c("vector"));
    user_object(&v, "vector");
    let d = &v["details"];
    let sz = w.k("sizeof_int");
    assert_eq!(val(&d["committed"]), false);
    assert_eq!(val(&d["extent"]), 5 * sz);
    assert_eq!(val(&d["constructor"])["integers"], json!([3, 1, 2]));
    assert_eq!(
        val(&d["holes"]),
        &json!([{"offset": sz, "length": sz}, {"offset": 3 * sz, "length": sz}])
    );
}

/// The non-commutative user operation, and `MPI_SUM`; their views, for
/// what the implementation adds.
pub fn check_ops<C: CValue>(s: &Source, w: &Written<C>, user_object: UserObject) -> Value {
    let v = s.view("op", w.c("op"));
    user_object(&v, "op");
    let d = &v["details"];
    assert_eq!(val(&d["commutative"]), false);
    assert_eq!(val(&d["user_function"]), w.addrs["op_fn"]);
    assert_eq!(val(&d["language"]), "C");
    let v = s.view("op", w.c("op_sum"));
    assert_eq!(
        (&v["predefined"], &v["predefined_name"]),
        (&json!(true), &json!("MPI_SUM"))
    );
    assert_eq!(val(&v["details"]["commutative"]), true);
    v
}

/// The user error handler, set on the Cartesian communicator alone.
pub fn check_user_errhandler<C: CValue>(s: &Source, w: &Written<C>, user_object: UserObject) {
    let v = s.view("errhandler", w.c("errh"));
    user_object(&v, "errh");
    let d = &v["details"];
    assert_eq!(val(&d["object_kind"]), "communicator");
    assert_eq!(val(&d["language"]), "C");
    assert_eq!(val(&d["user_function"]), w.addrs["errh_fn"]);
    let attached: Vec<C> = val(&d["attached_to"])
        .as_array()
        .unwrap()
        .iter()
        .map(ref_c)
        .collect();
    assert_eq!(attached, [w.c("cart")]);
}

/// The info object with three keys, in the order they were set; its view,
/// for what the implementation adds.
pub fn check_info<C: CValue>(s: &Source, w: &Written<C>, user_object: UserObject) -> Value {
    let v = s.view("info", w.c("info"));
    user_object(&v, "info");
    assert_eq!(
        val(&v["details"]["entries"]),
        &json!([{"key": "mpidd_alpha", "value": "1"}, {"key": "mpidd_beta", "value": "two"},
                {"key": "mpidd_gamma", "value": "3.0"}])
    );
    v
}

/// The Cartesian communicator over the split (2 x 2, periodic; split rank
/// 3 - rank), with the user error handler, and its Fortran INTEGER and
/// global variable naming the same object; its view, for what the
/// implementation adds.
pub fn check_cart<C: CValue>(
    rank: i64,
    s: &Source,
    w: &Written<C>,
    user_object: UserObject,
) -> Value {
    let v = s.view("comm", w.c("cart"));
    user_object(&v, "cart");
    let d = &v["details"];
    assert_eq!(d["kind"], "comm");
    assert_eq!(val(&d["name"]), "mpidd_cart");
    let split_rank = 3 - rank;
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
    assert_eq!(ref_c::<C>(val(&d["errhandler"])), w.c("errh"));
    // Its Fortran INTEGER and the global variable that holds it name the
    // same object.
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
    v
}

/// The split (world ranks reversed), whose group `MPI_Comm_group` made.
pub fn check_split<C: CValue>(rank: i64, s: &Source, w: &Written<C>, user_object: UserObject) {
    let v = s.view("comm", w.c("split"));
    user_object(&v, "split");
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_split");
    assert_eq!(val(&d["rank"]), 3 - rank);
    assert_eq!(val(&d["topology"]), &json!({"type": "none"}));
    assert_eq!(ref_c::<C>(val(&d["local_group"])), w.c("group"));
}

/// The intercommunicator between even and odd world ranks; its view, for
/// what the implementation adds.
pub fn check_inter<C: CValue>(
    rank: i64,
    s: &Source,
    w: &Written<C>,
    user_object: UserObject,
) -> Value {
    let v = s.view("comm", w.c("inter"));
    user_object(&v, "inter");
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
    v
}

/// The large send to rank + 2 on `MPI_COMM_WORLD`, pending at the stop;
/// its view, for what the implementation adds.
pub fn check_large_send<C: CValue>(
    rank: i64,
    s: &Source,
    w: &Written<C>,
    user_object: UserObject,
) -> Value {
    let v = s.view("request", w.c("sreq"));
    user_object(&v, "sreq");
    let d = &v["details"];
    assert_eq!(val(&d["request_kind"]), "send");
    assert_eq!(
        val(&d["complete"]),
        false,
        "its receiver receives after the stop"
    );
    assert_eq!(val(&d["peer"]), &json!({"rank": (rank + 2) % 4}));
    assert_eq!(val(&d["tag"]), w.k("tag_big"));
    assert_eq!(ref_c::<C>(val(&d["communicator"])), w.c("world"));
    v
}

/// `MPI_COMM_WORLD`; its view, for what the implementation adds.
pub fn check_world<C: CValue>(rank: i64, s: &Source, w: &Written<C>) -> Value {
    let v = s.view("comm", w.c("world"));
    assert_eq!(v["predefined"], true);
    assert_eq!(v["predefined_name"], "MPI_COMM_WORLD");
    assert_eq!(val(&v["freed_by_application"]), false);
    assert_eq!(val(&v["details"]["rank"]), rank);
    assert_eq!(
        val(&v["details"]["local_world_ranks"]),
        &json!([0, 1, 2, 3])
    );
    v
}

/// The group of the split, which the split uses.
pub fn check_group<C: CValue>(rank: i64, s: &Source, w: &Written<C>, user_object: UserObject) {
    let v = s.view("group", w.c("group"));
    user_object(&v, "group");
    let d = &v["details"];
    assert_eq!(val(&d["size"]), 4);
    assert_eq!(val(&d["rank"]), 3 - rank);
    assert_eq!(val(&d["world_ranks"]), &json!([3, 2, 1, 0]));
    let users: Vec<C> = val(&d["communicators"])
        .as_array()
        .unwrap()
        .iter()
        .map(ref_c)
        .collect();
    assert!(users.contains(&w.c("split")), "{users:?}");
}

/// The graph communicator: a ring, each rank linked to both neighbours.
pub fn check_graph<C: CValue>(rank: i64, s: &Source, w: &Written<C>, user_object: UserObject) {
    let v = s.view("comm", w.c("graph"));
    user_object(&v, "graph");
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_graph");
    assert_eq!(val(&d["rank"]), rank);
    assert_eq!(
        val(&d["topology"]),
        &json!({"type": "graph", "nnodes": 4, "index": [2, 4, 6, 8],
                "edges": [1, 3, 0, 2, 1, 3, 2, 0]})
    );
}

/// `MPI_INT`, a predefined datatype; its view, for what the
/// implementation adds.
pub fn check_mpi_int<C: CValue>(s: &Source, w: &Written<C>) -> Value {
    let v = s.view("datatype", w.c("mpi_int"));
    assert_eq!(v["predefined"], true);
    assert_eq!(v["predefined_name"], "MPI_INT");
    assert_eq!(val(&v["details"]["size"]), w.k("sizeof_int"));
    assert_eq!(
        val(&v["details"]["constructor"])["combiner"],
        "MPI_COMBINER_NAMED"
    );
    v
}

/// The window over the 64-int buffer; its view, for what the
/// implementation adds.
pub fn check_window<C: CValue>(s: &Source, w: &Written<C>, user_object: UserObject) -> Value {
    let v = s.view("win", w.c("win"));
    user_object(&v, "win");
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_win");
    assert_eq!(val(&d["base"]), w.addrs["winbuf"]);
    assert_eq!(val(&d["size"]), w.k("winbuf_bytes"));
    assert_eq!(val(&d["disp_unit"]), w.k("sizeof_int"));
    assert_eq!(val(&d["flavor"]), "MPI_WIN_FLAVOR_CREATE");
    v
}

/// The file's view `v`: its name, its access mode and the hint given to
/// `MPI_File_open`, and its Fortran INTEGER and global variable naming
/// the same file.
pub fn check_file<C: CValue>(s: &Source, w: &Written<C>, v: &Value) {
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
}

/// The text form of the Cartesian communicator says what the JSON says,
/// and what is not available: `not_kept` is how the implementation says
/// it keeps no mark of `MPI_Comm_free`.
pub fn check_text_form<C: CValue>(s: &Source, w: &Written<C>, not_kept: &str) {
    let out = s
        .cmd()
        .args(["--kind", "comm", "--value", &w.value("cart")])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let not_kept = format!("freed by application: not available: {not_kept}");
    for line in [
        "  name: mpidd_cart\n",
        "    periods: [true, true]\n",
        &not_kept,
    ] {
        assert!(text.contains(line), "{line:?} is not in:\n{text}");
    }
}
