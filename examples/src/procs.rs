//! `mpidd procs`: what a target exposes of its job's processes.

use std::io::Write;
use std::path::PathBuf;

use mpidd_read::mpir::{self, MpirError, MpirState};
use mpidd_read::{
    CoreTarget, CoreTargetError, Limits, LiveError, LiveTarget, SymbolSource, TargetMemory,
};
use serde::Serialize;

/// Where to read from.
pub enum Source {
    /// A core file, with optional executable and sysroot.
    Core {
        core: PathBuf,
        exe: Option<PathBuf>,
        sysroot: Option<PathBuf>,
    },
    /// A live process.
    Pid(i32),
}

/// Failures of `mpidd procs`.
#[derive(Debug, thiserror::Error)]
pub enum ProcsError {
    #[error(transparent)]
    Core(#[from] CoreTargetError),
    #[error(transparent)]
    Live(#[from] LiveError),
    #[error(transparent)]
    Mpir(#[from] MpirError),
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

#[derive(Serialize)]
struct Report {
    mpir: MpirState,
}

fn read<T: TargetMemory + SymbolSource>(t: &T, limits: &Limits) -> Result<Report, ProcsError> {
    Ok(Report {
        mpir: mpir::read_state(t, t, limits)?,
    })
}

/// Reads the target and prints its process tables. A reader that closes
/// the output early (`mpidd procs ... | head`) is not an error.
pub fn run(source: Source, json: bool, limits: &Limits) -> Result<(), ProcsError> {
    match print(source, json, limits) {
        Err(ProcsError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(ProcsError::Json(e)) if e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe) => {
            Ok(())
        }
        other => other,
    }
}

fn print(source: Source, json: bool, limits: &Limits) -> Result<(), ProcsError> {
    let report = match source {
        Source::Core { core, exe, sysroot } => {
            let t = CoreTarget::open(&core, exe.as_deref(), sysroot.as_deref())?;
            read(&t, limits)?
        }
        Source::Pid(pid) => read(&LiveTarget::open(pid)?, limits)?,
    };
    // One locked, buffered writer: a million-rank table is a million lines.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(out.flush()?);
    }
    let m = &report.mpir;
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
    for (rank, p) in m.proctable.iter().enumerate() {
        writeln!(
            out,
            "  rank {rank:<6} {:<20} pid {:<8} {}",
            p.host_name, p.pid, p.executable_name
        )?;
    }
    if let Some(dll) = &m.dll_name {
        writeln!(out, "  message-queue DLL: {dll}")?;
    }
    if let Some(abort) = &m.abort_string {
        writeln!(out, "  abort: {abort}")?;
    }
    Ok(out.flush()?)
}
