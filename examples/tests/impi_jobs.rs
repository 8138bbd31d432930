//! `mpidd` on real hung 4-rank jobs of Intel MPI (pip's `impi-rt`, in the
//! venv `MPIDD_PY_IMPI_VENV`; `bash scripts/python-envs.sh impi` makes it),
//! on shared memory (`I_MPI_FABRICS=shm`). The programs are
//! tests/mpich/hang_*.c, built with gcc against Debian's MPICH `mpi.h`
//! (the same ABI) and linked to the venv's `libmpi.so.12`.
//!
//! Intel MPI's library keeps its `.symtab` but no DWARF, and no profile
//! gives its layouts: its queues are not read, so what is checked is what
//! its symbols allow: the launcher's MPIR table, the library named as
//! Intel MPI with the release its pip metadata says, every world rank and
//! pid as each rank printed them, each rank's MPI call and line, frames
//! named as gdb names them in the same core (and marked where gdb has no
//! name), and a verdict that says it rests on stacks alone. Each job is
//! read live and from `gcore` cores.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use common::hung_job::{build_with, HungJob};
use common::job_checks::{findings, job_json, one_at_a_time};
use common::mpich_job::mpidd;

/// Debian's MPICH headers, whose ABI Intel MPI's `libmpi.so.12` keeps.
const MPICH_INCLUDE: &str = "/usr/include/x86_64-linux-gnu/mpich";

/// The folder of a job's directory that [`write_cores`] writes to.
const CORES: &str = "cores";

/// The Intel MPI venv, checked.
fn impi_venv() -> PathBuf {
    let venv = std::env::var_os("MPIDD_PY_IMPI_VENV").map(PathBuf::from);
    match venv {
        Some(v)
            if v.join("bin/mpiexec.hydra").is_file() && v.join("lib/libmpi.so.12").is_file() =>
        {
            v
        }
        other => panic!(
            "MPIDD_PY_IMPI_VENV ({other:?}) is not an Intel MPI venv with bin/mpiexec.hydra and \
             lib/libmpi.so.12: make it with `bash scripts/python-envs.sh impi` and export \
             MPIDD_PY_IMPI_VENV=/root/.cache/mpidd/py311-impi"
        ),
    }
}

/// The release pip installed (`impi_rt-RELEASE.dist-info`): known apart
/// from anything the library says.
fn pip_release(venv: &Path) -> String {
    let site = venv.join("lib/python3.11/site-packages");
    let entries = std::fs::read_dir(&site).unwrap_or_else(|e| panic!("{}: {e}", site.display()));
    entries
        .flatten()
        .find_map(|e| {
            let name = e.file_name().into_string().ok()?;
            Some(
                name.strip_prefix("impi_rt-")?
                    .strip_suffix(".dist-info")?
                    .to_string(),
            )
        })
        .unwrap_or_else(|| panic!("no impi_rt-*.dist-info in {}", site.display()))
}

/// tests/mpich/PROGRAM.c on Intel MPI, 4 ranks on shared memory.
fn start(program: &str) -> HungJob {
    start_on(program, &impi_venv().join("lib"), program)
}

/// The same, linked to the `libmpi.so.12` in `lib`, in a job directory
/// named `name`.
fn start_on(program: &str, lib: &Path, name: &str) -> HungJob {
    let venv = impi_venv();
    assert!(
        Path::new(MPICH_INCLUDE).join("mpi.h").is_file(),
        "{MPICH_INCLUDE}/mpi.h is missing: apt-get install libmpich-dev"
    );
    let rpath = format!("-Wl,-rpath,{}", lib.display());
    let (dir, exe, source) = build_with(
        Path::new("gcc"),
        &format!("impi-{name}"),
        program,
        &[
            &format!("-I{MPICH_INCLUDE}"),
            "-L",
            lib.to_str().unwrap(),
            "-lmpi",
            &rpath,
        ],
    );
    let mut launch = Command::new("nice");
    launch
        .args(["-n", "19"])
        .arg(venv.join("bin/mpiexec.hydra"))
        .args(["-n", "4"])
        .arg(&exe)
        .env("I_MPI_FABRICS", "shm");
    HungJob::run(launch, dir, source, program)
}

/// `gcore`s every rank into the job's folder [`CORES`], leaving out the
/// shared-memory segments. Intel MPI maps 2.2 GB of deleted `/dev/shm`
/// files in each rank, sparse but written whole: 2.5 GB a core, 10 GB a
/// job, which once filled CI's disk. Clearing bit 1 of the rank's
/// `coredump_filter` (anonymous shared memory, which gdb, like the kernel,
/// takes such mappings to be) leaves about 200 MB, as an administrator's
/// filter would; nothing mpidd reads lives there.
fn write_cores(job: &HungJob) -> PathBuf {
    for &(rank, pid) in &job.ranks {
        let filter = format!("/proc/{pid}/coredump_filter");
        std::fs::write(&filter, "0x31")
            .unwrap_or_else(|e| panic!("rank {rank}: write {filter}: {e}"));
    }
    job.gcore_all(CORES)
}

/// The job read live through its launcher, then from cores of its ranks.
fn reports(job: &HungJob) -> Vec<(Value, &'static str)> {
    let live = job_json(&["--pid", &job.mpiexec_pid().to_string()]);
    job.assert_running("after mpidd job --pid");
    let cores = write_cores(job);
    job.assert_running("after gcore");
    let from_cores = job_json(&["--core-dir", cores.to_str().unwrap()]);
    vec![(live, "live"), (from_cores, "from cores")]
}

/// What every Intel MPI job's report must say: the ranks and pids each
/// rank printed, its call and line, a deadlock resting on stacks alone,
/// and why the queues were not read, naming Intel MPI's release.
fn check_common(report: &Value, job: &HungJob, calls: &[(&str, String); 4], what: &str) {
    let release = pip_release(&impi_venv());
    let context = format!("{what}: {:#}", report["verdict"]);
    let headline = report["verdict"][0].as_str().expect("a headline");
    assert!(headline.starts_with("DEADLOCK:"), "{context}");
    assert!(headline.contains("from stacks alone"), "{context}");
    assert!(
        headline.contains(&format!("Intel MPI {release}: no layouts for its queues")),
        "the headline says why no queue was read: {context}"
    );
    assert_eq!(report["basis"]["queues_read"], 0, "{context}");
    assert_eq!(report["basis"]["stacks_read"], 4, "{context}");
    let ranks = report["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 4, "{context}");
    for (i, rank) in ranks.iter().enumerate() {
        let (call, location) = &calls[i];
        assert_eq!(rank["world_rank"], i as i64, "{context}");
        if let Some(pid) = rank["pid"].as_i64() {
            assert_eq!(pid, job.pid(i as i64) as i64, "{what}: rank {i}'s pid");
        }
        assert_eq!(rank["mpi_call"], *call, "{what}: rank {i}: {rank:#}");
        assert_eq!(rank["state"], "in_mpi", "{what}: rank {i}");
        assert_eq!(rank["location"], *location, "{what}: rank {i}");
        let source = rank["basis"]["world_rank"].as_str().unwrap_or("");
        assert!(
            source.contains("PMI_RANK"),
            "{what}: rank {i}'s world rank from {source}"
        );
        let why = rank["basis"]["queues"]["why"].as_str().unwrap_or("");
        assert!(
            why.contains(&format!("Intel MPI {release}")) && !why.contains("not MPICH"),
            "{what}: rank {i}'s queues: {why}"
        );
        assert!(!why.contains("no MPI library"), "{what}: {why}");
    }
}

/// Each thread's frames of a rank in the report: (pc, function, guessed).
fn frames(report: &Value, rank: usize) -> Vec<(u64, Option<String>, bool)> {
    report["ranks"][rank]["threads"][0]["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| {
            (
                f["pc"].as_u64().unwrap(),
                f["function"].as_str().map(str::to_string),
                f["name_guessed"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

/// gdb's `bt` of rank `rank`'s core (written by [`write_cores`]): (pc,
/// function or `??`) per frame, frame 0 first. The core, not the live
/// rank: Intel MPI's ranks poll, so two readings of a live rank a moment
/// apart differ in their innermost frames, while a core is one state
/// that both readers see whole.
fn gdb_bt(job: &HungJob, program: &str, rank: usize) -> Vec<(u64, String)> {
    let exe = job.dir.join(program);
    let core = job
        .dir
        .join(CORES)
        .join(format!("core.{}", job.pid(rank as i64)));
    let out = Command::new("gdb")
        .args(["-nx", "-batch"])
        .arg(&exe)
        .arg(&core)
        .args(["-ex", "echo BT-START\\n", "-ex", "bt"])
        .output()
        .expect("gdb (scripts/test.sh installs it)");
    let text = String::from_utf8_lossy(&out.stdout);
    // Loading a core prints its frame 0 once before `bt` does.
    let (_, bt) = text
        .split_once("BT-START\n")
        .unwrap_or_else(|| panic!("gdb did not run `bt` on {}: {text}", core.display()));
    bt.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| {
            let mut words = l.split_whitespace().skip(1);
            let pc = words.next().unwrap();
            let pc = u64::from_str_radix(pc.trim_start_matches("0x"), 16)
                .unwrap_or_else(|_| panic!("gdb frame without a pc: {l}"));
            assert_eq!(words.next(), Some("in"), "{l}");
            (pc, words.next().unwrap().to_string())
        })
        .collect()
}

/// Every frame gdb names, ours names the same at the same pc; every frame
/// gdb leaves as `??`, ours names with a guess and marks it so.
fn check_frames_against_gdb(
    report: &Value,
    job: &HungJob,
    program: &str,
    rank: usize,
) -> Vec<String> {
    let ours = frames(report, rank);
    let gdb = gdb_bt(job, program, rank);
    assert!(gdb.len() >= 4, "gdb's bt of rank {rank}: {gdb:?}");
    let mut guessed = Vec::new();
    for (i, (pc, name)) in gdb.iter().enumerate() {
        let (our_pc, our_name, our_guess) = &ours[i];
        assert_eq!(our_pc, pc, "rank {rank} frame {i}: {ours:?} vs gdb {gdb:?}");
        if name == "??" {
            assert!(
                *our_guess,
                "rank {rank} frame {i}: gdb has no name, ours is not marked guessed: {our_name:?}"
            );
            guessed.push(our_name.clone().expect("a guessed name"));
        } else {
            assert_eq!(
                our_name.as_deref(),
                Some(name.as_str()),
                "rank {rank} frame {i}: {gdb:?}"
            );
            assert!(
                !our_guess,
                "rank {rank} frame {i}: gdb names {name}, ours calls it a guess"
            );
        }
    }
    guessed
}

/// tests/mpich/hang_ring.c: every rank in `MPI_Recv`. Intel MPI's
/// `PMPI_Recv` is a 2-byte jump into an unnamed function, which gdb calls
/// `??`: the frame is named after the stub, marked as a guess, and the
/// rank is still found in `MPI_Recv`.
#[test]
fn a_ring_of_receives_on_intel_mpi() {
    let _serial = one_at_a_time();
    let job = start("hang_ring");
    let line = job.source_line("/* HANG_LINE */");
    let at = format!("main at hang_ring.c:{line}");
    let calls = [0, 1, 2, 3].map(|_| ("MPI_Recv", at.clone()));
    for (report, what) in reports(&job) {
        check_common(&report, &job, &calls, what);
        let headline = report["verdict"][0].as_str().unwrap();
        assert!(
            headline.contains("every rank is blocked in MPI"),
            "{what}: {headline}"
        );
        if what == "from cores" {
            for rank in 0..4 {
                let guessed = check_frames_against_gdb(&report, &job, "hang_ring", rank);
                assert_eq!(
                    guessed,
                    ["PMPI_Recv"],
                    "rank {rank}: the frames gdb cannot name"
                );
            }
        }
    }
}

/// tests/mpich/hang_mismatch.c: ranks 0, 2 and 3 in `MPI_Bcast`, rank 1
/// in `MPI_Reduce`; told from the stacks alone.
#[test]
fn a_bcast_against_a_reduce_on_intel_mpi() {
    let _serial = one_at_a_time();
    let job = start("hang_mismatch");
    let bcast = format!(
        "main at hang_mismatch.c:{}",
        job.source_line("/* BCAST_LINE */")
    );
    let reduce = format!(
        "main at hang_mismatch.c:{}",
        job.source_line("/* REDUCE_LINE */")
    );
    let calls = [
        ("MPI_Bcast", bcast.clone()),
        ("MPI_Reduce", reduce.clone()),
        ("MPI_Bcast", bcast.clone()),
        ("MPI_Bcast", bcast),
    ];
    for (report, what) in reports(&job) {
        check_common(&report, &job, &calls, what);
        let kinds: Vec<String> = findings(&report).into_iter().map(|f| f.0).collect();
        assert!(
            kinds.iter().any(|k| k == "collective_mismatch"),
            "{what}: {kinds:?}"
        );
        if what == "from cores" {
            for rank in 0..4 {
                check_frames_against_gdb(&report, &job, "hang_mismatch", rank);
            }
        }
    }
}

/// `mpidd procs` lists the ranks from Intel MPI's `mpiexec.hydra` (which
/// keeps MPIR), with the pids the ranks printed; `mpidd queues` on a rank
/// refuses, naming Intel MPI's release and what is missing.
#[test]
fn procs_and_the_queues_refusal_on_intel_mpi() {
    let _serial = one_at_a_time();
    let job = start("hang_ring");
    let out = mpidd()
        .args(["procs", "--pid", &job.mpiexec_pid().to_string()])
        .output()
        .expect("run mpidd procs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("4 processes"), "{text}");
    for (rank, pid) in &job.ranks {
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("rank {rank} ")))
            .unwrap_or_else(|| panic!("no rank {rank}: {text}"));
        assert!(row.contains(&format!("pid {pid} ")), "{row}");
    }
    let out = mpidd()
        .args(["queues", "--pid", &job.pid(0).to_string()])
        .output()
        .expect("run mpidd queues");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    let release = pip_release(&impi_venv());
    assert!(
        err.contains(&format!("Intel MPI {release}: no layouts for its queues")),
        "{err}"
    );
    job.assert_running("after mpidd queues");
}

/// `mpidd handle --json` on one rank (a live pid or a core), parsed; it
/// must succeed and say on standard error that its layouts were derived.
fn handle_json(target: &[&str], kind: &str, value: &str) -> Value {
    let out = mpidd()
        .arg("handle")
        .args(target)
        .args(["--kind", kind, "--value", value, "--json"])
        .output()
        .expect("run mpidd handle");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "mpidd handle {target:?} {value}: {err}"
    );
    assert!(
        err.contains("derived from the process and checked on its own objects"),
        "{err}"
    );
    serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).expect("JSON")
}

/// Intel MPI's library has no debug info: `mpidd handle` derives the
/// layouts of its pools and communicators from the process, checked on
/// the objects whose contents MPICH fixes; MPI_COMM_WORLD and
/// MPI_COMM_SELF then read as each rank knows them (its printed rank, 4
/// ranks; 1 rank, rank 0), live and from cores. The queues' refusal counts
/// the requests in use that the layouts find: at least each rank's MPI_Recv.
#[test]
fn builtin_communicators_and_pools_of_intel_mpi() {
    let _serial = one_at_a_time();
    let job = start("hang_ring");
    let release = pip_release(&impi_venv());
    let cores = write_cores(&job);
    for &(rank, pid) in &job.ranks {
        let core = cores.join(format!("core.{pid}"));
        let live = ["--pid".to_string(), pid.to_string()];
        let dead = ["--core".to_string(), core.to_str().unwrap().to_string()];
        for target in [&live, &dead] {
            let target: Vec<&str> = target.iter().map(String::as_str).collect();
            for (value, name, size, my_rank) in [
                ("0x44000000", "MPI_COMM_WORLD", 4, rank),
                ("0x44000001", "MPI_COMM_SELF", 1, 0),
            ] {
                let view = handle_json(&target, "comm", value);
                let context = format!("rank {rank} {target:?} {value}: {view:#}");
                assert_eq!(view["predefined_name"], name, "{context}");
                assert_eq!(view["state"]["value"], "live", "{context}");
                let d = &view["details"];
                assert_eq!(d["name"]["value"], name, "{context}");
                assert_eq!(d["size"]["value"], size, "{context}");
                assert_eq!(d["rank"]["value"], my_rank, "{context}");
                let implementation = view["implementation"].as_str().unwrap_or("");
                assert!(
                    implementation.starts_with(&format!("Intel MPI {release}, derived from MPICH")),
                    "{context}"
                );
            }
            // The one builtin group: no members, and this rank in none.
            let empty = handle_json(&target, "group", "0x48000000");
            assert_eq!(empty["predefined_name"], "MPI_GROUP_EMPTY", "{empty:#}");
            assert_eq!(empty["details"]["size"]["value"], 0, "{empty:#}");
        }
        job.assert_running("after mpidd handle");
        let out = mpidd()
            .args(["queues", "--core", core.to_str().unwrap()])
            .output()
            .expect("run mpidd queues");
        let err = String::from_utf8_lossy(&out.stderr);
        let requests: usize = err
            .split_once("its pools hold ")
            .and_then(|(_, rest)| rest.split_once(" request object(s) not on a free list"))
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or_else(|| panic!("rank {rank}: no count of live requests: {err}"));
        assert!(
            requests >= 1,
            "rank {rank}: its MPI_Recv's request at least: {err}"
        );
    }
}

/// The venv's libraries in a fresh directory, but for `libmpi.so.12`,
/// which is a copy stripped of its symbol table (`strip --strip-all`), as
/// some sites install it.
fn stripped_library() -> PathBuf {
    let venv = impi_venv();
    let dir = common::scratch::fresh_dir("impi-stripped-lib");
    let lib = venv.join("lib");
    for entry in std::fs::read_dir(&lib).expect("the venv's lib").flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with("libmpi.so") {
            std::os::unix::fs::symlink(entry.path(), dir.join(&name)).expect("symlink");
        }
    }
    let out = Command::new("strip")
        .arg("--strip-all")
        .arg("-o")
        .arg(dir.join("libmpi.so.12"))
        .arg(lib.join("libmpi.so.12"))
        .output()
        .expect("strip (binutils)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // What `-lmpi` links to.
    std::os::unix::fs::symlink("libmpi.so.12", dir.join("libmpi.so")).expect("symlink");
    dir
}

/// With its symbol table stripped, Intel MPI's library loses the globals
/// that name its release, but its strings still say it: the job is still
/// Intel MPI's with its release, the refusal says the symbols are gone,
/// and stacks (from `.dynsym`) still give every rank's call.
#[test]
fn a_stripped_intel_mpi_is_still_named() {
    let _serial = one_at_a_time();
    let lib = stripped_library();
    let job = start_on("hang_ring", &lib, "stripped-hang_ring");
    let release = pip_release(&impi_venv());
    let at = format!("main at hang_ring.c:{}", job.source_line("/* HANG_LINE */"));
    let calls = [0, 1, 2, 3].map(|_| ("MPI_Recv", at.clone()));
    for (report, what) in reports(&job) {
        check_common(&report, &job, &calls, what);
        let why = report["ranks"][0]["basis"]["queues"]["why"]
            .as_str()
            .unwrap_or("");
        assert!(
            why.contains("stripped of its symbol table") && why.contains(&release),
            "{what}: {why}"
        );
    }
    drop(job);
    common::scratch::remove_unless_failed(&lib);
}
