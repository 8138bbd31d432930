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

fn queues(args: &[&str]) -> Value {
    let dll = ref_mpich().join("lib/libtvmpich.so");
    let out = mpidd()
        .arg("queues")
        .args(args)
        .arg("--dll")
        .arg(&dll)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpidd queues {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
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

#[test]
fn libtvmpich_live_and_from_gcore_cores() {
    let job = Job::start("mpich-queues", &[]);
    for rank in 0..4 {
        let q = queues(&["--pid", &job.pid(rank).to_string()]);
        check_rank(rank, &q);
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
        let q = queues(&["--core", core.to_str().unwrap()]);
        check_rank(rank, &q);
    }
    assert_eq!(job.finish(), 0, "the job completes once continued");
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
