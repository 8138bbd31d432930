//! Writes a small synthetic MPIR job as an ELF core file and its executable.
//!
//! `cargo run --release -p mpidd-read --example write_synthetic_core -- OUT_DIR [s390x|powerpc|i686|x86_64] [RANKS]`
//!
//! With RANKS, the table has that many entries spread over RANKS/64 hosts.

use mpidd_read::{SyntheticCoreOptions, SyntheticJob};
use mpidd_types::TargetAbi;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().ok_or("usage: OUT_DIR [ABI]")?);
    let abi = match args.next().as_deref() {
        None | Some("x86_64") => TargetAbi::X86_64,
        Some("s390x") => TargetAbi::S390X,
        Some("powerpc") => TargetAbi::POWERPC,
        Some("i686") => TargetAbi::I686,
        Some(other) => return Err(format!("unknown ABI {other}").into()),
    };
    let ranks: usize = match args.next() {
        Some(n) => n.parse()?,
        None => 2,
    };
    let hosts: Vec<String> = (0..ranks.div_ceil(64))
        .map(|h| format!("node{h:05}"))
        .collect();
    let spec: Vec<(&str, &str, i32)> = (0..ranks)
        .map(|r| {
            (
                hosts[r / 64].as_str(),
                "/opt/app/bin/ring",
                100_000 + r as i32,
            )
        })
        .collect();
    let job = SyntheticJob::builder(abi).mpir_starter(&spec).build();
    std::fs::create_dir_all(&dir)?;
    job.write_files(
        &dir.join("job.core"),
        &dir.join("mpirun"),
        SyntheticCoreOptions::default(),
    )?;
    println!(
        "wrote {}/job.core and {}/mpirun",
        dir.display(),
        dir.display()
    );
    Ok(())
}
