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

use std::path::{Path, PathBuf};
use std::process::Command;

use common::handle_checks::{
    self, check_derived_types, check_every_rank, check_generalized_request, check_info, check_ops,
    check_persistent_receive, check_status, check_user_errhandler, reason, ref_ptr, val, Source,
    Written,
};
use common::mpich_job::mpidd;
use common::ompi_job::{ref_ompi, OmpiBuild, OmpiJob, DEBIAN_LIBDIR};

use serde_json::{json, Value};

/// Checks the common part of a user object's view: what every
/// implementation's says, and that its handle is its object's address.
fn check_user_object(v: &Value, w: &Written<u64>, name: &str) {
    handle_checks::check_user_object(v, w, name);
    assert_eq!(val(&v["object_address"]), w.c(name));
    assert!(v["implementation"]
        .as_str()
        .unwrap()
        .starts_with("Open MPI 4.1.4"));
}

/// Everything tests/openmpi/handles.c set up on rank `rank`, read from
/// `s`. `full` adds the handles whose properties do not depend on the
/// rank.
fn check_rank(rank: i64, s: &Source, w: &Written<u64>, full: bool) {
    let world = w.c("world");
    let user_object = |v: &Value, name: &str| check_user_object(v, w, name);
    let split_rank = 3 - rank;

    // The Cartesian communicator over the split.
    let v = s.view("comm", w.c("cart"));
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
    assert_eq!(ref_ptr(val(&d["errhandler"])), w.c("errh"));
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
    let v = s.view("comm", w.c("split"));
    check_user_object(&v, w, "split");
    let d = &v["details"];
    assert_eq!(val(&d["name"]), "mpidd_split");
    assert_eq!(val(&d["rank"]), split_rank);
    assert_eq!(val(&d["topology"]), &json!({"type": "none"}));
    assert_eq!(ref_ptr(val(&d["local_group"])), w.c("group"));

    // The distributed graph: from rank - 1 to rank + 1, unweighted.
    let v = s.view("comm", w.c("dist"));
    check_user_object(&v, w, "dist");
    assert_eq!(val(&v["details"]["name"]), "mpidd_dist");
    assert_eq!(
        val(&v["details"]["topology"]),
        &json!({"type": "dist_graph", "sources": [(rank + 3) % 4],
                "destinations": [(rank + 1) % 4], "weighted": false})
    );

    // The intercommunicator between even and odd world ranks.
    let v = s.view("comm", w.c("inter"));
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
            let v = s.view("comm", w.c("doomed"));
            check_user_object(&v, w, "doomed");
            assert_eq!(val(&v["reference_count"]), 1, "only the request holds it");
            assert_eq!(val(&v["details"]["name"]), "mpidd_doomed");
            let r = s.view("request", w.c("doomed_req"));
            check_user_object(&r, w, "doomed_req");
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
            check_user_object(&v, w, "doomed");
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
    let v = s.view("request", w.c("sreq"));
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
    let v = s.view("comm", w.c("world"));
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
    let v = s.view("group", w.c("group"));
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
    assert!(users.contains(&w.c("split")), "{users:?}");
    let v = s.view("group", w.c("group_empty"));
    assert_eq!(v["predefined_name"], "MPI_GROUP_EMPTY");
    assert_eq!(val(&v["details"]["size"]), 0);
    assert_eq!(val(&v["details"]["rank"]), &Value::Null);

    // The graph communicator.
    let v = s.view("comm", w.c("graph"));
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
    check_derived_types(s, w, &user_object);
    let sz = w.k("sizeof_int");

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

    let v = s.view("datatype", w.c("mpi_int"));
    assert_eq!(v["predefined"], true);
    assert_eq!(v["predefined_name"], "MPI_INT");
    assert_eq!(val(&v["fortran_index"]), w.f("mpi_int"));
    assert_eq!(val(&v["details"]["size"]), sz);
    assert_eq!(
        val(&v["details"]["constructor"])["combiner"],
        "MPI_COMBINER_NAMED"
    );

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
    let v = s.view("win", w.c("win"));
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
    let v = s.view("file", w.c("file"));
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
    let out = s
        .cmd()
        .args(["--kind", "comm", "--value", &w.value("cart")])
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

/// Checks every rank, live (each stopped and let go) and then from a gcore
/// core of each.
fn check_job(job: &OmpiJob, extra: &[String]) {
    check_every_rank(&job.dir, |r| job.pid(r), extra, check_rank);
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
