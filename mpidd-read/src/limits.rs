//! Caps on what a reader accepts from target memory, which may be corrupt or
//! hostile.

use mpidd_types::TargetAddr;
use serde::{Deserialize, Serialize};

use crate::error::ReadError;

/// Bounds that every reader applies. A target that exceeds one gets a
/// [`ReadError::LimitExceeded`](crate::ReadError::LimitExceeded) or
/// [`ReadError::Unterminated`](crate::ReadError::Unterminated) naming the
/// limit, never an unbounded allocation or loop.
///
/// ```
/// use mpidd_read::Limits;
///
/// let strict = Limits { max_table_entries: 64, ..Limits::default() };
/// assert_eq!(strict.max_string_len, Limits::default().max_string_len);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Most entries read from one process table or directory table.
    /// Default 16,777,216: room for the largest jobs run today, while a
    /// corrupt count of 2^31 is refused before anything is allocated.
    pub max_table_entries: u64,
    /// Most bytes in one C string, terminator excluded. Default 4096, the
    /// Linux `PATH_MAX`.
    pub max_string_len: usize,
    /// Most levels of directories and metadirectories the MPI-2 walker
    /// follows from the process it starts at. Default 16.
    pub max_walk_depth: usize,
    /// Most processes the MPI-2 walker visits. Default 65,536.
    pub max_walk_processes: usize,
    /// Most nodes followed in one linked list of the target (the dynamic
    /// linker's `link_map` list, a dynamic section). Default 1,048,576.
    pub max_list_len: u64,
    /// Most bytes in one record read whole from the target (a struct whose
    /// size comes from debug info, or an array of them). Default 16 MiB:
    /// far above any MPI library's structs, while corrupt DWARF cannot make
    /// a reader allocate gigabytes.
    pub max_record_bytes: u64,
    /// Most bytes one reader call (an MPIR or MPI-2 read, a link-map walk,
    /// a queue read) takes from the target in all. Default 4 GiB: a
    /// million-rank table with its strings is about 100 MB, while a corrupt
    /// target cannot keep a reader busy without end.
    pub max_total_bytes: u64,
    /// Most communicators taken from one process through a vendor
    /// message-queue library's iterator (native decoders walk the lists
    /// themselves, bounded by `max_list_len`). Default 65,536.
    #[serde(default = "default_max_communicators")]
    pub max_communicators: usize,
    /// Most operations taken from one queue of one communicator of a
    /// vendor message-queue library. Default 1,048,576.
    #[serde(default = "default_max_operations")]
    pub max_operations: usize,
    /// Largest communicator group asked of a vendor message-queue library
    /// (`mqs_get_comm_group`). Default 1,048,576.
    #[serde(default = "default_max_group_size")]
    pub max_group_size: usize,
}

fn default_max_communicators() -> usize {
    1 << 16
}

fn default_max_operations() -> usize {
    1 << 20
}

fn default_max_group_size() -> usize {
    1 << 20
}

impl Limits {
    /// Refuses a record of `len` bytes, named `what`, at `addr` when it is
    /// above [`Limits::max_record_bytes`]: readers call it before they
    /// allocate a buffer of a size that came from the target.
    ///
    /// ```
    /// use mpidd_read::Limits;
    /// use mpidd_types::TargetAddr;
    ///
    /// let limits = Limits { max_record_bytes: 64, ..Limits::default() };
    /// assert!(limits.check_record_bytes("MPIR_Comm", TargetAddr(0x1000), 64).is_ok());
    /// assert!(limits.check_record_bytes("MPIR_Comm", TargetAddr(0x1000), 65).is_err());
    /// ```
    pub fn check_record_bytes(
        &self,
        what: &'static str,
        addr: TargetAddr,
        len: u64,
    ) -> Result<(), ReadError> {
        if len > self.max_record_bytes {
            return Err(ReadError::LimitExceeded {
                what,
                addr,
                count: len,
                max: self.max_record_bytes,
                limit: "max_record_bytes",
            });
        }
        Ok(())
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_table_entries: 1 << 24,
            max_string_len: 4096,
            max_walk_depth: 16,
            max_walk_processes: 1 << 16,
            max_list_len: 1 << 20,
            max_record_bytes: 1 << 24,
            max_total_bytes: 1 << 32,
            max_communicators: default_max_communicators(),
            max_operations: default_max_operations(),
            max_group_size: default_max_group_size(),
        }
    }
}
