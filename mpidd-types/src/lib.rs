//! Byte layouts of the records that MPI launchers and libraries expose to
//! debuggers, for any target ABI.
//!
//! This crate does no I/O. It turns bytes taken from a target into typed
//! records and back, given a [`TargetAbi`] (byte order, address width and,
//! for the MPI-2 records, packing). The records are:
//!
//! | record | interface | Rust type |
//! |---|---|---|
//! | `MPIR_PROCDESC` | MPIR process acquisition | [`MpirProcdesc`] |
//! | `MPI2DD_INFO` | MPI-2 debugger interface | [`Mpi2ddInfo`] |
//! | `MPI2DD_PROCDESC` | MPI-2 debugger interface | [`Mpi2ddProcdesc`] |
//! | `MPI2DD_SPAWNDESC` | MPI-2 debugger interface | [`Mpi2ddSpawndesc`] |
//! | `MPI2DD_DIRECTORYENTRY` | MPI-2 debugger interface | [`Mpi2ddDirectoryEntry`] |
//! | `mqs_communicator` | message-queue dumping | [`MqsCommunicatorRecord`] |
//! | `mqs_pending_operation` | message-queue dumping | [`MqsPendingOperationRecord`] |
//!
//! Every record implements [`Record`]: its size and field offsets for an ABI
//! are known without an instance, and it decodes and encodes through scroll
//! contexts as well. Signed fields are sign-extended, unknown enum values
//! and flag bits are kept, and the field names (also in serde output) are
//! those of the interface documents.
//!
//! # Example
//!
//! Read an entry of `MPIR_proctable` from a big-endian 32-bit target, with
//! scroll:
//!
//! ```
//! use mpidd_types::{MpirProcdesc, Record, TargetAbi, TargetAddr};
//! use scroll::Pread;
//!
//! // As a 32-bit PowerPC compiler lays out {host 0x10000400, exe 0x10000500, pid -1}.
//! let bytes = [0x10, 0, 0x04, 0, 0x10, 0, 0x05, 0, 0xff, 0xff, 0xff, 0xff];
//! let entry: MpirProcdesc = bytes.pread_with(0, TargetAbi::POWERPC)?;
//! assert_eq!(entry.host_name, TargetAddr(0x1000_0400));
//! assert_eq!(entry.pid, -1);
//! assert_eq!(MpirProcdesc::size_for(TargetAbi::POWERPC), 12);
//! assert_eq!(MpirProcdesc::size_for(TargetAbi::X86_64), 24);
//! # Ok::<(), mpidd_types::TypesError>(())
//! ```

#![forbid(unsafe_code)]

mod abi;
mod addr;
mod cchar;
mod error;
pub mod field_value;
mod flags;
pub mod layout;
mod magic;
mod mpi2dd;
mod mpir;
mod mqs;
mod record;
mod state;

pub use abi::{AddressWidth, ByteOrder, Packing, TargetAbi};
pub use addr::TargetAddr;
pub use cchar::CChars;
pub use error::TypesError;
pub use flags::{DebuggerFlags, MpiFlags};
pub use layout::{Field, FieldKind, FieldSlot, Layout, PackingRule};
pub use magic::Mpi2ddMagic;
pub use mpi2dd::{
    Mpi2ddDirectoryEntry, Mpi2ddInfo, Mpi2ddProcdesc, Mpi2ddSpawndesc, MPI2DD_VARIANT,
    MPI2DD_VERSION,
};
pub use mpir::MpirProcdesc;
pub use mqs::{MqsCommunicatorRecord, MqsPendingOperationRecord, MqsStatus};
pub use record::Record;
pub use state::{Mpi2ddDebugState, MpirDebugState};
