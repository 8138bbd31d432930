//! MPI_COMM_WORLD as one rank of an MPICH job sees it, from its core.
use mpidd_read::{CoreTarget, Limits};
use mpihandles::{Availability, Details, HandleKind, Mpich};
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A core of one MPICH rank whose library has its debug info, or is a
    // build mpidd ships a profile for (Debian 12's MPICH).
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: comm_world RANK_CORE")?;
    let rank = CoreTarget::open(Path::new(&path), None, None)?;
    let mpich = Mpich::new(&rank, Limits::default())?;
    let view = mpich.resolve(HandleKind::Comm, 0x4400_0000)?; // MPI_COMM_WORLD
    if let Details::Comm(comm) = &view.details {
        if let (Availability::Value(size), Availability::Value(me)) = (&comm.size, &comm.rank) {
            println!("{:?}: rank {me} of {size}", view.predefined_name);
        }
    }
    Ok(())
}
