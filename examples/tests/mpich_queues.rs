//! `mpidd queues --dll libtvmpich.so` against a real 4-rank MPICH job built
//! with the reference MPICH (scripts/build-ref-mpich.sh), live and from
//! gcore cores. What the queues must hold is known from the program's
//! source (tests/mpich/queues.c), not from our output.
//!
//! Also: Debian's own Open MPI message-queue library against Debian's
//! stripped Open MPI must fail with a clear "debug info missing" message.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

fn ref_mpich() -> PathBuf {
    let prefix = std::env::var_os("MPIDD_REF_MPICH")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/mpidd/mpich-4.0.2")
        });
    assert!(
        prefix.join("lib/libtvmpich.so").exists(),
        "the reference MPICH is not built at {}: run `bash scripts/build-ref-mpich.sh` \
         (scripts/test.sh does)",
        prefix.display()
    );
    prefix
}

fn mpidd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mpidd"))
}

/// A running `mpiexec -n 4 queues` whose ranks have stopped themselves.
/// Dropping it continues the ranks and ends the job, so a failed assertion
/// leaves nothing stopped behind.
struct Job {
    mpiexec: Child,
    /// (rank, pid), by rank.
    ranks: Vec<(i64, i32)>,
    dir: PathBuf,
}

impl Job {
    fn start(name: &str, args: &[&str]) -> Job {
        let prefix = ref_mpich();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("queues");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mpich/queues.c");
        let out = Command::new(prefix.join("bin/mpicc"))
            .args(["-g", "-O0", "-o"])
            .arg(&exe)
            .arg(src)
            .output()
            .expect("run the reference mpicc");
        assert!(
            out.status.success(),
            "mpicc failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut mpiexec = Command::new(prefix.join("bin/mpiexec.hydra"))
            .args(["-n", "4"])
            .arg(&exe)
            .args(args)
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start mpiexec.hydra");
        let stdout = mpiexec.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut job = Job {
            mpiexec,
            ranks: Vec::new(),
            dir,
        };
        while job.ranks.len() < 4 {
            let line = rx
                .recv_timeout(Duration::from_secs(120))
                .expect("the 4 ranks print READY within 2 minutes");
            let mut words = line.split_whitespace();
            if words.next() == Some("READY") {
                let rank = words.next().unwrap().parse().unwrap();
                let pid = words.next().unwrap().parse().unwrap();
                job.ranks.push((rank, pid));
            }
        }
        job.ranks.sort();
        for &(_, pid) in &job.ranks {
            wait_stopped(pid);
        }
        job
    }

    fn pid(&self, rank: i64) -> i32 {
        self.ranks[rank as usize].1
    }

    /// Continues the ranks and returns mpiexec's exit status.
    fn finish(mut self) -> i32 {
        for &(_, pid) in &self.ranks {
            let _ = Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status();
        }
        let status = wait_timeout(&mut self.mpiexec, Duration::from_secs(120));
        self.ranks.clear();
        status
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if self.ranks.is_empty() {
            return;
        }
        for &(_, pid) in &self.ranks {
            let _ = Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status();
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        let _ = self.mpiexec.kill();
        let _ = self.mpiexec.wait();
    }
}

fn wait_timeout(child: &mut Child, limit: Duration) -> i32 {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        assert!(
            start.elapsed() < limit,
            "mpiexec did not end within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_stopped(pid: i32) {
    for _ in 0..600 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]);
        if state == Some("T") {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("rank process {pid} did not stop itself");
}

/// `mpidd queues ARGS --json`, through libtvmpich.so when `dll`.
fn queues_with(args: &[&str], dll: bool) -> Value {
    let mut cmd = mpidd();
    cmd.arg("queues").args(args).arg("--json");
    if dll {
        cmd.arg("--dll").arg(ref_mpich().join("lib/libtvmpich.so"));
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "mpidd queues {args:?} (dll: {dll}) failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn queues(args: &[&str]) -> Value {
    queues_with(args, true)
}

fn native(args: &[&str]) -> Value {
    queues_with(args, false)
}

fn comm<'a>(q: &'a Value, name: &str) -> &'a Value {
    q["communicators"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no communicator {name} in {q:#}"))
}

fn ops<'a>(c: &'a Value, queue: &str) -> &'a Vec<Value> {
    assert_eq!(
        c[queue]["state"], "read",
        "{queue} of {}: {:#}",
        c["name"], c[queue]
    );
    c[queue]["operations"].as_array().unwrap()
}

fn total_operations(q: &Value) -> usize {
    q["communicators"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| ["pending_sends", "pending_receives", "unexpected_messages"].map(|k| &c[k]))
        .map(|queue| queue["operations"].as_array().map_or(0, Vec::len))
        .sum()
}

/// Checks one rank's queues against what tests/mpich/queues.c posted.
fn check_rank(rank: i64, q: &Value) {
    assert_eq!(q["global_rank"], rank, "rank read from MPIR_Process");
    let world = comm(q, "MPI_COMM_WORLD");
    assert_eq!(world["size"], 4);
    assert_eq!(world["local_rank"], rank);
    let dup = comm(q, "mpidd_dup");
    assert_eq!(
        (dup["size"].as_i64(), dup["local_rank"].as_i64()),
        (Some(4), Some(rank))
    );
    let split = comm(
        q,
        if rank % 2 == 0 {
            "mpidd_split_even"
        } else {
            "mpidd_split_odd"
        },
    );
    assert_eq!(
        (split["size"].as_i64(), split["local_rank"].as_i64()),
        (Some(2), Some(rank / 2))
    );
    match rank {
        // What MPICH's library gives: global ranks -1 (it does not
        // translate), lengths in elements for receives and sends, and no
        // length for unexpected messages.
        0 => {
            assert_eq!(total_operations(q), 5, "{q:#}");
            let r = ops(world, "pending_receives");
            assert_eq!(r.len(), 1);
            assert_eq!(r[0]["status"], "pending");
            assert_eq!(r[0]["desired_local_rank"], 1);
            assert_eq!(r[0]["tag_wild"], false);
            assert_eq!(r[0]["desired_tag"], 11);
            assert_eq!(r[0]["desired_length"], 10, "10 ints");
            let u = ops(world, "unexpected_messages");
            assert_eq!(u.len(), 1);
            assert_eq!(u[0]["actual_local_rank"], 1);
            assert_eq!(u[0]["actual_tag"], 99);
            let r = ops(dup, "pending_receives");
            assert_eq!(r.len(), 1);
            assert_eq!(r[0]["desired_local_rank"], -1, "MPI_ANY_SOURCE");
            assert_eq!(r[0]["desired_tag"], 22);
            assert_eq!(r[0]["tag_wild"], false);
            assert_eq!(r[0]["desired_length"], 20);
            let u = ops(dup, "unexpected_messages");
            assert_eq!(u.len(), 1);
            assert_eq!(u[0]["actual_local_rank"], 1);
            assert_eq!(u[0]["actual_tag"], 44);
            let r = ops(split, "pending_receives");
            assert_eq!(r.len(), 1);
            assert_eq!(
                r[0]["desired_local_rank"], 1,
                "world rank 2 is rank 1 of the even split"
            );
            assert_eq!(r[0]["tag_wild"], true, "MPI_ANY_TAG");
            assert_eq!(r[0]["desired_length"], 30);
        }
        1 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let s = ops(dup, "pending_sends");
            assert_eq!(s.len(), 1);
            assert_eq!(s[0]["desired_local_rank"], 0);
            assert_eq!(s[0]["desired_tag"], 44);
            assert_eq!(s[0]["desired_length"], 3);
            assert_eq!(s[0]["extra_text"][0], "Non-blocking send");
        }
        2 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let s = ops(world, "pending_sends");
            assert_eq!(s.len(), 1);
            assert_eq!(
                s[0]["status"], "pending",
                "too large to complete unreceived"
            );
            assert_eq!(s[0]["desired_local_rank"], 3);
            assert_eq!(s[0]["desired_tag"], 33);
            assert_eq!(s[0]["desired_length"], 1 << 18);
        }
        3 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let u = ops(world, "unexpected_messages");
            assert_eq!(u.len(), 1);
            assert_eq!(u[0]["actual_local_rank"], 2);
            assert_eq!(u[0]["actual_tag"], 33);
        }
        _ => unreachable!(),
    }
}

/// Checks the native decoder's reading of one rank against what
/// tests/mpich/queues.c posted, with what it adds over the vendor library:
/// world ranks, MPI_ANY_SOURCE as -1, lengths in bytes (ints are 4 bytes)
/// with the element count alongside.
fn check_rank_native(rank: i64, q: &Value) {
    assert_eq!(q["global_rank"], rank);
    let world = comm(q, "MPI_COMM_WORLD");
    assert_eq!(
        (world["size"].as_i64(), world["local_rank"].as_i64()),
        (Some(4), Some(rank))
    );
    assert_eq!(world["group"], serde_json::json!([0, 1, 2, 3]));
    let dup = comm(q, "mpidd_dup");
    let split = comm(
        q,
        if rank % 2 == 0 {
            "mpidd_split_even"
        } else {
            "mpidd_split_odd"
        },
    );
    let members = if rank % 2 == 0 { [0, 2] } else { [1, 3] };
    assert_eq!(
        split["group"],
        serde_json::json!(members),
        "the split's world ranks"
    );
    match rank {
        0 => {
            assert_eq!(total_operations(q), 5, "{q:#}");
            let r = &ops(world, "pending_receives")[0];
            assert_eq!(
                (
                    r["desired_local_rank"].as_i64(),
                    r["desired_global_rank"].as_i64()
                ),
                (Some(1), Some(1))
            );
            assert_eq!(
                (r["desired_tag"].as_i64(), r["tag_wild"].as_bool()),
                (Some(11), Some(false))
            );
            assert_eq!(
                (r["desired_length"].as_i64(), r["desired_count"].as_i64()),
                (Some(40), Some(10))
            );
            let u = &ops(world, "unexpected_messages")[0];
            assert_eq!(
                (
                    u["actual_local_rank"].as_i64(),
                    u["actual_global_rank"].as_i64()
                ),
                (Some(1), Some(1))
            );
            assert_eq!(
                (u["actual_tag"].as_i64(), u["actual_length"].as_i64()),
                (Some(99), Some(20))
            );
            assert_eq!(
                u["system_buffer"], true,
                "eager data waits in a library buffer"
            );
            let r = &ops(dup, "pending_receives")[0];
            assert_eq!(
                (
                    r["desired_local_rank"].as_i64(),
                    r["desired_global_rank"].as_i64()
                ),
                (Some(-1), Some(-1))
            );
            assert_eq!(
                (r["desired_tag"].as_i64(), r["desired_length"].as_i64()),
                (Some(22), Some(80))
            );
            let u = &ops(dup, "unexpected_messages")[0];
            assert_eq!(
                (u["actual_tag"].as_i64(), u["actual_length"].as_i64()),
                (Some(44), Some(12))
            );
            let r = &ops(split, "pending_receives")[0];
            assert_eq!(
                (
                    r["desired_local_rank"].as_i64(),
                    r["desired_global_rank"].as_i64()
                ),
                (Some(1), Some(2))
            );
            assert_eq!(
                (r["tag_wild"].as_bool(), r["desired_length"].as_i64()),
                (Some(true), Some(120))
            );
        }
        1 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let s = &ops(dup, "pending_sends")[0];
            assert_eq!(
                (
                    s["desired_local_rank"].as_i64(),
                    s["desired_global_rank"].as_i64()
                ),
                (Some(0), Some(0))
            );
            assert_eq!(
                (s["desired_tag"].as_i64(), s["desired_length"].as_i64()),
                (Some(44), Some(12))
            );
        }
        2 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let s = &ops(world, "pending_sends")[0];
            assert_eq!(s["status"], "pending");
            assert_eq!(
                (s["desired_global_rank"].as_i64(), s["desired_tag"].as_i64()),
                (Some(3), Some(33))
            );
            assert_eq!(
                (s["desired_length"].as_i64(), s["desired_count"].as_i64()),
                (Some(4 << 18), Some(1 << 18))
            );
        }
        3 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let u = &ops(world, "unexpected_messages")[0];
            assert_eq!(
                u["status"], "pending",
                "a rendezvous whose data has not come"
            );
            assert_eq!(
                (u["actual_global_rank"].as_i64(), u["actual_tag"].as_i64()),
                (Some(2), Some(33))
            );
            assert_eq!(u["actual_length"], 4 << 18, "the announced size in bytes");
            assert_eq!(u["system_buffer"], false);
        }
        _ => unreachable!(),
    }
}

/// The native decoder and the vendor library on the same process differ
/// only where the native one adds what the library leaves out.
fn check_comparison(args: &[&str]) {
    let dll = ref_mpich().join("lib/libtvmpich.so");
    let out = mpidd()
        .arg("queues")
        .args(args)
        .arg("--compare-dll")
        .arg(&dll)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for d in v["differences"].as_array().unwrap() {
        let field = d["field"].as_str().unwrap();
        let queue = d["queue"].as_str().unwrap_or("");
        let (left, right) = (d["left"].as_str().unwrap(), d["right"].as_str().unwrap());
        let documented = match field {
            // World ranks: the library leaves -1.
            "desired_global_rank" | "actual_global_rank" => right == "-1",
            // Bytes for the library's element counts (ints). For
            // unexpected messages the library reports the request's
            // user_count, which means nothing before a receive matches
            // (0, or 1 for a rendezvous), where the native decoder gives
            // the message's size.
            "desired_length" | "actual_length" => {
                let (l, r): (i64, i64) = (left.parse().unwrap(), right.parse().unwrap());
                l == r * 4 || queue == "unexpected_messages"
            }
            // Where unexpected eager data waits; the library gives none.
            "system_buffer" | "buffer" => queue == "unexpected_messages",
            // An unmatched receive has no actual peer or tag; the library
            // copies the desired ones (and MPICH's raw -2) there.
            "actual_local_rank" | "actual_tag" => queue == "pending_receives" && left == "-1",
            // The library names unnamed communicators "--unnamed--".
            "name" => left.is_empty() && right == "--unnamed--",
            _ => false,
        };
        assert!(documented, "an undocumented difference: {d:#}");
    }
}

#[test]
fn libtvmpich_live_and_from_gcore_cores() {
    let job = Job::start("mpich-queues", &[]);
    for rank in 0..4 {
        let pid = job.pid(rank).to_string();
        check_rank(rank, &queues(&["--pid", &pid]));
        check_rank_native(rank, &native(&["--pid", &pid]));
        check_comparison(&["--pid", &pid]);
        wait_stopped(job.pid(rank));
    }
    for rank in 0..4 {
        let pid = job.pid(rank);
        let prefix = job.dir.join("core");
        let out = Command::new("gcore")
            .arg("-o")
            .arg(&prefix)
            .arg(pid.to_string())
            .output()
            .expect("gcore (from gdb; scripts/test.sh installs it)");
        assert!(
            out.status.success(),
            "gcore failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let core = job.dir.join(format!("core.{pid}"));
        let core = core.to_str().unwrap();
        check_rank(rank, &queues(&["--core", core]));
        check_rank_native(rank, &native(&["--core", core]));
        check_comparison(&["--core", core]);
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
}

/// One rank posts 100,000 receives; both readers see all of them, in
/// posting order, from the same core. (Their times are in the issue note,
/// measured with scripts/bench-queues.sh, not asserted here.)
#[test]
fn a_hundred_thousand_posted_receives() {
    const N: usize = 100_000;
    let job = Job::start("mpich-queues-scale", &["scale", &N.to_string()]);
    let pid = job.pid(0);
    let out = Command::new("gcore")
        .arg("-o")
        .arg(job.dir.join("core"))
        .arg(pid.to_string())
        .output()
        .expect("gcore");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let core = job.dir.join(format!("core.{pid}"));
    let core = core.to_str().unwrap();
    for q in [native(&["--core", core]), queues(&["--core", core])] {
        let world = comm(&q, "MPI_COMM_WORLD");
        let r = ops(world, "pending_receives");
        assert_eq!(r.len(), N, "{}", q["source"]);
        for (i, op) in r.iter().enumerate() {
            assert_eq!(op["desired_tag"], 1000 + i as i64, "posting order");
            assert_eq!(op["desired_local_rank"], 1);
        }
    }
    assert_eq!(job.finish(), 0);
}

#[test]
fn open_mpi_library_on_stripped_open_mpi_says_debug_info_is_missing() {
    let dll = Path::new("/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/libompi_dbg_msgq.so");
    assert!(
        dll.exists(),
        "{} is missing: install libopenmpi-dev (scripts/test.sh does)",
        dll.display()
    );
    // A real Open MPI job (tests/openmpi/run-job.sh): 2 ranks waiting in
    // main after MPI_Init.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/openmpi/run-job.sh");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ompi-queues");
    let out = Command::new("bash")
        .arg(&script)
        .arg("start")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "starting the Open MPI job failed (scripts/test.sh installs openmpi-bin):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let rank0 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RANK0_PID="))
        .expect("run-job.sh prints RANK0_PID")
        .trim_matches('"')
        .to_string();
    let out = mpidd()
        .args(["queues", "--pid", &rank0, "--rank", "0", "--dll"])
        .arg(dll)
        .output()
        .unwrap();
    let _ = Command::new("bash")
        .arg(&script)
        .arg("stop")
        .arg(&dir)
        .output();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a clean failure, not a crash: {stderr}"
    );
    assert!(stderr.contains("no queues"), "{stderr}");
    assert!(
        stderr.contains("opal_list_item_t"),
        "names the missing type: {stderr}"
    );
    assert!(
        stderr.contains("no .debug_info, which look stripped"),
        "says why: {stderr}"
    );
}
