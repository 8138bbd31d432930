//! Writes the synthetic seeds of the fuzz targets, in each target's input
//! format (see `src/` and the targets' doc comments). `seed.sh` runs it
//! and adds the seeds made from real files.
//!
//! ```text
//! make_seeds synthetic OUT              every synthetic seed, in OUT/<target>/
//! make_seeds core-input OUT CORE [EXE]  a core_file input from real files
//! make_seeds mpich-real OUT LIB         mpich_queues and handles seeds laid
//!                                       out with the offsets LIB's DWARF gives
//! make_seeds ompi-real OUT PREFIX       ompi_ob1_queues and ompi_handles seeds
//!                                       laid out with the offsets the DWARF
//!                                       of the Open MPI in PREFIX gives
//! ```
//!
//! One module per family of seeds: [`records`], [`mpir`], [`mpi2dd`],
//! [`cores`] (the `core_file` target's), [`mpich_queues`], [`handles`]
//! (MPICH's handle objects), [`ompi_handles`], [`ob1`], [`ucx_worker`]
//! (a UCP worker at UCX's real offsets), [`ofi_endpoint`] (libfabric
//! endpoints at libfabric's real offsets) and [`python_frames`] (CPython
//! 3.11 processes); they write
//! their synthetic processes with [`objects`] and share [`common`].
//!
//! A seed is laid out with the generator's own code, never with the
//! decoders' (a shared mistake would pass unseen); the decoders are only
//! called to check that each seed reads as its scenario intends.

mod common;
mod cores;
mod handles;
mod mpi2dd;
mod mpich_queues;
mod mpir;
mod ob1;
mod objects;
mod ofi_endpoint;
mod ompi_handles;
mod python_frames;
mod records;
mod ucx_worker;

use std::path::Path;

use common::Result;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["synthetic", out] => synthetic(Path::new(out)),
        ["core-input", out, core] => cores::core_input(Path::new(out), Path::new(core), None),
        ["core-input", out, core, exe] => {
            cores::core_input(Path::new(out), Path::new(core), Some(Path::new(exe)))
        }
        ["mpich-real", out, lib] => {
            mpich_queues::mpich_real(Path::new(out), Path::new(lib))?;
            handles::handles_real(Path::new(out), Path::new(lib))
        }
        ["ompi-real", out, prefix] => {
            let prefix = Path::new(prefix);
            ob1::ob1_real(Path::new(out), prefix)?;
            ompi_handles::ompi_handles_real(Path::new(out), prefix)
        }
        _ => Err(
            "usage: make_seeds synthetic OUT | core-input OUT CORE [EXE] \
                  | mpich-real OUT LIB | ompi-real OUT PREFIX"
                .into(),
        ),
    }
}

/// Every synthetic seed.
fn synthetic(out: &Path) -> Result<()> {
    records::records(out)?;
    mpir::mpir(out)?;
    mpi2dd::mpi2dd(out)?;
    mpich_queues::mpich_synthetic(out)?;
    handles::handles_synthetic(out)?;
    ompi_handles::ompi_handles_synthetic(out)?;
    ob1::ob1_synthetic(out)?;
    cores::cores(out)?;
    ucx_worker::ucx_worker(out)?;
    ofi_endpoint::ofi_endpoint(out)?;
    python_frames::python_frames(out)?;
    Ok(())
}
