//! `mpidd handle` against real 4-rank Open MPI jobs run by Debian's
//! mpirun, live and from gcore cores, on two builds of Open MPI 4.1.4:
//! the reference build (scripts/build-ref-ompi.sh), read through its
//! DWARF, and Debian's own stripped packages, read through a layout
//! profile that `mpidd profile write` makes from the reference build's
//! DWARF for the build-ids of Debian's libraries.
//!
//! tests/openmpi/handles.c makes handles of every kind with known
//! properties and writes each handle's C value (a pointer) and Fortran
//! INTEGER, the addresses of its user functions, buffers and status, and
//! the offsets, extents and tags it used, to a file per rank. The
//! expectations below come from that file and from the constants of the C
//! source (names, dimensions, info keys), never from mpidd's own output.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::handle_checks::check_every_rank;
use common::mpich_job::mpidd;
use common::ompi_handle_checks::check_rank;
use common::ompi_job::{ref_ompi, OmpiBuild, OmpiJob, DEBIAN_LIBDIR};

use serde_json::Value;

/// Checks every rank, live (each stopped and let go) and then from a gcore
/// core of each.
fn check_job(job: &OmpiJob, extra: &[String]) {
    check_every_rank(
        &job.dir,
        |r| job.pid(r),
        extra,
        |rank, s, w, full| check_rank("4.1.4", rank, s, w, full),
    );
}

#[test]
fn every_handle_kind_on_the_reference_build_live_and_from_gcore_cores() {
    let job = OmpiJob::start_on(OmpiBuild::Reference, "ompi-handles-ref", "handles");
    check_job(&job, &[]);
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The file an object name resolves to: the name a process's mappings
/// give the library, and so the one a profile is chosen by.
fn real(path: PathBuf) -> PathBuf {
    std::fs::canonicalize(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A profile of the handle decoders' layouts for Debian's libraries,
/// from the reference build's DWARF, checked against that DWARF.
fn debian_profile(dir: &Path) -> PathBuf {
    let ref_lib = ref_ompi().join("lib");
    let debian = Path::new(DEBIAN_LIBDIR);
    let objects = [
        (ref_lib.join("libmpi.so.40"), debian.join("libmpi.so.40")),
        (
            ref_lib.join("libopen-pal.so.40"),
            debian.join("libopen-pal.so.40"),
        ),
        (
            ref_lib.join("openmpi/mca_io_ompio.so"),
            debian.join("openmpi/lib/openmpi3/mca_io_ompio.so"),
        ),
    ];
    let profile = dir.join("ompi-handles.json");
    let mut write = mpidd();
    write.args(["profile", "write", "--decoder", "ompi-handles"]);
    for (debug, stripped) in &objects {
        write.arg("--object").arg(real(debug.clone()));
        write.arg("--for-build").arg(real(stripped.clone()));
    }
    write
        .args(["--implementation", "Open MPI", "--impl-version", "4.1.4"])
        .args([
            "--build",
            "Debian 12 openmpi 4.1.4-3, from the reference build",
        ])
        .arg("--output")
        .arg(&profile);
    let (ok, _, err) = run(&mut write);
    assert!(ok, "profile write: {err}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    assert!(
        json["layouts"]["mca_common_ompio_data_t"]["members"]["ompio_fh.f_atomicity"].is_object(),
        "the profile holds OMPIO's answer too"
    );
    let mut check = mpidd();
    check.args(["profile", "check"]).arg(&profile);
    for (debug, _) in &objects {
        check.arg("--object").arg(real(debug.clone()));
    }
    let (ok, out, err) = run(&mut check);
    assert!(ok, "profile check: {out}{err}");
    profile
}

#[test]
fn every_handle_kind_on_debians_stripped_build_through_a_profile() {
    let job = OmpiJob::start_on(OmpiBuild::Debian, "ompi-handles-debian", "handles");
    let profile = debian_profile(&job.dir);

    // The profile mpidd ships for this build, with no --profile.
    check_job(&job, &[]);
    // And one written here from the reference DWARF (the path a user
    // takes for a build mpidd has no profile for).
    check_job(
        &job,
        &["--profile".to_string(), profile.display().to_string()],
    );
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
