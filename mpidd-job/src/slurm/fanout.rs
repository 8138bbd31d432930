//! A job across nodes, read through Slurm: one per-node agent (`mpidd
//! agent`) is started on every node of the step with `srun --jobid=J
//! --overlap --ntasks-per-node=1 --label`, their records come back through
//! `srun`'s standard output, and they are merged into the readings that
//! [`analyze`](crate::analyze) turns into the same report as a local job.
//!
//! A node that does not answer in time is named, and the ranks of the
//! others are analysed all the same: a rank that no agent reported becomes
//! a reading that failed, saying which node did not answer.
//!
//! Nothing is printed here: what happens is told as it happens through a
//! callback of [`FanoutEvent`]s, for the caller to show. The Slurm
//! commands are run by name from `PATH` unless [`FanoutOptions`] names
//! others (a test's stand-ins).
//!
//! ```no_run
//! use mpidd_job::slurm::fanout::{read_step, FanoutEvent, FanoutOptions, StepSource};
//!
//! let source = StepSource::Step("812.0".parse()?);
//! let options = FanoutOptions::new("/usr/local/bin/mpidd");
//! let report = read_step(&source, &options, &mut |event| {
//!     if let FanoutEvent::NodeMissing { node, why } = event {
//!         eprintln!("{node}: {why}");
//!     }
//! })?;
//! let verdict = mpidd_job::analyze(&report.readings);
//! println!("{}", verdict.verdict[0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::discover::LaunchedRank;
use crate::reading::RankReading;
use crate::slurm::agent_stream::{
    AgentHeader, AgentRecord, AgentTrailer, MergedStreams, StreamError, UnreadableRank,
};
use crate::slurm::slurm_step::{StepInfo, StepName};
use crate::slurm::srun_labels::{LabelledRecords, Piece};

/// Which step to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepSource {
    /// A job or step by its Slurm id. A job must run exactly one step that
    /// `srun` launched.
    Step(StepName),
    /// The `srun` on this host that launched the step: its MPIR table
    /// names the ranks (needs the `live` feature).
    Srun(i32),
}

/// How the agents are run.
#[derive(Clone, Debug)]
pub struct FanoutOptions {
    /// How long to wait for every node.
    pub timeout: Duration,
    /// Each agent's bound on one rank's reading.
    pub rank_timeout: Duration,
    /// The program the nodes run as `PROGRAM agent ...`: an `mpidd` at the
    /// same path on every node.
    pub agent: PathBuf,
    /// Agent arguments passed through (`--no-stacks`, `--profile=F`, ...).
    pub agent_args: Vec<String>,
    /// Slurm's `srun` (default: `srun` on `PATH`).
    pub srun: PathBuf,
    /// Slurm's `scontrol` (default: `scontrol` on `PATH`).
    pub scontrol: PathBuf,
    /// How long the agents get to write their last records after they are
    /// told to stop, and `srun` to end after every node finished. Default:
    /// 5 s.
    pub grace: Duration,
}

impl FanoutOptions {
    /// Options with `agent` as the agents' program, five minutes for every
    /// node, a minute for each rank.
    pub fn new(agent: impl Into<PathBuf>) -> Self {
        FanoutOptions {
            timeout: Duration::from_secs(300),
            rank_timeout: Duration::from_secs(60),
            agent: agent.into(),
            agent_args: Vec::new(),
            srun: PathBuf::from("srun"),
            scontrol: PathBuf::from("scontrol"),
            grace: Duration::from_secs(5),
        }
    }
}

/// Why the job's ranks could not be collected at all. A node that does
/// not answer is not one: it is named in the [`FanoutReport`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FanoutError {
    /// A Slurm command could not be run, or failed.
    #[error("`{command}` failed: {reason}")]
    Command {
        /// The command line.
        command: String,
        /// Why (its stderr, or why it could not start).
        reason: String,
    },
    /// Slurm runs no step of that name that `srun` launched.
    #[error("Slurm has no running step {name} launched by srun")]
    NoSuchStep {
        /// The job or step asked for.
        name: String,
    },
    /// A job runs several steps and none was named.
    #[error("job {job} runs several steps ({}): name one, as --slurm JOBID.STEPID", steps.join(", "))]
    SeveralSteps {
        /// The job.
        job: String,
        /// Its steps.
        steps: Vec<String>,
    },
    /// No running step was launched by that `srun`.
    #[error("scontrol knows no running step launched by srun {pid} on {host}")]
    NoStepOfSrun {
        /// The srun.
        pid: i32,
        /// This host.
        host: String,
    },
    /// The srun's MPIR table could not be read.
    #[error("cannot read the MPIR table of srun {pid}: {reason}")]
    Table {
        /// The srun.
        pid: i32,
        /// Why.
        reason: String,
    },
}

/// Why a node's ranks did not all come.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NodeSilence {
    /// Nothing came from its agent before the time ran out.
    #[error("no answer from its agent within {} s", waited.as_secs_f64())]
    NoAnswer {
        /// How long it was waited for.
        waited: Duration,
    },
    /// Its agent ended (or `srun` did) without writing anything.
    #[error("no answer: its agent ended without writing anything")]
    EndedSilently,
    /// Its agent did not write its trailer.
    #[error("its agent did not finish: {came} of {of} rank(s) came")]
    Incomplete {
        /// Ranks reported.
        came: usize,
        /// Ranks its header announced.
        of: usize,
    },
}

/// What happens while the agents run, as it happens.
#[derive(Debug)]
#[non_exhaustive]
pub enum FanoutEvent {
    /// The step was found; an agent is being started on each node.
    Starting {
        /// The step.
        step: StepInfo,
        /// Its nodes.
        nodes: Vec<String>,
    },
    /// A node's agent started.
    AgentStarted(AgentHeader),
    /// A node's agent read a rank.
    RankRead {
        /// The node.
        node: String,
        /// The rank's world rank, when known.
        world_rank: Option<i64>,
        /// How long its reading took, in seconds.
        seconds: f64,
    },
    /// A node's agent could not read a rank.
    Unreadable(UnreadableRank),
    /// A node's agent finished, or was stopped.
    AgentFinished(AgentTrailer),
    /// An agent wrote a line that is not a record of the format.
    BadRecord {
        /// The agent's task number.
        task: u32,
        /// What is wrong with it.
        error: StreamError,
    },
    /// An agent wrote something else than a record (its own messages).
    TaskOutput {
        /// The agent's task number.
        task: u32,
        /// The text.
        text: String,
    },
    /// `srun` wrote a line on its standard output that no task wrote.
    SrunOutput(String),
    /// `srun` wrote a line on its standard error.
    SrunError(String),
    /// A node's ranks did not all come.
    NodeMissing {
        /// The node.
        node: String,
        /// Why.
        why: NodeSilence,
    },
    /// The collection is over.
    Collected {
        /// Nodes whose agent finished.
        answered: usize,
        /// Nodes of the step.
        nodes: usize,
        /// From the agents' start to the end of the collection.
        seconds: f64,
        /// Ranks in the readings.
        ranks: usize,
        /// Bytes of records received.
        bytes: u64,
    },
}

/// What came back from the step's nodes.
#[derive(Debug)]
pub struct FanoutReport {
    /// The step read.
    pub step: StepInfo,
    /// Its nodes.
    pub nodes: Vec<String>,
    /// Every rank of the step: those the agents sent, and a reading that
    /// failed for each rank the launcher's table or the step's task count
    /// says exists but no agent sent.
    pub readings: Vec<RankReading>,
    /// The nodes whose ranks did not all come, and why.
    pub missing: Vec<(String, NodeSilence)>,
    /// From the agents' start to the end of the collection, in seconds.
    pub seconds: f64,
    /// Bytes of records received.
    pub bytes: u64,
}

/// Whether `pid` is an `srun` (by its executable's name).
pub fn is_srun(pid: i32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n == "srun"))
        .unwrap_or(false)
}

/// The step to read across nodes: the one named, else that of a lone pid
/// that is an `srun` (whose ranks run on other nodes too).
pub fn step_source(step: Option<&StepName>, pids: &[i32]) -> Option<StepSource> {
    match (step, pids) {
        (Some(step), _) => Some(StepSource::Step(step.clone())),
        (None, &[pid]) if is_srun(pid) => Some(StepSource::Srun(pid)),
        _ => None,
    }
}

/// Runs the agents on the step's nodes and collects the readings of every
/// rank of the step, telling `progress` what happens.
pub fn read_step(
    source: &StepSource,
    options: &FanoutOptions,
    progress: &mut dyn FnMut(FanoutEvent),
) -> Result<FanoutReport, FanoutError> {
    let (step, table) = resolve(source, options)?;
    let collection = collect(&step, options, progress)?;
    Ok(readings(collection, step, &table, progress))
}

/// Runs a Slurm command and returns its standard output.
fn slurm_command(program: &std::path::Path, args: &[&str]) -> Result<String, FanoutError> {
    let command = format!("{} {}", program.display(), args.join(" "));
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| FanoutError::Command {
            command: command.clone(),
            reason: format!("{e} (is Slurm's client, Debian's slurm-client, installed?)"),
        })?;
    if !out.status.success() {
        return Err(FanoutError::Command {
            command,
            reason: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The running steps `scontrol` knows: all of them, or those of a job or
/// step.
fn steps(options: &FanoutOptions, of: Option<&str>) -> Result<Vec<StepInfo>, FanoutError> {
    let mut args = vec!["-o", "show", "step"];
    args.extend(of);
    Ok(slurm_command(&options.scontrol, &args)?
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
fn resolve(
    source: &StepSource,
    options: &FanoutOptions,
) -> Result<(StepInfo, Vec<LaunchedRank>), FanoutError> {
    match source {
        StepSource::Step(name) => {
            let all = steps(options, Some(&name.to_string()))?;
            let mut user: Vec<StepInfo> = all.into_iter().filter(|s| s.is_user_step()).collect();
            if let Some(step) = &name.step {
                user.retain(|s| s.id == format!("{}.{step}", name.job));
            }
            match user.len() {
                1 => Ok((user.remove(0), Vec::new())),
                0 => Err(FanoutError::NoSuchStep {
                    name: name.to_string(),
                }),
                _ => Err(FanoutError::SeveralSteps {
                    job: name.job.clone(),
                    steps: user.into_iter().map(|s| s.id).collect(),
                }),
            }
        }
        StepSource::Srun(pid) => {
            let table = srun_table(*pid)?;
            let here = host_name();
            let step = steps(options, None)?
                .into_iter()
                .find(|s| {
                    s.srun
                        .as_ref()
                        .is_some_and(|(h, p)| p == pid && short(h) == short(&here))
                })
                .ok_or(FanoutError::NoStepOfSrun {
                    pid: *pid,
                    host: here,
                })?;
            Ok((step, table))
        }
    }
}

/// The MPIR table of a running srun, read without stopping it.
#[cfg(all(feature = "live", target_os = "linux"))]
fn srun_table(pid: i32) -> Result<Vec<LaunchedRank>, FanoutError> {
    use mpidd_read::{mpir, Limits, LiveTarget};
    let error = |reason: String| FanoutError::Table { pid, reason };
    let srun = LiveTarget::open(pid).map_err(|e| error(e.to_string()))?;
    let state = mpir::read_state(&srun, &Limits::default()).map_err(|e| error(e.to_string()))?;
    Ok(crate::discover::launched_ranks(&state))
}

#[cfg(not(all(feature = "live", target_os = "linux")))]
fn srun_table(pid: i32) -> Result<Vec<LaunchedRank>, FanoutError> {
    Err(FanoutError::Table {
        pid,
        reason: "reading a live process needs mpidd-job's `live` feature, on Linux".to_string(),
    })
}

/// How long srun's stderr is still read once its stdout has ended.
const STDERR_AFTER_STDOUT: Duration = Duration::from_secs(2);

enum Event {
    Piece(Piece),
    StdoutEnd,
    Stderr(String),
}

/// Starts the agents on the step's nodes.
fn start_agents(
    step: &StepInfo,
    nodes: usize,
    options: &FanoutOptions,
) -> Result<(Child, mpsc::Receiver<Event>), FanoutError> {
    let (job, step_id) = step.id.split_once('.').unwrap_or((&step.id, ""));
    let mut cmd = Command::new(&options.srun);
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
        .arg(format!(
            "--rank-timeout={}",
            options.rank_timeout.as_secs_f64()
        ))
        .args(&options.agent_args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| FanoutError::Command {
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
            match stderr.read_line(&mut text) {
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
    /// Whether srun's output ended (rather than the time running out).
    ended: bool,
    waited: Duration,
    /// From the start of the agents to the end of their collection.
    seconds: f64,
}

/// Tells one record's news.
fn news(record: &AgentRecord, progress: &mut dyn FnMut(FanoutEvent)) {
    progress(match record {
        AgentRecord::Header(h) => FanoutEvent::AgentStarted(h.clone()),
        AgentRecord::Trailer(t) => FanoutEvent::AgentFinished(t.clone()),
        AgentRecord::Unreadable(u) => FanoutEvent::Unreadable(u.clone()),
        AgentRecord::Rank(r) => FanoutEvent::RankRead {
            node: r.node.clone(),
            world_rank: r.reading.world_rank,
            seconds: r.seconds,
        },
    })
}

/// Receives events until srun's output ended (returns true), `until`, or,
/// when `nodes` is given, every one of them finished.
fn receive(
    rx: &mpsc::Receiver<Event>,
    until: Instant,
    merged: &mut MergedStreams,
    nodes: Option<&[String]>,
    progress: &mut dyn FnMut(FanoutEvent),
) -> bool {
    // srun writes its word on a failed task (an "n2: task 1: Killed"
    // line) to stderr just before it exits; the two pipes close together
    // but are read by two threads, so stdout's end can arrive first.
    // Collection ends when both are closed, or shortly after stdout's end
    // if stderr stays open.
    let mut until = until;
    let mut stdout_ended = false;
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
            return stdout_ended;
        }
        match rx.recv_timeout(left) {
            Ok(Event::Piece(Piece::Record { task, bytes })) => match AgentRecord::parse(&bytes) {
                Ok(record) => {
                    news(&record, progress);
                    merged.add(record, bytes.len() as u64 + 1);
                }
                Err(error) => progress(FanoutEvent::BadRecord { task, error }),
            },
            Ok(Event::Piece(Piece::Other { task, text })) => {
                progress(FanoutEvent::TaskOutput { task, text })
            }
            Ok(Event::Piece(Piece::Unlabelled(text))) => progress(FanoutEvent::SrunOutput(text)),
            Ok(Event::Stderr(line)) => progress(FanoutEvent::SrunError(line)),
            Ok(Event::StdoutEnd) => {
                stdout_ended = true;
                until = until.min(Instant::now() + STDERR_AFTER_STDOUT);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return true,
            Err(mpsc::RecvTimeoutError::Timeout) => return stdout_ended,
        }
    }
}

/// Ends the agents' srun: SIGTERM makes it end its own step only (the
/// agents, whose exit lets go of any rank they hold), then SIGKILL if it
/// lingers.
fn stop(
    child: &mut Child,
    rx: &mpsc::Receiver<Event>,
    merged: &mut MergedStreams,
    grace: Duration,
    progress: &mut dyn FnMut(FanoutEvent),
) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    terminate(child);
    // The agents' last words (their trailers) still count.
    receive(rx, Instant::now() + grace, merged, None, progress);
    let start = Instant::now();
    while start.elapsed() < grace {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Sends SIGTERM, which srun passes on to the step's tasks.
#[cfg(all(unix, feature = "live"))]
fn terminate(child: &Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
}

/// Without signals (no `live` feature, or not Unix) the grace time runs
/// out and the child is killed.
#[cfg(not(all(unix, feature = "live")))]
fn terminate(_child: &Child) {}

/// Runs the agents and collects their streams.
fn collect(
    step: &StepInfo,
    options: &FanoutOptions,
    progress: &mut dyn FnMut(FanoutEvent),
) -> Result<Collection, FanoutError> {
    let start = Instant::now();
    let nodes: Vec<String> =
        slurm_command(&options.scontrol, &["show", "hostnames", &step.node_list])?
            .lines()
            .map(str::to_string)
            .filter(|n| !n.is_empty())
            .collect();
    progress(FanoutEvent::Starting {
        step: step.clone(),
        nodes: nodes.clone(),
    });
    let (mut child, rx) = start_agents(step, nodes.len(), options)?;
    let mut merged = MergedStreams::new();
    // A timeout too large for the clock is a year.
    let deadline = start
        .checked_add(options.timeout)
        .unwrap_or(start + Duration::from_secs(365 * 86400));
    let mut ended = receive(&rx, deadline, &mut merged, Some(&nodes), progress);
    if !ended && Instant::now() < deadline {
        // Every node finished: srun ends by itself once its agents have
        // exited, which it is given a moment for.
        ended = receive(
            &rx,
            deadline.min(Instant::now() + options.grace),
            &mut merged,
            None,
            progress,
        );
    }
    if ended {
        let _ = child.wait();
    } else {
        stop(&mut child, &rx, &mut merged, options.grace, progress);
    }
    Ok(Collection {
        merged,
        nodes,
        ended,
        waited: options.timeout,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Why each node whose ranks did not all come is missing.
fn missing(collection: &Collection) -> Vec<(String, NodeSilence)> {
    let merged = &collection.merged;
    collection
        .nodes
        .iter()
        .filter_map(|node| {
            let why = match merged.nodes().get(node) {
                None if collection.ended => NodeSilence::EndedSilently,
                None => NodeSilence::NoAnswer {
                    waited: collection.waited,
                },
                Some(s) if !s.complete() => NodeSilence::Incomplete {
                    came: s.readings.len() + s.unreadable.len(),
                    of: s.header.as_ref().map_or(0, |h| h.ranks),
                },
                Some(_) => return None,
            };
            Some((node.clone(), why))
        })
        .collect()
}

/// The readings of the step's ranks: those the agents sent, and one that
/// failed for every rank the launcher's table or the step's task count
/// says exists but no agent sent, naming the nodes that did not answer.
fn readings(
    collection: Collection,
    step: StepInfo,
    table: &[LaunchedRank],
    progress: &mut dyn FnMut(FanoutEvent),
) -> FanoutReport {
    let missing = missing(&collection);
    for (node, why) in &missing {
        progress(FanoutEvent::NodeMissing {
            node: node.clone(),
            why: why.clone(),
        });
    }
    let merged = &collection.merged;
    let mut readings = merged.readings();
    apply_table(&mut readings, table);
    let silent: Vec<&str> = missing.iter().map(|(n, _)| n.as_str()).collect();
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
    progress(FanoutEvent::Collected {
        answered: collection.nodes.len() - missing.len(),
        nodes: collection.nodes.len(),
        seconds: collection.seconds,
        ranks: readings.len(),
        bytes: merged.bytes(),
    });
    FanoutReport {
        step,
        bytes: merged.bytes(),
        nodes: collection.nodes,
        readings,
        missing,
        seconds: collection.seconds,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// srun's last stderr line may be read after its stdout's end; it
    /// must still reach the caller, and collection still counts as ended.
    #[test]
    fn srun_stderr_read_after_stdout_end_is_passed_on() {
        let (tx, rx) = mpsc::channel();
        tx.send(Event::StdoutEnd).unwrap();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            tx.send(Event::Stderr("srun: error: n2: task 1: Killed".into()))
                .unwrap();
        });
        let mut merged = MergedStreams::new();
        let mut said = Vec::new();
        let ended = receive(
            &rx,
            Instant::now() + Duration::from_secs(30),
            &mut merged,
            None,
            &mut |event| {
                if let FanoutEvent::SrunError(line) = event {
                    said.push(line);
                }
            },
        );
        late.join().unwrap();
        assert!(ended);
        assert_eq!(said, ["srun: error: n2: task 1: Killed"]);
    }

    /// A stderr that stays open does not hold collection past the bound.
    #[test]
    fn stdout_end_bounds_the_wait_for_stderr() {
        let (tx, rx) = mpsc::channel();
        tx.send(Event::StdoutEnd).unwrap();
        let start = Instant::now();
        let ended = receive(
            &rx,
            start + Duration::from_secs(60),
            &mut MergedStreams::new(),
            None,
            &mut |_| {},
        );
        assert!(ended);
        assert!(start.elapsed() < Duration::from_secs(30));
        drop(tx);
    }
}
