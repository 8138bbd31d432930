//! `mpidd handle` against a real 4-rank MPICH job built with the reference
//! MPICH (scripts/build-ref-mpich.sh), live and from gcore cores.
//!
//! tests/mpich/handles.c makes handles of every kind with known properties
//! and writes each handle's C and Fortran values, the addresses of its user
//! functions, buffers and status, and the offsets and extents its compiler
//! and MPI computed, to a file per rank. The expectations below come from
//! that file and from the constants of the C source (names, dimensions,
//! tags, info keys), never from mpidd's own output.

mod common;

use common::handle_checks::{check_every_rank, val, Source, Written};
use common::mpich_handle_checks::{check_rank, Device};
use common::mpich_job::Job;
use serde_json::{json, Value};

/// Every rank of `job` (tests/mpich/handles.c, started with its directory
/// as argument), live and then from its gcore core, checked against what
/// the rank wrote down; the job must then complete.
/// The handles of rank `rank` as a program built against the MPI-5
/// standard ABI holds them (`--abi`): the predefined ones by the constants
/// of pip's MPICH 5 `mpi_abi.h` (written here from the header, not from
/// mpidd), the others by the address of MPICH's object, which MPICH's ABI
/// layer hands out.
fn check_abi_handles(source: &Source, w: &Written<i64>) {
    let abi = |kind: &str, value: &str| source.json(&["--kind", kind, "--value", value, "--abi"]);
    // The view of MPICH's handle, as the ABI program holds it: its C
    // handle is the ABI's value, and a predefined one's Fortran INTEGER
    // (`MPI_*_toint`) is the same constant.
    let as_abi = |mut v: Value, c_handle: u64, predefined: bool| {
        v["c_handle"] = json!({ "value": { "pointer": c_handle } });
        if predefined {
            v["fortran_index"] = json!({ "value": c_handle });
        }
        v
    };
    assert_eq!(
        abi("comm", "0x101"),
        as_abi(source.view("comm", w.c("world")), 0x101, true)
    );
    assert_eq!(
        abi("datatype", "0x209"),
        as_abi(source.view("datatype", w.c("mpi_int")), 0x209, true)
    );
    assert_eq!(
        abi("op", "0x21"),
        as_abi(source.view("op", w.c("op_sum")), 0x21, true)
    );
    for (kind, name) in [
        ("comm", "split"),
        ("group", "group"),
        ("datatype", "vector"),
    ] {
        let v = source.view(kind, w.c(name));
        let addr = val(&v["object_address"]).clone();
        let addr = addr
            .as_u64()
            .or_else(|| {
                addr.as_str()
                    .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
            })
            .unwrap_or_else(|| panic!("an object address: {v:#}"));
        assert_eq!(
            abi(kind, &format!("{addr:#x}")),
            as_abi(v, addr, false),
            "{kind} {name} by its object"
        );
        if kind == "group" {
            // A group's object given as a communicator: its handle says so.
            let e = source.error(&["--kind", "comm", "--value", &format!("{addr:#x}"), "--abi"]);
            assert!(e.contains("holds MPICH handle"), "{e}");
        }
    }
    // MPI_INT's constant is no communicator's.
    let e = source.error(&["--kind", "comm", "--value", "0x209", "--abi"]);
    assert!(e.contains("predefines no MPI_Comm"), "{e}");
}

fn every_handle_kind(job: Job, device: Device) {
    check_every_rank(
        &job.dir,
        |r| job.pid(r),
        &[],
        |rank, s, w, full| {
            check_rank(rank, s, w, full, device);
            if full {
                check_abi_handles(s, w);
            }
        },
    );
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

#[test]
fn every_handle_kind_live_and_from_gcore_cores() {
    // handles.c writes what it made to the directory it is given.
    let job = Job::start_program("mpich-handles", "handles", &["{dir}"], &[]);
    every_handle_kind(job, Device::Ch3);
}

/// The same program and expectations on a site's build of the reference
/// CH3 source (`common::site_build`: no DWARF, a build-id no profile
/// names), whose layouts come from the 4.0 ch3:nemesis family of the
/// shipped MPICH profile, checked on each process.
#[test]
fn every_handle_kind_on_a_site_build_of_ch3_through_the_family() {
    use common::site_build::{site_mpich, MPICH_FAMILY, MPICH_SITE};
    use common::supported_builds::Outcome;
    let live = Outcome::begin(MPICH_SITE, MPICH_FAMILY, "handle", "live");
    let cores = Outcome::begin(MPICH_SITE, MPICH_FAMILY, "handle", "core");
    let site = site_mpich();
    let job = Job::start_on(
        &common::mpich_job::ref_mpich(),
        "mpich-handles-site",
        "handles",
        &[],
        &["{dir}"],
        &[("LD_LIBRARY_PATH", site.join("lib"))],
    );
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", job.pid(0))).unwrap();
    let lib = std::fs::canonicalize(site.join("lib/libmpi.so.12")).unwrap();
    assert!(
        maps.contains(lib.to_str().unwrap()),
        "rank 0 is not on the site build"
    );
    // Each rank is read live and then from its core; both pass or the
    // test fails.
    every_handle_kind(job, Device::Ch3);
    live.works();
    cores.works();
}

/// The same program and expectations on Debian 11's own MPICH 3.4.1
/// (ch3:nemesis, stripped, no debugger support), built and run in the
/// Debian 11 root (`$MPIDD_DEBIAN11_ROOT`) and read from the host: the
/// layouts and the hidden pools' addresses come from the profile mpidd
/// ships for that build, checked on each process.
#[test]
fn every_handle_kind_on_debian11_mpich_live_and_from_gcore_cores() {
    use common::debian_root::{assert_ranks_map, host_path, in_root, root};
    use common::supported_builds::Outcome;
    const BUILD: &str = "Debian 11 mpich 3.4.1-5~deb11u1, ch3:nemesis (amd64)";
    const FROM: &str = "the MPICH 3.4.1 profile of its build (mpich-3.4.1-debian11-amd64)";
    let live = Outcome::begin(BUILD, FROM, "handle", "live");
    let cores = Outcome::begin(BUILD, FROM, "handle", "core");
    let root = root(
        "MPIDD_DEBIAN11_ROOT",
        "debian11",
        &["usr/bin/mpicc.mpich", "usr/bin/mpiexec.mpich"],
    );
    let dir = common::scratch::fresh_dir("mpich-handles-debian11");
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mpich/handles.c");
    std::fs::copy(&source, dir.join("handles.c")).unwrap();
    let exe = dir.join("handles");
    let out = in_root(&root, &[&dir])
        .args(["mpicc.mpich", "-g", "-O0", "-o"])
        .arg(&exe)
        .arg(dir.join("handles.c"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc.mpich in the Debian 11 root failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut mpiexec = in_root(&root, &[&dir]);
    mpiexec
        .args(["mpiexec.mpich", "-n", "4"])
        .arg(&exe)
        .arg(&dir);
    let job = Job::launch(mpiexec, 4, dir);
    assert_ranks_map(
        &job.ranks,
        &host_path(&root, "/usr/lib/x86_64-linux-gnu/libmpich.so.12"),
    );
    // A core names the program where the ranks saw it, in the job's
    // directory bound into the root.
    let search = vec!["--search-path".to_string(), job.dir.display().to_string()];
    check_every_rank(
        &job.dir,
        |r| job.pid(r),
        &search,
        |rank, s, w, full| check_rank(rank, s, w, full, Device::Ch3),
    );
    live.works();
    cores.works();
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// The same program and expectations on the reference MPICH with the CH4
/// device (`scripts/build-ref-mpich.sh ch4`), where requests keep their
/// peer and tag elsewhere (see [`Device::Ch4Ucx`]).
#[test]
fn every_handle_kind_on_ch4_live_and_from_gcore_cores() {
    let prefix = common::mpich_job::ref_mpich_ch4();
    let job = Job::start_on(
        &prefix,
        "mpich-handles-ch4",
        "handles",
        &[],
        &["{dir}"],
        &[] as &[(&str, &str)],
    );
    every_handle_kind(job, Device::Ch4Ucx);
}

/// The same program and expectations on Debian's own MPICH (`libmpich12`,
/// ch4:ucx, stripped, no debugger support), compiled by `mpicc.mpich`
/// without `-g`: the layouts and the hidden pools' addresses come from the
/// profile mpidd ships for that build (docs/stock-mpich.md), which also
/// describes UCX's request (see [`Device::Ch4UcxWithUcxTypes`]).
#[test]
fn every_handle_kind_on_debian_stock_mpich_live_and_from_gcore_cores() {
    let job = Job::start_with(
        &common::mpich_job::stock_mpich(),
        "mpich-handles-stock",
        "handles",
        &[],
        &["{dir}"],
        &[] as &[(&str, &str)],
    );
    every_handle_kind(job, Device::Ch4UcxWithUcxTypes);
}
