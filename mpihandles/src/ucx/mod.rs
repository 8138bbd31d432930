//! UCX.
pub(crate) mod request;
