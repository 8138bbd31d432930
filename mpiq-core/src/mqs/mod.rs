//! The debugger's side of the message-queue interface: hosting a vendor's
//! message-queue library.

#[allow(unsafe_code)]
pub mod abi;
#[cfg(feature = "mqs")]
#[allow(unsafe_code)]
pub(crate) mod callbacks;
#[cfg(feature = "mqs")]
#[allow(unsafe_code)]
pub(crate) mod host;
pub(crate) mod target;
