//! `mpidd agent`: the per-node reader. The resource manager starts one on
//! every node of a job (`srun --overlap --ntasks-per-node=1`); each reads
//! the ranks of its own node and writes them to its standard output in the
//! stream format of `mpidd_job::agent_stream` (docs/slurm.md), which
//! `srun` brings back to `mpidd job --slurm`.
//!
//! A live rank is stopped only while it is read. The agent ends on
//! SIGTERM, SIGINT or SIGHUP after writing its trailer; its exit lets every
//! rank it still holds go (the kernel detaches a tracer's tracees when it
//! exits), and so does a SIGKILL.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpidd_job::agent_stream::{
    AgentEnding, AgentHeader, AgentRecord, AgentTrailer, RankRecord, UnreadableRank, AGENT_FORMAT,
};
use mpidd_job::bounded_read::{read_bounded, Outcome};
use mpidd_job::slurm_step::{local_tasks, StepName};
use mpidd_job::{JobReader, RankReading, RankTarget, ReadOptions};
use mpiq_core::MqsLibrary;
use nix::sys::signal::{SigSet, SigmaskHow, Signal};

/// The arguments of `mpidd agent`.
#[derive(clap::Args)]
pub struct AgentArgs {
    /// The Slurm step whose ranks on this node are read (JOBID.STEPID):
    /// the processes whose environment names the step and this node, and
    /// that have an MPI library loaded.
    #[arg(long, value_name = "JOBID.STEPID")]
    step: Option<StepName>,
    /// A rank to read by pid (repeatable), besides the step's.
    #[arg(long, value_name = "PID")]
    pid: Vec<i32>,
    /// The node's name (default: $SLURMD_NODENAME, else the host name).
    #[arg(long)]
    node: Option<String>,
    /// Give up on a rank whose reading takes longer (seconds).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    rank_timeout: f64,
    /// Ranks read at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Do not take call stacks.
    #[arg(long)]
    no_stacks: bool,
    /// Do not read message queues: the verdict rests on the ranks' stacks
    /// alone (what it says when no decoder reads the ranks' MPI).
    #[arg(long)]
    no_queues: bool,
    /// A layout profile for an MPI library without debug info (repeatable).
    #[arg(long = "profile", value_name = "FILE")]
    profiles: Vec<PathBuf>,
    /// Read queues through this vendor message-queue library where no
    /// native decoder knows the MPI.
    #[arg(long, value_name = "PATH")]
    dll: Option<PathBuf>,
}

/// Why the agent could not run.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// Neither a step nor a pid.
    #[error("name the ranks: --step JOBID.STEPID or --pid")]
    NoTargets,
    /// A step without its step id.
    #[error("--step needs JOBID.STEPID, not the job {0} alone")]
    NoStepId(String),
    /// A layout profile could not be read.
    #[error(transparent)]
    Profile(#[from] mpidd_read::ProfileError),
    /// The vendor library could not be loaded.
    #[error(transparent)]
    Mqs(#[from] mpiq_core::MqsError),
    /// The signal mask could not be set.
    #[error("cannot block the ending signals: {0}")]
    Signals(nix::Error),
}

/// The stream, and what has been written to it.
struct Stream {
    node: String,
    start: Instant,
    read: usize,
    unreadable: usize,
    /// Set once the trailer is written: nothing may follow it.
    closed: bool,
}

impl Stream {
    /// Writes one record and flushes it, so that it leaves the node now.
    /// A standard output that is gone (the front end gave up) ends the
    /// agent: no one reads what it would write.
    fn write(&mut self, record: &AgentRecord) {
        if self.closed {
            return;
        }
        let mut out = std::io::stdout().lock();
        if out
            .write_all(&record.to_line())
            .and_then(|()| out.flush())
            .is_err()
        {
            std::process::exit(141);
        }
    }

    fn trailer(&mut self, ending: AgentEnding) {
        let trailer = AgentRecord::Trailer(AgentTrailer {
            node: self.node.clone(),
            read: self.read,
            unreadable: self.unreadable,
            seconds: self.start.elapsed().as_secs_f64(),
            ending,
        });
        self.write(&trailer);
        self.closed = true;
    }
}

fn lock(stream: &Mutex<Stream>) -> std::sync::MutexGuard<'_, Stream> {
    stream.lock().unwrap_or_else(|e| e.into_inner())
}

/// Blocks the signals that end the agent in every thread and waits for
/// them in one: on the first, it writes the trailer and exits.
fn end_on_signals(stream: Arc<Mutex<Stream>>) -> Result<(), AgentError> {
    let mut set = SigSet::empty();
    for s in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        set.add(s);
    }
    // Before any other thread starts, so that they all inherit the mask.
    nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None)
        .map_err(AgentError::Signals)?;
    std::thread::spawn(move || {
        if let Ok(signal) = set.wait() {
            lock(&stream).trailer(AgentEnding::Signal {
                signal: signal.as_str().to_string(),
            });
            // Exiting lets go of every rank a reading still holds.
            std::process::exit(128 + signal as i32);
        }
    });
    Ok(())
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// Runs the agent; it ends the process itself when done.
pub fn run(args: AgentArgs, no_cache: bool) -> Result<(), AgentError> {
    let start = Instant::now();
    let slurm_node = std::env::var("SLURMD_NODENAME").ok();
    let host = host_name();
    // Tasks are told apart by node only when the node is known: several
    // slurmd on one machine share its processes.
    let node_filter = args.node.clone().or(slurm_node);
    let node = node_filter.clone().unwrap_or_else(|| host.clone());
    if args.step.is_none() && args.pid.is_empty() {
        return Err(AgentError::NoTargets);
    }
    let mut targets: Vec<RankTarget> = Vec::new();
    if let Some(step) = &args.step {
        let Some(step_id) = &step.step else {
            return Err(AgentError::NoStepId(step.job.clone()));
        };
        targets.extend(
            local_tasks(&step.job, step_id, node_filter.as_deref())
                .iter()
                .map(|t| t.target(&node)),
        );
    }
    for &pid in &args.pid {
        if !targets
            .iter()
            .any(|t| matches!(t, RankTarget::Live { pid: p, .. } if *p == pid))
        {
            targets.push(RankTarget::Live {
                pid,
                host: Some(node.clone()),
                world_rank: None,
            });
        }
    }
    let mut options = ReadOptions {
        stacks: !args.no_stacks,
        queues: !args.no_queues,
        profiles: crate::profile::load_all(&args.profiles)?,
        // Every agent of a job reads the same builds: the first run on a
        // node fills the node's cache, later runs read no DWARF.
        cache: crate::cache::layout_cache(no_cache),
        ..ReadOptions::default()
    };
    if let Some(n) = args.jobs {
        options.parallel = n.max(1);
    }
    let workers = options.parallel;
    let mut reader = JobReader::new(options);
    if let Some(dll) = &args.dll {
        reader = reader.with_library(MqsLibrary::load(dll)?);
    }
    let rank_timeout = Duration::try_from_secs_f64(args.rank_timeout)
        .unwrap_or(Duration::from_secs(60))
        .max(Duration::from_millis(1));
    let stream = Arc::new(Mutex::new(Stream {
        node: node.clone(),
        start,
        read: 0,
        unreadable: 0,
        closed: false,
    }));
    end_on_signals(Arc::clone(&stream))?;
    lock(&stream).write(&AgentRecord::Header(AgentHeader {
        format: AGENT_FORMAT.to_string(),
        node: node.clone(),
        host,
        agent_pid: std::process::id() as i32,
        version: env!("CARGO_PKG_VERSION").to_string(),
        step: args.step.as_ref().map(|s| s.to_string()),
        ranks: targets.len(),
        rank_timeout_ms: rank_timeout.as_millis() as u64,
    }));
    let labels: Vec<(String, Option<i32>, Option<i64>)> = targets
        .iter()
        .map(|t| match t {
            RankTarget::Live {
                pid, world_rank, ..
            } => (t.label(), Some(*pid), *world_rank),
            RankTarget::Core { world_rank, .. } => (t.label(), None, *world_rank),
        })
        .collect();
    read_bounded(
        Arc::new(reader),
        targets,
        workers,
        rank_timeout,
        &mut |outcome| {
            let record = match outcome {
                Outcome::Read {
                    reading, seconds, ..
                } if read_at_all(&reading) => {
                    lock(&stream).read += 1;
                    AgentRecord::Rank(RankRecord {
                        node: node.clone(),
                        seconds,
                        reading: *reading,
                    })
                }
                Outcome::Read { index, reading, .. } => {
                    lock(&stream).unreadable += 1;
                    AgentRecord::Unreadable(UnreadableRank {
                        node: node.clone(),
                        target: labels[index].0.clone(),
                        pid: labels[index].1,
                        world_rank: reading.world_rank.or(labels[index].2),
                        reason: reading.errors.join("; "),
                    })
                }
                Outcome::TimedOut { index, after } => {
                    lock(&stream).unreadable += 1;
                    AgentRecord::Unreadable(UnreadableRank {
                        node: node.clone(),
                        target: labels[index].0.clone(),
                        pid: labels[index].1,
                        world_rank: labels[index].2,
                        reason: format!(
                            "its reading took longer than {} s and was given up",
                            after.as_secs_f64()
                        ),
                    })
                }
            };
            lock(&stream).write(&record);
        },
    );
    lock(&stream).trailer(AgentEnding::Complete);
    // A reading given up may still hold its rank: only the end of the
    // process lets it go, so the agent ends here rather than wait for it.
    std::process::exit(0);
}

/// Whether anything of the rank was read (else it is reported unreadable,
/// with the reading's errors as the reason).
fn read_at_all(reading: &RankReading) -> bool {
    reading.queues.is_some() || !reading.threads.is_empty() || reading.errors.is_empty()
}
