//! The Python module inside the real lldb (Debian 12's lldb 14 and the
//! system's CPython 3.11 it embeds): the module's wheel is built and
//! installed into a directory (scripts/build-python-module.sh), which
//! lldb's `sys.path` gets, and `command script import mpidd.lldb` loads it
//! as a user's ~/.lldbinit does. On 4-rank jobs of tests/mpich/queues.c on
//! the reference MPICH (DWARF) and on Debian's stripped MPICH (the shipped
//! profile), and of tests/openmpi/queues.c on Debian's stripped Open MPI
//! (pointer handles), read from each rank's gcore core, and live with
//! lldb attached to a stopped rank:
//!
//! - `mpi queues -json` must give the very queues `mpidd queues --core
//!   CORE --json` gives for the same core, and what each rank posted;
//! - `frame variable` of the program's `MPI_Comm` and `MPI_Request`
//!   variables shows the decoded object in one line (the summaries), and
//!   its members as children (the synthetic children: `comm.size`, or
//!   `comm->size` for Open MPI's pointers);
//! - `mpi handle` decodes a variable and a predefined communicator by
//!   name, and garbage gives one line of error, after which lldb runs the
//!   next command.

mod common;

use std::path::Path;
use std::process::Command;

use common::hung_job::{HangMpi, HungJob};
use common::job_checks::{check, one_at_a_time, Expected};
use common::mpich_job::{gcore, gcore_each, stock_mpich, wait_stopped, Job};
use common::ob1_checks;
use common::ompi_job::{OmpiBuild, OmpiJob};
use common::python_module::{between_markers, module_site};
use common::queue_checks::{check_rank_native, check_rank_stock, native};
use serde_json::Value;

/// Where Debian 12's lldb 14 keeps its Python package: lldb looks for it
/// elsewhere (`lldb -P` names a directory that does not exist), so it is
/// given on PYTHONPATH, as the module's documentation tells users to.
const LLDB_PYTHON: &str = "/usr/lib/llvm-14/lib/python3.11/dist-packages";

/// What one lldb run printed.
struct LldbRun {
    stdout: String,
    stderr: String,
}

/// lldb in batch mode, without the user's init files, with the module
/// loaded as the documented .lldbinit line does, running `commands` on
/// the target given by `target` (`-c CORE PROGRAM`, or `-p PID`).
fn lldb(target: &[&str], commands: &[&str]) -> LldbRun {
    assert!(
        Path::new("/usr/bin/lldb").exists() && Path::new(LLDB_PYTHON).join("lldb").exists(),
        "lldb is missing: apt-get install lldb python3-lldb-14 (scripts/test.sh does)"
    );
    let site = module_site();
    let mut cmd = Command::new("lldb");
    cmd.env("PYTHONPATH", LLDB_PYTHON)
        .args(["--no-lldbinit", "--batch"])
        .args(target)
        .arg("-o")
        .arg(format!(
            "script import sys; sys.path.insert(0, {:?})",
            site.display().to_string()
        ))
        .args(["-o", "command script import mpidd.lldb"]);
    for c in commands {
        cmd.args(["-o", c]);
    }
    let out = cmd.output().expect("run lldb");
    let run = LldbRun {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    for text in [&run.stdout, &run.stderr] {
        assert!(
            !text.contains("Traceback"),
            "a Python traceback reached lldb:\n{}\n{}",
            run.stdout,
            run.stderr
        );
    }
    run
}

/// The text between the markers `script print('@@BEGIN')` and `@@END`.
fn marked(run: &LldbRun) -> String {
    // lldb echoes each command it runs: drop those lines.
    between_markers(&run.stdout, &run.stderr)
        .lines()
        .filter(|l| !l.starts_with("(lldb) "))
        .collect::<Vec<_>>()
        .join("\n")
}

const BEGIN: &str = "script print('@@BEGIN')";
const END: &str = "script print('@@END')";

/// Selects the frame of `main` in the stopped thread (a rank stopped
/// itself deep in libc).
const MAIN_FRAME: &str =
    "script t = lldb.debugger.GetSelectedTarget().GetProcess().GetSelectedThread(); \
     [t.SetSelectedFrame(i) for i in range(t.GetNumFrames()) \
      if t.GetFrameAtIndex(i).GetFunctionName() == 'main'][:0]";

/// `mpi queues -json` in lldb on `target`, parsed.
fn lldb_queues(target: &[&str]) -> Value {
    let run = lldb(target, &[BEGIN, "mpi queues -json", END]);
    let text = marked(&run);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "mpi queues -json did not print JSON ({e}):\n{}\nstderr:\n{}",
            run.stdout, run.stderr
        )
    })
}

/// Each rank's core read in lldb as `mpidd queues --core` reads it, and
/// as the program's expectations say; rank 0 also live, lldb attached to
/// the stopped rank.
fn lldb_reads_as_mpidd(job: &Job, check: fn(i64, &Value)) {
    let exe = job.dir.join("queues");
    let exe = exe.to_str().unwrap();
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let core = core.to_str().unwrap();
        let ours = lldb_queues(&["-c", core, exe]);
        let theirs = native(&["--core", core]);
        assert_eq!(
            ours, theirs,
            "rank {rank}: lldb's mpi queues -json differs from mpidd queues --core --json"
        );
        check(rank, &ours);
        if rank == 0 {
            let pid = job.pid(rank).to_string();
            let live = lldb_queues(&["-p", &pid]);
            assert_eq!(
                live, theirs,
                "rank {rank}: lldb attached to the stopped rank differs from its core"
            );
            // lldb let it go as it found it: stopped by itself.
            wait_stopped(job.pid(rank));
        }
    }
}

/// lldb's one line of error for each bad command, and the next command
/// run. (In batch mode lldb stops at the first failed `-o` command, as
/// it does not interactively: the commands are sourced from a file with
/// `command source -e false`, which goes on, as a session does.)
fn bad_input_is_one_line(target: &[&str], dir: &Path) {
    let commands = dir.join("bad-input.lldb");
    std::fs::write(
        &commands,
        [
            "mpi handle -kind comm 0x12345",
            "script print('after-garbage')",
            "mpi handle 0x12345",
            "script print('after-untyped')",
            "mpi handle -kind nonsense 1",
            "script print('after-kind')",
            "mpi queues -bogus",
            "script print('after-usage')",
        ]
        .join("\n"),
    )
    .unwrap();
    let source = format!("command source -e false {}", commands.display());
    let run = lldb(target, &[&source]);
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .chain(run.stdout.lines())
        .filter(|l| l.starts_with("error: mpidd:"))
        .collect();
    assert_eq!(
        errors.len(),
        4,
        "one line of error per bad command:\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        errors[0].contains("0x00012345 is not an MPI_Comm handle"),
        "{errors:#?}"
    );
    assert!(
        errors[1].contains("not an MPI handle type: give its kind with -kind"),
        "{errors:#?}"
    );
    let mut last = 0;
    for marker in [
        "\nafter-garbage",
        "\nafter-untyped",
        "\nafter-kind",
        "\nafter-usage",
    ] {
        let at = run.stdout[last..]
            .find(marker)
            .unwrap_or_else(|| panic!("lldb did not go on to {marker}:\n{}", run.stdout));
        last += at;
    }
}

#[test]
fn reference_mpich_in_lldb_reads_as_mpidd_and_shows_handles() {
    let job = Job::start("lldb-module-ref", &[]);
    lldb_reads_as_mpidd(&job, check_rank_native);
    let exe = job.dir.join("queues");
    for rank in 0..2 {
        let core = gcore(&job.dir, job.pid(rank));
        let target = ["-c", core.to_str().unwrap(), exe.to_str().unwrap()];
        let run = lldb(
            &target,
            &[
                MAIN_FRAME,
                BEGIN,
                "frame variable dup split",
                "frame variable recvs[0]",
                END,
            ],
        );
        let printed = marked(&run);
        let printed: Vec<&str> = printed.lines().collect();
        let split = if rank == 0 {
            "mpidd_split_even"
        } else {
            "mpidd_split_odd"
        };
        assert_eq!(
            printed[0],
            format!("(MPI_Comm) dup = mpidd_dup size 4, rank {rank}"),
            "{printed:#?}\n{}",
            run.stderr
        );
        assert_eq!(
            printed[1],
            format!("(MPI_Comm) split = {split} size 2, rank 0"),
            "{printed:#?}"
        );
        if rank == 0 {
            // queues.c: rank 0's first receive, WORLD, source 1, tag 11.
            assert!(
                printed[2].starts_with("(MPI_Request) recvs[0] = MPI_Request 0xac")
                    && printed[2].ends_with(" receive, peer 1, tag 11, on MPI_COMM_WORLD, pending"),
                "{printed:#?}"
            );
        }
        if rank == 1 {
            // The synthetic children: the members of the view, which an
            // IDE expands, and the CLI reaches by name (it prints an int
            // handle's summary alone).
            let run = lldb(
                &target,
                &[
                    MAIN_FRAME,
                    BEGIN,
                    "frame variable split.name split.rank split.size split.world_rank",
                    "frame variable split.local_world_ranks split.state",
                    END,
                ],
            );
            assert_eq!(
                marked(&run),
                "(char[16]) name = \"mpidd_split_odd\"\n\
                 (long long) rank = 0\n\
                 (long long) size = 2\n\
                 (long long) world_rank = 1\n\
                 (char[7]) local_world_ranks = \"[1, 3]\"\n\
                 (char[5]) state = \"live\"",
                "{}",
                run.stderr
            );
            let run = lldb(&target, &[MAIN_FRAME, BEGIN, "mpi handle split", END]);
            let view = marked(&run);
            for line in ["kind: comm", "  name: mpidd_split_odd", "  world rank: 1"] {
                assert!(
                    view.lines().any(|l| l == line),
                    "no {line:?} in:\n{view}\n{}",
                    run.stderr
                );
            }
            for (name, size) in [("MPI_COMM_WORLD", 4), ("MPI_COMM_SELF", 1)] {
                let command = format!("mpi handle {name}");
                let run = lldb(&target, &[BEGIN, &command, END]);
                let view = marked(&run);
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
            bad_input_is_one_line(&target, &job.dir);
        }
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn debian_mpich_in_lldb_reads_as_mpidd_through_its_profile() {
    let job = Job::start_with(
        &stock_mpich(),
        "lldb-module-stock",
        "queues",
        &[],
        &[],
        &[] as &[(&str, &str)],
    );
    lldb_reads_as_mpidd(&job, check_rank_stock);
    let exe = job.dir.join("queues");
    let core = gcore(&job.dir, job.pid(3));
    let target = ["-c", core.to_str().unwrap(), exe.to_str().unwrap()];
    for command in [
        "mpi handle -kind comm 0x44000000",
        "mpi handle MPI_COMM_WORLD",
    ] {
        let run = lldb(&target, &[BEGIN, command, END]);
        let view = marked(&run);
        for line in [
            "predefined name: MPI_COMM_WORLD",
            "  size: 4",
            "  world rank: 3",
        ] {
            assert!(
                view.lines().any(|l| l == line),
                "{command}: no {line:?} in:\n{view}\n{}",
                run.stderr
            );
        }
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// Debian's stripped Open MPI 4.1 (handles are pointers): lldb's queues
/// equal `mpidd queues --core` and what each rank wrote down it posted;
/// the `MPI_Comm` pointer variable shows its communicator.
#[test]
fn debian_open_mpi_in_lldb_reads_as_mpidd() {
    let job = OmpiJob::start_on(OmpiBuild::Debian, "lldb-module-ompi", "queues");
    let exe = job.dir.join("queues");
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let core = core.to_str().unwrap();
        let target = ["-c", core, exe.to_str().unwrap()];
        let ours = lldb_queues(&target);
        assert_eq!(
            ours,
            native(&["--core", core]),
            "rank {rank}: lldb's mpi queues -json differs from mpidd queues --core --json"
        );
        ob1_checks::check_rank(rank, &ours, &job.posted(rank));
        let run = lldb(
            &target,
            &[
                MAIN_FRAME,
                BEGIN,
                "frame variable dup",
                "frame variable dup->size dup->rank dup->name",
                END,
            ],
        );
        let printed = marked(&run);
        assert_eq!(
            printed,
            format!(
                "(MPI_Comm) dup = mpidd_dup size 4, rank {rank}\n\
                 (long long) size = 4\n\
                 (long long) rank = {rank}\n\
                 (char[10]) name = \"mpidd_dup\""
            ),
            "{}",
            run.stderr
        );
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// `mpi where` in lldb on each rank's core of a hung ring of Debian's Open
/// MPI, and live on rank 2, and `mpi job` on rank 0's core and rank 2
/// live, whose report is `mpidd job`'s: in `MPI_Recv`, called from main at the ring's
/// receive line, waiting for its left neighbour, tag 0, on
/// `MPI_COMM_WORLD` (tests/mpich/hang_ring.c's header).
#[test]
fn mpi_where_and_mpi_job_on_a_hung_ring() {
    let _serial = one_at_a_time();
    let job = HungJob::start_on(HangMpi::DebianOpenMpi, "lldb-where-ompi", "hang_ring");
    let line = job.source_line("HANG_LINE");
    let cores = job.gcore_all("cores");
    let exe = job.dir.join("hang_ring");
    for rank in 0..4i64 {
        let left = (rank + 3) % 4;
        let core = cores.join(format!("core.{}", job.pid(rank)));
        let mut targets = vec![vec![
            "-c".to_string(),
            core.display().to_string(),
            exe.display().to_string(),
        ]];
        if rank == 2 {
            targets.push(vec!["-p".to_string(), job.pid(rank).to_string()]);
        }
        for target in targets {
            let target: Vec<&str> = target.iter().map(String::as_str).collect();
            let run = lldb(&target, &[BEGIN, "mpi where", END]);
            let text = marked(&run);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 2, "{text}\n{}", run.stderr);
            assert!(
                lines[0].starts_with("in MPI_Recv (point_to_point), called from main at ")
                    && lines[0].ends_with(&format!("hang_ring.c:{line}")),
                "{text}\n{}",
                run.stderr
            );
            assert_eq!(
                lines[1],
                format!("waits for rank {left}: receive, tag 0, on MPI_COMM_WORLD"),
                "{text}"
            );
        }
        // The whole job: this rank through lldb, the others by mpidd, from
        // the cores beside its own (lldb 14 does not say which core it
        // has open) and live behind its launcher, mpirun.
        let job_of = |target: &[&str], command: &str, what: &str| {
            let run = lldb(target, &[BEGIN, command, END]);
            let report: Value = serde_json::from_str(&marked(&run))
                .unwrap_or_else(|e| panic!("{command}: {e}\n{}\n{}", run.stdout, run.stderr));
            check(&report, &Expected::ring(), &job, what);
        };
        if rank == 0 {
            let command = format!("mpi job -json -cores {}", cores.display());
            let target = ["-c", core.to_str().unwrap(), exe.to_str().unwrap()];
            job_of(&target, &command, "lldb's mpi job on a core");
        }
        if rank == 2 {
            let pid = job.pid(rank).to_string();
            job_of(&["-p", &pid], "mpi job -json", "lldb's mpi job live");
        }
    }
    job.assert_running("after lldb detached");
}
