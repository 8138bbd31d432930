//! The ranks the tests of a job's analysis and pictures describe again and
//! again, as a decoder would read them: blocked in a call, receiving,
//! in a ring of receives, or in head-to-head synchronous sends. Each test
//! binary uses a part of them.
#![allow(dead_code)]

use mpidd_job::synthetic::SyntheticRank;
use mpidd_job::RankReading;

pub const WORLD: &str = "MPI_COMM_WORLD";

/// 8 MiB: a message well above every eager limit.
pub const MIB8: i64 = 8 << 20;

/// The stack of a rank blocked in the MPI call `call`, outermost frame
/// first, polling MPICH's CH3 progress engine.
pub fn in_call(call: &str) -> Vec<&str> {
    vec!["_start", "main", call, "MPIDI_CH3I_Progress", "poll"]
}

/// Rank `rank` of `size`, blocked in `call` with nothing posted.
pub fn blocked_in(rank: i64, size: i64, call: &str) -> RankReading {
    SyntheticRank::new(rank, size)
        .stack(&in_call(call))
        .reading()
}

/// Rank `rank` of `size` in `MPI_Recv` from world rank `from` on
/// `MPI_COMM_WORLD`, with `tag` (`None`: any tag).
pub fn receiving(rank: i64, size: i64, from: i64, tag: Option<i64>) -> RankReading {
    SyntheticRank::new(rank, size)
        .receive(WORLD, from, tag)
        .stack(&in_call("MPI_Recv"))
        .reading()
}

/// `size` ranks that each receive (tag 0) from their left neighbour before
/// they send: one cycle through all of them.
pub fn ring(size: i64) -> Vec<RankReading> {
    (0..size)
        .map(|r| receiving(r, size, (r + size - 1) % size, Some(0)))
        .collect()
}

/// Rank `rank` of `size` in an `MPI_Ssend` of 8 MiB (tag 5) to `peer`,
/// which does the same: neither send is in a send queue, the peer's waits
/// in this rank's unexpected queue as a rendezvous request.
pub fn ssending(rank: i64, size: i64, peer: i64) -> RankReading {
    SyntheticRank::new(rank, size)
        .unexpected(WORLD, peer, 5, MIB8, true)
        .stack(&in_call("MPI_Ssend"))
        .reading()
}

/// Ranks 0 and 1 of `size` `MPI_Ssend` 8 MiB to each other; 2 and 3
/// receive (tag 9) from 0.
pub fn head_to_head(size: i64) -> Vec<RankReading> {
    vec![
        ssending(0, size, 1),
        ssending(1, size, 0),
        receiving(2, size, 0, Some(9)),
        receiving(3, size, 0, Some(9)),
    ]
}
