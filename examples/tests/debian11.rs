//! Debian 11's own Open MPI 4.1.0, as bullseye ships it
//! (stripped, with build-ids no shipped profile names), in the Debian 11
//! root scripts/python-envs.sh makes (`$MPIDD_DEBIAN11_ROOT`). The
//! programs are built with the root's compilers and run by its launchers
//! inside it (scripts/lib/in-debian-root.sh), and read from the host by
//! pid and from gcore cores; the program, which the ranks saw in a
//! directory bound into their own mount namespace, is found in the job's
//! directory by `--search-path`.
//!
//! Open MPI 4.1.0 is read through the 4.1.0 family that the Debian 12 Open
//! MPI 4.1.4 profile declares beside its own (4.1.3 up to 4.2): the same
//! layouts but for OMPIO's file (4.1.3 added a member before the atomic
//! mode a file handle's view reads) and `ompi_op_t` (4.1.2 added two
//! types to its per-type tables), as gcc lays them out from the root's
//! own headers (`the_4_1_0_family_is_what_debian11_headers_lay_out`): its
//! queues, handles and a hung ring's cycle, live and from cores.
//! Debian 11's MPICH 3.4.1 is examples/tests/debian11_mpich.rs's.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::debian_root::{assert_ranks_map, host_path, in_root, root};
use common::hung_job::HungJob;
use common::job_checks::{
    check_cores_with, check_live, check_ring_receives, one_at_a_time, Expected,
};
use common::mpich_job::mpidd;
use common::ompi5_reading::{
    check_handles_from_cores, check_handles_live, check_queues_from_cores, check_queues_live,
};
use common::ompi_job::OmpiJob;
use common::site_build::build_id;
use common::supported_builds::Outcome;
use mpidd_read::Layouts;
use serde_json::Value;

/// The builds as docs/supported-builds.md names them, with where their
/// layouts come from.
const OMPI: &str = "Debian 11 openmpi 4.1.0-10 (amd64)";
const OMPI_FAMILY: &str = "the family Open MPI 4.1.0 up to 4.1.2 of the Open MPI 4.1.4 profile";

/// Where bullseye's libraries are inside the root.
const LIBMPI: &str = "/usr/lib/x86_64-linux-gnu/libmpi.so.40";

/// The Debian 11 root, with Open MPI's compiler and launcher.
fn debian11() -> PathBuf {
    root(
        "MPIDD_DEBIAN11_ROOT",
        "debian11",
        &["usr/bin/mpicc.openmpi", "usr/bin/mpirun.openmpi"],
    )
}

/// The C source `source` (with the headers beside it that `headers`
/// names) built in the root with `mpicc` (`-g -O0`) into `dir`, which the
/// root sees at the same path: the executable.
fn build_in_root(root: &Path, dir: &Path, mpicc: &str, source: &Path, headers: &[&str]) -> PathBuf {
    for file in std::iter::once(source.file_name().unwrap().to_str().unwrap())
        .chain(headers.iter().copied())
    {
        std::fs::copy(source.with_file_name(file), dir.join(file)).unwrap();
    }
    let exe = dir.join(source.file_stem().unwrap());
    let out = in_root(root, &[dir])
        .args([mpicc, "-g", "-O0", "-o"])
        .arg(&exe)
        .arg(dir.join(source.file_name().unwrap()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{mpicc} in the Debian 11 root failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// A program of the repo's tests/ folder.
fn repo_source(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// mpirun.openmpi's options inside the root: root, more ranks than
/// cores, ob1 over shared memory (`vader`, 4.1's name). 4.1.0's one-sided
/// component looks for RDMA only in network BTLs by default (`openib`,
/// `ugni`, `uct`, `ucp`), so without one MPI_Win_create fails ("invalid
/// window"); vader can serve it.
const OMPI_ARGS: [&str; 11] = [
    "--allow-run-as-root",
    "--oversubscribe",
    "--mca",
    "pml",
    "ob1",
    "--mca",
    "btl",
    "self,vader",
    "--mca",
    "osc_rdma_btls",
    "vader",
];

/// `mpidd ARGS`: its standard output, standard error and success.
fn run(args: &[&str]) -> (String, String, bool) {
    let out = mpidd().args(args).output().expect("run mpidd");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// `mpidd identify ARGS` succeeds and says each of `parts`.
fn assert_identify(args: &[&str], parts: &[&str]) {
    let (out, err, ok) = run(&[&["identify"], args].concat());
    assert!(ok, "mpidd identify {args:?} failed: {err}");
    for part in parts {
        assert!(out.contains(part), "{part:?} missing from identify: {out}");
    }
}

/// What `mpidd identify` says of bullseye's Open MPI: the 4.1.0 family,
/// a variant of the 4.1.4 profile's, holds it, and the check passes.
fn ompi_identify_parts(build: &str) -> Vec<String> {
    vec![
        "states    Open MPI 4.1.0".into(),
        format!("build-id  {build}"),
        "the family Open MPI 4.1.0 up to 4.1.2 (ob1".into(),
        "passed".into(),
    ]
}

/// Bullseye's libmpi, as the host sees it, and its build-id, which no
/// shipped profile names.
fn debian11_libmpi(root: &Path) -> (PathBuf, String) {
    let lib = host_path(root, LIBMPI);
    let ours = build_id(&lib).expect("Debian's libmpi has a build-id");
    assert!(
        !mpidd_read::shipped_profiles().iter().any(|p| p
            .identity
            .objects
            .iter()
            .any(|o| o.build_ids.contains(&ours))),
        "a shipped profile names bullseye's libmpi {ours}"
    );
    (lib, ours)
}

/// mpidd said the layouts came from the 4.1.0 family of the 4.1.4
/// profile.
fn family_note(err: &str) {
    assert!(
        err.contains("the family Open MPI 4.1.0 up to 4.1.2")
            && err.contains("profile of Open MPI 4.1.4")
            && err.contains("states version 4.1.0"),
        "mpidd should say the layouts came from the 4.1.0 family: {err}"
    );
}

/// tests/openmpi/PROGRAM.c built in the root and run there by
/// mpirun.openmpi as 4 ranks over ob1, in a fresh directory `name`.
fn start_ompi(root: &Path, name: &str, program: &str) -> OmpiJob {
    let dir = common::scratch::fresh_dir(name);
    let source = repo_source(&format!("tests/openmpi/{program}.c"));
    let exe = build_in_root(root, &dir, "mpicc.openmpi", &source, &[]);
    let mut mpirun = in_root(root, &[&dir]);
    mpirun.arg("mpirun.openmpi").args(OMPI_ARGS);
    OmpiJob::launch(mpirun, &exe, dir)
}

#[test]
fn ompi_4_1_0_queues_through_its_family_live_and_from_cores() {
    let live = Outcome::begin(OMPI, OMPI_FAMILY, "queues", "live");
    let cores = Outcome::begin(OMPI, OMPI_FAMILY, "queues", "core");
    let root = debian11();
    let (lib, ours) = debian11_libmpi(&root);
    let job = start_ompi(&root, "debian11-ompi-queues", "queues");
    assert_ranks_map(&job.ranks, &lib);
    let parts = ompi_identify_parts(&ours);
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    assert_identify(&["--pid", &job.pid(0).to_string()], &parts);
    check_queues_live(&job, &family_note, true);
    live.works();
    check_queues_from_cores(&job, &family_note, true);
    cores.works();
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn ompi_4_1_0_handles_through_its_family_live_and_from_cores() {
    let live = Outcome::begin(OMPI, OMPI_FAMILY, "handle", "live");
    let cores = Outcome::begin(OMPI, OMPI_FAMILY, "handle", "core");
    let root = debian11();
    let (lib, _) = debian11_libmpi(&root);
    let job = start_ompi(&root, "debian11-ompi-handles", "handles");
    assert_ranks_map(&job.ranks, &lib);
    check_handles_live(&job, "4.1.0");
    live.works();
    check_handles_from_cores(&job, "4.1.0", true);
    cores.works();
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn ompi_4_1_0_ring_is_named_a_cycle_live_and_from_cores() {
    let _serial = one_at_a_time();
    let live = Outcome::begin(OMPI, OMPI_FAMILY, "job", "live");
    let cores = Outcome::begin(OMPI, OMPI_FAMILY, "job", "core");
    let root = debian11();
    let (lib, _) = debian11_libmpi(&root);
    let dir = common::scratch::fresh_dir("debian11-ompi-ring");
    let source = repo_source("tests/mpich/hang_ring.c");
    let exe = build_in_root(&root, &dir, "mpicc.openmpi", &source, &["hang_common.h"]);
    // The blocked ranks busy-poll: at the lowest priority they leave the
    // CPUs to mpidd (nice and the root's entry exec, so the pid is
    // mpirun's).
    let mut launch = Command::new("nice");
    launch
        .args(["-n", "19"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/lib/in-debian-root.sh"))
        .arg(&root)
        .arg("--bind")
        .arg(&dir)
        .arg("mpirun.openmpi")
        .args(OMPI_ARGS)
        .args(["-n", "4"])
        .arg(&exe);
    let job = HungJob::run(launch, dir, source, "hang_ring");
    assert_ranks_map(&job.ranks, &lib);
    let expected = Expected::ring();
    let report = check_live(&job, &expected);
    check_ring_receives(&report);
    live.works();
    let search = job.dir.to_str().unwrap().to_string();
    let report = check_cores_with(&job, &expected, &["--search-path", &search]);
    check_ring_receives(&report);
    cores.works();
}

/// Every size, member offset, member size and enumerator of the 4.1.0
/// family's layouts (as mpidd reads with them) that Debian 11's own
/// headers define is what gcc makes of those headers, in the root:
/// scripts/lib/layouts-in-c.py writes the program. ob1's types are not
/// installed (scripts/measure-ompi-4.1.0-ob1.sh measures them against
/// upstream's headers, by hand), nor are three types private to .c files;
/// the UCX PML's module is unknown to the family.
#[test]
fn the_4_1_0_family_is_what_debian11_headers_lay_out() {
    let root = debian11();
    let stated = mpidd_read::StatedBuild {
        implementation: "Open MPI",
        version: "4.1.0",
        arch: "x86_64",
        device: None,
    };
    let profiles = mpidd_read::shipped_profiles();
    let (family, layouts) = profiles
        .iter()
        .find_map(|p| p.family_holding(&stated))
        .expect("a shipped family holds Open MPI 4.1.0");
    assert_eq!(
        (family.from_version.as_str(), family.below_version.as_str()),
        ("4.1.0", "4.1.2")
    );
    let dir = common::scratch::fresh_dir("debian11-family-layouts");
    let table = dir.join("family.json");
    std::fs::write(&table, serde_json::to_string(layouts).unwrap()).unwrap();
    // Debian 11 installs the headers that include these without them; no
    // type they would declare is measured.
    for (path, text) in [
        ("ompi/peruse/peruse.h", "typedef void *peruse_event_h;\n"),
        ("ompi/mpi/fortran/base/fint_2_int.h", "\n"),
    ] {
        let file = dir.join("standin").join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let headers = [
        "ompi_config.h",
        "ompi/communicator/communicator.h",
        "ompi/datatype/ompi_datatype.h",
        "ompi/errhandler/errhandler.h",
        "ompi/file/file.h",
        "ompi/group/group.h",
        "ompi/info/info.h",
        "ompi/mca/bml/bml.h",
        "ompi/mca/common/ompio/common_ompio.h",
        "ompi/mca/pml/pml.h",
        "ompi/mca/pml/base/pml_base_request.h",
        "ompi/mca/pml/base/pml_base_recvreq.h",
        "ompi/mca/pml/base/pml_base_sendreq.h",
        "ompi/mca/topo/topo.h",
        "ompi/op/op.h",
        "ompi/proc/proc.h",
        "ompi/request/grequest.h",
        "ompi/request/request.h",
        "ompi/win/win.h",
        "opal/class/opal_free_list.h",
        "opal/class/opal_hash_table.h",
        "opal/class/opal_list.h",
        "opal/class/opal_object.h",
        "opal/class/opal_pointer_array.h",
        "opal/datatype/opal_datatype.h",
        "opal/mca/btl/btl.h",
        "opal/util/info.h",
    ];
    let not_installed = [
        "attribute_key_value_t",
        "ompi_datatype_args_t",
        "opal_hash_element_t",
        "mca_pml_ob1_comm_proc_t",
        "mca_pml_ob1_comm_t",
        "mca_pml_ob1_hdr_t",
        "mca_pml_ob1_recv_frag_t",
        "mca_pml_ob1_recv_request_t",
        "mca_pml_ob1_rendezvous_hdr_t",
        "mca_pml_ob1_send_request_t",
    ];
    let program = dir.join("layouts.c");
    let mut write = Command::new("python3");
    write
        .arg(repo_source("scripts/lib/layouts-in-c.py"))
        .arg(&table)
        .arg(&program);
    for h in headers {
        write.arg(format!("--header={h}"));
    }
    for t in not_installed {
        write.arg(format!("--skip={t}"));
    }
    let out = write.output().expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let include = "/usr/lib/x86_64-linux-gnu/openmpi/include";
    let exe = dir.join("layouts");
    let out = in_root(&root, &[&dir])
        .arg("gcc")
        .arg("-I")
        .arg(dir.join("standin"))
        .args(["-I", &format!("{include}/openmpi"), "-I", include, "-o"])
        .arg(&exe)
        .arg(&program)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gcc in the Debian 11 root failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = in_root(&root, &[&dir]).arg(&exe).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let measured = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut differ = Vec::new();
    let mut facts = 0;
    for line in measured.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let (want, got) = match parts.as_slice() {
            ["size", ty, n] => (layouts.size_of(ty).ok(), n),
            ["offset", ty, path, n] => (layouts.member_offset(ty, path).ok(), n),
            ["msize", ty, path, n] => (layouts.member(ty, path).ok().map(|m| m.size), n),
            ["enum", ty, name, n] => (
                layouts
                    .enum_value(ty, name)
                    .ok()
                    .and_then(|v| u64::try_from(v).ok()),
                n,
            ),
            _ => panic!("not a measured fact: {line:?}"),
        };
        facts += 1;
        if want != got.parse().ok() {
            differ.push(format!("{line} (the family says {want:?})"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {facts} differ: {differ:#?}",
        differ.len()
    );
    // Every type of the family but those not installed was measured, the
    // two laid out otherwise than 4.1.4's among them.
    assert!(facts > 300, "only {facts} facts measured: {measured}");
    for fact in [
        "size mca_common_ompio_data_t 448",
        "offset mca_common_ompio_data_t ompio_fh.f_atomicity 116",
        "size ompi_op_t 1344",
    ] {
        assert!(
            measured.lines().any(|l| l == fact),
            "{fact:?} not measured: {measured}"
        );
    }
}

/// OMPIO's file as Debian 11's own Open MPI 4.1.0 headers lay it out
/// (tests/openmpi/ompio_layout.c, compiled in the root against what
/// libopenmpi-dev installs) keeps its atomic mode 8 bytes before where
/// the 4.1 family's profile (4.1.4's layouts) reads it: 4.1.3 added
/// `f_fullfilename` before it. This is why the 4.1 family starts at 4.1.3,
/// and the 4.1.0 family lays the type out otherwise.
#[test]
fn ompio_layout_of_4_1_0_is_not_the_family_s() {
    let root = debian11();
    let dir = common::scratch::fresh_dir("debian11-ompio-layout");
    let source = repo_source("tests/openmpi/ompio_layout.c");
    std::fs::copy(&source, dir.join("ompio_layout.c")).unwrap();
    let exe = dir.join("ompio_layout");
    let include = "/usr/lib/x86_64-linux-gnu/openmpi/include";
    let out = in_root(&root, &[&dir])
        .args([
            "gcc",
            "-I",
            &format!("{include}/openmpi"),
            "-I",
            include,
            "-o",
        ])
        .arg(&exe)
        .arg(dir.join("ompio_layout.c"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gcc in the Debian 11 root failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = in_root(&root, &[&dir]).arg(&exe).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let measured = String::from_utf8_lossy(&out.stdout).into_owned();
    let value = |name: &str| -> u64 {
        measured
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} missing from {measured}"))
    };
    assert_eq!(value("mca_common_ompio_data_t.size "), 448, "{measured}");
    assert_eq!(
        value("mca_common_ompio_data_t.ompio_fh.f_atomicity "),
        116,
        "{measured}"
    );
    let profile: Value = serde_json::from_str(include_str!(
        "../../mpidd-read/profiles/openmpi-4.1.4-debian12-amd64.json"
    ))
    .unwrap();
    let ompio = &profile["layouts"]["mca_common_ompio_data_t"];
    assert_eq!(ompio["size"], 456, "{ompio:#}");
    assert_eq!(
        ompio["members"]["ompio_fh.f_atomicity"]["offset"], 124,
        "{ompio:#}"
    );
    assert_eq!(profile["family"]["from_version"], "4.1.3");
}
