//! The hung ring of tests/mpich/hang_ring.c on pip's MPICH wheels: the
//! one check of mpich_wheels.rs (programs built with the wheel's `mpicc`)
//! and mpich_abi_wheels.rs (with its `mpicc_abi`).

use std::path::Path;
use std::process::Command;

use super::hung_job::{build, HungJob};
use super::job_checks::{check_cores, check_live, check_ring_receives, one_at_a_time, Expected};
use super::mpich_wheel_builds::Wheel;
use super::supported_builds::Outcome;

/// The hung ring built with the wheel's compiler wrapper `cc` (`mpicc`
/// or `mpicc_abi`) is the cycle 0 → 3 → 2 → 1, live (from the wheel's
/// `mpiexec`) and from cores; `on_library` first checks that the ranks
/// (their pids) run on the wheel's library that `cc` links.
pub fn ring_is_a_cycle_built_with(wheel: &Wheel, cc: &str, on_library: impl Fn(&Path, &[i32])) {
    let _serial = one_at_a_time();
    let live = Outcome::begin(wheel.build, wheel.read_through, "job", "live");
    let cores = Outcome::begin(wheel.build, wheel.read_through, "job", "core");
    let venv = wheel.venv();
    let compiler = venv.join("bin").join(cc);
    assert!(
        compiler.exists(),
        "{} is missing from the wheel",
        compiler.display()
    );
    let (dir, exe, source) = build(
        &compiler,
        &format!("wheel-mpich-{}-{cc}-ring", wheel.version),
        "hang_ring",
    );
    // The blocked ranks busy-poll: at the lowest priority they leave the
    // CPUs to mpidd.
    let mut launch = Command::new("nice");
    launch
        .args(["-n", "19"])
        .arg(venv.join("bin/mpiexec"))
        .args(["-n", "4"])
        .arg(&exe);
    let job = HungJob::run(launch, dir, source, "hang_ring");
    let pids: Vec<i32> = job.ranks.iter().map(|&(_, pid)| pid).collect();
    on_library(&venv, &pids);
    let expected = Expected::ring();
    check_ring_receives(&check_live(&job, &expected));
    live.works();
    check_ring_receives(&check_cores(&job, &expected));
    cores.works();
}
