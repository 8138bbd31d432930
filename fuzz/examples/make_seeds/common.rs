//! What every family of seeds uses: the error type, the check that a seed
//! decodes as intended, the names and folders seeds are written to, and
//! the ABIs the synthetic ones are made for.

use std::error::Error;
use std::path::Path;

use mpidd_fuzz::{Process, PRESETS};
use mpidd_read::{SyntheticJob, TypeOracle};
use mpidd_types::{ByteOrder, Packing, TargetAbi};

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// Fails with `what` unless `ok`: every seed must reach what it was made
/// for, or it seeds nothing.
pub fn check(ok: bool, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(format!("a seed does not decode as intended: {what}").into())
    }
}

/// Writes the seed `bytes` as `dir/target/name`.
pub fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) -> Result<()> {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(name), bytes)?;
    Ok(())
}

/// For each of the [`distinct_abis`], writes the seed `make` gives for
/// each of `scenarios` on it to `dir/target/`, named `{label}-{abi}`.
pub fn write_synthetic<S: Copy>(
    dir: &Path,
    target: &str,
    scenarios: &[(&str, S)],
    mut make: impl FnMut(TargetAbi, S) -> Result<Vec<u8>>,
) -> Result<()> {
    for abi in distinct_abis() {
        for &(label, scenario) in scenarios {
            let seed = make(abi, scenario)?;
            write(dir, target, &format!("{label}-{}", abi_name(abi)), &seed)?;
        }
    }
    Ok(())
}

/// Writes the seed `make` gives for each of `scenarios` laid out as a real
/// build does to `dir/target/`, named `real-{label}`.
pub fn write_real<S: Copy>(
    dir: &Path,
    target: &str,
    scenarios: &[(&str, S)],
    mut make: impl FnMut(S) -> Result<Vec<u8>>,
) -> Result<()> {
    for &(label, scenario) in scenarios {
        let seed = make(scenario)?;
        write(dir, target, &format!("real-{label}"), &seed)?;
    }
    Ok(())
}

/// A type oracle over the DWARF of the objects of an MPI installed in
/// `prefix`: (name, path under `prefix`).
pub fn oracle_under(prefix: &Path, objects: &[(&str, &str)]) -> TypeOracle {
    let mut oracle = TypeOracle::new();
    for &(name, path) in objects {
        oracle.add_object(name, &prefix.join(path), None);
    }
    oracle
}

/// `le64-natural` and the like: what a seed's name says of its ABI.
pub fn abi_name(abi: TargetAbi) -> String {
    let order = match abi.byte_order {
        ByteOrder::Little => "le",
        ByteOrder::Big => "be",
    };
    let packing = match abi.packing {
        Packing::Natural => "natural",
        Packing::Packed => "packed",
    };
    format!("{order}{}-{packing}", abi.address_bytes() * 8)
}

/// The four distinct (byte order, width) pairs among the presets.
pub fn distinct_abis() -> Vec<TargetAbi> {
    let mut out: Vec<TargetAbi> = Vec::new();
    for abi in PRESETS {
        if !out.contains(&abi) {
            out.push(abi);
        }
    }
    out
}

/// The process the synthetic job builder made.
pub fn process_of(job: &SyntheticJob) -> Process {
    Process {
        memory: job.memory.clone(),
        symbols: job.symbols.clone(),
    }
}

/// `p` in the process format, with the symbols among `names`.
pub fn encoded(p: &Process, names: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    p.encode(names, &mut out);
    out
}
