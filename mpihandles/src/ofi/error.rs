//! How reading libfabric's objects fails.

use mpidd_read::{LayoutError, ReadError};
use mpidd_types::TargetAddr;

use crate::error::HandleError;

/// Why an endpoint's queues could not be read. Each names the record and
/// its address, or the type missing from the layout source.
#[derive(Debug, thiserror::Error)]
pub enum OfiError {
    /// libfabric's types are not in the layout source.
    #[error("libfabric's types: {0}")]
    Layouts(#[from] LayoutError),
    /// Target memory could not be read, or a list in it loops or runs past
    /// [`Limits`](mpidd_read::Limits) (the error names the list and where).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A record holds values libfabric never writes there (a queue link
    /// that is NULL, an entry with more buffers than its array holds): the
    /// target is corrupt or was read while libfabric changed it.
    #[error("the {record} at {addr} is corrupt: {reason}")]
    Corrupt {
        /// The record's C type.
        record: &'static str,
        /// Its address.
        addr: TargetAddr,
        /// What is wrong with it.
        reason: String,
    },
    /// The layouts read an endpoint that is not what libfabric makes (its
    /// class is not an endpoint's, its receive context does not point back
    /// to itself): they are not this libfabric build's, and nothing is read
    /// through them.
    #[error("the libfabric layouts do not read the endpoint at {endpoint}: {reason}")]
    LayoutsDoNotFit {
        /// The endpoint (`struct fid_ep *`).
        endpoint: TargetAddr,
        /// What read wrong through them.
        reason: String,
    },
    /// The endpoint's provider keeps its queues where this reader does not
    /// read: a hardware-matching provider (the statement says where they
    /// are), or a software one this reader does not know.
    #[error("the endpoint at {endpoint} is of libfabric's {provider} provider: {statement}")]
    NotRead {
        /// The endpoint.
        endpoint: TargetAddr,
        /// The provider's name, as its provider record names it.
        provider: String,
        /// What can and cannot be seen of it.
        statement: String,
    },
}

impl OfiError {
    pub(crate) fn corrupt(
        record: &'static str,
        addr: TargetAddr,
        reason: impl Into<String>,
    ) -> Self {
        OfiError::Corrupt {
            record,
            addr,
            reason: reason.into(),
        }
    }

    pub(crate) fn misfit(endpoint: TargetAddr, reason: impl Into<String>) -> Self {
        OfiError::LayoutsDoNotFit {
            endpoint,
            reason: reason.into(),
        }
    }
}

impl From<OfiError> for HandleError {
    fn from(e: OfiError) -> Self {
        match e {
            OfiError::Layouts(e) => e.into(),
            OfiError::Read(e) => e.into(),
            OfiError::Corrupt {
                record,
                addr,
                reason,
            } => HandleError::Inconsistent {
                addr,
                reason: format!("{record}: {reason}"),
            },
            OfiError::LayoutsDoNotFit { endpoint, reason } => HandleError::Inconsistent {
                addr: endpoint,
                reason: format!("the libfabric layouts do not read this endpoint: {reason}"),
            },
            OfiError::NotRead {
                endpoint,
                provider,
                statement,
            } => HandleError::Inconsistent {
                addr: endpoint,
                reason: format!("libfabric's {provider} provider: {statement}"),
            },
        }
    }
}
