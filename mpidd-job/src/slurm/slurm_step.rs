//! Slurm job steps: their names, what `scontrol -o show step` says of
//! them, and the processes of a step that run on this node.
//!
//! A step's tasks are found on a node by their environment, which
//! `slurmstepd` gives every task and its children: `SLURM_JOB_ID`,
//! `SLURM_STEP_ID`, `SLURMD_NODENAME` and the task's global number
//! `SLURM_PROCID`, which for an MPI program launched by `srun` is its world
//! rank. The node name matters where several `slurmd` run on one machine
//! (a test cluster): their tasks share `/proc`, and `scontrol listpids`
//! answers for one of them only.

use std::path::Path;

use crate::discover::uses_mpi;
use crate::read_ranks::RankTarget;

/// A job or one step of it, as the user names it: `JOB` or `JOB.STEP`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepName {
    /// The job id (an array job's `123_4` too).
    pub job: String,
    /// The step id, when one was named.
    pub step: Option<String>,
}

/// A step name that is not `JOB[.STEP]`.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not a Slurm job or step: give JOBID or JOBID.STEPID")]
pub struct BadStepName(pub String);

impl std::str::FromStr for StepName {
    type Err = BadStepName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadStepName(s.to_string());
        let (job, step) = match s.split_once('.') {
            Some((j, st)) => (j, Some(st)),
            None => (s, None),
        };
        let job_ok = !job.is_empty()
            && job.chars().all(|c| c.is_ascii_digit() || c == '_')
            && job.starts_with(|c: char| c.is_ascii_digit());
        let step_ok = step.is_none_or(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()));
        if !job_ok || !step_ok {
            return Err(bad());
        }
        Ok(StepName {
            job: job.to_string(),
            step: step.map(str::to_string),
        })
    }
}

impl std::fmt::Display for StepName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.step {
            Some(s) => write!(f, "{}.{s}", self.job),
            None => write!(f, "{}", self.job),
        }
    }
}

/// One running step, from a line of `scontrol -o show step`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepInfo {
    /// `JOB.STEP` (`JOB.batch` and `JOB.extern` for Slurm's own steps).
    pub id: String,
    /// Its nodes, as a Slurm host list (`n[1-4]`).
    pub node_list: String,
    /// Its number of tasks.
    pub tasks: Option<usize>,
    /// The host and pid of the `srun` that launched it.
    pub srun: Option<(String, i32)>,
    /// Its name (the program's).
    pub name: Option<String>,
}

impl StepInfo {
    /// Parses one line of `scontrol -o show step`: `Key=value` pairs
    /// separated by spaces (a value with spaces runs on to the next
    /// `Key=`). `None` without a `StepId=`.
    pub fn parse(line: &str) -> Option<StepInfo> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for word in line.split_whitespace() {
            match word.split_once('=') {
                Some((k, v)) if !k.is_empty() && !k.contains(['(', ')', ',']) => {
                    pairs.push((k.to_string(), v.to_string()))
                }
                _ => {
                    if let Some(last) = pairs.last_mut() {
                        last.1.push(' ');
                        last.1.push_str(word);
                    }
                }
            }
        }
        let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let srun = get("SrunHost:Pid").and_then(|v| {
            let (host, pid) = v.rsplit_once(':')?;
            Some((host.to_string(), pid.parse().ok()?))
        });
        Some(StepInfo {
            id: get("StepId")?,
            node_list: get("NodeList").unwrap_or_default(),
            tasks: get("Tasks").and_then(|t| t.parse().ok()),
            srun,
            name: get("Name").filter(|n| n != "(null)"),
        })
    }

    /// Whether it is a step a user launched (`JOB.N`), not Slurm's batch,
    /// extern or interactive step.
    pub fn is_user_step(&self) -> bool {
        self.id
            .split_once('.')
            .is_some_and(|(_, s)| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
    }
}

/// One task of a step found on this node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalTask {
    /// Its pid.
    pub pid: i32,
    /// Its global task number (`SLURM_PROCID`).
    pub task: Option<i64>,
    /// The node its environment names.
    pub node: Option<String>,
}

/// The environment variables of a process that say which step and node it
/// belongs to, from `/proc/PID/environ` (its environment at exec).
fn step_environment(pid: i32) -> Option<[Option<String>; 4]> {
    let bytes = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let mut out: [Option<String>; 4] = Default::default();
    for var in bytes.split(|&b| b == 0) {
        let Ok(var) = std::str::from_utf8(var) else {
            continue;
        };
        let Some((k, v)) = var.split_once('=') else {
            continue;
        };
        let slot = match k {
            "SLURM_JOB_ID" => 0,
            "SLURM_STEP_ID" => 1,
            "SLURMD_NODENAME" => 2,
            "SLURM_PROCID" => 3,
            _ => continue,
        };
        out[slot] = Some(v.to_string());
    }
    Some(out)
}

/// The processes of step `job.step` on node `node` (any node when `None`)
/// that have an MPI library loaded, in pid order; this process excluded.
pub fn local_tasks(job: &str, step: &str, node: Option<&str>) -> Vec<LocalTask> {
    let me = std::process::id() as i32;
    let mut pids: Vec<i32> = std::fs::read_dir(Path::new("/proc"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    pids.sort_unstable();
    pids.into_iter()
        .filter(|&p| p != me)
        .filter_map(|pid| {
            let [j, s, n, procid] = step_environment(pid)?;
            if j.as_deref() != Some(job) || s.as_deref() != Some(step) {
                return None;
            }
            if let (Some(want), Some(n)) = (node, &n) {
                if want != n {
                    return None;
                }
            }
            if !uses_mpi(pid) {
                return None;
            }
            Some(LocalTask {
                pid,
                task: procid.and_then(|p| p.parse().ok()),
                node: n,
            })
        })
        .collect()
}

impl LocalTask {
    /// The task as a live rank to read, on `node`.
    pub fn target(&self, node: &str) -> RankTarget {
        RankTarget::Live {
            pid: self.pid,
            host: Some(self.node.clone().unwrap_or_else(|| node.to_string())),
            world_rank: self.task,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_names() {
        let s: StepName = "812.3".parse().unwrap();
        assert_eq!((s.job.as_str(), s.step.as_deref()), ("812", Some("3")));
        assert_eq!(s.to_string(), "812.3");
        let s: StepName = "77_4".parse().unwrap();
        assert_eq!((s.job.as_str(), s.step), ("77_4", None));
        for bad in ["", "x", "1.", ".2", "1.batch", "1.2.3", "-1"] {
            assert!(bad.parse::<StepName>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_line_of_scontrol_show_step() {
        // As Slurm 22.05's `scontrol -o show step` prints it.
        let line = "StepId=8.0 UserId=0 StartTime=2026-11-23T22:19:07 TimeLimit=UNLIMITED \
                    State=RUNNING Partition=debug NodeList=n[1-2] Nodes=2 CPUs=4 Tasks=4 \
                    Name=hang ring Network=(null) TRES=cpu=4,mem=0,node=2 ResvPorts=(null) \
                    CPUFreqReq=Default Dist=Block SrunHost:Pid=vm:20116";
        let step = StepInfo::parse(line).unwrap();
        assert_eq!(step.id, "8.0");
        assert_eq!(step.node_list, "n[1-2]");
        assert_eq!(step.tasks, Some(4));
        assert_eq!(step.srun, Some(("vm".to_string(), 20116)));
        assert_eq!(step.name.as_deref(), Some("hang ring"));
        assert!(step.is_user_step());
        let batch = StepInfo::parse("StepId=8.batch NodeList=n1").unwrap();
        assert!(!batch.is_user_step());
        assert_eq!(batch.tasks, None);
        assert!(StepInfo::parse("No job steps in the system").is_none());
    }

    #[test]
    fn this_test_process_is_no_task_of_a_step() {
        assert!(local_tasks("1", "0", None).is_empty());
    }
}
