//! `mpidd job --slurm JOBID[.STEP]` and `mpidd job --pid SRUN`: a job
//! across nodes. Slurm starts one `mpidd agent` on every node of the step
//! (`srun --jobid=J --overlap --ntasks-per-node=1 --label`), their records
//! come back through `srun`'s standard output, and they are merged into
//! the readings that `mpidd_job::analyze` turns into the same report as a
//! local `mpidd job`. Progress goes to stderr, one line per node; a node
//! that does not answer in time is named, and the ranks of the others are
//! analysed all the same.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mpidd_job::agent_stream::{AgentEnding, AgentRecord, MergedStreams};
use mpidd_job::discover::LaunchedRank;
use mpidd_job::slurm_step::{StepInfo, StepName};
use mpidd_job::srun_labels::{LabelledRecords, Piece};
use mpidd_job::RankReading;
use mpidd_read::{mpir, Limits, LiveTarget};

/// Which step to read.
#[derive(Clone, Debug)]
pub enum Source {
    /// A job or step by its Slurm id.
    Step(StepName),
    /// The `srun` that launched the step: its MPIR table names the ranks.
    Srun(i32),
}

/// How the agents are run.
#[derive(Clone, Debug)]
pub struct Options {
    /// How long to wait for every node.
    pub timeout: Duration,
    /// Each agent's bound on one rank's reading.
    pub rank_timeout: f64,
    /// The program the nodes run as `PROGRAM agent ...`.
    pub agent: PathBuf,
    /// Agent arguments passed through (`--no-stacks`, `--profile F`, ...).
    pub agent_args: Vec<String>,
}

/// Why the job's ranks could not be collected at all.
#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    /// A Slurm command could not be run or failed.
    #[error("`{command}` failed: {reason}")]
    Command {
        /// The command line.
        command: String,
        /// Why (its stderr, or why it could not start).
        reason: String,
    },
    /// No step fits.
    #[error("{0}")]
    Step(String),
    /// The srun's MPIR table could not be read.
    #[error("cannot read the MPIR table of srun {pid}: {reason}")]
    Table {
        /// The srun.
        pid: i32,
        /// Why.
        reason: String,
    },
}

/// Whether `pid` is an `srun` (by its executable's name).
pub fn is_srun(pid: i32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n == "srun"))
        .unwrap_or(false)
}

/// Runs a Slurm command and returns its standard output.
fn slurm_command(program: &str, args: &[&str]) -> Result<String, SlurmError> {
    let command = format!("{program} {}", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| SlurmError::Command {
            command: command.clone(),
            reason: format!("{e} (is Slurm's client, Debian's slurm-client, installed?)"),
        })?;
    if !out.status.success() {
        return Err(SlurmError::Command {
            command,
            reason: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The running steps `scontrol` knows: all of them, or those of a job or
/// step.
fn steps(of: Option<&str>) -> Result<Vec<StepInfo>, SlurmError> {
    let mut args = vec!["-o", "show", "step"];
    args.extend(of);
    Ok(slurm_command("scontrol", &args)?
        .lines()
        .filter_map(StepInfo::parse)
        .collect())
}

fn short(host: &str) -> &str {
    host.split('.').next().unwrap_or(host)
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// The step to read, and the ranks the launcher's table names when there
/// is one.
fn resolve(source: &Source) -> Result<(StepInfo, Vec<LaunchedRank>), SlurmError> {
    match source {
        Source::Step(name) => {
            let all = steps(Some(&name.to_string()))?;
            let mut user: Vec<StepInfo> = all.into_iter().filter(|s| s.is_user_step()).collect();
            if let Some(step) = &name.step {
                user.retain(|s| s.id == format!("{}.{step}", name.job));
            }
            match user.len() {
                1 => Ok((user.remove(0), Vec::new())),
                0 => Err(SlurmError::Step(format!(
                    "Slurm has no running step {name} launched by srun"
                ))),
                _ => Err(SlurmError::Step(format!(
                    "job {} runs several steps ({}): name one, as --slurm JOBID.STEPID",
                    name.job,
                    user.iter()
                        .map(|s| s.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            }
        }
        Source::Srun(pid) => {
            let table = srun_table(*pid)?;
            let here = host_name();
            let step = steps(None)?
                .into_iter()
                .find(|s| {
                    s.srun
                        .as_ref()
                        .is_some_and(|(h, p)| p == pid && short(h) == short(&here))
                })
                .ok_or_else(|| {
                    SlurmError::Step(format!(
                        "scontrol knows no running step launched by srun {pid} on {here}"
                    ))
                })?;
            Ok((step, table))
        }
    }
}

/// The MPIR table of a running srun, read without stopping it.
fn srun_table(pid: i32) -> Result<Vec<LaunchedRank>, SlurmError> {
    let error = |reason: String| SlurmError::Table { pid, reason };
    let srun = LiveTarget::open(pid).map_err(|e| error(e.to_string()))?;
    let state = mpir::read_state(&srun, &Limits::default()).map_err(|e| error(e.to_string()))?;
    Ok(mpidd_job::discover::launched_ranks(&state))
}

enum Event {
    Piece(Piece),
    StdoutEnd,
    Stderr(String),
}

/// Starts the agents on the step's nodes.
fn start_agents(
    step: &StepInfo,
    nodes: usize,
    options: &Options,
) -> Result<(Child, mpsc::Receiver<Event>), SlurmError> {
    let (job, step_id) = step.id.split_once('.').unwrap_or((&step.id, ""));
    let mut cmd = Command::new("srun");
    cmd.arg(format!("--jobid={job}"))
        // Beside the hung step, on its CPUs; one agent per node.
        .arg("--overlap")
        .arg(format!("--nodes={nodes}"))
        .arg(format!("--ntasks={nodes}"))
        .arg("--ntasks-per-node=1")
        .arg(format!("--nodelist={}", step.node_list))
        // Each piece of output names its task, so that long records cut
        // into pieces can be put together again.
        .arg("--label")
        .arg("--mpi=none")
        .arg("--job-name=mpidd-agent")
        .arg(&options.agent)
        .arg("agent")
        .arg(format!("--step={job}.{step_id}"))
        .arg(format!("--rank-timeout={}", options.rank_timeout))
        .args(&options.agent_args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| SlurmError::Command {
        command: format!("{cmd:?}"),
        reason: format!("{e} (is Slurm's client, Debian's slurm-client, installed?)"),
    })?;
    let (tx, rx) = mpsc::channel();
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let out_tx = tx.clone();
    std::thread::spawn(move || {
        let Some(stdout) = stdout else { return };
        let mut lines = BufReader::new(stdout);
        let mut records = LabelledRecords::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    for piece in records.push_line(&line) {
                        if out_tx.send(Event::Piece(piece)).is_err() {
                            return;
                        }
                    }
                }
            }
        }
        let _ = out_tx.send(Event::StdoutEnd);
    });
    std::thread::spawn(move || {
        let Some(stderr) = stderr else { return };
        let mut text = String::new();
        let mut stderr = BufReader::new(stderr);
        loop {
            text.clear();
            match stderr.by_ref().read_line(&mut text) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(Event::Stderr(text.trim_end().to_string())).is_err() {
                        break;
                    }
                }
            }
        }
    });
    Ok((child, rx))
}

/// What came back, and what did not.
struct Collection {
    merged: MergedStreams,
    nodes: Vec<String>,
    /// From the start of the agents to the end of their collection.
    seconds: f64,
}

/// Shows one record's news on stderr.
fn progress(record: &AgentRecord) {
    match record {
        AgentRecord::Header(h) => eprintln!(
            "mpidd: {}: agent started (pid {} on {}), {} rank(s)",
            h.node, h.agent_pid, h.host, h.ranks
        ),
        AgentRecord::Trailer(t) => match &t.ending {
            AgentEnding::Complete => eprintln!(
                "mpidd: {}: {} rank(s) read, {} unreadable, in {:.1} s",
                t.node, t.read, t.unreadable, t.seconds
            ),
            AgentEnding::Signal { signal } => eprintln!(
                "mpidd: {}: agent ended by {signal} after {} rank(s) read, {} unreadable",
                t.node, t.read, t.unreadable
            ),
        },
        AgentRecord::Unreadable(u) => {
            eprintln!("mpidd: {}: {} unreadable: {}", u.node, u.target, u.reason)
        }
        AgentRecord::Rank(_) => {}
    }
}

/// Receives events until srun's output ended (returns true), `until`, or,
/// when `nodes` is given, every one of them finished.
fn receive(
    rx: &mpsc::Receiver<Event>,
    until: Instant,
    merged: &mut MergedStreams,
    nodes: Option<&[String]>,
) -> bool {
    loop {
        let all_done = nodes.is_some_and(|nodes| {
            nodes
                .iter()
                .all(|n| merged.nodes().get(n).is_some_and(|s| s.complete()))
        });
        if all_done {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        match rx.recv_timeout(left) {
            Ok(Event::Piece(Piece::Record { task, bytes })) => match AgentRecord::parse(&bytes) {
                Ok(record) => {
                    progress(&record);
                    merged.add(record, bytes.len() as u64 + 1);
                }
                Err(e) => eprintln!("mpidd: agent task {task}: {e}"),
            },
            Ok(Event::Piece(Piece::Other { task, text })) => {
                eprintln!("mpidd: agent task {task} wrote: {text}")
            }
            Ok(Event::Piece(Piece::Unlabelled(text))) => eprintln!("mpidd: srun wrote: {text}"),
            Ok(Event::Stderr(line)) => eprintln!("mpidd: {line}"),
            Ok(Event::StdoutEnd) | Err(mpsc::RecvTimeoutError::Disconnected) => return true,
            Err(mpsc::RecvTimeoutError::Timeout) => return false,
        }
    }
}

/// Ends the agents' srun: SIGTERM makes it end its own step only (the
/// agents, whose exit lets go of any rank they hold), then SIGKILL if it
/// lingers.
fn stop(child: &mut Child, rx: &mpsc::Receiver<Event>, merged: &mut MergedStreams) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    // The agents' last words (their trailers) still count.
    receive(rx, Instant::now() + Duration::from_secs(5), merged, None);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs the agents and collects their streams.
fn collect(step: &StepInfo, options: &Options) -> Result<Collection, SlurmError> {
    let start = Instant::now();
    let nodes: Vec<String> = slurm_command("scontrol", &["show", "hostnames", &step.node_list])?
        .lines()
        .map(str::to_string)
        .filter(|n| !n.is_empty())
        .collect();
    eprintln!(
        "mpidd: step {}: {} task(s) on {} node(s) ({}); starting an agent on each",
        step.id,
        step.tasks.map_or("?".to_string(), |t| t.to_string()),
        nodes.len(),
        step.node_list
    );
    let (mut child, rx) = start_agents(step, nodes.len(), options)?;
    let mut merged = MergedStreams::new();
    // A timeout too large for the clock is a year.
    let deadline = start
        .checked_add(options.timeout)
        .unwrap_or(start + Duration::from_secs(365 * 86400));
    let mut ended = receive(&rx, deadline, &mut merged, Some(&nodes));
    if !ended && Instant::now() < deadline {
        // Every node finished: srun ends by itself once its agents have
        // exited, which it is given a moment for.
        ended = receive(
            &rx,
            deadline.min(Instant::now() + Duration::from_secs(5)),
            &mut merged,
            None,
        );
    }
    if ended {
        let _ = child.wait();
    } else {
        stop(&mut child, &rx, &mut merged);
    }
    for node in &nodes {
        match merged.nodes().get(node) {
            None if ended => {
                eprintln!("mpidd: {node}: no answer: its agent ended without writing anything")
            }
            None => eprintln!(
                "mpidd: {node}: no answer from its agent within {} s",
                options.timeout.as_secs_f64()
            ),
            Some(s) if !s.complete() => eprintln!(
                "mpidd: {node}: its agent did not finish: {} of {} rank(s) came",
                s.readings.len() + s.unreadable.len(),
                s.header.as_ref().map_or(0, |h| h.ranks)
            ),
            Some(_) => {}
        }
    }
    Ok(Collection {
        merged,
        nodes,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The readings of the step's ranks: those the agents sent, and one that
/// failed for every rank the launcher's table or the step's task count
/// says exists but no agent sent, naming the nodes that did not answer.
fn readings(collection: &Collection, step: &StepInfo, table: &[LaunchedRank]) -> Vec<RankReading> {
    let merged = &collection.merged;
    let mut readings = merged.readings();
    apply_table(&mut readings, table);
    let silent: Vec<&str> = collection
        .nodes
        .iter()
        .filter(|n| !merged.nodes().get(*n).is_some_and(|s| s.complete()))
        .map(String::as_str)
        .collect();
    let why = |node: Option<&str>| match node {
        Some(n) if silent.contains(&n) => format!("not read: the agent of node {n} did not answer"),
        Some(n) => format!("not read: the agent of node {n} did not report it"),
        None if silent.is_empty() => "not read: no agent reported it".to_string(),
        None => format!(
            "not read: no agent reported it; nodes that did not answer: {}",
            silent.join(", ")
        ),
    };
    let have =
        |rank: i64, readings: &[RankReading]| readings.iter().any(|r| r.world_rank == Some(rank));
    if table.is_empty() {
        for rank in 0..step.tasks.unwrap_or(0) as i64 {
            if !have(rank, &readings) {
                let mut r = RankReading::failed(format!("rank {rank}"), None, None, why(None));
                r.world_rank = Some(rank);
                readings.push(r);
            }
        }
    } else {
        for entry in table {
            if !have(entry.world_rank, &readings) {
                let mut r = RankReading::failed(
                    format!("pid {}", entry.pid),
                    Some(entry.pid),
                    Some(entry.host.clone()),
                    why(Some(&entry.host)),
                );
                r.world_rank = Some(entry.world_rank);
                readings.push(r);
            }
        }
    }
    let ranks = readings.len().max(1);
    eprintln!(
        "mpidd: {} of {} node(s) answered in {:.1} s; {} rank(s), {} bytes of records ({} per rank)",
        collection.nodes.len() - silent.len(),
        collection.nodes.len(),
        collection.seconds,
        readings.len(),
        merged.bytes(),
        merged.bytes() / ranks as u64
    );
    readings
}

/// Gives readings the world rank of the launcher's table entry with their
/// node and pid (a pid names a process only on its own node).
fn apply_table(readings: &mut [RankReading], table: &[LaunchedRank]) {
    for reading in readings {
        let entry = table.iter().find(|e| {
            Some(e.pid) == reading.pid && reading.host.as_deref().is_some_and(|h| h == e.host)
        });
        if let Some(entry) = entry {
            reading.world_rank.get_or_insert(entry.world_rank);
        }
    }
}

/// Collects the readings of every rank of the step, over its nodes.
pub fn read_job(source: &Source, options: &Options) -> Result<Vec<RankReading>, SlurmError> {
    let (step, table) = resolve(source)?;
    let collection = collect(&step, options)?;
    Ok(readings(&collection, &step, &table))
}
