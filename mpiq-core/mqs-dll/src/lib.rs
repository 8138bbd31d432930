//! `libmpiq_mqs.so`: the native message-queue decoders of `mpiq-core`,
//! exported as a message-queue (mqs) library that a parallel debugger loads
//! in place of a vendor's (`libtvmpich.so`).
//!
//! The decoders run unchanged on the debugger's callbacks: memory through
//! `mqs_fetch_data` and `mqs_target_to_host`, widths through
//! `mqs_get_type_sizes`, symbols through `mqs_find_symbol`, types through
//! `mqs_find_type`, `mqs_field_offset` and `mqs_sizeof`, completed for
//! MPICH's CH4 device by what MPICH declares where the callbacks cannot
//! answer (`mpich_declarations`). Open MPI's layouts, and those of an
//! MPICH that hides its globals, come from the layout profile of the build
//! the process runs, which its loaded objects' build-ids pick
//! (`loaded_profile`): Debian's stripped Open MPI and MPICH have no types
//! for a debugger to give, and the profile also places the globals
//! Debian's MPICH hides. The decoder's notes, which the interface
//! has no place for, go to the debugger's `mqs_dprints`. So a debugger gets
//! what the native decoders add over the vendor library: world ranks,
//! `MPI_ANY_SOURCE` as −1 and `MPI_ANY_TAG` as `tag_wild`, lengths in bytes,
//! no reads at offset 0, bounded walks, and an iterator that answers
//! "end of list" (never a crash) past its end.
//!
//! Every entry point catches panics and returns an error code; nothing
//! unwinds into the debugger. Blocks handed to the debugger come from its
//! `mqs_malloc`. The whole queue state of a process is read at
//! `mqs_update_communicator_list` and iterated from that snapshot.
//!
//! The MPI-2 extension: `mqs_setup_job`, `mqs_destroy_job_info` and
//! `mqs_set_process_identity` are implemented (the identity is kept;
//! MPICH's world ranks are already the identities of a job that did not
//! spawn). MPICH keeps no record of spawned processes that a debugger could
//! read from a process, so `mqs_setup_new_process_iterator` answers
//! `mqs_no_information` and `next_new_process` `mqs_end_of_list`.
//!
//! See `docs/mqs-library.md` for how to make a debugger load it.
//!
//! ```
//! // The version a debugger checks before anything else.
//! assert_eq!(mpiq_mqs::mqs_version_compatibility(), 3);
//! assert_eq!(mpiq_mqs::mqs_dll_taddr_width() as usize, std::mem::size_of::<std::ffi::c_ulong>());
//! ```

#![allow(unsafe_code)]

mod boundary;
mod callback_target;
mod communicators;
mod declared_layouts;
mod host_abi;
mod image;
mod job;
mod loaded_profile;
mod mpich_declarations;
mod operations;
mod process;
mod setup;
mod state;

// The entry points, by what they serve: the library itself, an image, a
// process, the communicator iterator, the operation iterators, and a job
// (MPI-2). Each catches its panics (`boundary`).
pub use boundary::{
    mqs_dll_error_string, ERR_BAD_OP_CLASS, ERR_DECODE, ERR_NOT_SET_UP, ERR_NOT_UPDATED,
    ERR_NO_ABI, ERR_NO_COMMUNICATOR, ERR_NO_MEMORY, ERR_NULL, ERR_PANIC, ERR_UNSUPPORTED,
};
pub use communicators::{
    mqs_get_comm_group, mqs_get_communicator, mqs_next_communicator,
    mqs_setup_communicator_iterator,
};
pub use image::{mqs_destroy_image_info, mqs_image_has_queues, mqs_setup_image};
pub use job::{
    mqs_destroy_job_info, mqs_set_process_identity, mqs_setup_job, mqs_setup_new_process_iterator,
    next_new_process,
};
pub use operations::{mqs_next_operation, mqs_setup_operation_iterator};
pub use process::{
    mqs_destroy_process_info, mqs_process_has_queues, mqs_setup_process,
    mqs_update_communicator_list,
};
pub use setup::{
    mqs_dll_taddr_width, mqs_setup_basic_callbacks, mqs_version_compatibility, mqs_version_string,
};
