//! Writes a small synthetic MPIR job as an ELF core file and its executable.
//!
//! `cargo run -p mpidd-read --example write_synthetic_core -- OUT_DIR [s390x|powerpc|i686|x86_64]`

use mpidd_read::{CoreOptions, SyntheticJob};
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
    let job = SyntheticJob::builder(abi)
        .mpir_starter(&[("node1", "/opt/ring", 101), ("node2", "/opt/ring", 102)])
        .build();
    std::fs::create_dir_all(&dir)?;
    job.write_files(
        &dir.join("job.core"),
        &dir.join("mpirun"),
        CoreOptions::default(),
    )?;
    println!(
        "wrote {}/job.core and {}/mpirun",
        dir.display(),
        dir.display()
    );
    Ok(())
}
