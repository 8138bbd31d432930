//! How reading UCX's objects fails.

use mpidd_read::{LayoutError, ReadError};
use mpidd_types::TargetAddr;

use crate::error::HandleError;

/// Why UCX's request or worker could not be read. Each names the record
/// and its address, or the type missing from the layout source.
#[derive(Debug, thiserror::Error)]
pub enum UcxError {
    /// UCX's types are not in the layout source.
    #[error("UCX's types: {0}")]
    Layouts(#[from] LayoutError),
    /// Target memory could not be read, or a list in it loops or runs past
    /// [`Limits`](mpidd_read::Limits) (the error names the list and where).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A record holds values UCX never writes there (a queue link that is
    /// NULL before the queue's end, a memory pool whose element size is
    /// 0): the target is corrupt or was read while UCX changed it.
    #[error("the {record} at {addr} is corrupt: {reason}")]
    Corrupt {
        /// The record's C type.
        record: &'static str,
        /// Its address.
        addr: TargetAddr,
        /// What is wrong with it.
        reason: String,
    },
    /// The layouts read a worker that is not what UCX makes (its request
    /// pool not named as UCX names it): they are not this UCX build's, and
    /// nothing is read through them.
    #[error("the UCX layouts do not read the worker at {worker}: {reason}")]
    LayoutsDoNotFit {
        /// The worker (`ucp_worker_h`).
        worker: TargetAddr,
        /// What read wrong through them.
        reason: String,
    },
}

impl UcxError {
    pub(crate) fn corrupt(
        record: &'static str,
        addr: TargetAddr,
        reason: impl Into<String>,
    ) -> Self {
        UcxError::Corrupt {
            record,
            addr,
            reason: reason.into(),
        }
    }
}

impl From<UcxError> for HandleError {
    fn from(e: UcxError) -> Self {
        match e {
            UcxError::Layouts(e) => e.into(),
            UcxError::Read(e) => e.into(),
            UcxError::Corrupt {
                record,
                addr,
                reason,
            } => HandleError::Inconsistent {
                addr,
                reason: format!("{record}: {reason}"),
            },
            UcxError::LayoutsDoNotFit { worker, reason } => HandleError::Inconsistent {
                addr: worker,
                reason: format!("the UCX layouts do not read this worker: {reason}"),
            },
        }
    }
}
