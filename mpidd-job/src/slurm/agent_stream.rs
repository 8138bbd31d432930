//! The stream a per-node agent (`mpidd agent`) writes to its standard
//! output, and its merge on the front end (`mpidd job --slurm`).
//!
//! The stream is JSON lines, one record per line, each an object whose
//! `record` field says what it is (format [`AGENT_FORMAT`], documented in
//! docs/slurm.md):
//!
//! 1. one `header`: the format, the node, the agent's pid and version, the
//!    step it reads and how many ranks it found on its node;
//! 2. per rank, in the order the readings finish, either a `rank` record
//!    (the [`RankReading`], which carries the reading's own partial errors)
//!    or an `unreadable` record (the rank could not be read at all, and
//!    why: it could not be attached, or its reading took longer than the
//!    agent's bound);
//! 3. one `trailer`: the counts, the time taken, and how the agent ended
//!    (all read, or stopped by a signal).
//!
//! A stream without its trailer is a node that did not finish: its records
//! still count, and the node is named as incomplete. Every record names its
//! node, so streams may be merged in any order.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::reading::RankReading;

/// The name and major version of the stream format. A reader accepts a
/// header whose format has this name and major version; minor additions
/// are new optional fields, which it ignores.
pub const AGENT_FORMAT: &str = "mpidd-agent/1";

/// One line of an agent's stream.
// A record lives for one line: it is decoded and its content moved out at
// once, never kept in bulk, so a rank's record being the largest costs
// nothing that boxing it would save.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum AgentRecord {
    /// The first line.
    Header(AgentHeader),
    /// A rank that was read (perhaps with errors of parts of it).
    Rank(RankRecord),
    /// A rank that could not be read at all.
    Unreadable(UnreadableRank),
    /// The last line.
    Trailer(AgentTrailer),
}

/// The first record of a stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentHeader {
    /// [`AGENT_FORMAT`].
    pub format: String,
    /// The node the agent runs on (Slurm's node name).
    pub node: String,
    /// The host name of the machine.
    pub host: String,
    /// The agent's own pid.
    pub agent_pid: i32,
    /// The agent's version (mpidd's crate version).
    pub version: String,
    /// The step whose ranks it reads (`JOB.STEP`), when it was given one.
    pub step: Option<String>,
    /// How many ranks it found on its node and will read.
    pub ranks: usize,
    /// Its bound on the time of one rank's reading, in milliseconds.
    pub rank_timeout_ms: u64,
}

/// A rank that was read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankRecord {
    /// The node it runs on.
    pub node: String,
    /// How long its reading took, in seconds.
    pub seconds: f64,
    /// What was read.
    pub reading: RankReading,
}

/// A rank that could not be read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnreadableRank {
    /// The node it runs on.
    pub node: String,
    /// What it is: `pid N` or a core file's path.
    pub target: String,
    /// Its pid, when known.
    pub pid: Option<i32>,
    /// Its world rank as the launcher gave it, when known.
    pub world_rank: Option<i64>,
    /// Why it could not be read.
    pub reason: String,
}

/// How an agent ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum AgentEnding {
    /// Every rank found was read or reported unreadable.
    Complete,
    /// A signal ended it before that.
    Signal {
        /// The signal's name.
        signal: String,
    },
}

/// The last record of a stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentTrailer {
    /// The node.
    pub node: String,
    /// `rank` records written.
    pub read: usize,
    /// `unreadable` records written.
    pub unreadable: usize,
    /// The agent's time from start to trailer, in seconds.
    pub seconds: f64,
    /// How it ended.
    pub ending: AgentEnding,
}

/// A line that is not a record of this format.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// Not JSON, or not a record.
    #[error("not an agent record ({cause}): {excerpt}")]
    Malformed {
        /// The start of the line.
        excerpt: String,
        /// Why: shown in the message, so not also as `source()`.
        cause: serde_json::Error,
    },
    /// A header of another format or major version.
    #[error("node {node}: the agent writes format {format}, this mpidd reads {AGENT_FORMAT}")]
    Format {
        /// The node.
        node: String,
        /// The format it wrote.
        format: String,
    },
}

impl AgentRecord {
    /// The record as one line of the stream, with its newline.
    pub fn to_line(&self) -> Vec<u8> {
        // A record holds only strings, numbers and lists of them:
        // serializing it cannot fail.
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        line
    }

    /// Parses one line (with or without its newline).
    pub fn parse(line: &[u8]) -> Result<AgentRecord, StreamError> {
        let record: AgentRecord =
            serde_json::from_slice(line).map_err(|cause| StreamError::Malformed {
                excerpt: String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned(),
                cause,
            })?;
        if let AgentRecord::Header(h) = &record {
            if h.format != AGENT_FORMAT {
                return Err(StreamError::Format {
                    node: h.node.clone(),
                    format: h.format.clone(),
                });
            }
        }
        Ok(record)
    }

    /// The node the record comes from.
    pub fn node(&self) -> &str {
        match self {
            AgentRecord::Header(h) => &h.node,
            AgentRecord::Rank(r) => &r.node,
            AgentRecord::Unreadable(u) => &u.node,
            AgentRecord::Trailer(t) => &t.node,
        }
    }
}

impl UnreadableRank {
    /// The rank as a reading that failed as a whole, for the analysis.
    pub fn to_reading(&self) -> RankReading {
        let mut reading = RankReading::failed(
            self.target.clone(),
            self.pid,
            Some(self.node.clone()),
            self.reason.clone(),
        );
        reading.world_rank = self.world_rank;
        reading
    }
}

/// What one node's agent sent.
#[derive(Clone, Debug, Default)]
pub struct NodeStream {
    /// Its header, once it came.
    pub header: Option<AgentHeader>,
    /// Its rank readings.
    pub readings: Vec<RankReading>,
    /// The ranks it could not read.
    pub unreadable: Vec<UnreadableRank>,
    /// Its trailer, once it came.
    pub trailer: Option<AgentTrailer>,
    /// Bytes of its records received, newlines included.
    pub bytes: u64,
}

impl NodeStream {
    /// Whether its trailer came.
    pub fn complete(&self) -> bool {
        self.trailer.is_some()
    }
}

/// The streams of every node, merged as their records arrive.
#[derive(Clone, Debug, Default)]
pub struct MergedStreams {
    nodes: BTreeMap<String, NodeStream>,
}

impl MergedStreams {
    /// Nothing received yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one record that came as `bytes` bytes; returns its node's
    /// stream as it now is.
    pub fn add(&mut self, record: AgentRecord, bytes: u64) -> &NodeStream {
        let node = self.nodes.entry(record.node().to_string()).or_default();
        node.bytes += bytes;
        match record {
            AgentRecord::Header(h) => node.header = Some(h),
            AgentRecord::Rank(r) => {
                let mut reading = r.reading;
                reading.host.get_or_insert(r.node);
                node.readings.push(reading);
            }
            AgentRecord::Unreadable(u) => node.unreadable.push(u),
            AgentRecord::Trailer(t) => node.trailer = Some(t),
        }
        node
    }

    /// Every node that sent something, by name.
    pub fn nodes(&self) -> &BTreeMap<String, NodeStream> {
        &self.nodes
    }

    /// Every rank of every node, read or not, for [`crate::analyze`]:
    /// unreadable ranks become readings that failed with their reason.
    pub fn readings(&self) -> Vec<RankReading> {
        self.nodes
            .values()
            .flat_map(|n| {
                n.readings
                    .iter()
                    .cloned()
                    .chain(n.unreadable.iter().map(UnreadableRank::to_reading))
            })
            .collect()
    }

    /// Bytes received over all nodes.
    pub fn bytes(&self) -> u64 {
        self.nodes.values().map(|n| n.bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::SyntheticRank;

    fn header(node: &str) -> AgentRecord {
        AgentRecord::Header(AgentHeader {
            format: AGENT_FORMAT.to_string(),
            node: node.to_string(),
            host: "h".to_string(),
            agent_pid: 7,
            version: "0".to_string(),
            step: Some("3.0".to_string()),
            ranks: 1,
            rank_timeout_ms: 1000,
        })
    }

    #[test]
    fn records_round_trip_through_lines() {
        let reading = SyntheticRank::new(1, 2)
            .receive("MPI_COMM_WORLD", 0, Some(7))
            .stack(&["main", "MPI_Recv"])
            .reading();
        let records = vec![
            header("n1"),
            AgentRecord::Rank(RankRecord {
                node: "n1".into(),
                seconds: 0.5,
                reading,
            }),
            AgentRecord::Unreadable(UnreadableRank {
                node: "n1".into(),
                target: "pid 9".into(),
                pid: Some(9),
                world_rank: Some(0),
                reason: "timed out".into(),
            }),
            AgentRecord::Trailer(AgentTrailer {
                node: "n1".into(),
                read: 1,
                unreadable: 1,
                seconds: 1.0,
                ending: AgentEnding::Signal {
                    signal: "SIGTERM".into(),
                },
            }),
        ];
        for r in &records {
            let line = r.to_line();
            assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
            assert_eq!(&AgentRecord::parse(&line).unwrap(), r);
        }
        let text = String::from_utf8(records[0].to_line()).unwrap();
        assert!(text.starts_with(r#"{"record":"header","format":"mpidd-agent/1""#));
    }

    #[test]
    fn another_major_version_is_refused_by_name() {
        let line = br#"{"record":"header","format":"mpidd-agent/2","node":"n4","host":"h","agent_pid":1,"version":"9","step":null,"ranks":0,"rank_timeout_ms":1}"#;
        let e = AgentRecord::parse(line).unwrap_err().to_string();
        assert!(e.contains("n4") && e.contains("mpidd-agent/2"), "{e}");
        let e = AgentRecord::parse(b"srun: error: n2: task 1: Killed").unwrap_err();
        assert!(e.to_string().contains("srun: error"), "{e}");
    }

    #[test]
    fn merge_keeps_partial_nodes_and_turns_unreadable_ranks_into_failed_readings() {
        let mut merged = MergedStreams::new();
        merged.add(header("n2"), 10);
        merged.add(
            AgentRecord::Unreadable(UnreadableRank {
                node: "n2".into(),
                target: "pid 5".into(),
                pid: Some(5),
                world_rank: Some(3),
                reason: "took longer than 1 s".into(),
            }),
            20,
        );
        merged.add(header("n1"), 10);
        let reading = SyntheticRank::new(0, 4).reading();
        merged.add(
            AgentRecord::Rank(RankRecord {
                node: "n1".into(),
                seconds: 0.1,
                reading,
            }),
            30,
        );
        assert_eq!(merged.bytes(), 70);
        assert!(!merged.nodes()["n1"].complete());
        let readings = merged.readings();
        assert_eq!(readings.len(), 2);
        assert_eq!(readings[0].world_rank, Some(0));
        assert_eq!(readings[1].world_rank, Some(3));
        assert_eq!(readings[1].host.as_deref(), Some("n2"));
        assert_eq!(readings[1].errors, ["took longer than 1 s"]);
    }
}
