//! `libmpiq_mqs.so`, our message-queue library, against the 4-rank
//! reference-MPICH job (tests/mpich/queues.c):
//! - under our own mqs host (`mpidd queues --dll`), live and from cores,
//!   where it must give what libtvmpich.so gives plus the documented
//!   improvements;
//! - under an independent host written in C against MPICH's header
//!   (tests/mqs_host/c_host.c: /proc/PID/mem, libelf symbols, libdw
//!   types), including a host that misuses it;
//! - on an MPICH whose library lost its debug info, where it must say what
//!   is missing;
//! - on the reference MPICH built with CH4 (`ch4:ucx`), under both hosts,
//!   where its layouts come from the callbacks and MPICH's declarations
//!   (mpiq-core/mqs-dll/src/mpich_declarations.rs);
//! - on Debian's stripped Open MPI, under both hosts, live and from cores,
//!   where its layouts come from the shipped profile that the build-ids in
//!   the process's own mapped headers pick
//!   (mpiq-core/mqs-dll/src/loaded_profile.rs), and on the reference Open MPI
//!   through a profile named in `MPIDD_PROFILES`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::mpich_job::{gcore, gcore_each, mpidd, ref_mpich, ref_mpich_ch4, wait_stopped, Job};
use common::ompi_job::{shipped_profile_with_reference_build_ids, OmpiBuild, OmpiJob};
use common::queue_checks::{
    check_against_libtvmpich, check_rank_ch4, check_rank_ours, native, queues, Ch4Reader,
};
use serde_json::Value;

/// The library, which cargo builds with mpidd (it is a dependency).
fn our_library() -> PathBuf {
    common::queue_checks::our_mqs_library()
}

fn ours(args: &[&str]) -> Value {
    ours_with_profiles(args, None)
}

/// [`ours`], with `MPIDD_PROFILES` set to `profiles` for the library.
fn ours_with_profiles(args: &[&str], profiles: Option<&Path>) -> Value {
    let mut cmd = mpidd();
    if let Some(p) = profiles {
        cmd.env("MPIDD_PROFILES", p);
    }
    let out = cmd
        .arg("queues")
        .args(args)
        .arg("--dll")
        .arg(our_library())
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The C host, compiled against the reference MPICH's mpi_interface.h,
/// once for all the tests (they run in parallel, and one must not write
/// the file while another runs it).
fn c_host() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_c_host).clone()
}

fn build_c_host() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("c_host");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mqs_host/c_host.c");
    let out = Command::new("gcc")
        .args(["-O1", "-Wall", "-Werror", "-Wno-format-security", "-I"])
        .arg(ref_mpich().join("include"))
        .arg("-o")
        .arg(&exe)
        .arg(src)
        .args(["-ldw", "-lelf", "-ldl"])
        .output()
        .expect("gcc");
    assert!(
        out.status.success(),
        "building the C host failed (scripts/test.sh installs libdw-dev and libelf-dev):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// What the C host printed.
struct HostRun {
    image: String,
    process: String,
    comms: Vec<Vec<String>>,
    ops: Vec<Vec<String>>,
    hostile: Vec<(String, String)>,
    /// What the library handed to the host's `mqs_dprints`.
    log: Vec<String>,
}

fn run_c_host(host: &Path, library: &Path, pid: i32, rank: i64, hostile: bool) -> HostRun {
    run_c_host_with(host, library, pid, rank, hostile, None)
}

/// [`run_c_host`], with `MPIDD_PROFILES` set to `profiles` for the library.
fn run_c_host_with(
    host: &Path,
    library: &Path,
    pid: i32,
    rank: i64,
    hostile: bool,
    profiles: Option<&Path>,
) -> HostRun {
    let mut cmd = Command::new(host);
    if let Some(p) = profiles {
        cmd.env("MPIDD_PROFILES", p);
    }
    cmd.arg(library).arg(pid.to_string()).arg(rank.to_string());
    if hostile {
        cmd.arg("hostile");
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the C host failed ({:?}):\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut run = HostRun {
        image: String::new(),
        process: String::new(),
        comms: Vec::new(),
        ops: Vec::new(),
        hostile: Vec::new(),
        log: String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter_map(|l| l.strip_prefix("library: "))
            .map(str::to_string)
            .collect(),
    };
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        match kind {
            "image" => {
                // The message may span lines (the vendor's does).
                let mut m = rest.to_string();
                while let Some(next) = lines.peek() {
                    if next.starts_with("process ") || next.starts_with("end ") {
                        break;
                    }
                    m.push('\n');
                    m.push_str(lines.next().unwrap());
                }
                run.image = m;
            }
            "process" => run.process = rest.to_string(),
            "comm" => run
                .comms
                .push(rest.split('|').map(str::to_string).collect()),
            "op" => run.ops.push(rest.split('|').map(str::to_string).collect()),
            "hostile" => {
                let (what, code) = rest.split_once(' ').unwrap();
                run.hostile.push((what.to_string(), code.to_string()));
            }
            _ => {}
        }
    }
    run
}

/// (class, desired local rank, desired global rank, tag wild, desired tag,
/// desired length) of each operation, as our library must report them for
/// what tests/mpich/queues.c posted: world ranks, -1 for MPI_ANY_SOURCE,
/// lengths in bytes.
fn expected_ops(rank: i64) -> Vec<[&'static str; 6]> {
    let mut v = match rank {
        0 => vec![
            ["1", "1", "1", "0", "11", "40"],
            ["2", "1", "1", "0", "99", "20"],
            ["1", "1", "2", "1", "-1", "120"],
            ["1", "-1", "-1", "0", "22", "80"],
            ["2", "1", "1", "0", "44", "12"],
        ],
        1 => vec![["0", "0", "0", "0", "44", "12"]],
        2 => vec![["0", "3", "3", "0", "33", "1048576"]],
        3 => vec![["2", "2", "2", "0", "33", "1048576"]],
        _ => unreachable!(),
    };
    v.sort();
    v
}

#[test]
fn under_our_host_and_an_independent_c_host() {
    let host = c_host();
    let library = our_library();
    let vendor = ref_mpich().join("lib/libtvmpich.so");
    let job = Job::start("mqs-library", &[]);
    for rank in 0..4 {
        let pid = job.pid(rank);
        let pid_arg = pid.to_string();
        // Our host.
        let q = ours(&["--pid", &pid_arg]);
        check_rank_ours(rank, &q, false);
        check_against_libtvmpich(&q, &queues(&["--pid", &pid_arg]));

        // The C host, with our library and with the vendor's.
        let run = run_c_host(&host, &library, pid, rank, false);
        assert!(
            run.image
                .starts_with("0 mpiq_mqs: the image has MPICH's message queues"),
            "{}",
            run.image
        );
        assert_eq!(run.process, "0 ok");
        let world = run
            .comms
            .iter()
            .find(|c| c[0] == "MPI_COMM_WORLD")
            .expect("MPI_COMM_WORLD");
        assert_eq!(
            (world[1].as_str(), world[2].as_str()),
            ("4", rank.to_string().as_str())
        );
        assert_eq!(world[4], "group 0 1 2 3", "mqs_get_comm_group");
        let mut got: Vec<[&str; 6]> = run
            .ops
            .iter()
            .map(|o| {
                [
                    o[0].as_str(),
                    o[2].as_str(),
                    o[3].as_str(),
                    o[4].as_str(),
                    o[5].as_str(),
                    o[6].as_str(),
                ]
            })
            .collect();
        got.sort();
        assert_eq!(got, expected_ops(rank), "rank {rank} through the C host");
        let theirs = run_c_host(&host, &vendor, pid, rank, false);
        assert_eq!(
            theirs.comms.len(),
            run.comms.len(),
            "the same communicators"
        );
        assert_eq!(theirs.ops.len(), run.ops.len(), "the same operations");
        wait_stopped(pid);
    }
    // From gcore cores, under our host.
    for rank in [0, 3] {
        let pid = job.pid(rank);
        let core = gcore(&job.dir, pid);
        let core = core.to_str().unwrap();
        let q = ours(&["--core", core]);
        check_rank_ours(rank, &q, false);
        check_against_libtvmpich(&q, &queues(&["--core", core]));
    }
    assert_eq!(job.finish(), 0);
}

#[test]
fn a_careless_host_gets_error_codes_not_crashes() {
    let host = c_host();
    let job = Job::start("mqs-library-hostile", &[]);
    let run = run_c_host(&host, &our_library(), job.pid(0), 0, true);
    let code = |what: &str| -> String {
        run.hostile
            .iter()
            .find(|(w, _)| w == what)
            .map(|(_, c)| c.clone())
            .unwrap_or_else(|| panic!("no {what} in {:?}", run.hostile))
    };
    // The codes are the library's documented ones (mpiq_mqs::ERR_*).
    assert_eq!(
        code("next_after_end"),
        "2",
        "mqs_end_of_list again, where vendor libraries follow NULL"
    );
    assert_eq!(
        code("get_after_end"),
        mpiq_mqs::ERR_NO_COMMUNICATOR.to_string()
    );
    assert_eq!(
        code("unknown_process"),
        mpiq_mqs::ERR_NOT_SET_UP.to_string()
    );
    assert_eq!(
        code("unknown_process_update"),
        mpiq_mqs::ERR_NOT_SET_UP.to_string()
    );
    assert_eq!(code("null_communicator"), mpiq_mqs::ERR_NULL.to_string());
    assert_eq!(code("bad_op_class"), mpiq_mqs::ERR_BAD_OP_CLASS.to_string());
    assert_eq!(code("null_operation"), mpiq_mqs::ERR_NULL.to_string());
    let failing = code("failing_reads");
    assert!(
        failing.starts_with(&format!("{} ", mpiq_mqs::ERR_DECODE))
            && failing.contains("mqs_fetch_data"),
        "a process whose reads fail: {failing}"
    );
    assert_eq!(job.finish(), 0);
}

#[test]
fn an_mpich_without_debug_info_is_told_what_is_missing() {
    // The same program against a copy of the reference libmpi whose DWARF
    // was stripped (its symbol table stays, as in a distribution package).
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stripped-mpich");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("libmpi.so.12");
    std::fs::copy(ref_mpich().join("lib/libmpi.so.12"), &lib).unwrap();
    let out = Command::new("strip")
        .arg("--strip-debug")
        .arg(&lib)
        .output()
        .expect("strip (binutils)");
    assert!(out.status.success());
    let job = Job::start_with_env("mqs-library-stripped", &[], &[("LD_LIBRARY_PATH", &dir)]);
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", job.pid(0))).unwrap();
    assert!(
        maps.contains(lib.to_str().unwrap()),
        "the job runs on the stripped copy"
    );
    let run = run_c_host(&c_host(), &our_library(), job.pid(0), 0, false);
    assert!(
        run.image
            .starts_with(&format!("{} ", mpiq_mqs::ERR_UNSUPPORTED)),
        "{}",
        run.image
    );
    for needle in [
        "lacks what MPICH's message queues need",
        "`MPIR_Comm_list`",
        "`MPIR_Request`",
        "--enable-debuginfo",
    ] {
        assert!(run.image.contains(needle), "{needle} in: {}", run.image);
    }
    // Our own host says the same through mpidd.
    let out = mpidd()
        .args(["queues", "--pid", &job.pid(0).to_string(), "--dll"])
        .arg(our_library())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("MPIR_Comm_list"), "{stderr}");
    assert_eq!(job.finish(), 0);
}

/// The CH4 decoder through our library: the queues job on the CH4
/// reference build, under our host live and from cores, and under the C
/// host live. What each rank must show comes from the program
/// ([`check_rank_ch4`]); through the interface as through the native
/// decoder, field for field.
#[test]
fn serves_mpich_ch4_under_our_host_and_an_independent_c_host() {
    let host = c_host();
    let library = our_library();
    let job = Job::start_on(
        &ref_mpich_ch4(),
        "mqs-library-ch4",
        "queues",
        &[],
        &[],
        &[] as &[(&str, &str)],
    );
    let same_as_native = |args: &[&str]| {
        let q = ours(args);
        let left: mpiq_core::model::ProcessQueues = serde_json::from_value(native(args)).unwrap();
        let right: mpiq_core::model::ProcessQueues = serde_json::from_value(q.clone()).unwrap();
        let differences = mpiq_core::compare::compare(&left, &right);
        assert!(
            differences.is_empty(),
            "our library and the native decoder differ on {args:?}: {differences:#?}"
        );
        q
    };
    for rank in 0..4 {
        let pid = job.pid(rank);
        let pid_arg = pid.to_string();
        check_rank_ch4(
            rank,
            &same_as_native(&["--pid", &pid_arg]),
            Ch4Reader::OurLibrary,
        );

        let run = run_c_host(&host, &library, pid, rank, false);
        assert!(
            run.image
                .starts_with("0 mpiq_mqs: the image has MPICH's CH4 message queues"),
            "{}",
            run.image
        );
        assert_eq!(run.process, "0 ok");
        let comm = |name: &str| {
            run.comms
                .iter()
                .find(|c| c[0] == name)
                .unwrap_or_else(|| panic!("no {name} in {:?}", run.comms))
        };
        let world = comm("MPI_COMM_WORLD");
        assert_eq!(
            (world[1].as_str(), world[2].as_str(), world[4].as_str()),
            ("4", rank.to_string().as_str(), "group 0 1 2 3"),
            "size, rank and mqs_get_comm_group"
        );
        let (split, members) = if rank % 2 == 0 {
            ("mpidd_split_even", "group 0 2")
        } else {
            ("mpidd_split_odd", "group 1 3")
        };
        assert_eq!(
            comm(split)[4],
            members,
            "world ranks from CH4's rank map, through declared members of unnamed types"
        );
        // (class, desired local rank, global rank, tag wild, tag, length),
        // from the program: rank 0's three receives and rank 1's two
        // messages waiting in UCX's worker, rank 2's 1 MiB send, and its
        // rendezvous announcement at rank 3. Rank 1's eager MPI_Isend may
        // have completed before the stop.
        let mut got: Vec<[&str; 6]> = run
            .ops
            .iter()
            .map(|o| [&o[0], &o[2], &o[3], &o[4], &o[5], &o[6]].map(String::as_str))
            .collect();
        got.sort();
        let mut expected: Vec<[&str; 6]> = match rank {
            0 => vec![
                ["1", "1", "1", "0", "11", "40"],
                ["1", "-1", "-1", "0", "22", "80"],
                ["1", "1", "2", "1", "-1", "120"],
                ["2", "1", "1", "0", "99", "20"],
                ["2", "1", "1", "0", "44", "12"],
            ],
            1 if !got.is_empty() => vec![["0", "0", "0", "0", "44", "12"]],
            2 => vec![["0", "3", "3", "0", "33", "1048576"]],
            3 => vec![["2", "2", "2", "0", "33", "1048576"]],
            _ => vec![],
        };
        expected.sort();
        assert_eq!(got, expected, "rank {rank} through the C host");
        let unread = run
            .log
            .iter()
            .filter(|l| l.starts_with("mpiq_mqs: a pending") || l.contains("UCX's types"))
            .count();
        assert_eq!(
            unread, 0,
            "every operation read through UCX's layouts: {:#?}",
            run.log
        );
        wait_stopped(pid);
    }
    let rank_cores = gcore_each(&job.dir, &[job.pid(0), job.pid(1), job.pid(2), job.pid(3)]);
    for rank in 0..4 {
        let core = &rank_cores[rank as usize];
        check_rank_ch4(
            rank,
            &same_as_native(&["--core", core.to_str().unwrap()]),
            Ch4Reader::OurLibrary,
        );
    }
    assert_eq!(job.finish(), 0);
}

/// Our library's reading of `args` equals the native decoder's on every
/// field the interface carries.
fn ours_same_as_native(args: &[&str], profiles: Option<&Path>) -> Value {
    let q = ours_with_profiles(args, profiles);
    let left: mpiq_core::model::ProcessQueues = serde_json::from_value(native(args)).unwrap();
    let right: mpiq_core::model::ProcessQueues = serde_json::from_value(q.clone()).unwrap();
    let differences = mpiq_core::compare::compare(&left, &right);
    assert!(
        differences.is_empty(),
        "our library and the native decoder differ on {args:?}: {differences:#?}"
    );
    q
}

/// What the C host must print for a reading: each communicator's name,
/// size, rank and world ranks, and each operation's class, desired peer
/// (local and world), wildcard, tag and length and actual peer, tag and
/// length, in the interface's order (sends, receives, unexpected).
fn c_host_view(q: &Value) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let mut comms = Vec::new();
    let mut ops = Vec::new();
    for c in q["communicators"].as_array().unwrap() {
        let mut group = "group".to_string();
        for r in c["group"].as_array().into_iter().flatten() {
            group.push_str(&format!(" {r}"));
        }
        comms.push(vec![
            c["name"].as_str().unwrap().to_string(),
            c["size"].to_string(),
            c["local_rank"].to_string(),
            group,
        ]);
        for (class, queue) in [
            (0, "pending_sends"),
            (1, "pending_receives"),
            (2, "unexpected_messages"),
        ] {
            for op in c[queue]["operations"].as_array().into_iter().flatten() {
                let tag_wild = u8::from(op["tag_wild"] == true);
                ops.push(
                    [
                        class.to_string(),
                        op["desired_local_rank"].to_string(),
                        op["desired_global_rank"].to_string(),
                        tag_wild.to_string(),
                        op["desired_tag"].to_string(),
                        op["desired_length"].to_string(),
                        op["actual_local_rank"].to_string(),
                        op["actual_tag"].to_string(),
                        op["actual_length"].to_string(),
                    ]
                    .to_vec(),
                );
            }
        }
    }
    (comms, ops)
}

/// The same fields of what the C host printed.
fn c_host_printed(run: &HostRun) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let comms = run
        .comms
        .iter()
        .map(|c| vec![c[0].clone(), c[1].clone(), c[2].clone(), c[4].clone()])
        .collect();
    let ops = run
        .ops
        .iter()
        .map(|o| {
            [0, 2, 3, 4, 5, 6, 8, 10, 11]
                .iter()
                .map(|&i| o[i].clone())
                .collect()
        })
        .collect();
    (comms, ops)
}

/// Open MPI through our library, on `job`: under our host live and from
/// cores, equal to the native decoder (which ompi_queues.rs checks against
/// what the program posted), and under the C host live, where every
/// communicator and operation it prints is the native decoder's. `pml` is
/// how the library names the PML the job runs on.
fn serves_open_mpi(job: &OmpiJob, profiles: Option<&Path>, pml: &str) {
    let host = c_host();
    let library = our_library();
    let mut operations = 0;
    for rank in 0..4 {
        let pid = job.pid(rank);
        let p = pid.to_string();
        let q = ours_same_as_native(&["--pid", &p], profiles);
        assert_eq!(q["global_rank"], rank);
        assert!(
            q["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d.as_str().unwrap().contains("profile of Open MPI 4.1.4")),
            "the library says where its layouts come from: {:#}",
            q["diagnostics"]
        );
        wait_stopped(pid);

        let run = run_c_host_with(&host, &library, pid, rank, false, profiles);
        assert!(
            run.image.starts_with(&format!(
                "0 mpiq_mqs: the image has Open MPI's message queues ({pml})"
            )),
            "{}",
            run.image
        );
        assert_eq!(run.process, "0 ok");
        let native_now = native(&["--pid", &p]);
        assert_eq!(
            c_host_printed(&run),
            c_host_view(&native_now),
            "rank {rank} through the C host"
        );
        operations += run.ops.len();
        wait_stopped(pid);

        let core = gcore(&job.dir, pid);
        ours_same_as_native(&["--core", core.to_str().unwrap()], profiles);
    }
    // queues.c leaves 10 operations over its ranks: 3 receives and 2
    // unexpected messages at rank 0, a send at each other rank and an
    // unexpected message at ranks 2 and 3; 9 where the PML completed rank
    // 1's eager send at once (UCX's does).
    assert!(operations >= 9, "the job leaves operations: {operations}");
}

/// Debian's own Open MPI, stripped, with the program built without debug
/// info: nothing a debugger's type callbacks could answer.
#[test]
fn serves_debians_stock_open_mpi_under_our_host_and_an_independent_c_host() {
    let job = OmpiJob::start_without_debug_info(OmpiBuild::Debian, "mqs-library-ompi", "queues");
    serves_open_mpi(&job, None, "ob1");
    assert_eq!(job.finish(), 0);
}

/// The same over Open MPI's UCX PML, whose queues are UCX's worker's, read
/// through the Open MPI and UCX profiles mpidd ships.
#[test]
fn serves_debians_stock_open_mpi_over_its_ucx_pml() {
    let job = OmpiJob::start_on_ucx(OmpiBuild::Debian, "mqs-library-ompi-ucx", "queues");
    serves_open_mpi(&job, None, "the UCX PML");
    assert_eq!(job.finish(), 0);
}

/// The reference Open MPI, whose build-ids no shipped profile lists: our
/// library reads it through the 4.1 release family of Debian 12's 4.1.4
/// profile (the same source and configuration, so the same layouts), and
/// says so; named in `MPIDD_PROFILES`, a profile made for its very build
/// is read instead.
#[test]
fn serves_the_reference_open_mpi_through_a_profile_named_in_mpidd_profiles() {
    let job = OmpiJob::start("mqs-library-ompi-ref", "queues");
    let p = job.pid(0).to_string();
    let out = mpidd()
        .args(["queues", "--pid", &p, "--dll"])
        .arg(our_library())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("mpiq_mqs: the layouts come from the family Open MPI 4.1")
            && text.contains("states version 4.1.4"),
        "the library names the family and the version that chose it: {text}"
    );
    assert!(text.contains("communicator \"mpidd_dup\""), "{text}");
    wait_stopped(job.pid(0));

    let profile = shipped_profile_with_reference_build_ids();
    let file = job.dir.join("reference-profile.json");
    std::fs::write(&file, profile.to_json()).unwrap();
    serves_open_mpi(&job, Some(&file), "ob1");
    assert_eq!(job.finish(), 0);
}

/// Debian's own MPICH, stripped and without debugger support, with the
/// program built without debug info: the debugger's symbol lookup does not
/// see the globals the decoders start from, nor its type callbacks any
/// type. Our library places those globals and takes the layouts from the
/// profile of the build the process has loaded, under our host (live and
/// from cores, equal to the native decoder, which stock_mpich.rs checks
/// against what the program posted) and under the independent C host,
/// which prints every communicator and operation the native decoder reads.
#[test]
fn serves_debians_stock_mpich_under_our_host_and_an_independent_c_host() {
    let host = c_host();
    let library = our_library();
    let job = Job::start_with(
        &common::mpich_job::stock_mpich(),
        "mqs-library-stock-mpich",
        "queues",
        &[],
        &[],
        &[] as &[(&str, &str)],
    );
    for rank in 0..4 {
        let pid = job.pid(rank);
        let p = pid.to_string();
        ours_same_as_native(&["--pid", &p], None);
        wait_stopped(pid);

        let run = run_c_host(&host, &library, pid, rank, false);
        assert!(
            run.image
                .starts_with("0 mpiq_mqs: the image is MPICH built without debugger support"),
            "{}",
            run.image
        );
        assert_eq!(run.process, "0 ok");
        assert!(
            run.log
                .iter()
                .any(|l| l.contains("the layouts come from the profile of MPICH 4.0.2")),
            "the library says where its layouts come from: {:#?}",
            run.log
        );
        let native_now = native(&["--pid", &p]);
        assert_eq!(
            c_host_printed(&run),
            c_host_view(&native_now),
            "rank {rank} through the C host"
        );
        wait_stopped(pid);

        let core = gcore(&job.dir, pid);
        ours_same_as_native(&["--core", core.to_str().unwrap()], None);
    }
    assert_eq!(job.finish(), 0);
}
