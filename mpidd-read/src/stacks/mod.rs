//! Thread stacks: [`thread_registers`] (each thread's registers, from a
//! core's notes or a stopped process) and [`stack_unwind`] (walking them
//! with framehop over each object's `.eh_frame`, naming the frames).
//!
//! It stands on `target` and `symbols`, and on nothing that decodes MPI.

pub(crate) mod stack_unwind;
pub(crate) mod thread_registers;
