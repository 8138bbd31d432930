//! Helpers of the tests crate's real-job tests. The process and scratch
//! helpers are the examples crate's own (examples/tests/common/), shared by
//! path rather than copied.
#![allow(dead_code)]

#[path = "../../../examples/tests/common/procs.rs"]
pub mod procs;
pub mod python_expect;
pub mod python_job;
#[path = "../../../examples/tests/common/scratch.rs"]
pub mod scratch;
