//! The message queues of one rank's core, counted per communicator.
use mpidd_read::{CoreTarget, Limits};
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A core of one MPI rank whose MPI library has its debug info, or is a
    // build mpidd ships a profile for (Debian 12's MPICH and Open MPI).
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: rank_queues RANK_CORE")?;
    let rank = CoreTarget::open(Path::new(&path), None, None)?;
    let queues = mpiq_core::detect(&rank, &Limits::default())?.read_queues()?;
    for c in &queues.communicators {
        let (sends, receives, unexpected) = (
            c.pending_sends.operations().len(),
            c.pending_receives.operations().len(),
            c.unexpected_messages.operations().len(),
        );
        println!(
            "{}: {sends} sends, {receives} receives, {unexpected} unexpected",
            c.name
        );
    }
    Ok(())
}
