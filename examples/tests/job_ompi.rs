//! `mpidd job` on real hung 4-rank jobs of Debian's own Open MPI: the
//! tests/mpich/hang_*.c programs (plain MPI) built with `mpicc.openmpi`
//! and run by `mpirun.openmpi`, on the stripped libraries Debian ships,
//! read through the layout profiles mpidd ships for them. Each job is read
//! live through its `mpirun` and from `gcore` cores of its ranks, and must
//! give the cycles, edges and findings worked out from the programs and
//! from what Open MPI does underneath (noted at each test where it differs
//! from MPICH, job_mpich.rs). Each runs on both of Open MPI's PMLs: ob1
//! over shared memory, and UCX's (`_over_ucx`), whose queues are UCX's
//! worker's; both give the same.

mod common;

use common::hung_job::HangMpi;
use common::job_checks::{
    chain_location, check_chain_location, check_comms, check_job_on, check_ring_receives,
    check_tag_mismatch, check_unexpected_ssend, one_at_a_time, pending, Expected, MIB8,
};

const OMPI: HangMpi = HangMpi::DebianOpenMpi;
const UCX: HangMpi = HangMpi::DebianOpenMpiUcx;

/// One test per PML.
macro_rules! on_both_pmls {
    ($($ob1:ident, $ucx:ident => $check:ident),* $(,)?) => {
        $(
            #[test]
            fn $ob1() {
                $check(OMPI);
            }

            #[test]
            fn $ucx() {
                $check(UCX);
            }
        )*
    };
}

on_both_pmls! {
    ring_of_receives_is_one_cycle, ring_of_receives_is_one_cycle_over_ucx => ring,
    head_to_head_ssends_are_a_cycle_of_pending_sends,
    head_to_head_ssends_are_a_cycle_of_pending_sends_over_ucx => head_to_head,
    tag_mismatch_is_named, tag_mismatch_is_named_over_ucx => tag_mismatch,
    chain_ends_at_the_rank_that_computes,
    chain_ends_at_the_rank_that_computes_over_ucx => chain,
    cycle_across_three_communicators, cycle_across_three_communicators_over_ucx => comms,
}

fn ring(mpi: HangMpi) {
    let _serial = one_at_a_time();
    let (_job, live, cores) = check_job_on(mpi, "hang_ring", &Expected::ring());
    for report in [&live, &cores] {
        check_ring_receives(report);
    }
}

/// Unlike MPICH, which lists no blocking send, ob1 keeps every send
/// request it has not completed: each blocked 8 MiB `MPI_Ssend` is a
/// pending send of its own, not one inferred from the peer's unexpected
/// queue. So does UCX: the UCX PML sends a synchronous send with a request
/// of UCX's pool (`mca_pml_ucx_send_nb`), never one on its stack.
fn head_to_head(mpi: HangMpi) {
    let _serial = one_at_a_time();
    let expected = Expected::head_to_head("send");
    let (_job, live, cores) = check_job_on(mpi, "hang_ssend", &expected);
    for report in [&live, &cores] {
        for (r, peer) in [(0usize, 1i64), (1, 0)] {
            let sends = pending(report, r, "send");
            assert!(
                sends
                    .iter()
                    .any(|o| o["peer"] == peer && o["tag"] == 5 && o["length"] == MIB8),
                "rank {r}'s own send of 8 MiB to {peer}: {sends:?}"
            );
            assert!(
                pending(report, r, "inferred_send").is_empty(),
                "nothing needs inferring where the send is in memory"
            );
            check_unexpected_ssend(report, r, peer);
        }
    }
}

/// Open MPI's barrier is point-to-point underneath, and ob1 shows it: for
/// 4 ranks the barrier is a fan-in to rank 0, which receives from
/// `MPI_ANY_SOURCE`, then a fan-out from it, with the collective's own
/// negative tag (-16, `MCA_COLL_BASE_TAG_BARRIER`). So rank 0 waits on
/// every other rank (one more fan-in message is missing: rank 1's, which
/// sits in `MPI_Recv` with the wrong tag), ranks 2 and 3 wait for the
/// fan-out from 0, and rank 1 for its tag 2 from 0. Where MPICH hides its
/// barrier's messages and the job reads as "waits on a rank in MPI", here
/// it is a deadlock: rank 0's wildcard wait can be ended by any rank, and
/// every rank it could be ended by waits on rank 0. The barrier (coll
/// tuned's) is the same over the UCX PML, its tag packed into UCX's.
fn tag_mismatch(mpi: HangMpi) {
    let _serial = one_at_a_time();
    // From the stacks as well: ranks 0, 2 and 3 in the barrier wait for
    // rank 1, the one rank that has not entered it, which closes two
    // more cycles through rank 1.
    let expected = Expected {
        cycles: vec![
            vec![0, 1],
            vec![0, 2],
            vec![0, 3],
            vec![0, 2, 1],
            vec![0, 3, 1],
        ],
        edges: vec![
            (0, 1, "receive"),
            (0, 1, "collective"),
            (0, 2, "receive"),
            (0, 3, "receive"),
            (1, 0, "receive"),
            (2, 0, "receive"),
            (2, 1, "collective"),
            (3, 0, "receive"),
            (3, 1, "collective"),
        ],
        findings: vec![
            ("deadlock_cycle", vec![0, 1]),
            ("deadlock_cycle", vec![0, 2]),
            ("deadlock_cycle", vec![0, 3]),
            ("deadlock_cycle", vec![0, 2, 1]),
            ("deadlock_cycle", vec![0, 3, 1]),
            ("unmatchable_receive", vec![1, 0]),
            ("collective_mismatch", vec![1]),
        ],
        calls: [
            Some("MPI_Barrier"),
            Some("MPI_Recv"),
            Some("MPI_Barrier"),
            Some("MPI_Barrier"),
        ],
    };
    let (_job, live, cores) = check_job_on(mpi, "hang_tag", &expected);
    for report in [&live, &cores] {
        check_tag_mismatch(report, 6);
        let root = pending(report, 0, "receive");
        assert!(
            root.iter().any(|o| o["peer"] == -1 && o["tag"] == -16),
            "the barrier's fan-in at rank 0: {root:?}"
        );
    }
}

fn chain(mpi: HangMpi) {
    let _serial = one_at_a_time();
    let (job, live, cores) = check_job_on(mpi, "hang_chain", &Expected::chain());
    let location = chain_location(&job);
    for report in [&live, &cores] {
        check_chain_location(report, &location);
    }
}

fn comms(mpi: HangMpi) {
    let _serial = one_at_a_time();
    let (_job, live, cores) = check_job_on(mpi, "hang_comms", &Expected::comms());
    for report in [&live, &cores] {
        check_comms(report);
    }
}
