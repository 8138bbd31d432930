//! The Slurm fan-out without a cluster: `scontrol` and `srun` are stand-in
//! shell scripts. The `srun` stand-in writes agent records as `srun
//! --label` brings them back (a long one cut into pieces), so the merge,
//! the ranks no agent reported and the timeout that names the node that
//! did not answer are checked as the front end sees them. The real
//! cluster's tests are the `mpidd` package's `slurm_job`.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mpidd_job::agent_stream::{
    AgentEnding, AgentHeader, AgentRecord, AgentTrailer, RankRecord, UnreadableRank, AGENT_FORMAT,
};
use mpidd_job::slurm::fanout::{
    read_step, FanoutError, FanoutEvent, FanoutOptions, NodeSilence, StepSource,
};
use mpidd_job::synthetic::SyntheticRank;

/// `scontrol -o show step` of job 5: step 0 on n[1-2] with 3 tasks, and
/// the batch step.
const STEPS: &str = "StepId=5.0 UserId=0 State=RUNNING NodeList=n[1-2] Nodes=2 Tasks=3 \
                     Name=ring SrunHost:Pid=login:100\nStepId=5.batch NodeList=n1";

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The stand-ins in `dir`: `scontrol` prints `steps`; `srun` records its
/// arguments, prints `output`, then sleeps when `hang` (so that only the
/// timeout ends the wait) or exits.
fn stand_ins(dir: &Path, steps: &str, output: &str, hang: bool) -> FanoutOptions {
    std::fs::write(dir.join("steps"), steps).unwrap();
    std::fs::write(dir.join("output"), output).unwrap();
    let scontrol = dir.join("scontrol");
    script(
        &scontrol,
        &format!(
            "case \"$2\" in\n  show) cat {steps} ;;\n  hostnames) printf 'n1\\nn2\\n' ;;\n  \
             *) echo \"scontrol: bad arguments $*\" >&2; exit 1 ;;\nesac",
            steps = dir.join("steps").display()
        ),
    );
    let srun = dir.join("srun");
    script(
        &srun,
        &format!(
            "printf '%s\\n' \"$@\" > {args}\necho 'srun: job 5: agents started' >&2\nsleep 0.2\ncat {output}\n{end}",
            args = dir.join("srun-args").display(),
            output = dir.join("output").display(),
            end = if hang { "exec sleep 30" } else { "exit 0" }
        ),
    );
    FanoutOptions {
        timeout: Duration::from_secs(20),
        rank_timeout: Duration::from_secs(7),
        agent_args: vec!["--no-stacks".to_string()],
        srun,
        scontrol,
        grace: Duration::from_millis(500),
        ..FanoutOptions::new("/opt/mpidd/bin/mpidd")
    }
}

fn header(node: &str, ranks: usize) -> AgentRecord {
    AgentRecord::Header(AgentHeader {
        format: AGENT_FORMAT.to_string(),
        node: node.to_string(),
        host: format!("host-{node}"),
        agent_pid: 42,
        version: "0.1.0".to_string(),
        step: Some("5.0".to_string()),
        ranks,
        rank_timeout_ms: 7000,
    })
}

fn rank(node: &str, world: i64) -> AgentRecord {
    AgentRecord::Rank(RankRecord {
        node: node.to_string(),
        seconds: 0.25,
        reading: SyntheticRank::new(world, 3)
            .receive("MPI_COMM_WORLD", (world + 1) % 3, Some(7))
            .stack(&["main", "MPI_Recv", "poll"])
            .reading(),
    })
}

fn trailer(node: &str, read: usize, unreadable: usize) -> AgentRecord {
    AgentRecord::Trailer(AgentTrailer {
        node: node.to_string(),
        read,
        unreadable,
        seconds: 0.5,
        ending: AgentEnding::Complete,
    })
}

/// The records as `srun --label` passes them on: each line labelled with
/// its task, a long one cut into pieces of 100 bytes.
fn labelled(task: u32, records: &[AgentRecord]) -> String {
    let mut out = String::new();
    for r in records {
        let line = String::from_utf8(r.to_line()).unwrap();
        for piece in line.trim_end().as_bytes().chunks(100) {
            out.push_str(&format!(
                "{task:>2}: {}\n",
                std::str::from_utf8(piece).unwrap()
            ));
        }
    }
    out
}

fn run(
    options: &FanoutOptions,
    name: &str,
) -> (
    Result<mpidd_job::slurm::fanout::FanoutReport, FanoutError>,
    Vec<FanoutEvent>,
) {
    let mut events = Vec::new();
    let source = StepSource::Step(name.parse().unwrap());
    let report = read_step(&source, options, &mut |e| events.push(e));
    (report, events)
}

fn world_ranks(readings: &[mpidd_job::RankReading]) -> Vec<i64> {
    let mut w: Vec<i64> = readings.iter().filter_map(|r| r.world_rank).collect();
    w.sort();
    w
}

#[test]
fn the_records_of_every_node_are_merged_into_the_readings_of_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let n2 = [
        header("n2", 1),
        AgentRecord::Unreadable(UnreadableRank {
            node: "n2".into(),
            target: "pid 77".into(),
            pid: Some(77),
            world_rank: Some(2),
            reason: "PTRACE_SEIZE failed: EPERM".into(),
        }),
        trailer("n2", 0, 1),
    ];
    let n1 = [
        header("n1", 2),
        rank("n1", 0),
        rank("n1", 1),
        trailer("n1", 2, 0),
    ];
    // The two nodes' lines interleaved, with a message of the agent's own.
    let output = format!(
        "{}{}{} 0: mpidd: warning: a note of the agent\n",
        labelled(1, &n2[..1]),
        labelled(0, &n1),
        labelled(1, &n2[1..])
    );
    let options = stand_ins(dir.path(), STEPS, &output, false);
    let (report, events) = run(&options, "5");
    let report = report.unwrap();
    assert_eq!(report.step.id, "5.0");
    assert_eq!(report.nodes, ["n1", "n2"]);
    assert!(report.missing.is_empty(), "{:?}", report.missing);
    assert_eq!(world_ranks(&report.readings), [0, 1, 2]);
    let two = report
        .readings
        .iter()
        .find(|r| r.world_rank == Some(2))
        .unwrap();
    assert_eq!(two.host.as_deref(), Some("n2"));
    assert_eq!(two.errors, ["PTRACE_SEIZE failed: EPERM"]);
    assert!(report.bytes > 0);

    let args = std::fs::read_to_string(dir.path().join("srun-args")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    for want in [
        "--jobid=5",
        "--overlap",
        "--nodes=2",
        "--ntasks-per-node=1",
        "--nodelist=n[1-2]",
        "--label",
        "/opt/mpidd/bin/mpidd",
        "agent",
        "--step=5.0",
        "--rank-timeout=7",
        "--no-stacks",
    ] {
        assert!(args.contains(&want), "{want} not in {args:?}");
    }

    let started: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            FanoutEvent::AgentStarted(h) => Some(h.node.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["n2", "n1"]);
    assert!(events.iter().any(|e| matches!(e,
        FanoutEvent::TaskOutput { task: 0, text } if text.contains("a note of the agent"))));
    assert!(events.iter().any(|e| matches!(e,
        FanoutEvent::SrunError(line) if line.contains("agents started"))));
    assert!(events.iter().any(|e| matches!(e,
        FanoutEvent::RankRead { node, world_rank: Some(1), .. } if node == "n1")));
    let Some(FanoutEvent::Collected {
        answered,
        nodes,
        ranks,
        ..
    }) = events.last()
    else {
        panic!("the last event is not the summary: {events:?}");
    };
    assert_eq!((*answered, *nodes, *ranks), (2, 2, 3));
}

#[test]
fn a_node_that_does_not_answer_in_time_is_named_and_the_others_count() {
    let dir = tempfile::tempdir().unwrap();
    let n1 = [
        header("n1", 2),
        rank("n1", 0),
        rank("n1", 1),
        trailer("n1", 2, 0),
    ];
    let mut options = stand_ins(dir.path(), STEPS, &labelled(0, &n1), true);
    options.timeout = Duration::from_secs(1);
    let start = Instant::now();
    let (report, events) = run(&options, "5.0");
    let report = report.unwrap();
    // The timeout, then the grace given to the stopped agents.
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        report.missing,
        [(
            "n2".to_string(),
            NodeSilence::NoAnswer {
                waited: Duration::from_secs(1)
            }
        )]
    );
    assert!(events.iter().any(|e| matches!(e,
        FanoutEvent::NodeMissing { node, why } if node == "n2"
            && why.to_string() == "no answer from its agent within 1 s")));
    // The step has 3 tasks: the one no agent sent fails, naming n2.
    assert_eq!(world_ranks(&report.readings), [0, 1, 2]);
    let two = report
        .readings
        .iter()
        .find(|r| r.world_rank == Some(2))
        .unwrap();
    assert_eq!(
        two.errors,
        ["not read: no agent reported it; nodes that did not answer: n2"]
    );
    let verdict = mpidd_job::analyze(&report.readings);
    assert_eq!(verdict.ranks.len(), 3);
}

#[test]
fn an_agent_that_ends_early_is_incomplete_and_one_that_wrote_nothing_silent() {
    let dir = tempfile::tempdir().unwrap();
    let n1 = [header("n1", 2), rank("n1", 0)];
    let options = stand_ins(dir.path(), STEPS, &labelled(0, &n1), false);
    let (report, _) = run(&options, "5");
    let mut missing = report.unwrap().missing;
    missing.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        missing,
        [
            ("n1".to_string(), NodeSilence::Incomplete { came: 1, of: 2 }),
            ("n2".to_string(), NodeSilence::EndedSilently)
        ]
    );
}

#[test]
fn the_step_must_be_one_that_srun_launched() {
    let dir = tempfile::tempdir().unwrap();
    let two = format!("{STEPS}\nStepId=5.1 NodeList=n1 Tasks=1");
    let options = stand_ins(dir.path(), &two, "", false);
    let err = run(&options, "5").0.unwrap_err();
    assert!(
        matches!(&err, FanoutError::SeveralSteps { job, steps } if job == "5" && steps == &["5.0", "5.1"]),
        "{err}"
    );
    assert!(err.to_string().contains("name one"), "{err}");

    let options = stand_ins(dir.path(), "StepId=5.batch NodeList=n1", "", false);
    let err = run(&options, "5").0.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Slurm has no running step 5 launched by srun"
    );

    let mut options = stand_ins(dir.path(), STEPS, "", false);
    options.scontrol = PathBuf::from("/nonexistent/scontrol");
    let err = run(&options, "5").0.unwrap_err();
    assert!(
        matches!(&err, FanoutError::Command { command, .. } if command.starts_with("/nonexistent/scontrol -o show step 5")),
        "{err}"
    );
}
