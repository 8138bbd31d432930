//! The two checks every MPI goes through: the tracer's stops against the
//! `mpidd` CLI and gdb, and its `job` verdict against `mpidd job`.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{
    fresh_dir, gdb_backtrace, json_of, mpidd, one_job_at_a_time, plain, signal, stop_frames,
    wait_stopped, Embed, Job, Mpi, LIMIT,
};

/// Attaches the example to rank 0 with a breakpoint at MPI_Recv and
/// checks its three stops (SIGUSR1, then the breakpoint at the MPI_Recv
/// that returns, then at the one that blocks): the queues it shows are
/// what `mpidd queues --no-stop` reads of the rank held at the same stop,
/// the handles of each MPI_Recv call are what `mpidd handle --no-stop`
/// makes of the same values and what the program made them (the second
/// time on the layouts the first chose), and the stack it shows at the
/// last breakpoint has gdb's frames.
pub fn attach_shows_what_mpidd_and_gdb_show(mpi: &Mpi) {
    let _one = one_job_at_a_time();
    let job = Job::start(mpi, &format!("embed-attach-{}", mpi.name));
    let pid = job.ranks[0];
    let pause = job.dir.join("pause");
    let pid_arg = pid.to_string();
    let mut embed = Embed::start(&[
        "attach",
        &pid_arg,
        "--break",
        "MPI_Recv",
        "--stops",
        "3",
        "--json",
        "--leave-stopped",
        "--pause-at-stop",
        pause.to_str().unwrap(),
    ]);
    embed.wait_stderr("mpidd-embed: tracing");
    // The rank waits for SIGUSR1 before it calls MPI_Recv: the first stop
    // is the signal's, the others the breakpoint's.
    signal(pid, "USR1");
    let mut stops = Vec::new();
    for n in 1..=3 {
        let stop = embed.next_stop();
        assert_eq!(stop["stop"], n, "{stop}");
        assert!(pause.exists(), "stop {n}: the rank is not held: {stop}");
        let cli = json_of(mpidd().args(["queues", "--pid", &pid_arg, "--no-stop", "--json"]));
        assert!(
            stop["queues"].is_object(),
            "stop {n}: no queues: {}",
            stop["queues_error"]
        );
        assert!(
            stop["provenance"].as_str().is_some_and(|p| !p.is_empty()),
            "stop {n}: the queues do not say what they rest on: {stop}"
        );
        assert_eq!(
            stop["queues"], cli,
            "stop {n}: mpidd-embed's queues (left) differ from mpidd queues' (right)"
        );
        let world = cli["communicators"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["name"] == "MPI_COMM_WORLD"))
            .unwrap_or_else(|| panic!("no MPI_COMM_WORLD in {cli}"));
        let receives = world["pending_receives"]["operations"]
            .as_array()
            .map_or(0, Vec::len);
        assert!(
            receives >= 2,
            "stop {n}: the two receives rank 0 posted are not in {world}"
        );
        if n == 1 {
            assert!(stop["call"].is_null(), "a signal stops in no call: {stop}");
        } else {
            call_handles_are_mpidds(&stop, &pid_arg, 0);
        }
        std::fs::remove_file(&pause).expect("let the tracer go on");
        stops.push(stop);
    }
    assert_eq!(stops[0]["reason"]["kind"], "signal", "{}", stops[0]);
    assert_eq!(stops[0]["reason"]["signal"], "SIGUSR1", "{}", stops[0]);
    for stop in &stops[1..] {
        assert_eq!(stop["reason"]["kind"], "breakpoint", "{stop}");
        assert_eq!(stop["tid"], pid, "the main thread calls MPI_Recv");
    }
    for field in ["comm", "datatype"] {
        assert_eq!(
            stops[1]["call"][field]["value"], stops[2]["call"][field]["value"],
            "both MPI_Recv calls take the same {field}"
        );
    }
    embed.finish();
    // --leave-stopped: the rank is stopped, at MPI_Recv's entry, for gdb.
    wait_stopped(pid);
    let gdb = gdb_backtrace(pid);
    let ours = stop_frames(&stops[2], pid);
    signal(pid, "CONT");
    let named = |f: &[Option<String>]| -> Vec<String> {
        f.iter().flatten().map(|n| plain(n).to_string()).collect()
    };
    assert_eq!(
        named(&gdb).first().map(String::as_str),
        Some("MPI_Recv"),
        "gdb: {gdb:?}"
    );
    assert!(named(&gdb).iter().any(|n| n == "main"), "gdb: {gdb:?}");
    // gdb stops at main; every frame it names is ours, in the same place.
    for (i, frame) in gdb.iter().enumerate() {
        if let Some(name) = frame {
            assert_eq!(
                ours.get(i).cloned().flatten().as_deref().map(plain),
                Some(plain(name)),
                "frame {i}: gdb {gdb:?}, mpidd-embed {ours:?}"
            );
        }
    }
    drop(job);
}

/// Checks the handles a stop at MPI_Recv shows: each view is what `mpidd
/// handle --pid PID --no-stop` prints for the same value (the rank held
/// at the stop meanwhile), and is what tests/c/recv_stops.c made: the
/// communicator its MPI_Comm_dup of MPI_COMM_WORLD named
/// "recv_stops_comm" (2 ranks, this one `rank`), the datatype its
/// MPI_Type_vector(2, 1, 2, MPI_INT) named "int_strided" (8 bytes of
/// data, an extent of 3 ints, committed).
pub fn call_handles_are_mpidds(stop: &Value, pid_arg: &str, rank: i64) {
    let call = &stop["call"];
    assert_eq!(call["function"], "MPI_Recv", "{stop}");
    for (field, kind) in [("comm", "comm"), ("datatype", "datatype")] {
        let arg = &call[field];
        assert!(
            arg["view"].is_object(),
            "the call's {field} is not resolved: {arg}"
        );
        let value = arg["value"]
            .as_i64()
            .unwrap_or_else(|| panic!("the call's {field} has no value: {arg}"))
            .to_string();
        let cli = json_of(mpidd().args([
            "handle",
            "--pid",
            pid_arg,
            "--no-stop",
            "--kind",
            kind,
            "--value",
            &value,
            "--json",
        ]));
        assert_eq!(
            arg["view"], cli,
            "the call's {field}: mpidd-embed's view (left) differs from mpidd handle's (right)"
        );
    }
    let comm = &call["comm"]["view"];
    assert_eq!(comm["kind"], "comm", "{comm}");
    assert_eq!(comm["predefined"], false, "a dup is not predefined: {comm}");
    let details = &comm["details"];
    assert_eq!(details["name"]["value"], "recv_stops_comm", "{comm}");
    assert_eq!(details["size"]["value"], 2, "{comm}");
    assert_eq!(details["rank"]["value"], rank, "{comm}");
    assert_eq!(details["world_rank"]["value"], rank, "{comm}");
    let datatype = &call["datatype"]["view"];
    assert_eq!(datatype["kind"], "datatype", "{datatype}");
    assert_eq!(datatype["predefined"], false, "{datatype}");
    let details = &datatype["details"];
    assert_eq!(details["name"]["value"], "int_strided", "{datatype}");
    let int = std::mem::size_of::<std::ffi::c_int>() as i64;
    assert_eq!(details["size"]["value"], 2 * int, "{datatype}");
    assert_eq!(details["extent"]["value"], 3 * int, "{datatype}");
    assert_eq!(details["committed"]["value"], true, "{datatype}");
    assert_eq!(
        details["constructor"]["value"]["combiner"], "MPI_COMBINER_VECTOR",
        "{datatype}"
    );
}

/// Lets both ranks into MPI_Recv (a receive-receive deadlock) and checks
/// that `mpidd-embed job` gives the verdict and cycles `mpidd job` gives.
pub fn job_gives_mpidds_verdict(mpi: &Mpi) {
    let _one = one_job_at_a_time();
    let job = Job::start(mpi, &format!("embed-job-{}", mpi.name));
    for &pid in &job.ranks {
        signal(pid, "USR1");
    }
    let launcher = job.launcher_pid().to_string();
    let cli_job = || json_of(mpidd().args(["job", "--pid", &launcher, "--json"]));
    // Until both ranks are in MPI_Recv, mpidd sees no deadlock yet.
    let deadline = Instant::now() + LIMIT;
    let cli = loop {
        let report = cli_job();
        if report["verdict"][0]
            .as_str()
            .is_some_and(|v| v.starts_with("DEADLOCK"))
        {
            break report;
        }
        assert!(
            Instant::now() < deadline,
            "mpidd job never saw the deadlock: {}",
            report["verdict"]
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let pids: Vec<String> = job.ranks.iter().map(i32::to_string).collect();
    let mut args = vec!["job"];
    args.extend(pids.iter().map(String::as_str));
    args.push("--json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mpidd-embed"))
        .args(&args)
        .output()
        .expect("run mpidd-embed job");
    assert!(
        out.status.success(),
        "mpidd-embed job failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours: Value = serde_json::from_slice(&out.stdout).expect("mpidd-embed job --json");
    assert_eq!(ours["verdict"], cli["verdict"], "the verdicts differ");
    assert_eq!(ours["cycles"], cli["cycles"], "the cycles differ");
    assert_eq!(
        cli["cycles"],
        serde_json::json!([[0, 1]]),
        "{}",
        cli["verdict"]
    );
    // Let go: neither rank is traced or stopped any more.
    for &pid in &job.ranks {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        assert!(status.contains("TracerPid:\t0"), "rank {pid} still traced");
        assert!(!status.contains("State:\tT"), "rank {pid} left stopped");
    }
    drop(job);
}

/// Runs each rank under `mpidd-embed run` (as `mpirun -n 2 gdb PROGRAM`
/// would) and checks the two stops each shows: SIGUSR1, then the
/// breakpoint at MPI_Recv with the rank's own queues (its world rank, the
/// two receives it posted), the call's communicator and datatype as the
/// rank sees them, and a stack from MPI_Recv down to main.
pub fn run_under_launcher_shows_each_rank(mpi: &Mpi) {
    let _one = one_job_at_a_time();
    let embed = env!("CARGO_BIN_EXE_mpidd-embed");
    // Each tracer writes its stops to a file of its own: the launcher
    // forwards the ranks' output in pieces and may mix two long lines.
    let out = fresh_dir(&format!("embed-run-{}-stops", mpi.name)).join("stops-{pid}.json");
    let out = out.to_str().expect("a UTF-8 scratch path");
    let job = Job::start_under(
        mpi,
        &format!("embed-run-{}", mpi.name),
        &[
            embed, "run", "--break", "MPI_Recv", "--stops", "2", "--json", "--out", out, "--",
        ],
    );
    for &pid in &job.ranks {
        signal(pid, "USR1");
    }
    let deadline = Instant::now() + LIMIT;
    let stops: Vec<Value> = loop {
        let stops: Vec<Value> = job
            .ranks
            .iter()
            .flat_map(|pid| {
                let text = std::fs::read_to_string(out.replace("{pid}", &pid.to_string()))
                    .unwrap_or_default();
                // Only whole lines: the tracer may be writing the last one.
                let whole = text
                    .rsplit_once('\n')
                    .map_or("", |(done, _)| done)
                    .to_string();
                whole
                    .lines()
                    .map(|line| serde_json::from_str(line).expect("a stop is one JSON object"))
                    .collect::<Vec<Value>>()
            })
            .collect();
        if stops.len() >= 4 {
            break stops;
        }
        assert!(
            Instant::now() < deadline,
            "4 stops within the bound; got {stops:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    for (rank, &pid) in job.ranks.iter().enumerate() {
        let mine: Vec<&Value> = stops.iter().filter(|s| s["pid"] == pid).collect();
        assert_eq!(mine.len(), 2, "rank {rank}: {stops:?}");
        assert_eq!(mine[0]["reason"]["signal"], "SIGUSR1", "{}", mine[0]);
        let stop = mine[1];
        assert_eq!(stop["reason"]["kind"], "breakpoint", "{stop}");
        let queues = &stop["queues"];
        assert_eq!(queues["global_rank"], rank, "{stop}");
        let world = queues["communicators"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["name"] == "MPI_COMM_WORLD"))
            .unwrap_or_else(|| panic!("no MPI_COMM_WORLD: {stop}"));
        let tags: Vec<&Value> = world["pending_receives"]["operations"]
            .as_array()
            .map(|ops| ops.iter().map(|o| &o["desired_tag"]).collect())
            .unwrap_or_default();
        assert_eq!(tags, [11, 12], "rank {rank}'s posted receives: {world}");
        // The MPI_Recv's communicator is this rank's own view of the dup.
        let comm = &stop["call"]["comm"]["view"]["details"];
        assert_eq!(comm["name"]["value"], "recv_stops_comm", "{stop}");
        assert_eq!(comm["rank"]["value"], rank, "{stop}");
        assert_eq!(
            stop["call"]["datatype"]["view"]["details"]["name"]["value"], "int_strided",
            "{stop}"
        );
        let names: Vec<String> = stop_frames(stop, pid)
            .into_iter()
            .flatten()
            .map(|n| plain(&n).to_string())
            .collect();
        assert_eq!(
            names.first().map(String::as_str),
            Some("MPI_Recv"),
            "{names:?}"
        );
        assert_eq!(names.get(1).map(String::as_str), Some("main"), "{names:?}");
        // Traced from its exec on, the threads MPI_Init started (Open
        // MPI's progress threads) were followed as they were cloned.
        let threads = stop["threads"].as_array().map_or(0, Vec::len);
        assert!(
            threads > 1,
            "rank {rank}: only {threads} thread shown: {stop}"
        );
    }
    drop(job);
}

/// Breaks at `usleep`, which rank 0 calls every 10 ms while it waits, and
/// shows three stops: the tracer steps over its breakpoint twice. Then
/// the rank, let go, still runs as it should: SIGUSR1 takes it on into
/// MPI_Recv, as `mpidd job` shows.
pub fn stepping_over_a_breakpoint_keeps_the_rank_running(mpi: &Mpi) {
    let _one = one_job_at_a_time();
    let job = Job::start(mpi, &format!("embed-step-{}", mpi.name));
    let pid = job.ranks[0];
    let pid_arg = pid.to_string();
    let mut embed = Embed::start(&[
        "attach", &pid_arg, "--break", "usleep", "--stops", "3", "--json",
    ]);
    let mut pcs = Vec::new();
    for n in 1..=3 {
        let stop = embed.next_stop();
        assert_eq!(stop["stop"], n, "{stop}");
        assert_eq!(stop["reason"]["kind"], "breakpoint", "{stop}");
        assert_eq!(stop["tid"], pid, "{stop}");
        let names: Vec<String> = stop_frames(&stop, pid).into_iter().flatten().collect();
        assert_eq!(
            names.first().map(String::as_str),
            Some("usleep"),
            "{names:?}"
        );
        assert_eq!(names.get(1).map(String::as_str), Some("main"), "{names:?}");
        pcs.push(stop["threads"][0]["frames"][0]["pc"].clone());
    }
    assert!(
        pcs.iter().all(|pc| *pc == pcs[0]),
        "every stop at usleep's entry: {pcs:?}"
    );
    embed.finish();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    assert!(
        status.contains("TracerPid:\t0"),
        "rank still traced: {status}"
    );
    signal(pid, "USR1");
    let launcher = job.launcher_pid().to_string();
    let deadline = Instant::now() + LIMIT;
    loop {
        let report = json_of(mpidd().args(["job", "--pid", &launcher, "--json"]));
        let call = report["ranks"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["pid"] == pid))
            .map(|r| r["mpi_call"].clone());
        if call == Some(Value::from("MPI_Recv")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "rank 0 never reached MPI_Recv after the tracer let it go: {call:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(job);
}
