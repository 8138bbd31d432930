//! The message queues of one rank's core through the MPI vendor's own
//! message-queue library (MPICH's libtvmpich.so), counted per communicator.
use mpidd_read::{CoreTarget, Limits, TargetMemory};
use mpiq_core::{MqsLibrary, MqsTarget, TargetTypeSizes};
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(dll)) = (args.next(), args.next()) else {
        return Err("usage: vendor_queues RANK_CORE LIBTVMPICH_SO".into());
    };
    let rank = CoreTarget::open(Path::new(&path), None, None)?;
    let target = MqsTarget {
        image_name: rank.executable().display().to_string(),
        memory: &rank,
        symbols: &rank,
        types: rank.types(),
        global_rank: 0,
        type_sizes: TargetTypeSizes::from_oracle(rank.types(), rank.abi()),
    };
    let library = MqsLibrary::load(Path::new(&dll))?;
    let queues = library.read_queues(&target, &Limits::default())?;
    for c in &queues.communicators {
        let receives = c.pending_receives.operations().len();
        println!("{}: {receives} receives", c.name);
    }
    Ok(())
}
