//! mpidd-embed on a 2-rank job of Debian's Open MPI 4.1 (stripped; layouts from its shipped profile):
//! its stops against `mpidd queues` and gdb, its job verdict against
//! `mpidd job`; and each rank started under `mpidd-embed run`.

mod common;

#[test]
fn attach_shows_what_mpidd_and_gdb_show() {
    common::checks::attach_shows_what_mpidd_and_gdb_show(&common::debian_open_mpi());
}

#[test]
fn job_gives_mpidds_verdict() {
    common::checks::job_gives_mpidds_verdict(&common::debian_open_mpi());
}

#[test]
fn run_under_launcher_shows_each_rank() {
    common::checks::run_under_launcher_shows_each_rank(&common::debian_open_mpi());
}

#[test]
fn stepping_over_a_breakpoint_keeps_the_rank_running() {
    common::checks::stepping_over_a_breakpoint_keeps_the_rank_running(&common::debian_open_mpi());
}
