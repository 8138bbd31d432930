//! The native decoder of Open MPI's UCX PML (`mpidd queues`) against real
//! 4-rank jobs run with `--mca pml ucx` (UCX on this machine's shared
//! memory and TCP, as it runs on InfiniBand on a cluster), live and from
//! gcore cores: Debian's own stripped Open MPI and UCX, read through the
//! layout profiles mpidd ships (Open MPI's, with UCX's under it), and the
//! reference build (scripts/build-ref-ompi.sh) read through its DWARF with
//! UCX's profile under it. Each rank of tests/openmpi/queues.c writes down
//! what it posted and what its probes saw arrive; every rank's queues must
//! hold exactly that, as UCX carries it.

mod common;

use common::mpich_job::{gcore_each, wait_stopped};
use common::ompi_job::{OmpiBuild, OmpiJob};
use common::ucx_queue_checks::{check_rank, native};

fn live_and_cores(job: OmpiJob) {
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        check_rank(rank, &native(&["--pid", &pid]), &job.posted(rank));
        wait_stopped(job.pid(rank));
    }
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        let core = core.to_str().unwrap();
        check_rank(rank, &native(&["--core", core]), &job.posted(rank));
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn ucx_pml_queues_of_stock_debian_open_mpi_live_and_from_cores() {
    live_and_cores(OmpiJob::start_on_ucx(
        OmpiBuild::Debian,
        "ompi-ucx-queues-debian",
        "queues",
    ));
}

#[test]
fn ucx_pml_queues_of_the_reference_build_live_and_from_cores() {
    live_and_cores(OmpiJob::start_on_ucx(
        OmpiBuild::Reference,
        "ompi-ucx-queues-ref",
        "queues",
    ));
}
