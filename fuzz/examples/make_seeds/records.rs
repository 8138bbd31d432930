//! Seeds of the `records` target: MPIR and MPI-2 records as the synthetic
//! job builder lays them out, and values too wide for a 32-bit target.

use std::path::Path;

use mpidd_fuzz::abi_selector;
use mpidd_read::synthetic::{Mpi2ddSpec, PeerSpec, RankSpec};
use mpidd_read::SyntheticJob;
use mpidd_types::{Packing, TargetAbi};

use crate::common::{abi_name, distinct_abis, write, Result};

/// Records as the synthetic job builder lays them out (with its own code,
/// not the decoders'): each segment of a job, after the re-encoding ABI's
/// selector byte.
pub fn records(out: &Path) -> Result<()> {
    for abi in distinct_abis() {
        for packing in [Packing::Natural, Packing::Packed] {
            let job = SyntheticJob::builder(abi)
                .mpir_starter(&[("node1", "/bin/ring", 101), ("node2", "/bin/ring", -1)])
                .mpi2dd(&Mpi2ddSpec {
                    packing,
                    ranks: &[RankSpec {
                        host: "n1",
                        exe: "/bin/a",
                        pid: 7,
                        rank: 0,
                        world: "w0",
                        spawn: Some(("w-1", 3, 0)),
                    }],
                    directories: &[PeerSpec {
                        host: "d",
                        exe: "/bin/d",
                        pid: 1,
                    }],
                    ..Mpi2ddSpec::default()
                })
                .build();
            for (i, (_, bytes)) in job.memory.segments().enumerate() {
                let mut seed = vec![abi_selector(TargetAbi::I686)];
                seed.extend_from_slice(&bytes[..bytes.len().min(1024)]);
                let name = format!("job-{}-{i}", abi_name(abi.with_packing(packing)));
                write(out, "records", &name, &seed)?;
            }
        }
    }
    // A 64-bit value that does not fit a 32-bit target when re-encoded.
    let mut wide = vec![abi_selector(TargetAbi::POWERPC)];
    wide.extend((0..600u32).map(|i| (i * 37 % 251) as u8 | 0x80));
    write(out, "records", "wide-values", &wide)?;
    Ok(())
}
