//! P5: what the MPIR table of a core costs in memory once read, counted by
//! the table itself (its rank entries, string slots and string bytes).
//!
//!     cargo run --release -p mpidd-benches --example p5_table_memory -- CORE EXE
//!
//! Prints `ranks distinct_strings heap_bytes bytes_per_rank`.

use mpidd_read::{mpir, CoreTarget, Limits};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let (Some(core), Some(exe)) = (args.next(), args.next()) else {
        return Err("usage: p5_table_memory CORE EXE".into());
    };
    let target = CoreTarget::open(core.as_ref(), Some(exe.as_ref()), None)?;
    let state = mpir::read_state(&target, &Limits::default())?;
    let t = &state.proctable;
    println!(
        "{} {} {} {:.1}",
        t.len(),
        t.distinct_strings(),
        t.heap_bytes(),
        t.heap_bytes() as f64 / t.len().max(1) as f64
    );
    Ok(())
}
