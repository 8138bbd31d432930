//! What `mpidd job` must say of each hung mpi4py program of tests/python/,
//! from the program's own facts: the lines its markers name, the calls it
//! makes, the exception it raises. Nothing here comes from mpidd's output.

use serde_json::Value;

use super::python_job::{PyEnv, PyJob};

/// The `rank`'s entry of a job report.
fn rank<'a>(report: &'a Value, rank: i64, what: &str) -> &'a Value {
    report["ranks"]
        .as_array()
        .and_then(|ranks| ranks.iter().find(|r| r["world_rank"] == rank))
        .unwrap_or_else(|| panic!("{what}: no rank {rank} in {report:#}"))
}

fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v[field].as_str().unwrap_or("")
}

/// The first line (1-based) of the job's program that holds `code`.
fn code_line(job: &PyJob, code: &str) -> usize {
    let text = std::fs::read_to_string(&job.script).expect("read the job's program");
    text.lines()
        .position(|l| l.trim_start().starts_with(code))
        .unwrap_or_else(|| panic!("{} has no line starting {code:?}", job.script.display()))
        + 1
}

/// The Python frames of the rank's main thread, innermost first, as
/// `function at file:line` with the file's base name.
fn python_frames(r: &Value) -> Vec<String> {
    let main = r["threads"]
        .as_array()
        .and_then(|t| {
            t.iter()
                .find(|t| t["tid"] == r["pid"])
                .or_else(|| t.first())
        })
        .cloned()
        .unwrap_or(Value::Null);
    main["frames"]
        .as_array()
        .map(|frames| {
            frames
                .iter()
                .filter(|f| f["python"] == true)
                .map(|f| {
                    let file = text(f, "file").rsplit('/').next().unwrap_or("");
                    format!("{} at {file}:{}", text(f, "function"), f["line"])
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The version of pip's MPICH wheel installed in the environment, from
/// its `mpich-VERSION.dist-info` folder; `None` where pip's MPICH is not
/// the MPI.
fn pip_mpich_version(job: &PyJob) -> Option<String> {
    let site = match job.env {
        PyEnv::HostMpich => job.env.dir().join("lib/python3.11/site-packages"),
        PyEnv::Debian13 => job
            .env
            .dir()
            .join("opt/mpidd-venv/lib/python3.13/site-packages"),
        PyEnv::HostOpenMpi => return None,
    };
    let entries = std::fs::read_dir(&site).unwrap_or_else(|e| panic!("{}: {e}", site.display()));
    let found = entries.filter_map(|e| e.ok()).find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name.strip_prefix("mpich-")?
            .strip_suffix(".dist-info")
            .map(str::to_string)
    });
    Some(found.unwrap_or_else(|| panic!("no mpich-*.dist-info in {}", site.display())))
}

/// Every rank runs the environment's CPython and shows Python frames; a
/// rank of pip's MPICH has its queues read by the CH4 decoder of the
/// version its library's file states, through that version's release
/// family.
fn common(job: &PyJob, report: &Value, what: &str) {
    let mpich = pip_mpich_version(job);
    for &(world, _) in &job.ranks {
        let r = rank(report, world, what);
        assert_eq!(
            text(r, "python"),
            job.env.python_version(),
            "{what}: rank {world}'s Python version; its errors: {}",
            r["errors"]
        );
        if let Some(version) = &mpich {
            let queues = &r["basis"]["queues"];
            assert_eq!(queues["status"], "read", "{what}: rank {world}: {queues:#}");
            assert!(
                text(queues, "by").contains(&format!("MPICH {version} decoder (ch4:")),
                "{what}: rank {world}'s queues are not read by MPICH {version}'s decoder: {queues:#}"
            );
        }
    }
    let headline = report["verdict"][0].as_str().unwrap_or("");
    assert!(
        !headline.starts_with("No rank waits") && !headline.starts_with("NOT KNOWN"),
        "{what}: a hung job is never cleared: {headline}"
    );
}

/// The ranks other than `except`, as the verdict names a set: runs of
/// two or more as `first-last` (`0,2-3`).
fn others(job: &PyJob, except: i64) -> String {
    let mut ranks: Vec<i64> = job
        .ranks
        .iter()
        .map(|r| r.0)
        .filter(|&r| r != except)
        .collect();
    ranks.sort();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", ranks[i], ranks[j])
        } else {
            ranks[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

fn verdict_has(report: &Value, needle: &str, what: &str) {
    let lines: Vec<&str> = report["verdict"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(
        lines.iter().any(|l| l.contains(needle)),
        "{what}: no verdict line says {needle:?}:\n{}",
        lines.join("\n")
    );
}

/// Checks a report (live or from cores) of `program` run with `args`.
pub fn check_report(job: &PyJob, program: &str, args: &[&str], report: &Value, what: &str) {
    common(job, report, what);
    let file = format!("{program}.py");
    match (program, args.first().copied()) {
        ("ring_recv", _) => {
            let hang = job.source_line("# hang: every rank");
            let module = code_line(job, "pass_token(MPI.COMM_WORLD)");
            for &(world, _) in &job.ranks {
                let r = rank(report, world, what);
                assert_eq!(
                    text(r, "location"),
                    format!("pass_token at {file}:{hang}"),
                    "{what}: rank {world}"
                );
                assert_eq!(text(r, "python_call"), "Comm.recv", "{what}: rank {world}");
                assert!(
                    text(r, "python_statement").starts_with("token = comm.recv("),
                    "{what}: rank {world}: {r:#}"
                );
                assert_eq!(
                    python_frames(r),
                    [
                        format!("pass_token at {file}:{hang}"),
                        format!("<module> at {file}:{module}")
                    ],
                    "{what}: rank {world}'s Python frames"
                );
            }
            let headline = report["verdict"][0].as_str().unwrap_or("");
            assert!(headline.starts_with("DEADLOCK"), "{what}: {headline}");
        }
        ("raise_barrier", Some(mode)) => {
            let barrier = job.source_line("# hang: ranks other than 1");
            for &(world, _) in job.ranks.iter().filter(|r| r.0 != 1) {
                let r = rank(report, world, what);
                assert_eq!(
                    text(r, "location"),
                    format!("main at {file}:{barrier}"),
                    "{what}: rank {world}"
                );
                assert_eq!(
                    text(r, "python_call"),
                    "Comm.Barrier",
                    "{what}: rank {world}"
                );
            }
            let one = rank(report, 1, what);
            let waiting = others(job, 1);
            if mode == "hold" {
                let raise = job.source_line("# raise: rank 1");
                let hold = job.source_line("# hang: rank 1 (hold)");
                assert_eq!(text(one, "way_out"), "python_exception", "{what}: {one:#}");
                let e = &one["python_exception"];
                assert_eq!(text(e, "type_name"), "ValueError", "{what}: {e:#}");
                assert_eq!(text(e, "message"), "bad input on rank 1", "{what}: {e:#}");
                assert_eq!(text(e, "state"), "handled", "{what}: {e:#}");
                assert_eq!(
                    text(&e["raised_at"], "function"),
                    "parse_record",
                    "{what}: {e:#}"
                );
                assert_eq!(e["raised_at"]["line"], raise, "{what}: {e:#}");
                let headline = report["verdict"][0].as_str().unwrap_or("");
                assert!(
                    headline.starts_with(&format!(
                        "HUNG: rank 1 is in Python's exception handling after it raised ValueError while rank(s) {waiting} wait for it"
                    )),
                    "{what}: {headline}"
                );
                verdict_has(
                    report,
                    &format!(
                        "rank 1 raised ValueError('bad input on rank 1') at {file}:{raise} in parse_record(), and is handling it at {file}:{hold} in wait_for_debugger(); ranks {waiting} wait for it in MPI_Barrier"
                    ),
                    what,
                );
            } else {
                // Its traceback printed, Python exits, and mpi4py's exit
                // handler finalizes MPI: no Python frame is left.
                assert_eq!(text(one, "way_out"), "finalize", "{what}: {one:#}");
                assert_eq!(text(one, "mpi_call"), "MPI_Finalize", "{what}: {one:#}");
                assert!(
                    python_frames(one).is_empty(),
                    "{what}: {:?}",
                    python_frames(one)
                );
                let headline = report["verdict"][0].as_str().unwrap_or("");
                assert!(
                    headline.starts_with(&format!(
                        "HUNG: rank 1 is in MPI_Finalize while rank(s) {waiting} wait for it"
                    )),
                    "{what}: {headline}"
                );
            }
        }
        ("bcast_reduce", _) => {
            let reduce = job.source_line("# hang: rank 1, reduce");
            let one = rank(report, 1, what);
            assert_eq!(
                text(one, "location"),
                format!("sum_norms at {file}:{reduce}"),
                "{what}: {one:#}"
            );
            assert_eq!(text(one, "python_call"), "Comm.reduce", "{what}");
            assert!(
                text(one, "python_statement").starts_with("return comm.reduce("),
                "{what}: {one:#}"
            );
        }
        ("python_loop", _) => {
            let spin = job.source_line("# hang: rank 0");
            let recv = job.source_line("# hang: rank 1");
            let barrier = job.source_line("# hang: ranks 2 and up");
            let zero = rank(report, 0, what);
            assert_eq!(text(zero, "state"), "outside_mpi", "{what}: {zero:#}");
            assert_eq!(
                text(zero, "location"),
                format!("compute at {file}:{spin}"),
                "{what}"
            );
            let one = rank(report, 1, what);
            assert_eq!(
                text(one, "location"),
                format!("wait_for_result at {file}:{recv}"),
                "{what}"
            );
            assert_eq!(text(one, "python_call"), "Comm.recv", "{what}");
            for &(world, _) in job.ranks.iter().filter(|r| r.0 >= 2) {
                let r = rank(report, world, what);
                assert_eq!(
                    text(r, "location"),
                    format!("wait_for_all at {file}:{barrier}"),
                    "{what}: rank {world}"
                );
            }
            let headline = report["verdict"][0].as_str().unwrap_or("");
            assert!(headline.starts_with("HUNG OR SLOW"), "{what}: {headline}");
            verdict_has(
                report,
                &format!("rank 0 is outside MPI at {file}:{spin} in compute()"),
                what,
            );
        }
        other => panic!("no expectations for {other:?}"),
    }
}
