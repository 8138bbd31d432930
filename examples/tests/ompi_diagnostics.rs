//! What a person reads when mpidd meets Open MPI, on
//! real 4-rank jobs of tests/openmpi/queues.c: Debian's stock Open MPI,
//! stripped, with no debug info anywhere, and the reference build.
//!
//! - A failure names the MPI library and counts the objects it searched
//!   instead of listing the seventy a rank maps in one line; `--verbose`
//!   lists them all, one a line.
//! - `queues` and `handle` find an Open MPI process's world rank
//!   themselves: from the world communicator when its layout is known,
//!   else from what `mpirun` put in the rank's environment.

mod common;

use std::process::Output;

use serde_json::Value;

use common::mpich_job::{gcore, mpidd, wait_stopped};
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

/// The number N of "searched N objects" (or "in N objects") in `text`.
fn searched_count(text: &str) -> usize {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(2)
        .find_map(|w| {
            (w[1].trim_end_matches([':', ',']) == "objects")
                .then(|| w[0].parse().ok())
                .flatten()
        })
        .unwrap_or_else(|| panic!("no object count in: {text}"))
}

/// A failure on a stripped Open MPI reads short: no line names more than a
/// few objects, the MPI library is named, and the count says where the
/// rest are (`--verbose`).
fn assert_short(what: &str, err: &str) {
    for line in err.lines() {
        assert!(
            objects_named(line) <= MAX_NAMED,
            "{what}: a line names {} objects: {line}",
            objects_named(line)
        );
    }
    assert!(
        err.contains("libmpi.so.40"),
        "{what}: the library is named: {err}"
    );
}

/// `--verbose`'s list: the lines after "the N objects searched:".
fn verbose_list(err: &str) -> Vec<String> {
    let mut lines = err.lines().skip_while(|l| !l.contains("objects searched:"));
    let head = lines
        .next()
        .unwrap_or_else(|| panic!("no list of objects: {err}"));
    let n = searched_count(head);
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

/// `mpidd queues --dll` (Debian's own libompi_dbg_msgq.so) on a stripped
/// rank, `target` being `--pid P` or `--core C`: it fails, short, and the
/// rank was found without `--rank`. `--verbose` lists every object of
/// `mapped`.
fn check_dll_failure(target: &[&str], dll: &str, mapped: &[String]) {
    let mut args = vec!["queues"];
    args.extend_from_slice(target);
    args.extend_from_slice(&["--dll", dll]);
    let out = run(&args);
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "the stripped library has no types: {err}"
    );
    assert_short("queues --dll", &err);
    assert!(
        !err.contains("world rank"),
        "the world rank was found without --rank: {err}"
    );
    let n = searched_count(&err);
    assert!(n > 30, "a rank maps dozens of objects, not {n}: {err}");
    assert!(
        err.contains(&format!("--verbose lists all {n} objects")),
        "{err}"
    );
    args.push("--verbose");
    let verbose = stderr(&run(&args));
    let list = verbose_list(&verbose);
    assert_eq!(list.len(), n, "{verbose}");
    for object in mapped {
        assert!(
            list.contains(object),
            "{object} is among the objects --verbose lists: {list:#?}"
        );
    }
    assert!(
        list.iter().any(|o| o.contains("mca_pml_ob1.so")),
        "{list:#?}"
    );
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
fn stock_open_mpi_failures_are_short_and_verbose_lists_every_object() {
    let job =
        OmpiJob::start_without_debug_info(OmpiBuild::Debian, "ompi-diagnostics-stock", "queues");
    let dll = OmpiBuild::Debian.msgq_dll();
    let dll = dll.to_str().unwrap();
    for rank in [0, 2] {
        let pid = job.pid(rank);
        let p = pid.to_string();
        let mapped = mapped_objects(pid);
        check_dll_failure(&["--pid", &p], dll, &mapped);
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
        check_dll_failure(&["--core", c], dll, &mapped);
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
