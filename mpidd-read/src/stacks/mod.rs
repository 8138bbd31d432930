//! Thread stacks: [`stack_unwind`] walks each thread's registers (from
//! `backend::thread_registers`) with framehop over each object's
//! `.eh_frame`, and names the frames from ELF symbols and DWARF, caching
//! per object for a whole job ([`unwind_object`]); the vDSO, which has no
//! file, is read from the process itself ([`vdso_image`]).
//!
//! It stands on `backend`, `symbols` and `targets`, and on nothing that
//! decodes MPI.

pub(crate) mod stack_unwind;
pub(crate) mod unwind_object;
pub(crate) mod vdso_image;
