//! `mpidd job --slurm` on a real, local Slurm cluster (two `slurmd` on
//! loopback, scripts/slurm-cluster.sh): hung 4-rank jobs of the reference
//! MPICH, launched by `srun --mpi=pmi2` with two ranks on each node, are
//! read by one `mpidd agent` per node, started by Slurm itself, and
//! diagnosed as the local `mpidd job` diagnoses them (the expectations of
//! job_checks.rs, worked out from the programs' sources). Every rank is
//! left running and untraced. A node whose agent hangs or is killed is
//! named, and the other node's ranks are still analysed.
//!
//! Slurm missing is a failure that says how to install it, not a skip.

mod common;

use std::time::Duration;

use serde_json::Value;

use common::hung_job::HungJob;
use common::job_checks::{
    chain_location, check, check_chain_location, cycles, one_at_a_time, Expected,
};
use common::slurm_cluster::SlurmCluster;

/// `mpidd job ARGS --json` on the cluster: the report and the progress
/// written to stderr. It must exit 0.
fn job_json(cluster: &SlurmCluster, args: &[&str]) -> (Value, String) {
    let mut args = args.to_vec();
    args.insert(0, "job");
    args.push("--json");
    let out = cluster.mpidd(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "mpidd {args:?} failed:\n{stderr}"
    );
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("mpidd {args:?}: {e}\n{stderr}"));
    (report, stderr)
}

/// The ranks run two on each node, and the report says which node each
/// was read on.
fn check_nodes(cluster: &SlurmCluster, job: &HungJob, report: &Value) {
    let nodes = cluster.nodes_of(job);
    assert_eq!(nodes, ["n1", "n1", "n2", "n2"], "srun's block layout");
    for (r, node) in nodes.iter().enumerate() {
        assert_eq!(
            report["ranks"][r]["host"].as_str(),
            Some(node.as_str()),
            "rank {r} was read by the agent of its node: {:#}",
            report["ranks"][r]
        );
    }
}

fn check_agents_answered(stderr: &str) {
    for node in ["n1", "n2"] {
        assert!(
            stderr.contains(&format!("mpidd: {node}: agent started"))
                && stderr.contains(&format!("mpidd: {node}: 2 rank(s) read, 0 unreadable")),
            "an agent on {node} read its 2 ranks:\n{stderr}"
        );
    }
    assert!(
        stderr.contains("2 of 2 node(s) answered"),
        "both nodes answered:\n{stderr}"
    );
}

#[test]
fn ring_across_two_nodes_is_one_cycle_read_by_an_agent_on_each_node() {
    let _serial = one_at_a_time();
    let cluster = SlurmCluster::start("slurm-ring");
    let (job, id) = cluster.hung_job("slurm-ring-job", "hang_ring");
    let expected = Expected::ring();

    let (report, stderr) = job_json(&cluster, &["--slurm", &id]);
    check(&report, &expected, &job, "--slurm JOB");
    check_nodes(&cluster, &job, &report);
    check_agents_answered(&stderr);
    job.assert_running_within(Duration::from_secs(5), "after mpidd job --slurm");

    // The step named, and the srun named by its pid (its MPIR table gives
    // the ranks' nodes and pids): the same job.
    let step = format!("{id}.0");
    let (report, stderr) = job_json(&cluster, &["--slurm", &step]);
    check(&report, &expected, &job, "--slurm JOB.STEP");
    check_agents_answered(&stderr);
    let srun = job.mpiexec_pid().to_string();
    let (report, stderr) = job_json(&cluster, &["--pid", &srun]);
    check(&report, &expected, &job, "--pid SRUN");
    check_nodes(&cluster, &job, &report);
    check_agents_answered(&stderr);
    job.assert_running_within(Duration::from_secs(5), "after mpidd job --pid SRUN");
}

#[test]
fn chain_across_two_nodes_ends_at_the_rank_that_computes() {
    let _serial = one_at_a_time();
    let cluster = SlurmCluster::start("slurm-chain");
    let (job, id) = cluster.hung_job("slurm-chain-job", "hang_chain");
    let expected = Expected::chain();
    let (report, stderr) = job_json(&cluster, &["--slurm", &id]);
    check(&report, &expected, &job, "--slurm JOB");
    check_nodes(&cluster, &job, &report);
    check_agents_answered(&stderr);
    check_chain_location(&report, &chain_location(&job));
    job.assert_running_within(Duration::from_secs(5), "after mpidd job --slurm");
}

/// An agent program for `--agent` that on node n2 does `n2_does` instead
/// of reading, and elsewhere runs mpidd's agent.
fn agent_wrapper(dir: &std::path::Path, name: &str, n2_does: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    let mpidd = env!("CARGO_BIN_EXE_mpidd");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nif [ \"$SLURMD_NODENAME\" = n2 ]; then {n2_does}; fi\nexec {mpidd} \"$@\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Ranks 0 and 1 (on n1) are read and analysed; ranks 2 and 3 (on n2) are
/// unreadable with n2 named; rank 1 is still seen waiting on rank 0.
fn check_partial(report: &Value, stderr: &str, what: &str) {
    let ranks = report["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 4, "{what}: all 4 ranks reported: {ranks:#?}");
    for r in [0, 1] {
        assert_eq!(
            ranks[r]["mpi_call"], "MPI_Recv",
            "{what}: rank {r} on n1 was read: {:#}\nthe front end said:\n{stderr}",
            ranks[r]
        );
    }
    for r in [2, 3] {
        assert_eq!(ranks[r]["world_rank"], r as i64, "{what}");
        assert_eq!(ranks[r]["state"], "unreadable", "{what}: {:#}", ranks[r]);
        let errors = ranks[r]["errors"].to_string();
        assert!(
            errors.contains("n2"),
            "{what}: rank {r}'s error names its node: {errors}"
        );
    }
    assert!(cycles(report).is_empty(), "{what}: no cycle is known");
    let edges = common::job_checks::edges(report);
    assert!(
        edges.contains(&(1, 0, "receive".to_string()))
            && edges.contains(&(0, 3, "receive".to_string())),
        "{what}: n1's waits are known: {edges:?}"
    );
    assert!(
        stderr.contains("mpidd: n2: no answer") && stderr.contains("1 of 2 node(s) answered"),
        "{what}: n2 is named as not answering:\n{stderr}"
    );
    assert!(
        stderr.contains("mpidd: n1: 2 rank(s) read, 0 unreadable"),
        "{what}: n1 answered:\n{stderr}"
    );
}

#[test]
fn a_node_whose_agent_hangs_or_is_killed_is_named_and_the_others_are_analysed() {
    let _serial = one_at_a_time();
    let cluster = SlurmCluster::start("slurm-partial");
    let (job, id) = cluster.hung_job("slurm-partial-job", "hang_ring");

    let hangs = agent_wrapper(&job.dir, "agent-hangs.sh", "exec sleep 3600");
    let hangs = hangs.to_str().unwrap();
    let (report, stderr) = job_json(
        &cluster,
        &["--slurm", &id, "--timeout", "45", "--agent", hangs],
    );
    check_partial(&report, &stderr, "n2's agent hangs");
    assert!(
        stderr.contains("mpidd: n2: no answer from its agent within 45 s"),
        "{stderr}"
    );
    // The hung agent's step was ended with the front end.
    let out = cluster
        .command("pgrep")
        .args(["-f", "sleep 3600"])
        .output()
        .unwrap();
    assert!(
        out.stdout.is_empty(),
        "the hung agent is gone: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    job.assert_running_within(Duration::from_secs(5), "after a hung agent");

    // Killed once n1's agent has had time to answer: when a task is killed
    // while the others still run, srun was seen to end the whole step
    // within a second (3 of 4 runs of this test binary here, never when
    // this test ran alone), which loses n1's unfinished stream too. That
    // case is left open (one srun per node would avoid it); what is
    // checked here is that a node killed without a word is named and the
    // rest analysed.
    let killed = agent_wrapper(&job.dir, "agent-killed.sh", "sleep 10; kill -KILL $$");
    let (report, stderr) = job_json(
        &cluster,
        &[
            "--slurm",
            &id,
            "--timeout",
            "120",
            "--agent",
            killed.to_str().unwrap(),
        ],
    );
    check_partial(&report, &stderr, "n2's agent is killed");
    assert!(
        stderr.contains("n2: task 1: Killed") && stderr.contains("ended without writing"),
        "srun's word on n2 is passed on:\n{stderr}"
    );
    job.assert_running_within(Duration::from_secs(5), "after a killed agent");
}

#[test]
fn an_agent_killed_while_it_reads_lets_its_ranks_go() {
    let _serial = one_at_a_time();
    let cluster = SlurmCluster::start("slurm-kill-agent");
    let (job, _id) = cluster.hung_job("slurm-kill-agent-job", "hang_ring");
    // The agent of node n1 reads ranks 0 and 1; it is killed with SIGKILL
    // as soon as it has started, so most likely while it holds a rank.
    let pids: Vec<String> = job.ranks[..2].iter().map(|r| r.1.to_string()).collect();
    for signal in ["TERM", "KILL"] {
        let mut agent = cluster
            .command(env!("CARGO_BIN_EXE_mpidd"))
            .args([
                "agent", "--node", "n1", "--pid", &pids[0], "--pid", &pids[1],
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut header = String::new();
        use std::io::BufRead;
        std::io::BufReader::new(agent.stdout.as_mut().unwrap())
            .read_line(&mut header)
            .unwrap();
        assert!(header.contains(r#""record":"header""#), "{header}");
        assert!(header.contains(r#""ranks":2"#), "{header}");
        let status = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(agent.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
        let mut rest = String::new();
        use std::io::Read;
        agent
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut rest)
            .unwrap();
        let status = agent.wait().unwrap();
        assert!(!status.success(), "SIG{signal} ended the agent");
        if signal == "TERM" {
            // Its last line is a trailer that says so, unless it had
            // finished already.
            let last = rest.lines().last().unwrap_or("");
            assert!(
                last.contains(r#""record":"trailer""#),
                "the agent's last line is its trailer: {rest}"
            );
        }
        job.assert_running_within(Duration::from_secs(5), &format!("after SIG{signal}"));
    }
}

#[test]
fn mpidd_launch_acquires_the_ranks_of_an_srun_job_by_mpir() {
    use std::os::unix::process::CommandExt;
    let _serial = one_at_a_time();
    let cluster = SlurmCluster::start("slurm-launch");
    let (dir, exe, source) = common::hung_job::build(
        &common::mpich_job::ref_mpich().join("bin/mpicc"),
        "slurm-launch-job",
        "hang_ring",
    );
    // mpidd launch runs srun under the MPIR protocol; the ranks' READY
    // lines come out on the same standard output as its events.
    let out_path = dir.join("launch.out");
    let child = cluster
        .command(env!("CARGO_BIN_EXE_mpidd"))
        .args(["launch", "--json", "--", "srun", "--mpi=pmi2", "-N2"])
        .args(["--ntasks-per-node=2", "--job-name=slurm-launch-job"])
        .args(["nice", "-n", "19"])
        .arg(&exe)
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .process_group(0)
        .spawn()
        .expect("run mpidd launch");
    // Dropping it kills mpidd, srun and the ranks.
    let mut job = HungJob {
        mpiexec: child,
        ranks: Vec::new(),
        dir,
        source,
        output: Vec::new(),
    };
    let start = std::time::Instant::now();
    let (spawned, ranks) = loop {
        let text = std::fs::read_to_string(&out_path).unwrap_or_default();
        let spawned: Option<Value> = text
            .lines()
            .filter(|l| l.starts_with('{'))
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["event"] == "spawned");
        let ranks: Vec<(i64, i32)> = text
            .lines()
            .filter_map(|l| {
                let mut w = l.strip_prefix("READY ")?.split_whitespace();
                Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
            })
            .collect();
        if let (Some(spawned), 4) = (&spawned, ranks.len()) {
            break (spawned.clone(), ranks);
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "mpidd launch -- srun: a spawned event and 4 READY lines within 2 minutes:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    job.ranks = ranks;
    job.ranks.sort();
    assert_eq!(spawned["defined_in"], "/usr/bin/srun", "{spawned:#}");
    let table = spawned["proctable"].as_array().expect("a proctable");
    let got: Vec<(String, i64)> = table
        .iter()
        .map(|p| {
            (
                p["host_name"].as_str().unwrap().to_string(),
                p["pid"].as_i64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, i64)> = job
        .ranks
        .iter()
        .zip(cluster.nodes_of(&job))
        .map(|(&(_, pid), node)| (node, pid as i64))
        .collect();
    assert_eq!(
        got, want,
        "srun's MPIR table: each rank's node and the pid that printed READY"
    );
    assert_eq!(
        want.iter().map(|w| w.0.as_str()).collect::<Vec<_>>(),
        ["n1", "n1", "n2", "n2"]
    );
    job.assert_running_within(Duration::from_secs(5), "after mpidd launch -- srun");
}
