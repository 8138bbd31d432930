//! Open MPI (4.1): its object model, and the handle views built on it.
//!
//! The object model is how Open MPI keeps its objects in memory: OPAL's
//! classes and containers, from an object's header and class chain to
//! pointer arrays, lists, hash tables and info lists ([`opal`]); what it
//! keeps per handle kind, the exported f2c tables Fortran INTEGERs index,
//! the class every object derives from and the predefined objects
//! ([`kinds`]); the values it keeps only as preprocessor constants
//! ([`constants`]); every layout question the decoders ask, the list a
//! layout profile answers ([`questions`]), and the answers they read with
//! ([`layout`]).
//!
//! The views stand on it: [`resolver`] is the process every view reads
//! ([`Ompi`]), with the references between objects both ways, and what a
//! view gives back ([`resolver::Decoded`]); one file per kind builds that
//! kind's details ([`comm`], [`group`], [`datatype`], [`errhandler`],
//! [`file`], [`info`], [`op`], [`request`], [`status`], [`win`]);
//! [`handle_view`] turns a handle into its
//! [`HandleView`](crate::HandleView), the fields every kind shares, and
//! dispatches to the kind's view. A view may use another below it (a
//! window its group), never [`handle_view`] and never in a loop.
//! [`synthetic`] (the `synthetic` feature) lays out an Open MPI process
//! for tests and fuzzing from the question list alone, sharing no code
//! with the views.
//!
//! It stands on the crate's shared root (the view model, the target
//! reader, type maps, errors). Only the crate root imports it: MPICH's
//! folder and UCX's must not.

mod constants;
mod kinds;
mod layout;
mod opal;
mod questions;
#[cfg(feature = "synthetic")]
mod synthetic;

pub use layout::ompi_missing_layouts;
pub use questions::{ompi_ask_layouts, OMPI_HANDLE_LAYOUT};
// The views (feature `views`).
views! {
    mod comm;
    mod datatype;
    mod errhandler;
    mod file;
    mod group;
    mod handle_view;
    mod info;
    mod op;
    mod request;
    mod resolver;
    mod status;
    mod win;
    pub use resolver::Ompi;
}
#[cfg(feature = "synthetic")]
pub use synthetic::{
    CommSpec, SyntheticOmpi, OMPI_SYMBOLS, SYNTHETIC_BASE, SYNTHETIC_OBJECT, SYNTHETIC_SIZE,
};
