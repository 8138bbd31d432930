//! `mpidd demo`, in two parts.
//!
//! First a hung MPI job: six MPICH CH3 ranks written as real ELF cores
//! (with the executable and libraries they map), read back from those files
//! by the job reader (queues by the native decoder, stacks by the unwinder)
//! and analysed. The demo checks that the analysis found the cycle and the
//! chain that were laid out, and fails otherwise, so it is a real check. It
//! leaves the cores, `job.svg` and `job.html` in the system's temporary
//! directory under `mpidd-demo`.
//!
//! Then a synthetic MPIR/MPI-2 job — a metadirectory that is also the MPIR
//! starter, two directories, ranks of which some were spawned — laid out as
//! several target ABIs would lay it out, written as real ELF core files,
//! and read back from those files alone with the MPIR reader and the MPI-2
//! walker.

use std::path::{Path, PathBuf};

use mpidd_job::synthetic_cores::{demo_job, write_hung_job};
use mpidd_job::{analyze, FindingKind, JobReader, JobReport, RankState, RankTarget, ReadOptions};
use mpidd_read::mpi2dd::Mpi2ddPeer;
use mpidd_read::mpir::{self, MpirState};
use mpidd_read::synthetic::{Mpi2ddSpec, PeerSpec, RankSpec};
use mpidd_read::walk::{self, JobTree};
use mpidd_read::{CoreTarget, Limits, SyntheticCoreOptions, SyntheticJob};
use mpidd_types::{
    Mpi2ddDirectoryEntry, Mpi2ddInfo, Mpi2ddProcdesc, Mpi2ddSpawndesc, MpirProcdesc,
    MqsCommunicatorRecord, MqsPendingOperationRecord, Packing, Record, TargetAbi,
};
use serde::Serialize;

/// The demo's failures.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The core files could not be written.
    #[error("cannot write the demo's core files under {dir}: {message}")]
    Write { dir: PathBuf, message: String },
    /// Reading them back failed.
    #[error("{abi}: {message}")]
    Read { abi: TargetAbi, message: String },
    /// The job read back is not the one written.
    #[error("{abi}: the job read back from the cores differs from the one written")]
    Mismatch { abi: TargetAbi },
    /// The hung job's files could not be written.
    #[error("cannot write the hung job under {dir}: {message}")]
    WriteJob { dir: PathBuf, message: String },
    /// The analysis of the hung job is not what was laid out.
    #[error("the hung job read back from its cores was analysed wrongly: {0}")]
    Analysis(String),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

const META: PeerSpec = PeerSpec {
    host: "login01",
    exe: "/usr/bin/mpirun",
    pid: 4100,
};
const DIRS: [PeerSpec; 2] = [
    PeerSpec {
        host: "node01",
        exe: "/usr/bin/orted",
        pid: 4200,
    },
    PeerSpec {
        host: "node02",
        exe: "/usr/bin/orted",
        pid: 4300,
    },
];

fn rank(host: &'static str, pid: i32, rank: i32) -> RankSpec<'static> {
    RankSpec {
        host,
        exe: "/opt/app/bin/ring",
        pid,
        rank,
        world: "world-0",
        spawn: None,
    }
}

fn worker(pid: i32, rank: i32) -> RankSpec<'static> {
    RankSpec {
        host: "node02",
        exe: "/opt/app/bin/worker",
        pid,
        rank,
        world: "world-1",
        spawn: Some(("world-0", 0, 0)),
    }
}

/// The processes of the job, by (host, pid).
fn processes(abi: TargetAbi) -> Vec<(PeerSpec<'static>, SyntheticJob)> {
    let packing = abi.packing;
    let node01 = [rank("node01", 5001, 0), rank("node01", 5002, 1)];
    let node02 = [
        rank("node02", 5003, 2),
        rank("node02", 5004, 3),
        worker(6001, 0),
        worker(6002, 1),
    ];
    let mpir: Vec<(&str, &str, i32)> = node01
        .iter()
        .chain(&node02[..2])
        .map(|r| (r.host, r.exe, r.pid))
        .collect();
    let meta = SyntheticJob::builder(abi)
        .object(META.exe)
        .pid(META.pid)
        .mpir_starter(&mpir)
        .mpir_dll_name("/usr/lib/mpich/libtvmpich.so")
        .mpi2dd(&Mpi2ddSpec {
            packing,
            mpi_flags: 0x05,
            meta: Some(META),
            directories: &DIRS,
            dll_name: Some("/usr/lib/mpich/libtvmpich.so"),
            ..Mpi2ddSpec::default()
        })
        .build();
    let dir = |d: PeerSpec<'static>, ranks: &[RankSpec<'_>]| {
        SyntheticJob::builder(abi)
            .object(d.exe)
            .pid(d.pid)
            .mpi2dd(&Mpi2ddSpec {
                packing,
                mpi_flags: 0x02,
                meta: Some(META),
                ranks,
                ..Mpi2ddSpec::default()
            })
            .build()
    };
    vec![
        (META, meta),
        (DIRS[0], dir(DIRS[0], &node01)),
        (DIRS[1], dir(DIRS[1], &node02)),
    ]
}

#[derive(Serialize)]
struct AbiReport {
    abi: TargetAbi,
    core_bytes: u64,
    sizes: Vec<(&'static str, usize)>,
}

/// The hung job: where its files are, and its report.
#[derive(Serialize)]
struct HungJob {
    dir: PathBuf,
    cores: Vec<PathBuf>,
    svg: Option<PathBuf>,
    html: PathBuf,
    report: JobReport,
}

#[derive(Serialize)]
struct Report {
    hung_job: HungJob,
    abis: Vec<AbiReport>,
    mpir: MpirState,
    mpi2dd: JobTree,
}

fn sizes(abi: TargetAbi) -> Vec<(&'static str, usize)> {
    vec![
        (MpirProcdesc::C_NAME, MpirProcdesc::size_for(abi)),
        (Mpi2ddInfo::C_NAME, Mpi2ddInfo::size_for(abi)),
        (Mpi2ddProcdesc::C_NAME, Mpi2ddProcdesc::size_for(abi)),
        (Mpi2ddSpawndesc::C_NAME, Mpi2ddSpawndesc::size_for(abi)),
        (
            Mpi2ddDirectoryEntry::C_NAME,
            Mpi2ddDirectoryEntry::size_for(abi),
        ),
        (
            MqsCommunicatorRecord::C_NAME,
            MqsCommunicatorRecord::size_for(abi),
        ),
        (
            MqsPendingOperationRecord::C_NAME,
            MqsPendingOperationRecord::size_for(abi),
        ),
    ]
}

/// Writes the job's cores for one ABI into `dir` and reads them back.
fn round_trip(abi: TargetAbi, dir: &Path) -> Result<(AbiReport, MpirState, JobTree), DemoError> {
    let write_err = |e: &dyn std::fmt::Display| DemoError::Write {
        dir: dir.to_path_buf(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| write_err(&e))?;
    let mut cores = walk::CoreFiles::new();
    let mut starter_core = PathBuf::new();
    let mut core_bytes = 0;
    for (p, job) in processes(abi) {
        let core = dir.join(format!("{}-{}.core", p.host, p.pid));
        let exe = dir.join(format!("{}-{}", p.host, p.pid));
        job.write_files(&core, &exe, SyntheticCoreOptions::default())
            .map_err(|e| write_err(&e))?;
        core_bytes += std::fs::metadata(&core).map(|m| m.len()).unwrap_or(0);
        if p.pid == META.pid {
            starter_core = core.clone();
        }
        cores.insert(p.host, p.pid, &core, None);
    }
    let read_err = |e: &dyn std::fmt::Display| DemoError::Read {
        abi,
        message: e.to_string(),
    };
    let limits = Limits::default();
    let starter = CoreTarget::open(&starter_core, None, None).map_err(|e| read_err(&e))?;
    let mpir = mpir::read_state(&starter, &limits).map_err(|e| read_err(&e))?;
    let start = Mpi2ddPeer {
        host_name: META.host.into(),
        executable_name: META.exe.into(),
        pid: META.pid,
    };
    let tree = walk::walk(&mut cores, &start, abi.packing, &limits).map_err(|e| read_err(&e))?;
    let report = AbiReport {
        abi,
        core_bytes,
        sizes: sizes(abi),
    };
    Ok((report, mpir, tree))
}

/// Builds, writes and reads the job for each ABI, checks they agree, and
/// prints the result.
pub fn run(json: bool) -> Result<(), DemoError> {
    let (hung_job, warnings) = hung_job()?;
    let abis = [
        ("x86_64", TargetAbi::X86_64),
        (
            "x86_64 packed",
            TargetAbi::X86_64.with_packing(Packing::Packed),
        ),
        ("s390x", TargetAbi::S390X),
        ("powerpc", TargetAbi::POWERPC),
        ("i686 packed", TargetAbi::I686.with_packing(Packing::Packed)),
    ];
    let root = std::env::temp_dir().join(format!("mpidd-demo-{}", std::process::id()));
    let mut reports = Vec::new();
    let mut first: Option<(MpirState, JobTree)> = None;
    let result = (|| {
        for (i, (_, abi)) in abis.iter().enumerate() {
            let (report, mpir, tree) = round_trip(*abi, &root.join(i.to_string()))?;
            reports.push(report);
            match &first {
                None => first = Some((mpir, tree)),
                Some((m, t)) => {
                    // Every ABI must give the same job: same ranks, same
                    // processes in the same walk order.
                    let same = m.proctable == mpir.proctable
                        && t.ranks == tree.ranks
                        && t.processes.len() == tree.processes.len()
                        && tree.failures.is_empty();
                    if !same {
                        return Err(DemoError::Mismatch { abi: *abi });
                    }
                }
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&root);
    result?;
    let Some((mpir, tree)) = first else {
        return Ok(());
    };
    if tree.ranks.len() != 6 || mpir.proctable.len() != 4 {
        return Err(DemoError::Mismatch { abi: abis[0].1 });
    }
    let report = Report {
        hung_job,
        abis: reports,
        mpir,
        mpi2dd: tree,
    };
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_hung_job(&report.hung_job);
        print_text(&report, &abis.map(|(n, _)| n));
    }
    Ok(())
}

/// Writes the hung job's cores, reads them back, analyses them and checks
/// the analysis; writes the SVG (if it renders) and the HTML page beside
/// the cores. Returns the job and the warnings to show.
fn hung_job() -> Result<(HungJob, Vec<String>), DemoError> {
    let dir = std::env::temp_dir().join("mpidd-demo");
    let write_err = |e: &dyn std::fmt::Display| DemoError::WriteJob {
        dir: dir.clone(),
        message: e.to_string(),
    };
    let job = write_hung_job(&dir, &demo_job()).map_err(|e| write_err(&e))?;
    let reader = JobReader::new(ReadOptions {
        layouts: Some(job.layouts.clone()),
        ..Default::default()
    });
    let targets: Vec<RankTarget> = job.cores.iter().map(RankTarget::core).collect();
    let report = analyze(&reader.read_all(&targets, &|_, _| {}));
    check(&report)?;
    let mut warnings = Vec::new();
    let svg = match mpidd_job::render_svg::to_svg(&report) {
        Ok(svg) => {
            let path = job.dir.join("job.svg");
            std::fs::write(&path, &svg).map_err(|e| write_err(&e))?;
            Some((path, svg))
        }
        Err(e) => {
            warnings.push(format!("the wait-for graph was not drawn as SVG: {e}"));
            None
        }
    };
    let html = job.dir.join("job.html");
    let page = mpidd_job::render_html::to_html(&report, svg.as_ref().map(|(_, s)| s.as_str()));
    std::fs::write(&html, page).map_err(|e| write_err(&e))?;
    let hung = HungJob {
        dir: job.dir,
        cores: job.cores,
        svg: svg.map(|(p, _)| p),
        html,
        report,
    };
    Ok((hung, warnings))
}

/// The analysis must find what `demo_job` laid out: the cycle 0 → 1 → 2
/// across `MPI_COMM_WORLD` and `halo`, and the chain 3 → 4 → 5 that ends at
/// rank 5 computing outside MPI.
fn check(report: &JobReport) -> Result<(), DemoError> {
    let fail = |what: String| Err(DemoError::Analysis(what));
    if let Some(r) = report.ranks.iter().find(|r| !r.errors.is_empty()) {
        return fail(format!("rank {}: {}", r.world_rank, r.errors.join("; ")));
    }
    if report.cycles != [vec![0, 1, 2]] {
        return fail(format!("cycles {:?}, expected [[0, 1, 2]]", report.cycles));
    }
    let chain = report
        .findings
        .iter()
        .any(|f| f.kind == FindingKind::WaitsOnRankOutsideMpi && f.ranks == [3, 4, 5]);
    if !chain {
        return fail("no chain 3 → 4 → 5 ending outside MPI".to_string());
    }
    let last = report.ranks.iter().find(|r| r.world_rank == 5);
    if !last.is_some_and(|r| {
        r.state == RankState::OutsideMpi && r.location.as_deref() == Some("compute at solver.c:42")
    }) {
        return fail("rank 5 is not seen computing at solver.c:42".to_string());
    }
    Ok(())
}

fn print_hung_job(job: &HungJob) {
    println!(
        "A hung MPI job: {} MPICH CH3 ranks written as ELF cores, read back from the files",
        job.cores.len()
    );
    println!("(queues by the native decoder, stacks by the unwinder) and analysed:\n");
    print!("{}", mpidd_job::render_text::to_text(&job.report));
    println!("\nFiles in {}:", job.dir.display());
    println!(
        "  cores      core.0 .. core.{}",
        job.cores.len().saturating_sub(1)
    );
    if let Some(svg) = &job.svg {
        println!("  graph      {}", svg.display());
    }
    println!("  page       {}", job.html.display());
    println!("\n{}\n", "-".repeat(78));
}

fn print_text(report: &Report, names: &[&str]) {
    println!("A synthetic MPI job (1 metadirectory and MPIR starter, 2 directories, 6 ranks,");
    println!("2 of them spawned), written as ELF core files for each target ABI and read back:\n");
    print!("{:<24}", "record (bytes)");
    for n in names {
        print!("{n:>15}");
    }
    println!();
    for (i, (record, _)) in report.abis[0].sizes.iter().enumerate() {
        print!("{record:<24}");
        for a in &report.abis {
            print!("{:>15}", a.sizes[i].1);
        }
        println!();
    }
    print!("{:<24}", "all cores");
    for a in &report.abis {
        print!("{:>15}", a.core_bytes);
    }
    println!("\n\nEvery ABI gave the same job.\n");
    let m = &report.mpir;
    println!(
        "MPIR table of {} (debug state {:?}):",
        m.defined_in, m.debug_state
    );
    for (rank, p) in m.proctable.iter().enumerate() {
        println!(
            "  rank {rank:<3} {:<8} pid {:<6} {}",
            p.host_name, p.pid, p.executable_name
        );
    }
    println!("\nMPI-2 walk from the metadirectory:");
    for p in &report.mpi2dd.processes {
        println!(
            "  {}{}:{} ({}) {:?}",
            "  ".repeat(p.depth),
            p.peer.host_name,
            p.peer.pid,
            p.peer.executable_name,
            p.info.mpi_flags
        );
    }
    println!("\nRanks found:");
    for r in &report.mpi2dd.ranks {
        let spawned = match &r.spawn_desc {
            Some(s) => format!(
                "  spawned by {} rank {} (#{})",
                s.parent_comm_world_id, s.parent_rank, s.sequence
            ),
            None => String::new(),
        };
        println!(
            "  {} rank {:<3} {:<8} pid {:<6} {}{spawned}",
            r.comm_world_id, r.rank, r.host_name, r.pid, r.executable_name
        );
    }
}
