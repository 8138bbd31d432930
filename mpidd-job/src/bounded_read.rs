//! Reading ranks with a bound on the time of each: what a per-node agent
//! needs, since one rank whose reading never ends (a process stuck in the
//! kernel, a file that blocks) must not keep the node from answering.
//!
//! A rank whose reading passes the bound is given up: it is reported, and
//! a new worker takes its place for the ranks still to read. The thread
//! stuck in it cannot be stopped from outside, and a live rank it stopped
//! stays stopped while that thread holds it; the caller ends its process
//! when it is done (the kernel then lets every traced rank go), which
//! `mpidd agent` does.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::read_ranks::{JobReader, RankTarget};
use crate::reading::RankReading;

/// What became of one rank.
#[derive(Debug)]
pub enum Outcome {
    /// It was read, in `seconds`.
    Read {
        /// Its index in the targets.
        index: usize,
        /// The reading.
        reading: Box<RankReading>,
        /// How long it took.
        seconds: f64,
    },
    /// Its reading passed the bound and was given up.
    TimedOut {
        /// Its index in the targets.
        index: usize,
        /// The bound.
        after: Duration,
    },
}

/// State shared by the workers.
struct Shared {
    queue: Mutex<VecDeque<usize>>,
    /// When each rank's reading started (`None`: not started).
    started: Mutex<Vec<Option<Instant>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn spawn_worker(
    reader: &Arc<JobReader>,
    targets: &Arc<Vec<RankTarget>>,
    shared: &Arc<Shared>,
    tx: &mpsc::Sender<(usize, RankReading, f64)>,
) {
    let (reader, targets, shared, tx) = (
        Arc::clone(reader),
        Arc::clone(targets),
        Arc::clone(shared),
        tx.clone(),
    );
    std::thread::spawn(move || loop {
        let Some(i) = lock(&shared.queue).pop_front() else {
            break;
        };
        let start = Instant::now();
        lock(&shared.started)[i] = Some(start);
        let reading = reader.read_rank(&targets[i]);
        if tx
            .send((i, reading, start.elapsed().as_secs_f64()))
            .is_err()
        {
            break;
        }
    });
}

/// Reads `targets`, `workers` at a time, giving up on any whose reading
/// takes longer than `per_rank`, and calls `report` with each outcome as
/// it comes. Returns how many readings were given up: while that is not
/// zero, threads of this process may still hold live ranks stopped.
pub fn read_bounded(
    reader: Arc<JobReader>,
    targets: Vec<RankTarget>,
    workers: usize,
    per_rank: Duration,
    report: &mut dyn FnMut(Outcome),
) -> usize {
    let n = targets.len();
    let targets = Arc::new(targets);
    let shared = Arc::new(Shared {
        queue: Mutex::new((0..n).collect()),
        started: Mutex::new(vec![None; n]),
    });
    let (tx, rx) = mpsc::channel();
    for _ in 0..workers.clamp(1, n.max(1)) {
        spawn_worker(&reader, &targets, &shared, &tx);
    }
    let mut settled = vec![false; n];
    let mut left = n;
    let mut given_up = 0;
    while left > 0 {
        // Wake when the earliest reading in progress reaches its bound.
        let now = Instant::now();
        let next_bound = lock(&shared.started)
            .iter()
            .zip(&settled)
            .filter_map(|(s, &done)| s.filter(|_| !done))
            .map(|s| (s + per_rank).saturating_duration_since(now))
            .min()
            .unwrap_or(per_rank);
        match rx.recv_timeout(next_bound) {
            Ok((i, reading, seconds)) => {
                if !settled[i] {
                    settled[i] = true;
                    left -= 1;
                    report(Outcome::Read {
                        index: i,
                        reading: Box::new(reading),
                        seconds,
                    });
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let late: Vec<usize> = lock(&shared.started)
                    .iter()
                    .enumerate()
                    .filter(|&(i, s)| !settled[i] && s.is_some_and(|s| s.elapsed() >= per_rank))
                    .map(|(i, _)| i)
                    .collect();
                for i in late {
                    settled[i] = true;
                    left -= 1;
                    given_up += 1;
                    report(Outcome::TimedOut {
                        index: i,
                        after: per_rank,
                    });
                    if !lock(&shared.queue).is_empty() {
                        spawn_worker(&reader, &targets, &shared, &tx);
                    }
                }
            }
            // Every worker is gone, which happens only when each target
            // was sent: nothing is left to wait for.
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    given_up
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read_ranks::ReadOptions;

    /// A FIFO with no writer: opening it as a core file blocks for good, as
    /// a rank stuck in the kernel would keep a reading from ending.
    fn fifo(dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("core.fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .expect("run mkfifo (coreutils)");
        assert!(status.success());
        path
    }

    #[test]
    fn a_reading_that_never_ends_is_given_up_and_the_others_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let stuck = fifo(dir.path());
        let missing = dir.path().join("core.missing");
        let targets = vec![
            RankTarget::core(&stuck),
            RankTarget::core(&missing),
            RankTarget::core(&missing),
        ];
        let reader = Arc::new(JobReader::new(ReadOptions::default()));
        let mut outcomes = Vec::new();
        // One worker: the stuck reading must not keep the two after it
        // from being read.
        let given_up = read_bounded(reader, targets, 1, Duration::from_millis(300), &mut |o| {
            outcomes.push(o)
        });
        assert_eq!(given_up, 1);
        let mut read = Vec::new();
        let mut timed_out = Vec::new();
        for o in outcomes {
            match o {
                Outcome::Read { index, reading, .. } => {
                    assert!(!reading.errors.is_empty(), "{reading:?}");
                    read.push(index)
                }
                Outcome::TimedOut { index, after } => {
                    assert_eq!(after, Duration::from_millis(300));
                    timed_out.push(index)
                }
            }
        }
        read.sort();
        assert_eq!(read, [1, 2]);
        assert_eq!(timed_out, [0]);
    }
}
