//! `mpidd identify` on real builds: Debian 12's stripped MPICH
//! (`libmpich12`) and Open MPI (`libopenmpi3`) library files, pip's Open
//! MPI 5.0.9 wheel (no build-id, read through the 5.0 release family), a
//! stripped copy of the reference MPICH that no profile or family covers,
//! and live processes and gcore cores of real jobs of Debian's MPICH and of
//! the 5.0.9 wheel, one of them given a profile whose family fits but whose
//! layouts do not (the check on the process refuses it in one line).
//!
//! Every expectation is a fact known without mpidd: versions from the
//! package manager, the wheel's metadata or the build's own
//! `mpichversion`; build-ids from `readelf -n`; the digest of a build
//! without one from its executable sections as `readelf -S` lists them;
//! DWARF from `readelf -S`; which profile is made for which build and which
//! family a profile declares, from the shipped profiles' files.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::mpich_job::{gcore, mpidd, ref_mpich, stock_mpich, wait_stopped, Job};
use common::ompi_job::OmpiJob;
use common::pip_envs::ompi_wheel_venv;
use serde_json::Value;

/// A tool's standard output; fails saying which package gives it.
fn tool(program: &str, args: &[&str], path: &Path, package: &str) -> String {
    let out = Command::new(program)
        .args(args)
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("{program} ({package}; scripts/test.sh installs it): {e}"));
    assert!(
        out.status.success(),
        "{program} {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The GNU build-id `readelf -n` prints for `path`, if any.
fn readelf_build_id(path: &Path) -> Option<String> {
    tool("readelf", &["-n"], path, "binutils")
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: ").map(str::to_string))
}

/// Whether `readelf -S` lists a `.debug_info` section in `path`.
fn has_debug_info(path: &Path) -> bool {
    tool("readelf", &["-S", "-W"], path, "binutils").contains(".debug_info")
}

/// The SHA-256 (by `sha256sum`) of the bytes of `path`'s executable
/// sections (flag X, with contents in the file), in `readelf -S`'s order:
/// how a build without a build-id is told from others.
fn code_digest(path: &Path, scratch: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let mut code = Vec::new();
    for line in tool("readelf", &["-S", "-W"], path, "binutils").lines() {
        // `  [11] .init PROGBITS 0000000000059000 059000 00001b 00  AX  0   0  4`
        let Some((_, rest)) = line.split_once(']') else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        if words.len() < 8 || words[1] == "NOBITS" || !words[6].contains('X') {
            continue;
        }
        let (Ok(off), Ok(size)) = (
            usize::from_str_radix(words[3], 16),
            usize::from_str_radix(words[4], 16),
        ) else {
            continue;
        };
        code.extend_from_slice(&bytes[off..off + size]);
    }
    assert!(
        !code.is_empty(),
        "no executable section in {}",
        path.display()
    );
    let file = scratch.join("code.bin");
    std::fs::write(&file, code).unwrap();
    let sum = tool("sha256sum", &[], &file, "coreutils");
    sum.split_whitespace().next().unwrap().to_string()
}

/// The upstream version of an installed Debian package (`4.0.2` for
/// `4.0.2-3+b1`).
fn debian_version(package: &str) -> String {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Version}", package])
        .output()
        .expect("dpkg-query");
    assert!(
        out.status.success(),
        "{package} is not installed: apt-get install {package} (scripts/test.sh does)"
    );
    let full = String::from_utf8_lossy(&out.stdout).into_owned();
    let no_epoch = full.rsplit(':').next().unwrap_or(&full);
    no_epoch.split('-').next().unwrap().to_string()
}

/// The shipped profile file `name` (mpidd-read/profiles/NAME.json), as data.
fn shipped_profile(name: &str) -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../mpidd-read/profiles/{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Whether the profile `profile` lists `key` among its objects' build-ids
/// or code digests.
fn lists(profile: &Value, key: &str) -> bool {
    profile["identity"]["objects"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| {
            let ids = o["build_ids"].as_array().cloned().unwrap_or_default();
            ids.into_iter()
                .chain(o["code_digests"].as_array().cloned().unwrap_or_default())
        })
        .any(|k| k.as_str() == Some(key))
}

/// `mpidd identify ARGS --json`, which must succeed.
fn identify(args: &[&str]) -> Value {
    let out = mpidd()
        .arg("identify")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpidd identify {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The fit `mpidd identify` gave the profile whose name starts with
/// `profile` (`MPICH 4.0.2 on x86_64`).
fn fit_of<'a>(id: &'a Value, profile: &str) -> &'a Value {
    id["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["profile"].as_str().unwrap().starts_with(profile))
        .map(|p| &p["fit"])
        .unwrap_or_else(|| panic!("no profile {profile} in {id:#}"))
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not text: {v}"))
}

/// A library the profile `profile_file` was made for (by build-id):
/// identified with what its package says, through that profile.
fn check_debian_library(
    library: &str,
    package: &str,
    implementation: &str,
    profile_file: &str,
) -> Value {
    let path = std::fs::canonicalize(library).unwrap();
    let version = debian_version(package);
    let build_id = readelf_build_id(&path).expect("Debian's libraries have build-ids");
    let profile = shipped_profile(profile_file);
    assert!(
        lists(&profile, &build_id),
        "{profile_file} is made for {library}'s build"
    );
    let id = identify(&["--library", library]);
    assert_eq!(text(&id["library"]), path.to_str().unwrap());
    assert_eq!(text(&id["build_id"]), build_id);
    assert!(id["code_digest"].is_null());
    assert_eq!(text(&id["arch"]), "x86_64");
    assert_eq!(text(&id["stated"]["implementation"]), implementation);
    assert_eq!(text(&id["stated"]["version"]), version);
    assert_eq!(id["dwarf"]["present"], Value::Bool(has_debug_info(&path)));
    assert_eq!(id["decoder"]["outcome"], "chosen");
    let fit = fit_of(&id, &format!("{implementation} {version} on x86_64"));
    assert_eq!(fit["kind"], "build", "{id:#}");
    assert_eq!(id["layouts"]["source"], "profile", "{id:#}");
    assert_eq!(
        text(&id["layouts"]["text"]),
        format!("the {implementation} {version} layout profile made for this build")
    );
    assert!(id["process"].is_null(), "no process was read");
    id
}

#[test]
fn debian_mpich_library_is_the_build_its_profile_was_made_for() {
    let id = check_debian_library(
        "/usr/lib/x86_64-linux-gnu/libmpich.so.12",
        "libmpich12",
        "MPICH",
        "mpich-4.0.2-debian12-amd64",
    );
    // The device Debian configured it with, as its configure line says.
    let configure = text(&id["stated"]["configure"]);
    let device = configure
        .split_whitespace()
        .find_map(|w| w.strip_prefix("--with-device="))
        .expect("Debian's configure line names the device");
    assert_eq!(text(&id["stated"]["device"]), device);
    assert_eq!(id["decoder"]["name"], "mpich-ch4");
    // The plain text says the same in its lines.
    let out = mpidd()
        .args([
            "identify",
            "--library",
            "/usr/lib/x86_64-linux-gnu/libmpich.so.12",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let shown = String::from_utf8_lossy(&out.stdout);
    for line in [
        format!("states    MPICH 4.0.2, device {device}"),
        format!("build-id  {}", text(&id["build_id"])),
        "layouts   the MPICH 4.0.2 layout profile made for this build".to_string(),
    ] {
        assert!(
            shown.lines().any(|l| l == line),
            "{line:?} missing: {shown}"
        );
    }
}

#[test]
fn debian_open_mpi_library_is_the_build_its_profile_was_made_for() {
    let id = check_debian_library(
        "/usr/lib/x86_64-linux-gnu/libmpi.so.40",
        "libopenmpi3",
        "Open MPI",
        "openmpi-4.1.4-debian12-amd64",
    );
    // Another line's profile names libmpi too, but not this build.
    let fit = fit_of(&id, "Open MPI 5.0.7 on x86_64");
    assert_eq!(fit["kind"], "no");
    let why = text(&fit["why"]);
    assert!(why.contains("declares no release family"), "{why}");
    assert!(
        why.contains(&format!("build-id {}", text(&id["build_id"]))),
        "{why}"
    );
}

#[test]
fn pips_open_mpi_5_0_9_library_falls_in_the_5_0_family() {
    let venv = ompi_wheel_venv("5.0.9");
    let library = venv.join("lib/libmpi.so.40");
    let scratch = common::scratch::fresh_dir("identify-ompi509-library");
    // The wheel's version, from its metadata.
    let version = std::fs::read_dir(venv.join("lib/python3.11/site-packages"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find_map(|n| {
            n.strip_prefix("openmpi-")?
                .strip_suffix(".dist-info")
                .map(str::to_string)
        })
        .expect("the wheel's dist-info");
    assert_eq!(version, "5.0.9");
    assert_eq!(
        readelf_build_id(&library),
        None,
        "pip's wheels have no build-id"
    );
    let digest = code_digest(&library, &scratch);
    let profile = shipped_profile("openmpi-5.0.11-pip-x86_64");
    assert!(!lists(&profile, &digest), "no profile names this build");
    let family = &profile["family"];
    assert_eq!(family["from_version"], "5.0.7");
    assert_eq!(family["below_version"], "5.1");
    let id = identify(&["--library", library.to_str().unwrap()]);
    assert!(id["build_id"].is_null());
    assert_eq!(text(&id["code_digest"]), digest);
    assert_eq!(text(&id["stated"]["version"]), version);
    assert_eq!(
        id["dwarf"]["present"],
        Value::Bool(has_debug_info(&library))
    );
    let fit = fit_of(&id, "Open MPI 5.0.11 on x86_64");
    assert_eq!(fit["kind"], "family", "{id:#}");
    assert!(text(&fit["family"]).starts_with("Open MPI 5.0.7 up to 5.1"));
    // Debian 12's 4.1.4 profile declares the 4.1 family, which 5.0.9 is past.
    let other = fit_of(&id, "Open MPI 4.1.4 on x86_64");
    assert_eq!(other["kind"], "no");
    let why = text(&other["why"]);
    assert!(why.contains(&format!("code digest {digest}")), "{why}");
    assert!(why.contains("not below the family's bound, 4.2"), "{why}");
    assert_eq!(id["layouts"]["source"], "family");
    let chosen = text(&id["layouts"]["text"]);
    for part in [
        "the family Open MPI 5.0.7 up to 5.1",
        "of the profile of Open MPI 5.0.11",
        "states version 5.0.9",
    ] {
        assert!(chosen.contains(part), "{part:?} missing: {chosen}");
    }
    common::scratch::remove_unless_failed(&scratch);
}

/// The reference MPICH (4.0.2, ch3:nemesis) stripped of its DWARF, under
/// Debian's name `libmpich`: no profile is made for its build-id, and the
/// 4.0 ch3:nemesis family (whose profile describes `libmpi`, the name the
/// reference build installs) is not offered to an object of another name,
/// so no layouts are found, and identify says which facts are missing.
#[test]
fn a_stripped_mpich_that_no_profile_or_family_covers_is_reported_as_such() {
    let prefix = ref_mpich();
    let scratch = common::scratch::fresh_dir("identify-stripped-mpich");
    let original = std::fs::canonicalize(prefix.join("lib/libmpi.so.12")).unwrap();
    // Under the name Debian's MPICH has, which the MPICH profile describes:
    // the profile is then refused for the build alone.
    let library: PathBuf = scratch.join("libmpich.so.12.2.2");
    std::fs::copy(&original, &library).unwrap();
    let out = Command::new("strip")
        .arg("--strip-debug")
        .arg(&library)
        .output()
        .expect("strip (binutils)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!has_debug_info(&library));
    let build_id = readelf_build_id(&library).expect("the reference build has a build-id");
    // What the build says of itself, through its own tool.
    let about = Command::new(prefix.join("bin/mpichversion"))
        .output()
        .expect("the reference MPICH's mpichversion");
    let about = String::from_utf8_lossy(&about.stdout).into_owned();
    let said = |key: &str| {
        about
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("{key} missing from mpichversion: {about}"))
    };
    let (version, device) = (said("MPICH Version:"), said("MPICH Device:"));
    let mpich_profile = shipped_profile("mpich-4.0.2-debian12-amd64");
    assert!(!lists(&mpich_profile, &build_id));
    assert!(mpich_profile["family"].is_null());

    let id = identify(&["--library", library.to_str().unwrap()]);
    assert_eq!(text(&id["build_id"]), build_id);
    assert_eq!(text(&id["stated"]["version"]), version);
    assert_eq!(text(&id["stated"]["device"]), device);
    assert_eq!(id["dwarf"]["present"], Value::Bool(false));
    assert_eq!(id["decoder"]["name"], "mpich-ch3");
    let fit = fit_of(&id, "MPICH 4.0.2 on x86_64");
    assert_eq!(fit["kind"], "no");
    let why = text(&fit["why"]);
    for part in [
        "it was made for build-id 15ff29242f0f6336eb8096d953e03de259b65bb4",
        &format!("not this build (build-id {build_id})"),
        "it declares no release family",
    ] {
        assert!(why.contains(part), "{part:?} missing: {why}");
    }
    assert_eq!(id["layouts"]["source"], "none");
    let missing = text(&id["layouts"]["text"]);
    for part in [
        "its DWARF leaves".to_string(),
        format!("no profile is made for build-id {build_id}"),
        format!("no profile's release family holds MPICH {version} on x86_64"),
    ] {
        assert!(missing.contains(&part), "{part:?} missing: {missing}");
    }
    let refusal = text(&id["layouts"]["refusal"]);
    assert!(refusal.contains("Ways out"), "{refusal}");
    common::scratch::remove_unless_failed(&scratch);
}

/// What identify says of a process of Debian's MPICH (live or a core):
/// the profile made for its build, passing the check on it.
fn check_debian_mpich_process(args: &[&str]) {
    let path = std::fs::canonicalize("/usr/lib/x86_64-linux-gnu/libmpich.so.12").unwrap();
    let id = identify(args);
    assert!(
        text(&id["library"]).ends_with(path.file_name().unwrap().to_str().unwrap()),
        "{id:#}"
    );
    assert_eq!(
        text(&id["build_id"]),
        readelf_build_id(&path).unwrap(),
        "{id:#}"
    );
    assert_eq!(text(&id["stated"]["version"]), debian_version("libmpich12"));
    assert_eq!(id["decoder"]["name"], "mpich-ch4");
    assert_eq!(id["layouts"]["source"], "profile", "{id:#}");
    let process = &id["process"];
    assert_eq!(process["check"]["outcome"], "passed", "{id:#}");
    assert_eq!(process["check_required"], Value::Bool(true));
    assert_eq!(process["reader"]["outcome"], "built", "{id:#}");
}

#[test]
fn a_debian_mpich_process_live_and_from_a_gcore_core() {
    let job = Job::start_ranks(
        &stock_mpich(),
        1,
        "identify-stock-mpich",
        "self_pending",
        &[],
        &[],
        &[] as &[(&str, &str)],
    );
    let pid = job.pid(0);
    check_debian_mpich_process(&["--pid", &pid.to_string()]);
    // Let go: the rank is stopped as it was, not left traced.
    wait_stopped(pid);
    let core = gcore(&job.dir, pid);
    check_debian_mpich_process(&["--core", core.to_str().unwrap()]);
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// A rank of the 5.0.9 wheel: the 5.0 family passes the check on it; the
/// 5.0.11 profile with ob1's receive request 8 bytes longer, named by no
/// build, is offered by the same family and refused by the check, in the
/// one line that says what did not match.
#[test]
fn a_pip_open_mpi_5_0_9_process_through_its_family_and_a_family_whose_layouts_do_not_fit() {
    let venv = ompi_wheel_venv("5.0.9");
    let job = OmpiJob::start_wheel(&venv, "identify-ompi509", "queues", "sm");
    let pid = job.pid(0).to_string();
    let id = identify(&["--pid", &pid]);
    assert_eq!(text(&id["stated"]["version"]), "5.0.9");
    assert_eq!(id["decoder"]["name"], "ompi-ob1");
    assert_eq!(id["layouts"]["source"], "family", "{id:#}");
    assert_eq!(id["process"]["check"]["outcome"], "passed", "{id:#}");
    assert_eq!(id["process"]["reader"]["outcome"], "built", "{id:#}");
    wait_stopped(job.pid(0));

    let mut bent: Value = shipped_profile("openmpi-5.0.11-pip-x86_64");
    for o in bent["identity"]["objects"].as_array_mut().unwrap() {
        o["code_digests"] = Value::Array(Vec::new());
    }
    let request = &mut bent["layouts"]["mca_pml_ob1_recv_request_t"]["size"];
    let size = request.as_u64().unwrap();
    *request = Value::from(size + 8);
    let path = job.dir.join("bent-family.json");
    std::fs::write(&path, serde_json::to_string(&bent).unwrap()).unwrap();
    let id = identify(&["--pid", &pid, "--profile", path.to_str().unwrap()]);
    assert_eq!(id["layouts"]["source"], "family", "{id:#}");
    let check = &id["process"]["check"];
    assert_eq!(check["outcome"], "refused", "{id:#}");
    let line = text(&check["line"]);
    for part in [
        "mca_pml_base_recv_requests".to_string(),
        format!(
            "gives its objects {size} bytes (cls_sizeof), these layouts {}",
            size + 8
        ),
    ] {
        assert!(line.contains(&part), "{part:?} missing: {line}");
    }
    assert!(!line.contains('\n'), "one line: {line}");
    assert_eq!(id["process"]["reader"]["outcome"], "refused");
    wait_stopped(job.pid(0));
    assert_eq!(job.finish(), 0, "the job completes once continued");
}
