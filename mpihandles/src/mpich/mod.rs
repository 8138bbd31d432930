//! MPICH.
pub(crate) mod attr;
pub(crate) mod ch4_map;
pub(crate) mod comm;
pub(crate) mod datatype;
pub(crate) mod errhandler;
pub(crate) mod file;
pub(crate) mod group;
pub mod handle_bits;
pub(crate) mod info;
pub(crate) mod op;
pub(crate) mod pools;
pub(crate) mod predefined;
pub(crate) mod request;
pub(crate) mod resolver;
pub(crate) mod status;
pub(crate) mod win;
