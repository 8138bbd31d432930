//! MPICH's message queues, read natively: one decoder per device
//! ([`MpichCh3`], [`MpichCh4`]) over what MPICH keeps the same under every
//! device (`common`: the communicator records and their world ranks, the
//! datatype sizes, the MPICH wildcards, and the shape of one reading),
//! and MPICH's three debugger lists (`debugger_lists`), a source of their
//! own that the CH4 decoder reads on request.
//!
//! This folder owns everything that knows MPICH's private types and
//! globals for queue reading. It stands on the decoder trait and error
//! (`decoder`), the bounded reads and walks (`target_read`, `list_walk`),
//! the model, and `mpihandles` (MPICH's object pools, CH4's rank maps and
//! UCX's requests), through `mpihandles`' root paths only. Nothing here
//! imports `detect`, which chooses among the decoders, nor the vendor
//! library host (`mqs`), nor Open MPI's decoder; only `detect` and the
//! crate root import this folder.

mod ch3;
mod ch4;
mod common;
mod debugger_lists;

pub use ch3::MpichCh3;
pub use ch4::MpichCh4;
