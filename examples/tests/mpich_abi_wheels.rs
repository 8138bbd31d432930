//! Programs built against the MPI-5 standard ABI on pip's MPICH 5.0
//! wheels: compiled by the wheel's `mpicc_abi` (no `-g`), which links
//! `libmpi_abi.so.1` (`libmpi_abi.so.0` before 5.0.2), and run by its
//! `mpiexec`.
//!
//! `libmpi_abi` is MPICH compiled again with the standard ABI's
//! `mpi_abi.h` in place of its own: its `MPI_Status`, and so its
//! `MPIR_Request`, are laid out otherwise than in `libmpi.so.12`, its
//! `MPI_ANY_SOURCE`, `MPI_ANY_TAG` and `MPI_PROC_NULL` are the ABI's
//! (−1, −2, −3 where MPICH's are −2, −1, −1), and its bindings, whose
//! references place the hidden globals, are other code. It is read
//! through profiles of its own (mpidd-read/profiles/
//! mpich-5.0-ch4-ucx-wheel-abi-x86_64.json and
//! mpich-5.0.1-ch4-ucx-wheel-abi-x86_64.json, written by
//! `MPIDD_MPICH_LIBRARY=libmpi_abi scripts/write-mpich-wheel-profile.sh`),
//! and a program's handles are the ABI's: predefined ones by their
//! constants, the others by the addresses of MPICH's objects.
//!
//! What the programs leave pending is what they leave on `libmpi.so.12`
//! (mpich_wheels.rs): the same expectations, from the programs' sources.
//! `MPI_ANY_TAG`'s receive (on the split communicator) is read as a
//! wildcard only if the ABI's −2 is taken for it.

mod common;

use std::path::Path;

use serde_json::{json, Value};

use common::mpich_job::{gcore_each, mpidd, wait_stopped, Job, Toolchain};
use common::mpich_wheel_builds::{Wheel, WHEEL_5_0, WHEEL_5_0_0, WHEEL_5_0_1};
use common::mpich_wheel_globals::hidden_globals_are_located_in;
use common::mpich_wheel_queues::{check_rank, Netmod};
use common::mpich_wheel_ring::ring_is_a_cycle_built_with;
use common::queue_checks::native;
use common::supported_builds::Outcome;

/// pip's MPICH 5.0.2 under a program built with `mpicc_abi`.
const ABI_5_0_2: Wheel = Wheel {
    build: "pip mpich 5.0.2, ch4:ucx, a program built with mpicc_abi (x86_64)",
    read_through: "the family MPICH 5.0.2 up to 5.1 (mpich-5.0-ch4-ucx-wheel-abi), its hidden globals located in libmpi_abi.so.1",
    ..WHEEL_5_0
};

/// pip's MPICH 5.0.1 under a program built with `mpicc_abi`.
const ABI_5_0_1: Wheel = Wheel {
    build: "pip mpich 5.0.1, ch4:ucx, a program built with mpicc_abi (x86_64)",
    read_through: "the family MPICH 5.0.0 up to 5.0.2 (mpich-5.0.1-ch4-ucx-wheel-abi), its hidden globals located in libmpi_abi.so.0",
    ..WHEEL_5_0_1
};

/// pip's MPICH 5.0.0 under a program built with `mpicc_abi`.
const ABI_5_0_0: Wheel = Wheel {
    build: "pip mpich 5.0.0, ch4:ucx, a program built with mpicc_abi (x86_64)",
    read_through: "the family MPICH 5.0.0 up to 5.0.2 (mpich-5.0.1-ch4-ucx-wheel-abi), its hidden globals located in libmpi_abi.so.0",
    ..WHEEL_5_0_0
};

/// The wheel's ABI compiler wrapper and launcher: a user's build, no `-g`.
fn abi_toolchain(venv: &Path) -> Toolchain {
    let cc = venv.join("bin/mpicc_abi");
    assert!(
        cc.exists(),
        "{} is missing: pip's MPICH wheels from 5.0 ship it",
        cc.display()
    );
    Toolchain {
        cc,
        cflags: &["-O0"],
        mpiexec: venv.join("bin/mpiexec"),
    }
}

/// The ABI library the wheel ships, as a rank maps it: `libmpi_abi.so.1`
/// from 5.0.2, `libmpi_abi.so.0` before.
fn abi_library(venv: &Path) -> String {
    let lib = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.strip_prefix("libmpi_abi.so.")
                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit()))
        })
        .unwrap_or_else(|| panic!("no libmpi_abi.so.N in {}/lib", venv.display()));
    let lib = std::fs::canonicalize(lib).unwrap();
    lib.to_str().unwrap().to_string()
}

/// Every rank of `pids` maps the wheel's `libmpi_abi` and not its
/// `libmpi.so.12`: the programs are the ABI's.
fn assert_on_abi_library(venv: &Path, pids: &[i32]) {
    let abi = abi_library(venv);
    for pid in pids {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
        assert!(maps.contains(&abi), "rank {pid} does not map {abi}");
        assert!(
            !maps.contains("/libmpi.so.12"),
            "rank {pid} maps libmpi.so.12 as well"
        );
    }
}

/// `mpidd handle --json` of an ABI handle: the world communicator (0x101)
/// and `MPI_COMM_SELF` (0x102) by the standard's constants, as the
/// program passes them, `MPI_INT` (0x209) and `MPI_SUM` (0x21); the
/// duplicate of the
/// world by the address of its object (`queues` found it), which is the
/// C handle the program holds; and each by its Fortran INTEGER
/// (`MPI_Comm_toint`: the constant for a predefined handle, MPICH's int
/// handle for another).
fn check_abi_handles(wheel: &Wheel, rank: i64, source: &[&str], queues: &Value) {
    let run_with = |extra: &[&str], kind: &str, value: &str| -> (String, String, bool) {
        let mut args = vec!["handle", "--json", "--kind", kind, "--value", value];
        args.extend_from_slice(extra);
        args.extend_from_slice(source);
        let out = mpidd().args(&args).output().expect("run mpidd handle");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.success(),
        )
    };
    let run = |kind: &str, value: &str| run_with(&[], kind, value);
    let parse = |(out, err, ok): (String, String, bool), what: &str| -> Value {
        assert!(ok, "mpidd handle {what} {source:?}: {err}");
        assert!(err.contains(wheel.family), "{err}");
        assert!(err.contains("its libmpi_abi.so."), "{err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    };
    let handle = |kind: &str, value: &str| parse(run(kind, value), value);
    let fortran = |kind: &str, value: &str| parse(run_with(&["--fortran"], kind, value), value);
    fn val(v: &Value) -> &Value {
        v.get("value").unwrap_or(v)
    }
    let world = handle("comm", "0x101");
    assert_eq!(world["predefined_name"], "MPI_COMM_WORLD", "{world:#}");
    assert_eq!(world["c_handle"], json!({ "value": { "pointer": 0x101 } }));
    assert_eq!(world["fortran_index"], json!({ "value": 0x101 }));
    assert_eq!(fortran("comm", "257"), world, "MPI_COMM_WORLD's INTEGER");
    let d = &world["details"];
    assert_eq!(val(&d["rank"]), &json!(rank), "{d:#}");
    assert_eq!(val(&d["size"]), &json!(4), "{d:#}");
    assert_eq!(val(&d["local_world_ranks"]), &json!([0, 1, 2, 3]), "{d:#}");
    let me = handle("comm", "0x102");
    assert_eq!(me["predefined_name"], "MPI_COMM_SELF", "{me:#}");
    assert_eq!(
        val(&me["details"]["local_world_ranks"]),
        &json!([rank]),
        "{me:#}"
    );
    let int = handle("datatype", "0x209");
    assert_eq!(int["predefined_name"], "MPI_INT", "{int:#}");
    assert_eq!(val(&int["details"]["size"]), &json!(4), "{int:#}");
    let sum = handle("op", "0x21");
    assert_eq!(sum["predefined_name"], "MPI_SUM", "{sum:#}");
    // The duplicate by its object's address, and by its INTEGER.
    let dup_addr = queues["communicators"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "mpidd_dup")
        .and_then(|c| c["unique_id"].as_u64())
        .unwrap_or_else(|| panic!("rank {rank}: no mpidd_dup among {queues:#}"));
    let dup = handle("comm", &format!("{dup_addr:#x}"));
    assert_eq!(val(&dup["details"]["name"]), "mpidd_dup", "{dup:#}");
    assert_eq!(val(&dup["details"]["rank"]), &json!(rank), "{dup:#}");
    assert_eq!(dup["c_handle"], json!({ "value": { "pointer": dup_addr } }));
    let int = val(&dup["fortran_index"]).as_i64().unwrap();
    assert_ne!(int, dup_addr as i64, "MPICH's int handle, not the address");
    assert_eq!(
        fortran("comm", &int.to_string()),
        dup,
        "mpidd_dup's INTEGER"
    );
    if rank == 0 {
        // queues.c: rank 0's receive on the duplicate is from
        // MPI_ANY_SOURCE (the ABI's −1, MPICH's MPI_PROC_NULL), tag 22,
        // and the one on the world from rank 1, tag 11, among the
        // requests each communicator's view refers to by their addresses
        // (what the program holds); each also by its INTEGER.
        for (comm, peer, tag) in [
            (&dup, json!("any_source"), 22),
            (&world, json!({ "rank": 1 }), 11),
        ] {
            let requests = val(&comm["details"]["requests"]).as_array().unwrap();
            let mut seen = Vec::new();
            for r in requests {
                let addr = r["c_handle"]["pointer"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("a pointer: {comm:#}"));
                let request = handle("request", &format!("{addr:#x}"));
                let int = val(&request["fortran_index"]).as_i64().unwrap();
                assert_eq!(fortran("request", &int.to_string()), request);
                let d = &request["details"];
                seen.push((
                    val(&d["request_kind"]).clone(),
                    val(&d["peer"]).clone(),
                    val(&d["tag"]).clone(),
                ));
            }
            let want = (json!("receive"), peer, json!(tag));
            assert!(seen.contains(&want), "{want:?} not in {seen:?}");
        }
    }
    // MPICH's own int handle is no ABI handle: below the ABI's bound, and
    // no predefined communicator of the standard has it.
    let (_, err, ok) = run("comm", "0x209");
    assert!(
        !ok && err.contains("the ABI predefines no MPI_Comm of this value"),
        "{err}"
    );
}

/// tests/mpich/queues.c built with `mpicc_abi`: every rank's queues and
/// ABI handles, live (each rank stopped and let go) and from gcore cores.
fn queues_and_handles(wheel: &Wheel) {
    let outcome =
        |command, source| Outcome::begin(wheel.build, wheel.read_through, command, source);
    let (queues_live, handle_live) = (outcome("queues", "live"), outcome("handle", "live"));
    let (queues_core, handle_core) = (outcome("queues", "core"), outcome("handle", "core"));
    let venv = wheel.venv();
    let job = Job::start_with(
        &abi_toolchain(&venv),
        &format!("wheel-mpich-{}-abi-queues", wheel.version),
        "queues",
        &[],
        &[],
        &[] as &[(&str, &str)],
    );
    let pids = [job.pid(0), job.pid(1), job.pid(2), job.pid(3)];
    assert_on_abi_library(&venv, &pids);
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        let queues = native(&["--pid", &pid]);
        check_rank(wheel, rank, &queues, Netmod::Default);
        check_abi_handles(wheel, rank, &["--pid", &pid], &queues);
        wait_stopped(job.pid(rank));
    }
    queues_live.works();
    handle_live.works();
    let cores = gcore_each(&job.dir, &pids);
    for rank in 0..4 {
        let core = cores[rank as usize].to_str().unwrap();
        let queues = native(&["--core", core]);
        check_rank(wheel, rank, &queues, Netmod::Default);
        check_abi_handles(wheel, rank, &["--core", core], &queues);
    }
    queues_core.works();
    handle_core.works();
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn mpich_5_0_2_abi_program_queues_and_handles_live_and_from_cores() {
    queues_and_handles(&ABI_5_0_2);
}

#[test]
fn mpich_5_0_1_abi_program_queues_and_handles_live_and_from_cores() {
    queues_and_handles(&ABI_5_0_1);
}

#[test]
fn mpich_5_0_0_abi_program_queues_and_handles_live_and_from_cores() {
    queues_and_handles(&ABI_5_0_0);
}

/// tests/mpich/hang_ring.c built with `mpicc_abi`: `mpidd job` finds the
/// ranks under the wheel's `mpiexec` by their `libmpi_abi`, and the
/// verdict is the cycle 0 → 3 → 2 → 1, live and from cores.
fn ring_is_a_cycle(wheel: &Wheel) {
    ring_is_a_cycle_built_with(wheel, "mpicc_abi", assert_on_abi_library);
}

#[test]
fn mpich_5_0_2_abi_program_ring_is_a_cycle_live_and_from_cores() {
    ring_is_a_cycle(&ABI_5_0_2);
}

#[test]
fn mpich_5_0_1_abi_program_ring_is_a_cycle_live_and_from_cores() {
    ring_is_a_cycle(&ABI_5_0_1);
}

/// The hidden globals of each wheel's `libmpi_abi`, located in the file
/// from what its ABI profile's family predicts: the same globals as in
/// `libmpi.so.12`. Two builtin arrays tie there between two starts each,
/// and are placed by the distances the family's stand-in library keeps:
/// the builtin datatypes beside the direct ones (5.0's datatype allocator
/// points at neither), and, in 5.0.2's, the builtin operations, which
/// the one exported function that references them references beside an
/// ABI table, at the stand-in's distance from the direct operations the
/// allocator record places.
#[test]
fn mpich_5_0_2_abi_library_hidden_globals_are_located_in_its_file() {
    let found = hidden_globals_are_located_in("libmpi_abi.so.1", &ABI_5_0_2);
    let how = |name: &str| found.found[name].how.clone();
    assert!(
        how("MPIR_Datatype_builtin").contains("keeps their distances in the family's stand-in"),
        "{}",
        how("MPIR_Datatype_builtin")
    );
    assert!(
        how("MPIR_Op_builtin")
            .contains("its distance in the family's stand-in library to a global found already"),
        "{}",
        how("MPIR_Op_builtin")
    );
}

#[test]
fn mpich_5_0_1_abi_library_hidden_globals_are_located_in_its_file() {
    hidden_globals_are_located_in("libmpi_abi.so.0", &ABI_5_0_1);
}

#[test]
fn mpich_5_0_0_abi_library_hidden_globals_are_located_in_its_file() {
    hidden_globals_are_located_in("libmpi_abi.so.0", &ABI_5_0_0);
}
