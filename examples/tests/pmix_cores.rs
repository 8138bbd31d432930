//! `mpidd job --core` on the gcore cores of 4-rank jobs, given all of
//! them or only 3: each rank's own environment tells its PMIx identity
//! and its job's size, so the report must name each rank's namespace as
//! the rank itself printed it, and, given 3 cores, name the missing rank
//! and give no all-clear; the same live, given 3 of the ranks' pids. Pip's
//! Open MPI 5.0.11 (`prterun`, PMIx 5, its `pmix_globals` checked against
//! the environment) runs tests/openmpi5/recv_ring.c; Debian 12's Open MPI
//! 4.1 (`orterun`, PMIx 4.2) and MPICH (Hydra: a size, no PMIx) run
//! tests/mpich/hang_ring.c.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::hung_job::{HangMpi, HungJob};
use common::job_checks::{job_json, run_job};
use common::pip_envs::ompi5_venv;
use mpidd_read::{CoreTarget, Limits, Symbol, SymbolSource, Target, TargetParts};
use mpiq_core::{job_identity, JobIdentity, RankSource};
use serde_json::Value;

/// A target's symbols without libc's `environ`: what the process's PMIx
/// library alone says.
struct WithoutEnviron<'a>(&'a dyn SymbolSource);

impl SymbolSource for WithoutEnviron<'_> {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        match name {
            "environ" | "__environ" => None,
            _ => self.0.lookup(name),
        }
    }

    fn searched_objects(&self) -> Vec<String> {
        self.0.searched_objects()
    }
}

/// The identity `job_identity` reads from `core`, and the one it reads
/// from its PMIx library alone (`None` when that gives nothing).
fn core_identity(core: &Path) -> (JobIdentity, Option<JobIdentity>) {
    let t = CoreTarget::open(core, None, None).expect("open the core");
    let limits = Limits::default();
    let whole = job_identity(&t, &limits).expect("its environment is read");
    let alone = job_identity(
        &TargetParts {
            memory: t.memory(),
            symbols: &WithoutEnviron(t.symbols()),
            layouts: t.layouts(),
        },
        &limits,
    )
    .ok();
    (whole, alone)
}

/// Each core's PMIx library agrees with its environment: the namespace
/// `namespaces[rank]` and the PMIx rank its world rank, read from
/// libpmix's `pmix_globals` as well as from `PMIX_NAMESPACE`. With no
/// namespace (Hydra), no libpmix says anything either.
fn check_pmix_library(what: &str, cores: &[PathBuf], namespaces: &[Option<String>]) {
    for (w, core) in cores.iter().enumerate() {
        let (whole, alone) = core_identity(core);
        assert!(
            whole.notes.is_empty(),
            "{what}: rank {w}: {:?}",
            whole.notes
        );
        let Some(ns) = &namespaces[w] else {
            assert_eq!(whole.namespace, None, "{what}: rank {w}");
            assert!(alone.is_none(), "{what}: rank {w}: {alone:?}");
            continue;
        };
        let env = whole.namespace.expect("a namespace");
        assert_eq!(
            (env.value.as_str(), env.source),
            (ns.as_str(), RankSource::Environment("PMIX_NAMESPACE")),
            "{what}: rank {w}"
        );
        let alone = alone.unwrap_or_else(|| panic!("{what}: rank {w}: no PMIx library id"));
        let lib = alone.namespace.expect("libpmix's namespace");
        assert_eq!(
            (lib.value.as_str(), lib.source),
            (ns.as_str(), RankSource::PmixGlobals),
            "{what}: rank {w}"
        );
        let rank = alone.pmix_rank.expect("libpmix's rank");
        assert_eq!(
            (i64::from(rank.value), rank.source),
            (w as i64, RankSource::PmixGlobals),
            "{what}: rank {w}"
        );
    }
}

/// tests/openmpi5/recv_ring.c built with the wheel's mpicc and run by
/// its mpirun (prterun) as 4 ranks, each blocked in MPI_Recv.
fn pip_recv_ring(name: &str) -> HungJob {
    let venv = ompi5_venv();
    let dir = common::scratch::fresh_dir(name);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/openmpi5/recv_ring.c");
    let exe = dir.join("recv_ring");
    let out = Command::new(venv.join("bin/mpicc"))
        .args(["-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .expect("run pip's mpicc");
    assert!(
        out.status.success(),
        "pip's mpicc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Its session directory in the scratch directory, not in /tmp.
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut launch = Command::new("nice");
    launch
        .args(["-n", "19"])
        .arg(venv.join("bin/mpirun"))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("TMPDIR", &tmp)
        .args(["--oversubscribe", "--mca", "btl", "self,sm", "-n", "4"])
        .arg(&exe);
    HungJob::run(launch, dir, source, "recv_ring")
}

/// What each rank printed of itself: (rank, namespace, size), by rank.
fn printed_identity(job: &HungJob) -> Vec<(i64, String, i64)> {
    let mut said: Vec<(i64, String, i64)> = job
        .output
        .iter()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            match w[..] {
                ["IDENTITY", rank, ns, size] => {
                    Some((rank.parse().ok()?, ns.to_string(), size.parse().ok()?))
                }
                _ => None,
            }
        })
        .collect();
    said.sort();
    assert_eq!(
        said.len(),
        4,
        "one IDENTITY line per rank: {:?}",
        job.output
    );
    said
}

/// The namespace in a live rank's environment, as the kernel keeps it.
fn environ_namespace(pid: i32) -> Option<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    env.split(|&b| b == 0)
        .find_map(|e| e.strip_prefix(b"PMIX_NAMESPACE="))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

/// The job's cores, by world rank.
fn cores(job: &HungJob) -> Vec<PathBuf> {
    let dir = job.gcore_all("cores");
    job.ranks
        .iter()
        .map(|&(_, pid)| dir.join(format!("core.{pid}")))
        .collect()
}

/// `--core C` for each core.
fn core_args(cores: &[PathBuf]) -> Vec<String> {
    cores
        .iter()
        .flat_map(|c| ["--core".to_string(), c.display().to_string()])
        .collect()
}

fn report_of(cores: &[PathBuf]) -> Value {
    let args = core_args(cores);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    job_json(&args)
}

/// Given all 4 cores: each rank's namespace is `namespaces[rank]` (None:
/// no PMIx), its PMIx rank its world rank, its job 4 ranks, and nothing
/// is missing. Given cores of ranks 0, 1 and 3: rank 2 is named missing,
/// in the headline's count and in a finding, and the verdict is no
/// all-clear.
fn check_identity(what: &str, cores: &[PathBuf], namespaces: &[Option<String>]) {
    let report = report_of(cores);
    let ranks = report["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 4, "{what}: {report:#}");
    for (w, r) in ranks.iter().enumerate() {
        assert_eq!(r["world_rank"], w as i64, "{what}");
        assert_eq!(r["job_size"], 4, "{what}: rank {w}: {r:#}");
        match &namespaces[w] {
            Some(ns) => {
                assert_eq!(
                    r["pmix_namespace"].as_str(),
                    Some(ns.as_str()),
                    "{what}: rank {w}"
                );
                assert_eq!(r["pmix_rank"], w as i64, "{what}: rank {w}");
            }
            None => {
                assert!(r.get("pmix_namespace").is_none(), "{what}: rank {w}: {r:#}");
                assert!(r.get("pmix_rank").is_none(), "{what}: rank {w}");
            }
        }
        // Environment and PMIx library agree, and no value was refused.
        let errors = r["errors"].to_string();
        assert!(
            !errors.contains("job identity"),
            "{what}: rank {w}: {errors}"
        );
    }
    let basis = &report["basis"];
    assert_eq!(basis["job_size"], 4, "{what}: {basis:#}");
    assert!(basis.get("missing_ranks").is_none(), "{what}: {basis:#}");
    let kinds: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(
        !kinds.contains(&"missing_ranks") && !kinds.contains(&"mixed_jobs"),
        "{what}: {kinds:?}"
    );
    // The text shows each rank's identity.
    let args = core_args(cores);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let text = run_job(&args);
    let want = match &namespaces[2] {
        Some(ns) => format!("job: PMIx namespace {ns}, PMIx rank 2, of 4 ranks"),
        None => "job: of 4 ranks".to_string(),
    };
    assert!(text.contains(&want), "{what}: no {want:?} in:\n{text}");

    // procs, given a rank's core, says whose rank it is.
    let out = Command::new(env!("CARGO_BIN_EXE_mpidd"))
        .args(["procs", "--core"])
        .arg(&cores[2])
        .output()
        .expect("run mpidd procs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = match &namespaces[2] {
        Some(ns) => format!(
            "this core is an MPI rank's: PMIx namespace {ns} (PMIX_NAMESPACE in its environment), \
             PMIx rank 2 (PMIX_RANK in its environment), a job of 4 ranks"
        ),
        None => {
            "this core is an MPI rank's: a job of 4 ranks (PMI_SIZE in its environment)".to_string()
        }
    };
    assert!(stderr.contains(&want), "{what}: no {want:?} in:\n{stderr}");

    // Rank 2 left out.
    let three = [cores[0].clone(), cores[1].clone(), cores[3].clone()];
    let report = report_of(&three);
    let verdict: Vec<&str> = report["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let headline = verdict[0];
    assert!(
        headline.contains("1 of the job's 4 ranks not read"),
        "{what}: {verdict:#?}"
    );
    for clear in ["No rank waits", "DEADLOCK: every rank"] {
        assert!(!headline.starts_with(clear), "{what}: {verdict:#?}");
    }
    let missing = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "missing_ranks")
        .unwrap_or_else(|| panic!("{what}: no missing_ranks finding: {report:#}"));
    assert_eq!(missing["ranks"], serde_json::json!([2]), "{what}");
    assert!(
        verdict
            .iter()
            .any(|l| l.contains("rank(s) 2 were not read (1 of 4 missing, 3 read)")),
        "{what}: {verdict:#?}"
    );
    assert_eq!(report["basis"]["missing_ranks"], 1, "{what}");
}

/// The same of the live ranks 0, 1 and 3, named by their pids: each
/// one's identity as `namespaces` says, rank 2 named missing.
fn check_live(what: &str, job: &HungJob, namespaces: &[Option<String>]) {
    let pids: Vec<String> = [0, 1, 3].iter().map(|&r| job.pid(r).to_string()).collect();
    let report = job_json(&[
        "--pid",
        &pids[0],
        "--pid",
        &pids[1],
        "--pid",
        &pids[2],
        "--no-stacks",
    ]);
    for r in report["ranks"].as_array().expect("ranks") {
        let w = r["world_rank"].as_i64().unwrap() as usize;
        assert_eq!(
            r["pmix_namespace"].as_str(),
            namespaces[w].as_deref(),
            "{what} live: {r:#}"
        );
        assert_eq!(r["job_size"], 4, "{what} live: rank {w}");
    }
    let missing = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "missing_ranks")
        .unwrap_or_else(|| panic!("{what} live: no missing_ranks finding: {report:#}"));
    assert_eq!(missing["ranks"], serde_json::json!([2]), "{what} live");
    let headline = report["verdict"][0].as_str().unwrap();
    assert!(
        headline.contains("1 of the job's 4 ranks not read"),
        "{what} live: {headline}"
    );
    job.assert_running_within(std::time::Duration::from_secs(10), "after mpidd job");
}

#[test]
fn pip_open_mpi_5_ranks_say_their_pmix_identity_and_a_missing_rank() {
    let job = pip_recv_ring("pmix-cores-pip");
    let printed = printed_identity(&job);
    let namespaces: Vec<Option<String>> = printed
        .iter()
        .map(|(rank, ns, size)| {
            assert_eq!(*size, 4, "rank {rank}'s MPI_COMM_WORLD");
            assert_ne!(ns, "-", "prterun sets PMIX_NAMESPACE");
            Some(ns.clone())
        })
        .collect();
    // One job: one namespace.
    assert!(
        namespaces.iter().all(|n| n == &namespaces[0]),
        "{printed:?}"
    );
    // Each rank maps libpmix with its pmix_globals: the cross-check runs.
    for &(_, pid) in &job.ranks {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
        assert!(maps.contains("libpmix"), "rank {pid} maps no libpmix");
    }
    let cores = cores(&job);
    check_pmix_library("pip's Open MPI 5", &cores, &namespaces);
    check_identity("pip's Open MPI 5", &cores, &namespaces);
    check_live("pip's Open MPI 5", &job, &namespaces);
    // Ranks 0-1 of this job with ranks 2-3 of another: two namespaces.
    let other = pip_recv_ring("pmix-cores-pip-other");
    let other_cores = self::cores(&other);
    let mixed = [
        cores[0].clone(),
        cores[1].clone(),
        other_cores[2].clone(),
        other_cores[3].clone(),
    ];
    let report = report_of(&mixed);
    let headline = report["verdict"][0].as_str().unwrap();
    assert!(headline.starts_with("MIXED JOBS"), "{report:#}");
    let theirs = printed_identity(&other)[0].1.clone();
    assert_ne!(theirs, printed[0].1);
    let names: Vec<&str> = report["basis"]["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let mut want = [printed[0].1.as_str(), theirs.as_str()];
    want.sort();
    assert_eq!(names, want);
}

#[test]
fn debian_open_mpi_4_and_mpich_ranks_say_their_job_and_a_missing_rank() {
    for mpi in [HangMpi::DebianOpenMpi, HangMpi::DebianMpich] {
        let job = HungJob::start_on(mpi, &format!("pmix-cores-{mpi:?}"), "hang_ring");
        // What each rank's launcher set, as the kernel keeps it: orterun
        // sets PMIX_NAMESPACE, Hydra nothing of PMIx.
        let namespaces: Vec<Option<String>> = job
            .ranks
            .iter()
            .map(|&(_, pid)| environ_namespace(pid))
            .collect();
        match mpi {
            HangMpi::DebianMpich => assert!(namespaces.iter().all(Option::is_none)),
            _ => assert!(namespaces
                .iter()
                .all(|n| n.is_some() && *n == namespaces[0])),
        }
        let cores = cores(&job);
        check_pmix_library(&format!("{mpi:?}"), &cores, &namespaces);
        check_identity(&format!("{mpi:?}"), &cores, &namespaces);
        check_live(&format!("{mpi:?}"), &job, &namespaces);
    }
}
