//! mpidd-embed on a 2-rank job of Debian's MPICH 4.0.2 (ch4:ucx, stripped; layouts from its shipped profile):
//! its stops against `mpidd queues` and gdb, its job verdict against
//! `mpidd job`.

mod common;

#[test]
fn attach_shows_what_mpidd_and_gdb_show() {
    common::checks::attach_shows_what_mpidd_and_gdb_show(&common::debian_mpich());
}

#[test]
fn job_gives_mpidds_verdict() {
    common::checks::job_gives_mpidds_verdict(&common::debian_mpich());
}
