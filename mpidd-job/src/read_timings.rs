//! How long each part of one rank's reading took: what a live rank pays
//! while it is held stopped, split so that a user (and a benchmark) sees
//! which part dominates. Taken only when [`ReadOptions::timings`] asks.
//!
//! [`ReadOptions::timings`]: crate::ReadOptions::timings

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// The wall time of each phase of one rank's reading, in seconds. A phase
/// that did not happen (a core is never stopped; stacks not asked for) is
/// 0. A live rank is opened first, then stopped, read and released.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadTimings {
    /// Opening the target: its memory, the list of what it maps, and
    /// the symbol tables of the objects (shared across ranks of a build).
    pub open: f64,
    /// Stopping every thread of a live rank (`PTRACE_SEIZE`,
    /// `PTRACE_INTERRUPT`, and the wait for each stop), and reading the
    /// list of what it maps again once it is stopped.
    pub stop: f64,
    /// Its message queues, layouts included when its build is the first
    /// one read.
    pub queues: f64,
    /// Its world rank, when the queues did not give it.
    pub world_rank: f64,
    /// Every thread's registers, stack and frame names.
    pub stacks: f64,
    /// Letting a live rank go (`PTRACE_DETACH` of every thread).
    pub release: f64,
    /// The whole reading, from the first look at the rank to its release:
    /// the phases, and what lies between them.
    pub total: f64,
    /// Threads stopped (0 for a core, or a live rank read without
    /// stopping it).
    pub threads_stopped: usize,
}

/// Marks the end of each phase in turn.
pub(crate) struct Stopwatch {
    start: Instant,
    last: Instant,
}

impl Stopwatch {
    /// Starts the first phase and the total.
    pub(crate) fn start() -> Self {
        let now = Instant::now();
        Stopwatch {
            start: now,
            last: now,
        }
    }

    /// Seconds since the previous lap (or the start), starting the next
    /// phase.
    pub(crate) fn lap(&mut self) -> f64 {
        let now = Instant::now();
        let seconds = now.duration_since(self.last).as_secs_f64();
        self.last = now;
        seconds
    }

    /// Seconds since the start.
    pub(crate) fn total(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}
