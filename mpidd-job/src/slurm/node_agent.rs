//! The per-node agent's work (`mpidd agent`): find the ranks of a step on
//! this node, read each with a bound on its time, and write what became of
//! each as the records of [`agent_stream`](crate::agent_stream), header
//! first and trailer last.
//!
//! What is left to the program that runs the agent is the process: its
//! signals (an agent that is told to stop writes its trailer with
//! [`AgentEnding::Signal`] and exits, which lets go of every rank it still
//! holds) and where the stream goes.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use mpidd_job::agent_stream::{AgentEnding, AgentRecord};
//! use mpidd_job::slurm::node_agent::{read_node, AgentWriter};
//! use mpidd_job::{JobReader, RankTarget, ReadOptions};
//!
//! let mut stream = AgentWriter::new(Vec::new(), "n1");
//! let targets = vec![RankTarget::core("/nonexistent/core.0")];
//! read_node(
//!     Arc::new(JobReader::new(ReadOptions::default())),
//!     targets,
//!     1,
//!     Duration::from_secs(10),
//!     "n1",
//!     &mut |record| stream.write(&record).unwrap(),
//! );
//! stream.finish(AgentEnding::Complete)?;
//! assert_eq!((stream.read(), stream.unreadable()), (0, 1));
//! let text = String::from_utf8(stream.into_inner()).unwrap();
//! assert!(text.lines().last().unwrap().contains(r#""record":"trailer""#));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::bounded_read::{read_bounded, Outcome};
use crate::read_ranks::{JobReader, RankTarget};
use crate::reading::RankReading;
use crate::slurm::agent_stream::{
    AgentEnding, AgentRecord, AgentTrailer, RankRecord, UnreadableRank,
};
use crate::slurm::slurm_step::{local_tasks, StepName};

/// Why an agent has nothing to read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// Neither a step nor a pid.
    #[error("name the ranks: --step JOBID.STEPID or --pid")]
    NoTargets,
    /// A step without its step id.
    #[error("--step needs JOBID.STEPID, not the job {0} alone")]
    NoStepId(String),
}

/// The ranks an agent reads on its node: the tasks of `step` there that
/// have an MPI library loaded (on node `node_filter` only, when given:
/// several `slurmd` on one machine share its processes), then each of
/// `pids` not among them. Each is a live rank on `node`, with its task
/// number as its world rank when the step gives one.
pub fn agent_targets(
    step: Option<&StepName>,
    pids: &[i32],
    node_filter: Option<&str>,
    node: &str,
) -> Result<Vec<RankTarget>, AgentError> {
    if step.is_none() && pids.is_empty() {
        return Err(AgentError::NoTargets);
    }
    let mut targets: Vec<RankTarget> = Vec::new();
    if let Some(step) = step {
        let Some(step_id) = &step.step else {
            return Err(AgentError::NoStepId(step.job.clone()));
        };
        targets.extend(
            local_tasks(&step.job, step_id, node_filter)
                .iter()
                .map(|t| t.target(node)),
        );
    }
    for &pid in pids {
        if !targets
            .iter()
            .any(|t| matches!(t, RankTarget::Live { pid: p, .. } if *p == pid))
        {
            targets.push(RankTarget::Live {
                pid,
                host: Some(node.to_string()),
                world_rank: None,
            });
        }
    }
    Ok(targets)
}

/// Whether anything of the rank was read (else it is reported unreadable,
/// with the reading's errors as the reason).
pub fn read_at_all(reading: &RankReading) -> bool {
    reading.queues.is_some() || !reading.threads.is_empty() || reading.errors.is_empty()
}

/// Reads `targets`, `workers` at a time, giving up on a rank whose reading
/// takes longer than `rank_timeout`, and hands `emit` a record for each
/// rank as its reading ends: a [`RankRecord`], or an [`UnreadableRank`]
/// that says why. Returns how many readings were given up: while that is
/// not zero, threads of this process may still hold live ranks stopped,
/// and only the end of the process lets them go.
pub fn read_node(
    reader: Arc<JobReader>,
    targets: Vec<RankTarget>,
    workers: usize,
    rank_timeout: Duration,
    node: &str,
    emit: &mut dyn FnMut(AgentRecord),
) -> usize {
    let labels: Vec<(String, Option<i32>, Option<i64>)> = targets
        .iter()
        .map(|t| match t {
            RankTarget::Live {
                pid, world_rank, ..
            } => (t.label(), Some(*pid), *world_rank),
            RankTarget::Core { world_rank, .. } => (t.label(), None, *world_rank),
        })
        .collect();
    let unreadable = |index: usize, world_rank: Option<i64>, reason: String| {
        AgentRecord::Unreadable(UnreadableRank {
            node: node.to_string(),
            target: labels[index].0.clone(),
            pid: labels[index].1,
            world_rank: world_rank.or(labels[index].2),
            reason,
        })
    };
    read_bounded(reader, targets, workers, rank_timeout, &mut |outcome| {
        emit(match outcome {
            Outcome::Read {
                reading, seconds, ..
            } if read_at_all(&reading) => AgentRecord::Rank(RankRecord {
                node: node.to_string(),
                seconds,
                reading: *reading,
            }),
            Outcome::Read { index, reading, .. } => {
                unreadable(index, reading.world_rank, reading.errors.join("; "))
            }
            Outcome::TimedOut { index, after } => unreadable(
                index,
                None,
                format!(
                    "its reading took longer than {} s and was given up",
                    after.as_secs_f64()
                ),
            ),
        })
    })
}

/// An agent's stream: each record written as one line and flushed at
/// once, so that it leaves the node now; the ranks counted as they go by,
/// and nothing after the trailer.
#[derive(Debug)]
pub struct AgentWriter<W: Write> {
    out: W,
    node: String,
    start: Instant,
    read: usize,
    unreadable: usize,
    closed: bool,
}

impl<W: Write> AgentWriter<W> {
    /// A stream of node `node` into `out`; its clock starts now.
    pub fn new(out: W, node: impl Into<String>) -> Self {
        AgentWriter {
            out,
            node: node.into(),
            start: Instant::now(),
            read: 0,
            unreadable: 0,
            closed: false,
        }
    }

    /// Writes one record and flushes it. After the trailer nothing is
    /// written. A failure means the reader is gone (the front end gave
    /// up): no one reads what would follow.
    pub fn write(&mut self, record: &AgentRecord) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match record {
            AgentRecord::Rank(_) => self.read += 1,
            AgentRecord::Unreadable(_) => self.unreadable += 1,
            AgentRecord::Header(_) | AgentRecord::Trailer(_) => {}
        }
        if let AgentRecord::Trailer(_) = record {
            self.closed = true;
        }
        self.out.write_all(&record.to_line())?;
        self.out.flush()
    }

    /// Writes the trailer: the counts, the time since the stream began,
    /// and how the agent ended. Nothing is written after it.
    pub fn finish(&mut self, ending: AgentEnding) -> std::io::Result<()> {
        let trailer = AgentRecord::Trailer(AgentTrailer {
            node: self.node.clone(),
            read: self.read,
            unreadable: self.unreadable,
            seconds: self.start.elapsed().as_secs_f64(),
            ending,
        });
        self.write(&trailer)
    }

    /// `rank` records written.
    pub fn read(&self) -> usize {
        self.read
    }

    /// `unreadable` records written.
    pub fn unreadable(&self) -> usize {
        self.unreadable
    }

    /// Whether the trailer was written.
    pub fn is_finished(&self) -> bool {
        self.closed
    }

    /// The output, given back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read_ranks::ReadOptions;
    use crate::slurm::agent_stream::{AgentHeader, AGENT_FORMAT};

    #[test]
    fn the_writer_counts_ranks_and_writes_nothing_after_the_trailer() {
        let mut w = AgentWriter::new(Vec::new(), "n3");
        w.write(&AgentRecord::Header(AgentHeader {
            format: AGENT_FORMAT.to_string(),
            node: "n3".into(),
            host: "h".into(),
            agent_pid: 1,
            version: "0".into(),
            step: None,
            ranks: 2,
            rank_timeout_ms: 1,
        }))
        .unwrap();
        read_node(
            Arc::new(JobReader::new(ReadOptions::default())),
            vec![
                RankTarget::core("/nonexistent/core.0"),
                RankTarget::Live {
                    pid: -7,
                    host: None,
                    world_rank: Some(4),
                },
            ],
            2,
            Duration::from_secs(30),
            "n3",
            &mut |r| w.write(&r).unwrap(),
        );
        w.finish(AgentEnding::Complete).unwrap();
        assert!(w.is_finished());
        w.write(&AgentRecord::Trailer(AgentTrailer {
            node: "n3".into(),
            read: 9,
            unreadable: 9,
            seconds: 0.0,
            ending: AgentEnding::Complete,
        }))
        .unwrap();
        let text = String::from_utf8(w.into_inner()).unwrap();
        let records: Vec<AgentRecord> = text
            .lines()
            .map(|l| AgentRecord::parse(l.as_bytes()).unwrap())
            .collect();
        assert_eq!(records.len(), 4, "{text}");
        let mut unreadable: Vec<(String, Option<i64>)> = records
            .iter()
            .filter_map(|r| match r {
                AgentRecord::Unreadable(u) => Some((u.target.clone(), u.world_rank)),
                _ => None,
            })
            .collect();
        unreadable.sort();
        assert_eq!(
            unreadable,
            [
                ("/nonexistent/core.0".to_string(), None),
                ("pid -7".to_string(), Some(4))
            ]
        );
        let AgentRecord::Trailer(t) = &records[3] else {
            panic!("{text}")
        };
        assert_eq!(
            (t.read, t.unreadable, &t.ending),
            (0, 2, &AgentEnding::Complete)
        );
    }

    #[test]
    fn an_agent_needs_a_step_with_its_id_or_pids() {
        assert!(matches!(
            agent_targets(None, &[], None, "n1"),
            Err(AgentError::NoTargets)
        ));
        let job: StepName = "12".parse().unwrap();
        assert!(matches!(
            agent_targets(Some(&job), &[], None, "n1"),
            Err(AgentError::NoStepId(j)) if j == "12"
        ));
        let targets = agent_targets(None, &[5, 5, 6], None, "n1").unwrap();
        let labels: Vec<String> = targets.iter().map(RankTarget::label).collect();
        assert_eq!(labels, ["pid 5", "pid 6"]);
    }
}
