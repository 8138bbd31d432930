//! The Python module inside the real gdb (Debian 12's gdb 13 and its own
//! CPython 3.11): the module's wheel is built and installed into a
//! directory (scripts/build-python-module.sh), which gdb's `sys.path`
//! gets, and `python import mpidd.gdb` loads it as a user's ~/.gdbinit
//! does. On 4-rank jobs of tests/mpich/queues.c, on the reference MPICH
//! (DWARF) and on Debian's stripped MPICH (the shipped profile), read from
//! each rank's gcore core and live (gdb attached to the stopped rank), and
//! of tests/openmpi/queues.c on Debian's stripped Open MPI (pointer
//! handles, the shipped profile), from cores:
//!
//! - `mpi queues -json` must give the very queues `mpidd queues --core
//!   CORE --json` gives for the same core, and what the program's header
//!   comment says each rank posts;
//! - `print` of the program's `MPI_Comm` and `MPI_Request` variables shows
//!   the decoded object in one line;
//! - `mpi handle` decodes a predefined communicator, and garbage gives one
//!   line of error, after which gdb runs the next command.
//!
//! The ranks stop themselves; gdb leaves them stopped as it found them, and
//! each job is continued and must complete.

mod common;

use std::path::Path;
use std::process::Command;

use common::hung_job::{HangMpi, HungJob};
use common::job_checks::{check, one_at_a_time, Expected};
use common::mpich_job::{gcore, gcore_each, mpidd, stock_mpich, wait_stopped, Job, Toolchain};
use common::mpich_wheel_builds::WHEEL_5_0;
use common::ob1_checks;
use common::ompi_job::{OmpiBuild, OmpiJob};
use common::python_module::{self, module_site};
use common::queue_checks::{check_rank_native, check_rank_stock, native};
use serde_json::Value;

/// What one gdb run printed.
struct GdbRun {
    stdout: String,
    stderr: String,
}

/// gdb in batch mode, without the user's init files, with the module
/// loaded as the documented .gdbinit line does, running `commands` on the
/// target given by `target` (a program and its core, or `-p PID`).
fn gdb(target: &[&str], commands: &[&str]) -> GdbRun {
    assert!(
        Path::new("/usr/bin/gdb").exists(),
        "gdb is missing: apt-get install gdb (scripts/test.sh does)"
    );
    let site = module_site();
    let mut cmd = Command::new("gdb");
    cmd.args(["-nx", "-batch"])
        .arg("-ex")
        .arg(format!(
            "python import sys; sys.path.insert(0, {:?})",
            site.display().to_string()
        ))
        .args(["-ex", "python import mpidd.gdb"]);
    for c in commands {
        cmd.args(["-ex", c]);
    }
    let out = cmd.args(target).output().expect("run gdb");
    let run = GdbRun {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    for text in [&run.stdout, &run.stderr] {
        assert!(
            !text.contains("Traceback") && !text.contains("Python Exception"),
            "a Python traceback reached gdb:\n{}\n{}",
            run.stdout,
            run.stderr
        );
    }
    run
}

/// The text gdb printed between `echo @@BEGIN` and `echo @@END`.
fn between_markers(run: &GdbRun) -> &str {
    python_module::between_markers(&run.stdout, &run.stderr)
}

/// `mpi queues -json` in gdb on `target`, parsed.
fn gdb_queues(target: &[&str]) -> Value {
    let run = gdb(
        target,
        &["echo @@BEGIN\\n", "mpi queues -json", "echo @@END\\n"],
    );
    let text = between_markers(&run);
    serde_json::from_str(text).unwrap_or_else(|e| {
        panic!(
            "mpi queues -json did not print JSON ({e}):\n{}\nstderr:\n{}",
            run.stdout, run.stderr
        )
    })
}

/// The core of each rank, and the same queues through gdb and through
/// `mpidd queues --core`, checked against the program's expectations by
/// `check`; rank 0 and 2 also live, gdb attached to the stopped rank.
fn gdb_reads_as_mpidd(job: &Job, check: fn(i64, &Value), provenance: &str) {
    let exe = job.dir.join("queues");
    let exe = exe.to_str().unwrap();
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let core = core.to_str().unwrap();
        let ours = gdb_queues(&[exe, core]);
        let theirs = native(&["--core", core]);
        assert_eq!(
            ours, theirs,
            "rank {rank}: gdb's mpi queues -json differs from mpidd queues --core --json"
        );
        check(rank, &ours);
        if rank == 0 {
            same_text_as_mpidd(&[exe, core], core, provenance);
        }
        if rank % 2 == 0 {
            let pid = job.pid(rank).to_string();
            let live = gdb_queues(&["-p", &pid]);
            assert_eq!(
                live, theirs,
                "rank {rank}: gdb attached to the stopped rank differs from its core"
            );
            // gdb let it go as it found it: stopped by itself.
            wait_stopped(job.pid(rank));
            if rank == 0 {
                pages_forgotten_at_a_stop(&pid);
                wait_stopped(job.pid(rank));
            }
        }
    }
}

/// A stop of the inferior forgets the pages kept: after one instruction
/// of the stopped thread alone (the others held), the cache is empty.
fn pages_forgotten_at_a_stop(pid: &str) {
    let stats = "python import mpidd.gdb as g; s = g._current().rank.cache_stats(); \\
                 print('@@STATS', s['fetches'], s['hits'])";
    let run = gdb(
        &["-p", pid],
        &[
            "mpi queues",
            stats,
            "set scheduler-locking on",
            "stepi",
            stats,
        ],
    );
    let counts = cache_stats(&run);
    assert_eq!(counts.len(), 2, "{}\n{}", run.stdout, run.stderr);
    assert!(counts[0].0 > 0, "{counts:?}");
    assert_eq!(counts[1], (0, 0), "the pages outlived the stop: {counts:?}");
}

/// `mpi queues` in text: a line of provenance holding `provenance`, then
/// the very text `mpidd queues --core CORE` prints.
fn same_text_as_mpidd(target: &[&str], core: &str, provenance: &str) {
    let run = gdb(target, &["echo @@BEGIN\\n", "mpi queues", "echo @@END\\n"]);
    let text = between_markers(&run);
    let (first, queues) = text.split_once('\n').expect("a provenance line");
    assert!(
        first.starts_with("decoder mpich-") && first.contains(provenance),
        "{first}"
    );
    let out = mpidd()
        .args(["queues", "--core", core])
        .output()
        .expect("run mpidd");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(queues, String::from_utf8_lossy(&out.stdout));
}

/// gdb's one line of error for each bad command, and the next command run.
fn bad_input_is_one_line(target: &[&str]) {
    let run = gdb(
        target,
        &[
            "mpi handle -kind comm 0x12345",
            "echo after-garbage\\n",
            "mpi handle -kind comm 0xc7fff123",
            "echo after-unread\\n",
            "mpi handle 0x12345",
            "echo after-untyped\\n",
            "mpi handle -kind nonsense 1",
            "echo after-kind\\n",
            "mpi queues -bogus",
            "echo after-usage\\n",
        ],
    );
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("mpidd:"))
        .collect();
    assert_eq!(
        errors.len(),
        5,
        "one line of error per bad command:\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        errors[0].contains("0x00012345 is not an MPI_Comm handle"),
        "{errors:#?}"
    );
    assert!(
        errors[2].contains("not an MPI handle type: give its kind with -kind"),
        "{errors:#?}"
    );
    let mut last = 0;
    for marker in [
        "after-garbage",
        "after-unread",
        "after-untyped",
        "after-kind",
        "after-usage",
    ] {
        let at = run.stdout[last..]
            .find(marker)
            .unwrap_or_else(|| panic!("gdb did not go on to {marker}:\n{}", run.stdout));
        last += at;
    }
}

/// The page cache's counts (fetches, hits) printed in gdb.
fn cache_stats(run: &GdbRun) -> Vec<(u64, u64)> {
    run.stdout
        .lines()
        .filter_map(|l| l.strip_prefix("@@STATS "))
        .map(|l| {
            let mut words = l.split_whitespace().map(|w| w.parse::<u64>().unwrap());
            (words.next().unwrap(), words.next().unwrap())
        })
        .collect()
}

/// Within one stop, a second `mpi queues` is read from the pages kept by
/// the first: no call into gdb's memory reads.
fn pages_kept_within_a_stop(target: &[&str]) {
    let stats = "python import mpidd.gdb as g; s = g._current().rank.cache_stats(); \
                 print('@@STATS', s['fetches'], s['hits'])";
    // The model as Python values is the JSON `mpi queues -json` prints.
    let model = "python import json, mpidd.gdb as g; r = g._current().rank.queues(); \
                 print('@@MODEL', r['queues'] == json.loads(r['json']) and len(r['queues']) > 0)";
    let run = gdb(target, &["mpi queues", stats, "mpi queues", stats, model]);
    assert!(
        run.stdout.contains("@@MODEL True"),
        "the model differs from its JSON:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    let counts = cache_stats(&run);
    assert_eq!(counts.len(), 2, "{}\n{}", run.stdout, run.stderr);
    let ((fetched, hits), (fetched_again, hits_again)) = (counts[0], counts[1]);
    assert!(
        fetched > 0 && fetched < hits,
        "the first reading: {fetched} fetches for {hits} reads from kept pages"
    );
    assert_eq!(fetched_again, fetched, "the second reading fetched again");
    assert!(hits_again > hits, "{counts:?}");
}

#[test]
fn reference_mpich_in_gdb_reads_as_mpidd_and_prints_handles() {
    let job = Job::start("gdb-module-ref", &[]);
    gdb_reads_as_mpidd(&job, check_rank_native, "layouts from its DWARF");

    // The handle variables of main, as `print` shows them.
    let exe = job.dir.join("queues");
    for rank in 0..2 {
        let core = gcore(&job.dir, job.pid(rank));
        let target = [exe.to_str().unwrap(), core.to_str().unwrap()];
        let run = gdb(
            &target,
            &[
                "frame function main",
                "echo @@BEGIN\\n",
                "print dup",
                "print split",
                "print recvs[0]",
                "echo @@END\\n",
            ],
        );
        let printed: Vec<&str> = between_markers(&run).lines().collect();
        let (split, split_rank) = if rank == 0 {
            ("mpidd_split_even", 0)
        } else {
            ("mpidd_split_odd", 0)
        };
        assert_eq!(
            printed[0],
            format!("$1 = mpidd_dup size 4, rank {rank}"),
            "{printed:#?}"
        );
        assert_eq!(
            printed[1],
            format!("$2 = {split} size 2, rank {split_rank}"),
            "{printed:#?}"
        );
        if rank == 0 {
            // queues.c: rank 0's first receive, WORLD, source 1, tag 11
            // (its handle's index is the request pool's choice).
            assert!(
                printed[2].starts_with("$3 = MPI_Request 0xac")
                    && printed[2].ends_with(" receive, peer 1, tag 11, on MPI_COMM_WORLD, pending"),
                "{printed:#?}"
            );
        }
        if rank == 1 {
            // A variable's whole view, its kind from its type; and the
            // predefined communicators by name.
            let run = gdb(
                &target,
                &[
                    "frame function main",
                    "echo @@BEGIN\\n",
                    "mpi handle split",
                    "echo @@END\\n",
                ],
            );
            let view = between_markers(&run);
            for line in ["kind: comm", "  name: mpidd_split_odd", "  world rank: 1"] {
                assert!(view.lines().any(|l| l == line), "no {line:?} in:\n{view}");
            }
            for (name, size) in [("MPI_COMM_WORLD", 4), ("MPI_COMM_SELF", 1)] {
                let command = format!("mpi handle {name}");
                let run = gdb(&target, &["echo @@BEGIN\\n", &command, "echo @@END\\n"]);
                let view = between_markers(&run);
                for line in [
                    format!("predefined name: {name}"),
                    format!("  size: {size}"),
                    format!("  world rank: {rank}"),
                ] {
                    assert!(
                        view.lines().any(|l| l == line),
                        "{command}: no {line:?} in:\n{view}\n{}",
                        run.stderr
                    );
                }
            }
            bad_input_is_one_line(&target);
            pages_kept_within_a_stop(&target);
        }
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn debian_mpich_in_gdb_reads_as_mpidd_through_its_profile() {
    let job = Job::start_with(
        &stock_mpich(),
        "gdb-module-stock",
        "queues",
        &[],
        &[],
        &[] as &[(&str, &str)],
    );
    gdb_reads_as_mpidd(
        &job,
        check_rank_stock,
        "layouts from the profile of MPICH 4.0.2 (Debian 12",
    );

    // No debug info in the program: the handle is given with its kind.
    let exe = job.dir.join("queues");
    let core = gcore(&job.dir, job.pid(3));
    let target = [exe.to_str().unwrap(), core.to_str().unwrap()];
    // By its value and kind, and by its name (mpi.h's macro, which gdb
    // does not have).
    for command in [
        "mpi handle -kind comm 0x44000000",
        "mpi handle MPI_COMM_WORLD",
    ] {
        let run = gdb(&target, &["echo @@BEGIN\\n", command, "echo @@END\\n"]);
        let view = between_markers(&run);
        for line in [
            "predefined name: MPI_COMM_WORLD",
            "  size: 4",
            "  rank: 3",
            "  local world ranks: [0, 1, 2, 3]",
        ] {
            assert!(
                view.lines().any(|l| l == line),
                "{command}: no {line:?} in:\n{view}\n{}",
                run.stderr
            );
        }
    }
    // MPICH's Fortran INTEGER handle of MPI_COMM_WORLD is its C int, given
    // with -fortran or a trailing /f.
    for command in [
        "mpi handle -fortran -kind comm 1140850688",
        "mpi handle -kind comm 1140850688 /f",
    ] {
        let run = gdb(&target, &["echo @@BEGIN\\n", command, "echo @@END\\n"]);
        let view = between_markers(&run);
        assert!(
            view.lines().any(|l| l == "predefined name: MPI_COMM_WORLD"),
            "{command}:\n{view}\n{}",
            run.stderr
        );
    }
    bad_input_is_one_line(&target);
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// The module over readers and object lists that misbehave, in the
/// system's CPython (gdb's): mpidd-python/tests/rank_callbacks.py.
#[test]
fn misbehaving_callbacks_are_one_error_each() {
    let python = Path::new("/usr/bin/python3");
    assert!(
        python.exists(),
        "the system's python3 is missing: apt-get install python3 (scripts/test.sh does)"
    );
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../mpidd-python/tests/rank_callbacks.py");
    let libmpi = common::mpich_job::ref_mpich().join("lib/libmpi.so.12");
    let out = Command::new(python)
        .arg(script)
        .arg(module_site())
        .arg(libmpi)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}

/// With nothing to read, and on a process with no MPI library, each
/// command is one line saying so, and gdb goes on.
#[test]
fn no_target_and_no_mpi_are_one_line_each() {
    let run = gdb(
        &[],
        &[
            "mpi queues",
            "echo after-nothing\\n",
            "mpi handle -kind comm 1",
            "echo after-nothing-handle\\n",
        ],
    );
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("mpidd:"))
        .collect();
    assert_eq!(errors.len(), 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        errors.iter().all(|e| e.contains("no process or core file")),
        "{errors:#?}"
    );
    assert!(
        run.stdout.contains("after-nothing-handle"),
        "{}",
        run.stdout
    );

    // A process of a program with no MPI, stopped by gdb at its exit.
    let run = gdb(
        &["/bin/true"],
        &[
            "break exit",
            "run",
            "mpi queues",
            "echo after-no-mpi\\n",
            "kill",
        ],
    );
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("mpidd:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        errors[0].contains("no MPI library is loaded"),
        "{errors:#?}"
    );
    assert!(run.stdout.contains("after-no-mpi"), "{}", run.stdout);
}

/// Debian's stripped Open MPI 4.1 (handles are pointers; layouts from the
/// shipped profile), a 4-rank job of tests/openmpi/queues.c: gdb's
/// queues equal `mpidd queues --core` and what each rank wrote down it
/// posted; `MPI_COMM_WORLD` by name is the pointer the rank printed.
#[test]
fn debian_open_mpi_in_gdb_reads_as_mpidd() {
    let job = OmpiJob::start_on(OmpiBuild::Debian, "gdb-module-ompi", "queues");
    let exe = job.dir.join("queues");
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let core = core.to_str().unwrap();
        let target = [exe.to_str().unwrap(), core];
        let ours = gdb_queues(&target);
        assert_eq!(
            ours,
            native(&["--core", core]),
            "rank {rank}: gdb's mpi queues -json differs from mpidd queues --core --json"
        );
        ob1_checks::check_rank(rank, &ours, &job.posted(rank));
        // Open MPI's MPI_Comm is a pointer typedef: printed by its name too.
        let run = gdb(
            &target,
            &[
                "frame function main",
                "echo @@BEGIN\\n",
                "print dup",
                "echo @@END\\n",
            ],
        );
        assert_eq!(
            between_markers(&run).trim_end(),
            format!("$1 = mpidd_dup size 4, rank {rank}"),
            "{}",
            run.stderr
        );
        let run = gdb(
            &target,
            &[
                "echo @@BEGIN\\n",
                "mpi handle -json MPI_COMM_WORLD",
                "echo @@END\\n",
            ],
        );
        let view: Value = serde_json::from_str(between_markers(&run))
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
        assert_eq!(view["predefined_name"], "MPI_COMM_WORLD", "{view:#}");
        assert_eq!(view["details"]["rank"]["value"], rank, "{view:#}");
        assert_eq!(
            view["c_handle"]["value"]["pointer"],
            job.comm_world(rank),
            "{view:#}"
        );
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// `mpi where` on each rank of a hung ring, and `mpi job` on rank 0 and 1,
/// from its core and (rank 1)
/// live, gdb attached to the busy-polling rank: the rank is in
/// `MPI_Recv`, called from main at the ring's receive line, and waits for
/// its left neighbour, tag 0, on `MPI_COMM_WORLD` (tests/mpich/hang_ring.c
/// says so in its header).
fn where_and_job_in_a_hung_ring(mpi: HangMpi, name: &str) {
    let _serial = one_at_a_time();
    let job = HungJob::start_on(mpi, name, "hang_ring");
    let line = job.source_line("HANG_LINE");
    let cores = job.gcore_all("cores");
    let exe = job.dir.join("hang_ring");
    for rank in 0..4i64 {
        let left = (rank + 3) % 4;
        let core = cores.join(format!("core.{}", job.pid(rank)));
        let target = [exe.to_str().unwrap(), core.to_str().unwrap()];
        let run = gdb(&target, &["echo @@BEGIN\\n", "mpi where", "echo @@END\\n"]);
        check_where(between_markers(&run), left, line, &run.stderr);
        if rank == 0 {
            // The whole job: this rank through gdb, the other cores beside
            // its own by mpidd.
            let run = gdb(
                &target,
                &["echo @@BEGIN\\n", "mpi job -json", "echo @@END\\n"],
            );
            let report: Value = serde_json::from_str(between_markers(&run))
                .unwrap_or_else(|e| panic!("mpi job -json: {e}\n{}\n{}", run.stdout, run.stderr));
            check(&report, &Expected::ring(), &job, "gdb's mpi job on a core");
        }
        if rank == 1 {
            let pid = job.pid(rank).to_string();
            let run = gdb(
                &["-p", &pid],
                &[
                    "echo @@BEGIN\\n",
                    "mpi where",
                    "echo @@END\\n",
                    "echo @@BEGIN\\n",
                    "mpi job -json",
                    "echo @@END\\n",
                ],
            );
            check_where(between_markers(&run), left, line, &run.stderr);
            let second = &run.stdout[run.stdout.find("@@END").unwrap() + 5..];
            let report: Value =
                serde_json::from_str(python_module::between_markers(second, &run.stderr))
                    .unwrap_or_else(|e| {
                        panic!("mpi job -json: {e}\n{}\n{}", run.stdout, run.stderr)
                    });
            check(&report, &Expected::ring(), &job, "gdb's mpi job live");
        }
    }
    job.assert_running("after gdb detached");
}

/// What `mpi where` says of a ring rank blocked receiving from `left`.
fn check_where(text: &str, left: i64, line: usize, stderr: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}\n{stderr}");
    assert!(
        lines[0].starts_with("in MPI_Recv (point_to_point), called from main at ")
            && lines[0].ends_with(&format!("hang_ring.c:{line}")),
        "{text}\n{stderr}"
    );
    assert_eq!(
        lines[1],
        format!("waits for rank {left}: receive, tag 0, on MPI_COMM_WORLD"),
        "{text}"
    );
}

#[test]
fn mpi_where_and_mpi_job_on_a_hung_ring_of_the_reference_mpich() {
    where_and_job_in_a_hung_ring(HangMpi::ReferenceMpich, "gdb-where-ref");
}

#[test]
fn mpi_where_and_mpi_job_on_a_hung_ring_of_debian_open_mpi() {
    where_and_job_in_a_hung_ring(HangMpi::DebianOpenMpi, "gdb-where-ompi");
}

/// A program built against the MPI-5 standard ABI (pip's MPICH 5.0.2,
/// `mpicc_abi -g`, linked with `libmpi_abi.so.1`): its handles are
/// pointers, the predefined ones the standard's constants. From rank 0's
/// core, gdb reads the queues as mpidd does, `print` shows its `MPI_Comm`
/// and `MPI_Request` variables decoded, and `mpi handle` takes the
/// predefined communicator by name, by its constant and by its
/// `MPI_Comm_toint` INTEGER.
#[test]
fn an_mpi_abi_program_in_gdb_reads_as_mpidd_and_prints_handles() {
    let venv = WHEEL_5_0.venv();
    let tools = Toolchain {
        cc: venv.join("bin/mpicc_abi"),
        cflags: &["-g", "-O0"],
        mpiexec: venv.join("bin/mpiexec"),
    };
    let job = Job::start_with(
        &tools,
        "gdb-module-abi",
        "queues",
        &[],
        &[],
        &[] as &[(&str, &str)],
    );
    let exe = job.dir.join("queues");
    let core = gcore(&job.dir, job.pid(0));
    let target = [exe.to_str().unwrap(), core.to_str().unwrap()];
    assert_eq!(
        gdb_queues(&target),
        native(&["--core", core.to_str().unwrap()]),
        "gdb's mpi queues -json differs from mpidd queues --core --json"
    );
    let run = gdb(
        &target,
        &[
            "frame function main",
            "echo @@BEGIN\\n",
            "print dup",
            "print recvs[0]",
            "echo @@END\\n",
        ],
    );
    let printed: Vec<&str> = between_markers(&run).lines().collect();
    assert_eq!(printed[0], "$1 = mpidd_dup size 4, rank 0", "{printed:#?}");
    // queues.c: rank 0's first receive, WORLD, source 1, tag 11.
    assert!(
        printed[1].starts_with("$2 = MPI_Request 0x")
            && printed[1].ends_with(" receive, peer 1, tag 11, on MPI_COMM_WORLD, pending"),
        "{printed:#?}\n{}",
        run.stderr
    );
    for command in [
        "mpi handle MPI_COMM_WORLD",
        "mpi handle -kind comm 0x101",
        "mpi handle -fortran -kind comm 257",
    ] {
        let run = gdb(&target, &["echo @@BEGIN\\n", command, "echo @@END\\n"]);
        let view = between_markers(&run);
        for line in ["predefined name: MPI_COMM_WORLD", "  size: 4", "  rank: 0"] {
            assert!(
                view.lines().any(|l| l == line),
                "{command}: no {line:?} in:\n{view}\n{}",
                run.stderr
            );
        }
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
