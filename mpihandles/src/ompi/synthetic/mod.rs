//! A synthetic Open MPI process, for tests and fuzz seeds: objects of
//! every handle kind laid out member by member through a [`LayoutTable`]
//! (a made-up layout for any ABI, or the answers a real build's DWARF
//! gives), with the exported symbols the resolver starts from.
//!
//! The builder writes each member where the table says, with the width
//! the table says, in the target's byte order; it shares no code with the
//! decoders, so a decoder that reads the wrong member or width is caught.
//!
//! ```
//! use mpidd_types::TargetAbi;
//! use mpihandles::{HandleKind, Ompi, SyntheticOmpi};
//! use mpidd_read::Limits;
//!
//! let mut s = SyntheticOmpi::new(TargetAbi::POWERPC, SyntheticOmpi::layouts(4));
//! let world = s.world();
//! let (memory, symbols, layouts) = s.finish();
//! let ompi = Ompi::from_parts(&memory, &symbols, &layouts, Limits::default())?;
//! let v = ompi.resolve(HandleKind::Comm, world.0 as i64)?;
//! assert_eq!(v.predefined_name.as_deref(), Some("MPI_COMM_WORLD"));
//! # Ok::<(), mpihandles::HandleError>(())
//! ```

mod layout;
mod process;

pub use process::{
    CommSpec, SyntheticOmpi, OMPI_SYMBOLS, SYNTHETIC_BASE, SYNTHETIC_OBJECT, SYNTHETIC_SIZE,
};
