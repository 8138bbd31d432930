//! What the fuzz targets share, one module per piece:
//!
//! - [`abi`]: the ABIs they cycle through and the small [`Limits`] every
//!   run is bounded by;
//! - [`cursor`]: the forgiving reader of every input format;
//! - [`process`]: a byte format for synthetic target processes (memory
//!   segments and symbols) that the targets parse and the seed generator
//!   writes, and [`names`], the symbols each target's processes can define;
//! - the layouts the fuzzer bends, one module per decoder: [`mpich`] (the
//!   CH3 queues), [`handles`] (MPICH's handle objects and CH4's queues, in
//!   the shared format of [`bent`]), [`ob1`] (Open MPI's queues, the same
//!   format) and [`ompi_handles`] (Open MPI's handle objects); [`ucx`],
//!   the real layouts UCX's worker is read with (the shipped profile);
//!   [`ofi`], those a libfabric endpoint is read with (the same);
//! - [`scratch`]: scratch files for the readers that only take paths;
//! - [`checks`]: what the targets assert of every answer.
//!
//! It reads only synthetic processes and files the input holds: nothing
//! here may reach a live process or load a vendor library (the
//! dependencies' features in `Cargo.toml` leave those out).
//!
//! [`Limits`]: mpidd_read::Limits

pub mod abi;
pub mod bent;
pub mod checks;
pub mod cursor;
pub mod handles;
pub mod mpich;
pub mod names;
pub mod ob1;
pub mod ofi;
pub mod ompi_handles;
pub mod process;
pub mod python;
pub mod scratch;
pub mod ucx;

pub use abi::{abi_from, abi_selector, all_abis, limits, PRESETS};
pub use checks::assert_only_changed;
pub use cursor::Cursor;
pub use names::{CH4_SYMBOLS, HANDLE_SYMBOLS};
pub use process::{Process, MAX_SEGMENTS, MAX_SEGMENT_LEN, MAX_SYMBOLS, OBJECT};
pub use scratch::{scratch_dir, scratch_file};
