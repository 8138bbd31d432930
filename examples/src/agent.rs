//! `mpidd agent`: the per-node reader. The resource manager starts one on
//! every node of a job (`srun --overlap --ntasks-per-node=1`); each reads
//! the ranks of its own node and writes them to its standard output in the
//! stream format of `mpidd_job::agent_stream` (docs/slurm.md), which
//! `srun` brings back to `mpidd job --slurm`. The work is
//! `mpidd_job::slurm::node_agent`'s; this parses the arguments and owns
//! the process: its standard output and its signals.
//!
//! A live rank is stopped only while it is read. The agent ends on
//! SIGTERM, SIGINT or SIGHUP after writing its trailer; its exit lets every
//! rank it still holds go (the kernel detaches a tracer's tracees when it
//! exits), and so does a SIGKILL.

use std::io::Stdout;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mpidd_job::agent_stream::{AgentEnding, AgentHeader, AgentRecord, AGENT_FORMAT};
use mpidd_job::slurm::node_agent::{
    agent_targets, read_node, AgentError as TargetsError, AgentWriter,
};
use mpidd_job::slurm_step::StepName;
use mpidd_job::{JobReader, ReadOptions};
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
    /// Do not read the Python frames of ranks that run CPython: their
    /// stacks show the interpreter's native frames only.
    #[arg(long)]
    no_python: bool,
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
    /// No ranks were named.
    #[error(transparent)]
    Targets(#[from] TargetsError),
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

/// The stream on standard output, shared with the thread that ends the
/// agent on a signal.
type Stream = Arc<Mutex<AgentWriter<Stdout>>>;

fn lock(stream: &Stream) -> std::sync::MutexGuard<'_, AgentWriter<Stdout>> {
    stream.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes one record. A standard output that is gone (the front end gave
/// up) ends the agent: no one reads what it would write.
fn write(stream: &Stream, record: &AgentRecord) {
    if lock(stream).write(record).is_err() {
        std::process::exit(141);
    }
}

/// Blocks the signals that end the agent in every thread and waits for
/// them in one: on the first, it writes the trailer and exits.
fn end_on_signals(stream: Stream) -> Result<(), AgentError> {
    let mut set = SigSet::empty();
    for s in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        set.add(s);
    }
    // Before any other thread starts, so that they all inherit the mask.
    nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None)
        .map_err(AgentError::Signals)?;
    std::thread::spawn(move || {
        if let Ok(signal) = set.wait() {
            let _ = lock(&stream).finish(AgentEnding::Signal {
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
    let slurm_node = std::env::var("SLURMD_NODENAME").ok();
    let host = host_name();
    // Tasks are told apart by node only when the node is known: several
    // slurmd on one machine share its processes.
    let node_filter = args.node.clone().or(slurm_node);
    let node = node_filter.clone().unwrap_or_else(|| host.clone());
    let stream: Stream = Arc::new(Mutex::new(AgentWriter::new(std::io::stdout(), &node)));
    let targets = agent_targets(args.step.as_ref(), &args.pid, node_filter.as_deref(), &node)?;
    let mut options = ReadOptions {
        stacks: !args.no_stacks,
        queues: !args.no_queues,
        python: !args.no_python,
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
    end_on_signals(Arc::clone(&stream))?;
    write(
        &stream,
        &AgentRecord::Header(AgentHeader {
            format: AGENT_FORMAT.to_string(),
            node: node.clone(),
            host,
            agent_pid: std::process::id() as i32,
            version: env!("CARGO_PKG_VERSION").to_string(),
            step: args.step.as_ref().map(|s| s.to_string()),
            ranks: targets.len(),
            rank_timeout_ms: rank_timeout.as_millis() as u64,
        }),
    );
    read_node(
        Arc::new(reader),
        targets,
        workers,
        rank_timeout,
        &node,
        &mut |record| write(&stream, &record),
    );
    if lock(&stream).finish(AgentEnding::Complete).is_err() {
        std::process::exit(141);
    }
    // A reading given up may still hold its rank: only the end of the
    // process lets it go, so the agent ends here rather than wait for it.
    std::process::exit(0);
}
