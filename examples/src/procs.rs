//! `mpidd procs`: what a target exposes of its job's processes.

use std::io::Write;

use mpidd_read::mpi2dd::{Mpi2ddPeer, Mpi2ddProcess};
use mpidd_read::mpir::{MpirProcess, MpirState};
use mpidd_read::pmix::{read_pmix_tables, PmixError, PmixOptions, PmixTables};
use mpidd_read::process_tables::{read_tables, ProcessTables, TablesError};
use mpidd_read::walk::{self, JobTree, LocalProcesses, WalkError};
use mpidd_read::{CoreTargetError, GdbRemoteError, Limits, LiveError, LiveTarget};
use mpidd_types::Packing;
use serde::Serialize;

use crate::target_args::{explain_failure, open_core, open_gdbserver, Source};

/// How to print what was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Every rank, a line each.
    Text,
    /// Sizes, distinct hosts and executables, first and last ranks.
    Summary,
    /// Everything, as JSON.
    Json,
}

/// Failures of `mpidd procs`.
#[derive(Debug, thiserror::Error)]
pub enum ProcsError {
    /// The core file or its executable could not be opened.
    #[error(transparent)]
    Core(#[from] CoreTargetError),
    /// The live process could not be opened.
    #[error(transparent)]
    Live(#[from] LiveError),
    /// The gdbserver could not be reached or read.
    #[error(transparent)]
    Remote(#[from] GdbRemoteError),
    /// The target's tables could not be read, or it has none.
    #[error(transparent)]
    Tables(#[from] TablesError),
    /// The launcher has neither table, and its PMIx server did not answer.
    #[error("{tables}; and {pmix}")]
    Pmix {
        /// Why it has neither table.
        tables: TablesError,
        /// Why PMIx did not answer.
        pmix: Box<PmixError>,
    },
    /// The MPI-2 walk could not start.
    #[error(transparent)]
    Walk(#[from] WalkError),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Writing to standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

#[derive(Serialize)]
struct Report {
    #[serde(skip_serializing_if = "Option::is_none")]
    mpir: Option<MpirState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mpi2dd: Option<Mpi2ddReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pmix: Option<PmixTables>,
}

#[derive(Serialize)]
struct Mpi2ddReport {
    /// This process's own info block and tables.
    #[serde(flatten)]
    process: Mpi2ddProcess,
    /// The job reached from it, when the other processes can be opened.
    #[serde(skip_serializing_if = "Option::is_none")]
    job: Option<JobTree>,
}

/// The tables as [`Report`] shows them: `ProcessTables` with the job a
/// live MPI-2 process leads to.
fn report(tables: ProcessTables, job: Option<JobTree>) -> Report {
    Report {
        mpir: tables.mpir,
        mpi2dd: tables.mpi2dd.map(|process| Mpi2ddReport { process, job }),
        pmix: tables.pmix,
    }
}

/// Reads the target and prints its process tables. A reader that closes
/// the output early (`mpidd procs ... | head`) is not an error.
pub fn run(
    source: Source,
    format: Format,
    packing: Option<Packing>,
    limits: &Limits,
    verbose: bool,
    pmix: &PmixOptions,
) -> Result<(), ProcsError> {
    match print(source, format, packing, limits, verbose, pmix) {
        Err(ProcsError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(ProcsError::Json(e)) if e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe) => {
            Ok(())
        }
        other => other,
    }
}

fn print(
    source: Source,
    format: Format,
    packing: Option<Packing>,
    limits: &Limits,
    verbose: bool,
    pmix: &PmixOptions,
) -> Result<(), ProcsError> {
    let report = match source {
        Source::Core { core, options } => {
            let t = open_core(&core, &options)?;
            let read = read_tables(&t, packing, limits);
            explain_failure(&t, verbose, &read);
            // A rank's core: no table, or (Open MPI 4.1's ranks link the
            // launcher's MPIR symbols) an empty one.
            let no_ranks = read.as_ref().map_or(true, |tables| {
                tables.mpi2dd.is_none()
                    && tables.mpir.as_ref().is_none_or(|m| m.proctable_size <= 0)
            });
            if no_ranks {
                say_if_a_rank(&t, limits);
            }
            report(read?, None)
        }
        // procs reads a live process without stopping it: the table is
        // written once, when the job spawns.
        Source::Pid(pid) => {
            let t = LiveTarget::open(pid)?;
            let read = with_pmix(pid, read_tables(&t, packing, limits), pmix);
            if let Err(ProcsError::Tables(e)) = &read {
                explain_failure(&t, verbose, &Err::<(), _>(e));
            }
            let tables = read?;
            let job = match &tables.mpi2dd {
                None => None,
                Some(_) => {
                    let mut local = LocalProcesses::new();
                    let start = Mpi2ddPeer {
                        host_name: local.host().to_string(),
                        executable_name: String::new(),
                        pid,
                    };
                    Some(walk::walk(&mut local, &start, packing, limits)?)
                }
            };
            report(tables, job)
        }
        // The other processes of an MPI-2 job are not walked: they would
        // need a gdbserver each.
        Source::Gdbserver(addr) => {
            let t = open_gdbserver(&addr)?;
            let read = read_tables(&t, packing, limits);
            explain_failure(&t, verbose, &read);
            t.detach()?;
            report(read?, None)
        }
    };
    // One locked, buffered writer: a million-rank table is a million lines.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if format == Format::Json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(out.flush()?);
    }
    let summary = format == Format::Summary;
    if let Some(m) = &report.mpir {
        print_mpir(&mut out, m, summary)?;
    }
    if let Some(p) = &report.mpi2dd {
        print_mpi2dd(&mut out, p, summary)?;
    }
    if let Some(p) = &report.pmix {
        crate::procs_pmix::print_pmix(&mut out, p, summary)?;
    }
    Ok(out.flush()?)
}

/// A rank's core has no process table (or an empty one), but says whose
/// rank it is: its PMIx identity and its job's size, from its launcher's
/// variables.
fn say_if_a_rank(t: &mpidd_read::CoreTarget, limits: &Limits) {
    let Ok(id) = mpiq_core::job_identity(t, limits) else {
        return;
    };
    let mut parts = Vec::new();
    if let Some(ns) = &id.namespace {
        parts.push(format!("PMIx namespace {} ({})", ns.value, ns.source));
    }
    if let Some(r) = &id.pmix_rank {
        parts.push(format!("PMIx rank {} ({})", r.value, r.source));
    }
    if let Some(n) = &id.job_size {
        parts.push(format!("a job of {} ranks ({})", n.value, n.source));
    }
    if !parts.is_empty() {
        eprintln!(
            "mpidd: this core is an MPI rank's: {}; its launcher holds the job's table, and \
             `mpidd job --core` reads ranks' cores",
            parts.join(", ")
        );
    }
}

/// The tables of a live process; for a launcher with neither MPIR nor
/// MPI-2 tables, those its PMIx server reports (a process that maps no
/// libpmix adds that as a third reason).
fn with_pmix(
    pid: i32,
    read: Result<ProcessTables, TablesError>,
    options: &PmixOptions,
) -> Result<ProcessTables, ProcsError> {
    match read {
        Err(tables @ TablesError::Neither { .. }) => match read_pmix_tables(pid, options) {
            Ok(p) => Ok(ProcessTables {
                mpir: None,
                mpi2dd: None,
                pmix: Some(p),
            }),
            Err(pmix) => Err(ProcsError::Pmix {
                tables,
                pmix: Box::new(pmix),
            }),
        },
        other => Ok(other?),
    }
}

fn print_mpir(out: &mut impl Write, m: &MpirState, summary: bool) -> Result<(), ProcsError> {
    writeln!(
        out,
        "MPIR ({}): debug state {:?}, {} processes{}",
        m.defined_in,
        m.debug_state,
        m.proctable_size,
        match m.being_debugged {
            Some(1) => ", being debugged",
            _ => "",
        }
    )?;
    let line = |out: &mut dyn Write, rank: usize, p: MpirProcess| {
        writeln!(
            out,
            "  rank {rank:<6} {:<20} pid {:<8} {}",
            p.host_name, p.pid, p.executable_name
        )
    };
    let t = &m.proctable;
    if summary && t.is_empty() {
        writeln!(out, "  no ranks in the table (the job has not spawned)")?;
    } else if summary {
        let (hosts, exes) = (t.distinct_hosts(), t.distinct_executables());
        writeln!(
            out,
            "  {} ranks on {} hosts ({}), running {} executables ({})",
            t.len(),
            hosts.len(),
            abbreviate(&hosts),
            exes.len(),
            abbreviate(&exes)
        )?;
        let last = t.len().saturating_sub(1);
        for rank in [0, last].into_iter().take(t.len().min(2)) {
            if let Some(p) = t.get(rank) {
                line(out, rank, p)?;
            }
        }
    } else {
        for (rank, p) in t.iter().enumerate() {
            line(out, rank, p)?;
        }
    }
    if let Some(dll) = &m.dll_name {
        writeln!(out, "  message-queue DLL: {dll}")?;
    }
    if let Some(abort) = &m.abort_string {
        writeln!(out, "  abort: {abort}")?;
    }
    Ok(())
}

/// The first few of a list of names, and how many more.
fn abbreviate(names: &[&str]) -> String {
    const SHOWN: usize = 3;
    let mut s = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(", and {} more", names.len() - SHOWN));
    }
    s
}

fn print_mpi2dd(out: &mut impl Write, r: &Mpi2ddReport, summary: bool) -> Result<(), ProcsError> {
    let p = &r.process;
    writeln!(
        out,
        "MPI2DD ({}): {:?}, state {:?}, metadirectory {}:{}; records: {}",
        p.defined_in,
        p.mpi_flags,
        p.debug_state,
        p.meta_host_name.as_deref().unwrap_or("?"),
        p.meta_pid,
        p.packing
    )?;
    let ranks = match &r.job {
        Some(job) => &job.ranks,
        None => &p.proctable,
    };
    let shown: Vec<_> = if summary && ranks.len() > 2 {
        writeln!(out, "  {} ranks; the first and the last:", ranks.len())?;
        vec![&ranks[0], &ranks[ranks.len() - 1]]
    } else {
        ranks.iter().collect()
    };
    for rank in shown {
        let spawned = match &rank.spawn_desc {
            Some(s) => format!(
                " (spawned by {} rank {}, #{})",
                s.parent_comm_world_id, s.parent_rank, s.sequence
            ),
            None => String::new(),
        };
        writeln!(
            out,
            "  {} rank {:<6} {:<20} pid {:<8} {}{spawned}",
            rank.comm_world_id, rank.rank, rank.host_name, rank.pid, rank.executable_name
        )?;
    }
    for d in p.directory_table.iter().chain(&p.metadirectory_table) {
        writeln!(
            out,
            "  directory {}:{} ({})",
            d.host_name, d.pid, d.executable_name
        )?;
    }
    if let Some(job) = &r.job {
        for f in &job.failures {
            writeln!(
                out,
                "  unreachable {}:{}: {}",
                f.peer.host_name, f.peer.pid, f.error
            )?;
        }
        if let Some(t) = &job.truncated {
            writeln!(out, "  walk stopped early: {t}")?;
        }
    }
    Ok(())
}
