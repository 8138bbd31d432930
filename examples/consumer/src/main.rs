use mpidd_read::{mpir, CoreTarget, Limits};
use mpihandles::{Details, HandleKind, Mpich};
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, launcher, rank] = &args[..] else {
        return Err("usage: mpidd-consumer LAUNCHER_CORE RANK_CORE".into());
    };
    let limits = Limits::default();

    // The MPIR process table of the launcher.
    let launcher = CoreTarget::open(Path::new(launcher), None, None)?;
    let table = mpir::read_state(&launcher, &limits)?.proctable;
    for (i, p) in table.iter().enumerate() {
        let (pid, host, exe) = (p.pid, p.host_name, p.executable_name);
        println!("rank {i}: pid {pid} on {host}: {exe}");
    }

    // The message queues of one rank, counted per communicator.
    let rank = CoreTarget::open(Path::new(rank), None, None)?;
    for c in mpiq_core::detect(&rank, &limits)?
        .read_queues()?
        .communicators
    {
        let sends = c.pending_sends.operations().len();
        let receives = c.pending_receives.operations().len();
        let unexpected = c.unexpected_messages.operations().len();
        println!(
            "{}: {sends} sends, {receives} receives, {unexpected} unexpected",
            c.name
        );
    }

    // One handle of that rank: MPI_COMM_WORLD.
    let world = Mpich::new(&rank, limits)?.resolve(HandleKind::Comm, 0x4400_0000)?;
    if let Details::Comm(comm) = &world.details {
        let name = comm.name.value().map_or("?", |n| n.as_str());
        let (me, size) = (comm.rank.value().copied(), comm.size.value().copied());
        println!("handle 0x44000000: {name}, rank {me:?} of {size:?}");
    }
    Ok(())
}
