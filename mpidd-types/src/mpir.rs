//! The MPIR process-acquisition record.

use crate::addr::TargetAddr;
use crate::field_value::define_record;

define_record! {
    /// `MPIR_PROCDESC`, one entry of `MPIR_proctable`, indexed by rank in
    /// `MPI_COMM_WORLD`.
    ///
    /// It is an ordinary C struct in every launcher, so it always has the
    /// natural layout: 24 bytes on LP64 (4 of them tail padding), 12 on
    /// ILP32.
    pub struct MpirProcdesc = "MPIR_PROCDESC", AlwaysNatural {
        /// Host the rank runs on (address of a C string).
        host_name: TargetAddr,
        /// Executable of the rank (address of a C string).
        executable_name: TargetAddr,
        /// Pid of the rank on `host_name`.
        pid: i32,
    }
}
