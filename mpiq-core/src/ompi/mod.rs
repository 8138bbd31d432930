//! Open MPI's message queues, read natively: what every Open MPI build
//! says of itself (`version`), the communicators every PML's decoder reads
//! alike (`communicators`, with the shared layout helpers of `layout`),
//! and one decoder per PML: ob1's ([`OmpiOb1`], Open MPI's own matching
//! over its BTLs) and UCX's ([`OmpiUcx`], which hands every operation to
//! UCX's tag matching).
//!
//! It stands on the decoder trait and error (`decoder`), the bounded reads
//! and walks (`target_read`, `list_walk`), the model, `mpidd-read` and
//! mpihandles' UCX worker reader. It must not import `detect`, which
//! chooses among the decoders and imports this folder, nor MPICH's
//! decoders, nor the vendor library host (`mqs`).

pub(crate) mod communicators;
mod layout;
mod ob1;
mod ucx;
pub(crate) mod version;

use mpidd_read::{Limits, Target};

use crate::decoder::{DecodeError, FoundLibrary, DECODED};
use version::ompi_version;

pub use ob1::{OmpiOb1, OB1_LAYOUT, OB1_SYMBOLS};
pub use ucx::{OmpiUcx, OMPI_UCX_LAYOUT, OMPI_UCX_SYMBOLS};

/// The PMLs that have a native decoder, by the name Open MPI gives them.
pub(crate) const DECODED_PMLS: [&str; 2] = ["ob1", "ucx"];

/// The refusal, by the decoder of the `wanted` PML, of a process that
/// selected `pml`: names the library found and says which decoder reads
/// it, or what makes its queues readable.
pub(crate) fn other_pml(
    target: &dyn Target,
    pml: &str,
    wanted: &str,
    limits: &Limits,
) -> DecodeError {
    let library = target
        .symbols()
        .lookup("mca_pml_base_selected_component")
        .map(|sym| {
            let version = ompi_version(target.memory(), target.symbols(), limits)
                .map(|v| format!("Open MPI {v}"));
            Box::new(FoundLibrary::find(
                target.memory(),
                target.symbols(),
                &sym.object,
                Some(sym.addr),
                version,
                limits,
            ))
        });
    let (reason, way_out) = match pml {
        "" => (
            "Open MPI has not selected a PML yet (before MPI_Init, or after MPI_Finalize)"
                .to_string(),
            "Read it again once MPI_Init has returned".to_string(),
        ),
        p if DECODED_PMLS.contains(&p) => (
            format!("Open MPI with the {pml:?} PML, which the {wanted} decoder does not read"),
            format!(
                "The {pml} PML's own decoder reads it; `mpiq_core::detect` chooses it from the \
                 PML the process selected"
            ),
        ),
        _ => (
            format!("Open MPI with the {pml:?} PML: only ob1 and ucx have a native decoder"),
            format!(
                "{DECODED}. Running the job with `mpirun --mca pml ob1` (or `--mca pml ucx`) \
                 makes its queues readable"
            ),
        ),
    };
    DecodeError::Unsupported {
        reason,
        library,
        way_out: Some(way_out),
    }
}
