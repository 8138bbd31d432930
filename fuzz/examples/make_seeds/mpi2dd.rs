//! Seeds of the `mpi2dd` target: a tree of a metadirectory, directories
//! and ranks (one spawned) with a cycle, checked by walking it, and a
//! directory that lists itself and a peer that cannot be reached.

use std::error::Error;
use std::path::Path;

use mpidd_fuzz::{limits, names, Cursor, Process};
use mpidd_read::mpi2dd::Mpi2ddPeer;
use mpidd_read::synthetic::{Mpi2ddSpec, PeerSpec, RankSpec};
use mpidd_read::walk::{self, Connector, JobTree};
use mpidd_read::SyntheticJob;
use mpidd_types::{Packing, TargetAbi};

use crate::common::{abi_name, check, distinct_abis, process_of, write, Result};

/// Walks `job` from its first process.
fn walk_job(job: &mut [Process], packing: Packing) -> Result<JobTree> {
    struct Job<'a>(&'a [Process]);
    impl Connector for Job<'_> {
        type Target = Process;
        fn connect(
            &mut self,
            _: &str,
            pid: i32,
            _: &str,
        ) -> std::result::Result<Process, Box<dyn Error + Send + Sync>> {
            let i = usize::try_from(pid).map_err(|_| "no such process")?;
            Ok(self.0[i % self.0.len()].clone())
        }
    }
    let start = Mpi2ddPeer {
        host_name: "node".into(),
        executable_name: String::new(),
        pid: 0,
    };
    Ok(walk::walk(&mut Job(job), &start, packing, &limits())?)
}

/// The process of pid `me` in an MPI-2 job laid out by `spec` with
/// `packing`.
fn mpi2dd_job(abi: TargetAbi, packing: Packing, me: i32, spec: &Mpi2ddSpec<'_>) -> Process {
    let spec = Mpi2ddSpec { packing, ..*spec };
    process_of(&SyntheticJob::builder(abi).pid(me).mpi2dd(&spec).build())
}

/// Every `mpi2dd` seed.
pub fn mpi2dd(out: &Path) -> Result<()> {
    let names = names::MPI2DD;
    let peer = |pid| PeerSpec {
        host: "node",
        exe: "/usr/bin/mpi-directory",
        pid,
    };
    let rank = |pid, rank, spawn| RankSpec {
        host: "node",
        exe: "/opt/app/a.out",
        pid,
        rank,
        world: if spawn { "world-1" } else { "world-0" },
        spawn: spawn.then_some(("world-0", 0, 0)),
    };
    for abi in distinct_abis() {
        for packing in [Packing::Natural, Packing::Packed] {
            let n = abi_name(abi.with_packing(packing));
            // A metadirectory (pid 0) over two directories (1 and 2), each
            // with ranks, one of them spawned; directory 2 also names the
            // metadirectory, closing a cycle.
            let meta = mpi2dd_job(
                abi,
                packing,
                0,
                &Mpi2ddSpec {
                    mpi_flags: 1,
                    directories: &[peer(1), peer(2)],
                    dll_name: Some("/usr/lib/libmpi2dd_msgq.so"),
                    ..Mpi2ddSpec::default()
                },
            );
            let dir1 = mpi2dd_job(
                abi,
                packing,
                1,
                &Mpi2ddSpec {
                    meta: Some(peer(0)),
                    ranks: &[rank(100, 0, false), rank(101, 1, false)],
                    ..Mpi2ddSpec::default()
                },
            );
            let dir2 = mpi2dd_job(
                abi,
                packing,
                2,
                &Mpi2ddSpec {
                    meta: Some(peer(0)),
                    ranks: &[rank(200, 0, true)],
                    metadirectories: &[peer(0)],
                    abort: Some("job aborted"),
                    ..Mpi2ddSpec::default()
                },
            );
            let mut seed = vec![3];
            for p in [&meta, &dir1, &dir2] {
                p.encode(names, &mut seed);
            }
            let mut c = Cursor::new(&seed[1..]);
            let mut job: Vec<Process> = (0..3).map(|_| Process::parse(&mut c, names)).collect();
            let tree = walk_job(&mut job, packing)?;
            check(
                tree.processes.len() == 3 && tree.ranks.len() == 3,
                "the tree seed walks to 3 processes and 3 ranks",
            )?;
            write(out, "mpi2dd", &format!("tree-{n}"), &seed)?;

            // One directory that lists itself, and a peer that cannot be
            // connected to (a negative pid).
            let alone = mpi2dd_job(
                abi,
                packing,
                0,
                &Mpi2ddSpec {
                    ranks: &[rank(10, 0, false)],
                    directories: &[peer(0), peer(-1)],
                    ..Mpi2ddSpec::default()
                },
            );
            let mut seed = vec![1];
            alone.encode(names, &mut seed);
            write(out, "mpi2dd", &format!("self-{n}"), &seed)?;
        }
    }
    Ok(())
}
