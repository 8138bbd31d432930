//! Open MPI's message queues, read natively: what every Open MPI build
//! says of itself (`version`), and the decoder of its ob1 PML
//! ([`OmpiOb1`]). Another PML (UCX's) would get a folder beside `ob1`.
//!
//! It stands on the decoder trait and error (`decoder`), the bounded reads
//! and walks (`target_read`, `list_walk`), the model and `mpidd-read`. It
//! must not import `detect`, which chooses among the decoders and imports
//! this folder, nor MPICH's decoders, nor the vendor library host (`mqs`).

mod ob1;
pub(crate) mod version;

pub use ob1::{OmpiOb1, OB1_LAYOUT, OB1_SYMBOLS};
