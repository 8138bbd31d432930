//! A real Slurm cluster of two nodes on loopback (scripts/slurm-cluster.sh:
//! munge, slurmctld, `slurmd -N n1` and `slurmd -N n2`), under a scratch
//! directory of the test, and hung jobs of the reference MPICH launched on
//! it by `srun`. Dropping the cluster tears it down (its jobs, daemons and
//! tasks), also when the test fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::hung_job::{build, HungJob};
use super::mpich_job::{mpidd, ref_mpich};

/// Slurm's programs the cluster needs, and the Debian package of each.
const TOOLS: [(&str, &str); 6] = [
    ("munged", "munge"),
    ("slurmctld", "slurmctld"),
    ("slurmd", "slurmd"),
    ("srun", "slurm-client"),
    ("scontrol", "slurm-client"),
    ("squeue", "slurm-client"),
];

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/slurm-cluster.sh")
}

fn found(tool: &str) -> bool {
    ["/usr/bin", "/usr/sbin", "/bin", "/sbin"]
        .iter()
        .any(|d| Path::new(d).join(tool).exists())
}

/// A running local cluster.
pub struct SlurmCluster {
    pub dir: PathBuf,
    pub conf: PathBuf,
    /// One cluster at a time per test binary: five clusters with their
    /// busy-polling ranks on a 2-core machine starved the agents past
    /// their deadlines, which measured the machine, not mpidd. Released
    /// after the cluster is stopped (fields drop after `drop`).
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
}

static ONE_CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl SlurmCluster {
    /// Brings up a cluster of two nodes in the fresh directory `name`.
    pub fn start(name: &str) -> SlurmCluster {
        // A failed test poisons the lock; the next one still runs.
        let one_at_a_time = ONE_CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        let missing: Vec<String> = TOOLS
            .iter()
            .filter(|(tool, _)| !found(tool))
            .map(|(tool, package)| format!("{tool} (Debian package {package})"))
            .collect();
        assert!(
            missing.is_empty(),
            "the Slurm tests need a local Slurm cluster, and {} missing: install Debian's \
             slurmctld slurmd slurm-client munge (scripts/test.sh does)",
            missing.join(", ")
        );
        let dir = super::scratch::fresh_dir(name);
        let cluster = SlurmCluster {
            conf: dir.join("etc/slurm.conf"),
            dir,
            _one_at_a_time: one_at_a_time,
        };
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(&cluster.dir)
            .arg("2")
            .output()
            .expect("run scripts/slurm-cluster.sh");
        assert!(
            out.status.success(),
            "scripts/slurm-cluster.sh start {} failed:\n{}{}",
            cluster.dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        cluster
    }

    /// A Slurm command (or any that talks to the cluster).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// `mpidd ARGS` against this cluster.
    pub fn mpidd(&self, args: &[&str]) -> Output {
        mpidd()
            .env("SLURM_CONF", &self.conf)
            .args(args)
            .output()
            .expect("run mpidd")
    }

    /// Starts tests/mpich/PROGRAM.c, built with the reference MPICH, as 4
    /// ranks over both nodes (2 each) by `srun --mpi=pmi2`, and waits
    /// until every rank printed READY. Returns the job and its Slurm job
    /// id.
    pub fn hung_job(&self, name: &str, program: &str) -> (HungJob, String) {
        let (dir, exe, source) = build(&ref_mpich().join("bin/mpicc"), name, program);
        let mut srun = self.command("srun");
        srun.args(["--mpi=pmi2", "-N2", "--ntasks-per-node=2"])
            .arg(format!("--job-name={name}"))
            // Blocked ranks busy-poll: at the lowest priority they leave
            // the CPUs to mpidd (nice execs, so the pid is the rank's).
            .args(["nice", "-n", "19"])
            .arg(&exe);
        let job = HungJob::run(srun, dir, source, program);
        let out = self
            .command("squeue")
            .args(["-h", "-o", "%i", "-n", name])
            .output()
            .expect("run squeue");
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(
            !id.is_empty() && !id.contains('\n'),
            "one Slurm job named {name}: {id:?}"
        );
        (job, id)
    }

    /// The node each rank of `job` runs on, by its Slurm environment.
    pub fn nodes_of(&self, job: &HungJob) -> Vec<String> {
        job.ranks
            .iter()
            .map(|&(_, pid)| {
                let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                env.split(|&b| b == 0)
                    .find_map(|v| v.strip_prefix(b"SLURMD_NODENAME="))
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .unwrap_or_default()
            })
            .collect()
    }
}

impl Drop for SlurmCluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .output();
        super::scratch::remove_unless_failed(&self.dir);
    }
}
