//! `mpidd job --slurm JOBID[.STEP]` and `mpidd job --pid SRUN`: a job
//! across nodes, read by `mpidd_job::slurm::fanout` (one `mpidd agent` per
//! node through `srun`). This prints its progress on stderr, one line per
//! node's news; a node that does not answer in time is named, and the
//! ranks of the others are analysed all the same.

use mpidd_job::agent_stream::{AgentEnding, AgentTrailer};
use mpidd_job::slurm::fanout::{read_step, FanoutError, FanoutEvent, FanoutOptions, StepSource};
use mpidd_job::RankReading;

/// Collects the readings of every rank of the step, over its nodes,
/// printing the progress.
pub fn read_job(
    source: &StepSource,
    options: &FanoutOptions,
) -> Result<Vec<RankReading>, FanoutError> {
    Ok(read_step(source, options, &mut progress)?.readings)
}

/// Shows one piece of news on stderr.
fn progress(event: FanoutEvent) {
    match event {
        FanoutEvent::Starting { step, nodes } => eprintln!(
            "mpidd: step {}: {} task(s) on {} node(s) ({}); starting an agent on each",
            step.id,
            step.tasks.map_or("?".to_string(), |t| t.to_string()),
            nodes.len(),
            step.node_list
        ),
        FanoutEvent::AgentStarted(h) => eprintln!(
            "mpidd: {}: agent started (pid {} on {}), {} rank(s)",
            h.node, h.agent_pid, h.host, h.ranks
        ),
        FanoutEvent::AgentFinished(t) => finished(&t),
        FanoutEvent::Unreadable(u) => {
            eprintln!("mpidd: {}: {} unreadable: {}", u.node, u.target, u.reason)
        }
        FanoutEvent::BadRecord { task, error } => eprintln!("mpidd: agent task {task}: {error}"),
        FanoutEvent::TaskOutput { task, text } => {
            eprintln!("mpidd: agent task {task} wrote: {text}")
        }
        FanoutEvent::SrunOutput(text) => eprintln!("mpidd: srun wrote: {text}"),
        FanoutEvent::SrunError(line) => eprintln!("mpidd: {line}"),
        FanoutEvent::NodeMissing { node, why } => eprintln!("mpidd: {node}: {why}"),
        FanoutEvent::Collected {
            answered,
            nodes,
            seconds,
            ranks,
            bytes,
        } => eprintln!(
            "mpidd: {answered} of {nodes} node(s) answered in {seconds:.1} s; {ranks} rank(s), \
             {bytes} bytes of records ({} per rank)",
            bytes / ranks.max(1) as u64
        ),
        // A rank read is told by its node's trailer.
        _ => {}
    }
}

fn finished(t: &AgentTrailer) {
    match &t.ending {
        AgentEnding::Complete => eprintln!(
            "mpidd: {}: {} rank(s) read, {} unreadable, in {:.1} s",
            t.node, t.read, t.unreadable, t.seconds
        ),
        AgentEnding::Signal { signal } => eprintln!(
            "mpidd: {}: agent ended by {signal} after {} rank(s) read, {} unreadable",
            t.node, t.read, t.unreadable
        ),
    }
}
