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

use super::mpich_job::{gcore, mpidd, wait_stopped};

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
    for rank in 0..4 {
        let core = gcore(dir, pid(rank));
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
