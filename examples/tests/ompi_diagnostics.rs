//! What a person reads when mpidd meets Open MPI, on
//! real 4-rank jobs of tests/openmpi/queues.c: Debian's stock Open MPI,
//! stripped, with no debug info anywhere, and the reference build.
//!
//! - Open MPI's own message-queue library, whose questions about types
//!   go to the profile mpidd ships for Debian's build, reads the stripped
//!   ranks; MPICH's, given the same ranks by mistake, fails in lines that
//!   name no more than a few objects, saying where the answers came from
//!   and what went unanswered.
//! - `queues` and `handle` find an Open MPI process's world rank
//!   themselves: from the world communicator when its layout is known,
//!   else from what `mpirun` put in the rank's environment.

mod common;

use std::process::Output;

use serde_json::Value;

use common::mpich_job::{gcore, mpidd, ref_mpich, wait_stopped};
use common::ompi_job::{OmpiBuild, OmpiJob};
use mpidd_read::{CoreTarget, Limits, LiveTarget, TargetParts};
use mpiq_core::{world_rank, RankSource};

/// More object names than this on one line is a list no one reads.
const MAX_NAMED: usize = 12;

fn run(args: &[&str]) -> Output {
    mpidd().args(args).output().expect("run mpidd")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// How many shared objects a line names (`libx.so`, `libx.so.6`, ...).
fn objects_named(line: &str) -> usize {
    line.split(|c: char| c.is_whitespace() || ",;()".contains(c))
        .filter(|w| w.contains(".so"))
        .count()
}

/// `mpidd queues --dll` with Debian's own libompi_dbg_msgq.so on a
/// stripped rank, `target` being `--pid P` or `--core C`: the library's
/// questions about types are answered from the profile mpidd ships for
/// Debian's build, which records them, so the library reads the rank's
/// communicators, and finds its world rank without `--rank`.
fn check_own_dll(target: &[&str], dll: &str, rank: i64) {
    let mut args = vec!["queues"];
    args.extend_from_slice(target);
    args.extend_from_slice(&["--dll", dll, "--json"]);
    let out = run(&args);
    let err = stderr(&out);
    assert!(out.status.success(), "{target:?}: {err}");
    assert!(
        err.contains("questions about types are answered from the profile of Open MPI 4.1.4"),
        "says where the answers came from: {err}"
    );
    assert!(!err.contains("world rank"), "found without --rank: {err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["global_rank"], rank, "{v:#}");
    let names: Vec<&str> = v["communicators"]
        .as_array()
        .expect("communicators")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(
        names.contains(&"MPI_COMM_WORLD") && names.contains(&"MPI_COMM_SELF"),
        "{names:?}"
    );
}

/// `mpidd queues --dll` with the wrong vendor's library (MPICH's
/// libtvmpich.so) on the same stripped Open MPI rank: it cannot find
/// MPICH's types and fails, in lines that name no more than a few objects,
/// saying where its answers came from and which types went unanswered;
/// `--verbose` lists every object searched, `mapped` among them.
fn check_wrong_dll(target: &[&str], dll: &str, mapped: &[String]) {
    let mut args = vec!["queues"];
    args.extend_from_slice(target);
    args.extend_from_slice(&["--dll", dll]);
    let out = run(&args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "a clean failure: {err}");
    for line in err.lines() {
        assert!(
            objects_named(line) <= MAX_NAMED,
            "a line names {} objects: {line}",
            objects_named(line)
        );
    }
    assert!(
        err.contains("questions about types are answered from the profile of Open MPI 4.1.4")
            && err.contains("a question it does not record goes unanswered"),
        "says where the answers came from: {err}"
    );
    assert!(
        err.contains("no queues") && err.contains("`MPIR_Comm`: no such type in the table"),
        "names what went unanswered: {err}"
    );
    // `--verbose` lists every object searched, one a line, as many as it
    // announces: the rank's MPI components among them, and, live, every
    // object the rank maps.
    args.push("--verbose");
    let verbose = stderr(&run(&args));
    let list = verbose_list(&verbose);
    assert!(
        list.len() > 30,
        "a rank maps dozens of objects, not {}: {verbose}",
        list.len()
    );
    assert!(
        list.iter().any(|o| o.contains("mca_pml_ob1.so")),
        "{list:#?}"
    );
    for object in mapped {
        assert!(
            list.contains(object),
            "{object} is among the objects --verbose lists: {list:#?}"
        );
    }
}

/// `--verbose`'s list: the lines after "the N objects searched:", which
/// must be N.
fn verbose_list(err: &str) -> Vec<String> {
    let mut lines = err.lines().skip_while(|l| !l.contains("objects searched:"));
    let head = lines
        .next()
        .unwrap_or_else(|| panic!("no list of objects: {err}"));
    let n: usize = head
        .split_whitespace()
        .find_map(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no count in: {head}"));
    let list: Vec<String> = lines
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_string())
        .collect();
    assert_eq!(list.len(), n, "the list has the count it announces: {err}");
    list
}

/// The objects a live process maps, as /proc/PID/maps names them.
fn mapped_objects(pid: i32) -> Vec<String> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let mut out: Vec<String> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| p.starts_with('/') && p.contains(".so"))
        .map(String::from)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `mpidd handle` on rank `rank`'s `MPI_COMM_WORLD`: the communicator's
/// world rank, which the shipped profile of Debian's Open MPI lets the
/// handle decoder read.
fn check_handle(target: &[&str], comm_world: u64, rank: i64) {
    let handle = format!("{comm_world:#x}");
    let mut args = vec!["handle"];
    args.extend_from_slice(target);
    args.extend_from_slice(&["--kind", "comm", "--value", &handle, "--json"]);
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["details"]["world_rank"],
        serde_json::json!({"value": rank}),
        "{v:#}"
    );
}

#[test]
fn stock_open_mpi_read_by_its_own_library_and_failures_say_what_they_rest_on() {
    let job =
        OmpiJob::start_without_debug_info(OmpiBuild::Debian, "ompi-diagnostics-stock", "queues");
    let dll = OmpiBuild::Debian.msgq_dll();
    let dll = dll.to_str().unwrap();
    let mpich_dll = ref_mpich().join("lib/libtvmpich.so");
    let mpich_dll = mpich_dll.to_str().unwrap();
    for rank in [0, 2] {
        let pid = job.pid(rank);
        let p = pid.to_string();
        check_own_dll(&["--pid", &p], dll, rank);
        wait_stopped(pid);
        check_wrong_dll(&["--pid", &p], mpich_dll, &mapped_objects(pid));
        wait_stopped(pid);
        check_handle(&["--pid", &p], job.comm_world(rank), rank);
        wait_stopped(pid);

        // The native decoder reads the stock build through the shipped
        // layout profile, and knows the rank.
        let out = run(&["queues", "--pid", &p, "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["global_rank"], rank);
        wait_stopped(pid);

        let core = gcore(&job.dir, pid);
        let c = core.to_str().unwrap();
        check_own_dll(&["--core", c], dll, rank);
        check_wrong_dll(&["--core", c], mpich_dll, &[]);
        check_handle(&["--core", c], job.comm_world(rank), rank);
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// The world rank of every rank, live and from its core, through the
/// library call the commands use: from `ompi_mpi_comm_world` itself, on
/// the reference build through its DWARF and on the stock build through
/// the profile mpidd ships for it (a target's layouts include it); and on
/// the stock build with its DWARF alone, where no layout says where
/// `c_my_rank` is, from `mpirun`'s environment. And on the reference
/// build, `queues --dll` hands the vendor library that rank without
/// `--rank`.
#[test]
fn world_ranks_of_open_mpi_processes_live_and_from_cores() {
    for (build, name) in [
        (OmpiBuild::Debian, "ompi-world-rank-stock"),
        (OmpiBuild::Reference, "ompi-world-rank-ref"),
    ] {
        let expected = RankSource::OmpiCommWorld;
        let job = OmpiJob::start_on(build, name, "queues");
        let limits = Limits::default();
        for rank in 0..4 {
            let pid = job.pid(rank);
            if build == OmpiBuild::Reference {
                let dll = build.msgq_dll();
                let p = pid.to_string();
                let out = run(&[
                    "queues",
                    "--pid",
                    &p,
                    "--dll",
                    dll.to_str().unwrap(),
                    "--json",
                ]);
                assert!(out.status.success(), "{}", stderr(&out));
                assert!(!stderr(&out).contains("world rank"), "{}", stderr(&out));
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(v["global_rank"], rank);
                wait_stopped(pid);
            }
            let live = LiveTarget::open(pid).expect("open the stopped rank");
            let found = world_rank(&live, &limits).expect("the world rank");
            assert_eq!(
                (i64::from(found.rank), &found.source),
                (rank, &expected),
                "{build:?} rank {rank}, live"
            );
            if build == OmpiBuild::Debian {
                let dwarf_only = TargetParts {
                    memory: &live,
                    symbols: &live,
                    layouts: live.types(),
                };
                let found = world_rank(&dwarf_only, &limits).expect("the world rank");
                assert_eq!(
                    (i64::from(found.rank), &found.source),
                    (rank, &RankSource::Environment("OMPI_COMM_WORLD_RANK")),
                    "{build:?} rank {rank}, live, its DWARF alone"
                );
            }
            let core = gcore(&job.dir, pid);
            let t = CoreTarget::open(&core, None, None).expect("open the core");
            let found = world_rank(&t, &limits).expect("the world rank");
            assert_eq!(
                (i64::from(found.rank), &found.source),
                (rank, &expected),
                "{build:?} rank {rank}, core"
            );
        }
        assert_eq!(job.finish(), 0);
    }
}
