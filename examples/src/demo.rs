//! `mpidd demo`: a sample job written out as several target ABIs lay it
//! out, then read back from those bytes alone.

use serde::Serialize;

use mpidd_types::{
    DebuggerFlags, Mpi2ddDebugState, Mpi2ddDirectoryEntry, Mpi2ddInfo, Mpi2ddProcdesc,
    Mpi2ddSpawndesc, MpiFlags, MpirDebugState, MpirProcdesc, MqsCommunicator, MqsPendingOperation,
    Packing, Record, TargetAbi, TargetAddr,
};

use crate::demo_image::{Image, ImageError};

/// Caps for the demo's reads; real readers take these from the caller.
const MAX_TABLE: usize = 4096;
const MAX_STRING: usize = 4096;

/// One rank as a debugger wants to see it.
#[derive(Clone, Debug, PartialEq, Serialize)]
struct Rank {
    host_name: String,
    executable_name: String,
    pid: i32,
    rank: i32,
    comm_world_id: String,
    spawn_desc: Option<Spawn>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct Spawn {
    parent_comm_world_id: String,
    parent_rank: i32,
    sequence: i32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct Process {
    host_name: String,
    executable_name: String,
    pid: i32,
}

/// The job as read back: the MPIR view and the MPI2DD view of one
/// metadirectory process.
#[derive(Clone, Debug, PartialEq, Serialize)]
struct Job {
    mpir_debug_state: MpirDebugState,
    mpir_proctable: Vec<Process>,
    mpi2dd_debug_state: Mpi2ddDebugState,
    mpi2dd_debugger_flags: DebuggerFlags,
    mpi2dd_mpi_flags: MpiFlags,
    meta_host_name: String,
    meta_executable_name: String,
    meta_pid: i32,
    mpi2dd_proctable: Vec<Rank>,
    directory_table: Vec<Process>,
}

#[derive(Serialize)]
struct AbiReport {
    abi: TargetAbi,
    image_bytes: usize,
    sizes: Vec<(&'static str, usize)>,
}

#[derive(Serialize)]
struct Report {
    abis: Vec<AbiReport>,
    job: Job,
}

fn sample_job() -> Job {
    let exe = "/opt/app/bin/ring";
    let mut ranks: Vec<Rank> = (0..4)
        .map(|r| Rank {
            host_name: format!("node0{}", 1 + r / 2),
            executable_name: exe.to_string(),
            pid: 5001 + r,
            rank: r,
            comm_world_id: "world-0".into(),
            spawn_desc: None,
        })
        .collect();
    ranks.extend((0..2).map(|r| Rank {
        host_name: "node03".into(),
        executable_name: "/opt/app/bin/worker".into(),
        pid: 6001 + r,
        rank: r,
        comm_world_id: "world-1".into(),
        spawn_desc: Some(Spawn {
            parent_comm_world_id: "world-0".into(),
            parent_rank: 0,
            sequence: 0,
        }),
    }));
    Job {
        mpir_debug_state: MpirDebugState::Spawned,
        mpir_proctable: ranks
            .iter()
            .take(4)
            .map(|r| Process {
                host_name: r.host_name.clone(),
                executable_name: r.executable_name.clone(),
                pid: r.pid,
            })
            .collect(),
        mpi2dd_debug_state: Mpi2ddDebugState::Spawn,
        mpi2dd_debugger_flags: DebuggerFlags::BEING_DEBUGGED,
        mpi2dd_mpi_flags: MpiFlags::I_AM_METADIR | MpiFlags::I_AM_DIR | MpiFlags::I_AM_STARTER,
        meta_host_name: "login01".into(),
        meta_executable_name: "/usr/bin/mpirun".into(),
        meta_pid: 4100,
        mpi2dd_proctable: ranks,
        directory_table: vec![
            Process {
                host_name: "node02".into(),
                executable_name: "/usr/bin/orted".into(),
                pid: 4200,
            },
            Process {
                host_name: "node03".into(),
                executable_name: "/usr/bin/orted".into(),
                pid: 4300,
            },
        ],
    }
}

/// Where the reader starts: the addresses a symbol table would give.
struct Roots {
    mpi2dd_info: TargetAddr,
    mpir_proctable: TargetAddr,
    mpir_proctable_size: i32,
    mpir_debug_state: MpirDebugState,
}

fn write_job(job: &Job, abi: TargetAbi) -> Result<(Image, Roots), ImageError> {
    let base = match abi.address_width {
        mpidd_types::AddressWidth::W32 => 0x1000_0000,
        mpidd_types::AddressWidth::W64 => 0x5555_0000_0000,
    };
    let mut img = Image::new(abi, base);
    let mpir: Vec<MpirProcdesc> = job
        .mpir_proctable
        .iter()
        .map(|p| MpirProcdesc {
            host_name: img.put_str(&p.host_name),
            executable_name: img.put_str(&p.executable_name),
            pid: p.pid,
        })
        .collect();
    let mpir_proctable = img.put_records(&mpir)?;

    let mut procs = Vec::new();
    for r in &job.mpi2dd_proctable {
        let spawn_desc = match &r.spawn_desc {
            None => TargetAddr::NULL,
            Some(s) => {
                let parent_comm_world_id = img.put_str(&s.parent_comm_world_id);
                img.put_records(&[Mpi2ddSpawndesc {
                    parent_comm_world_id,
                    parent_rank: s.parent_rank,
                    sequence: s.sequence,
                }])?
            }
        };
        procs.push(Mpi2ddProcdesc {
            host_name: img.put_str(&r.host_name),
            executable_name: img.put_str(&r.executable_name),
            spawn_desc,
            comm_world_id: img.put_str(&r.comm_world_id),
            pid: r.pid,
            rank: r.rank,
        });
    }
    let proctable = img.put_records(&procs)?;
    let dirs: Vec<Mpi2ddDirectoryEntry> = job
        .directory_table
        .iter()
        .map(|d| Mpi2ddDirectoryEntry {
            host_name: img.put_str(&d.host_name),
            executable_name: img.put_str(&d.executable_name),
            pid: d.pid,
        })
        .collect();
    let directory_table = img.put_records(&dirs)?;
    let info = Mpi2ddInfo {
        debug_state: job.mpi2dd_debug_state,
        debugger_flags: job.mpi2dd_debugger_flags,
        mpi_flags: job.mpi2dd_mpi_flags,
        meta_host_name: img.put_str(&job.meta_host_name),
        meta_executable_name: img.put_str(&job.meta_executable_name),
        proctable,
        proctable_size: procs.len() as i32,
        directory_table,
        directory_size: dirs.len() as i32,
        meta_pid: job.meta_pid,
        ..Mpi2ddInfo::default()
    };
    let mpi2dd_info = img.put_records(&[info])?;
    Ok((
        img,
        Roots {
            mpi2dd_info,
            mpir_proctable,
            mpir_proctable_size: mpir.len() as i32,
            mpir_debug_state: job.mpir_debug_state,
        },
    ))
}

fn read_job(img: &Image, roots: &Roots) -> Result<Job, ImageError> {
    let s = |a: TargetAddr| img.c_string(a, MAX_STRING);
    let process = |host_name, executable_name, pid| -> Result<Process, ImageError> {
        Ok(Process {
            host_name: s(host_name)?,
            executable_name: s(executable_name)?,
            pid,
        })
    };
    let mpir_proctable = img
        .records::<MpirProcdesc>(
            roots.mpir_proctable,
            roots.mpir_proctable_size.into(),
            MAX_TABLE,
        )?
        .into_iter()
        .map(|p| process(p.host_name, p.executable_name, p.pid))
        .collect::<Result<_, _>>()?;

    let info: Mpi2ddInfo = img.record(roots.mpi2dd_info)?;
    info.validate().map_err(|source| ImageError::BadInfo {
        addr: roots.mpi2dd_info,
        source,
    })?;
    let mut ranks = Vec::new();
    for p in img.records::<Mpi2ddProcdesc>(info.proctable, info.proctable_size.into(), MAX_TABLE)? {
        let spawn_desc = if p.spawn_desc.is_null() {
            None
        } else {
            let d: Mpi2ddSpawndesc = img.record(p.spawn_desc)?;
            Some(Spawn {
                parent_comm_world_id: s(d.parent_comm_world_id)?,
                parent_rank: d.parent_rank,
                sequence: d.sequence,
            })
        };
        ranks.push(Rank {
            host_name: s(p.host_name)?,
            executable_name: s(p.executable_name)?,
            pid: p.pid,
            rank: p.rank,
            comm_world_id: s(p.comm_world_id)?,
            spawn_desc,
        });
    }
    let directory_table = img
        .records::<Mpi2ddDirectoryEntry>(
            info.directory_table,
            info.directory_size.into(),
            MAX_TABLE,
        )?
        .into_iter()
        .map(|d| process(d.host_name, d.executable_name, d.pid))
        .collect::<Result<_, _>>()?;
    Ok(Job {
        mpir_debug_state: roots.mpir_debug_state,
        mpir_proctable,
        mpi2dd_debug_state: info.debug_state,
        mpi2dd_debugger_flags: info.debugger_flags,
        mpi2dd_mpi_flags: info.mpi_flags,
        meta_host_name: s(info.meta_host_name)?,
        meta_executable_name: s(info.meta_executable_name)?,
        meta_pid: info.meta_pid,
        mpi2dd_proctable: ranks,
        directory_table,
    })
}

/// The demo's failures.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(transparent)]
    Image(#[from] ImageError),
    #[error("{abi}: the job read back differs from the job written")]
    Mismatch { abi: TargetAbi },
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
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
        (MqsCommunicator::C_NAME, MqsCommunicator::size_for(abi)),
        (
            MqsPendingOperation::C_NAME,
            MqsPendingOperation::size_for(abi),
        ),
    ]
}

/// Write the sample job for each ABI, read it back, check it and print it.
pub fn run(json: bool) -> Result<(), DemoError> {
    let job = sample_job();
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
    let mut reports = Vec::new();
    for (_, abi) in abis {
        let (img, roots) = write_job(&job, abi)?;
        let back = read_job(&img, &roots)?;
        if back != job {
            return Err(DemoError::Mismatch { abi });
        }
        reports.push(AbiReport {
            abi,
            image_bytes: img.len(),
            sizes: sizes(img.abi()),
        });
    }
    let report = Report { abis: reports, job };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report, &abis.map(|(n, _)| n));
    }
    Ok(())
}

fn print_text(report: &Report, names: &[&str]) {
    println!("A sample MPI job, written as each target ABI lays it out and read back:\n");
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
    print!("{:<24}", "whole image");
    for a in &report.abis {
        print!("{:>15}", a.image_bytes);
    }
    println!("\n\nEvery ABI decoded to the same job:\n");
    let job = &report.job;
    println!("MPIR (debug state {:?})", job.mpir_debug_state);
    for (rank, p) in job.mpir_proctable.iter().enumerate() {
        println!(
            "  rank {rank:<3} {:<8} pid {:<6} {}",
            p.host_name, p.pid, p.executable_name
        );
    }
    println!(
        "MPI2DD metadirectory {}:{} ({}), state {:?}, flags {:?}",
        job.meta_host_name,
        job.meta_pid,
        job.meta_executable_name,
        job.mpi2dd_debug_state,
        job.mpi2dd_mpi_flags
    );
    for r in &job.mpi2dd_proctable {
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
    for d in &job.directory_table {
        println!(
            "  directory {}:{} ({})",
            d.host_name, d.pid, d.executable_name
        );
    }
}
