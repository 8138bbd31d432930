//! Helpers shared by the tests that run the reference MPICH job
//! (tests/mpich/queues.c) and the hung jobs (tests/mpich/hang_*.c). Each
//! test binary uses a part of them.
#![allow(dead_code)]

pub mod dap;
pub mod debian_root;
pub mod handle_checks;
pub mod hung_job;
pub mod job_checks;
pub mod mpich_handle_checks;
pub mod mpich_job;
pub mod mpich_wheel_builds;
pub mod mpich_wheel_globals;
pub mod mpich_wheel_queues;
pub mod mpich_wheel_ring;
pub mod ob1_checks;
pub mod ompi5_reading;
pub mod ompi_handle_checks;
pub mod ompi_job;
pub mod pip_envs;
pub mod procs;
pub mod python_module;
pub mod queue_checks;
pub mod scratch;
pub mod site_build;
pub mod slurm_cluster;
pub mod supported_builds;
pub mod ucx_queue_checks;
