//! `mpidd procs`: what a target exposes of its job's processes.

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

/// Reads the target and prints its process tables.
pub fn run(source: Source, json: bool, limits: &Limits) -> Result<(), ProcsError> {
    let report = match source {
        Source::Core { core, exe, sysroot } => {
            let t = CoreTarget::open(&core, exe.as_deref(), sysroot.as_deref())?;
            read(&t, limits)?
        }
        Source::Pid(pid) => read(&LiveTarget::open(pid)?, limits)?,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    let m = &report.mpir;
    println!(
        "MPIR ({}): debug state {:?}, {} processes{}",
        m.defined_in,
        m.debug_state,
        m.proctable_size,
        match m.being_debugged {
            Some(1) => ", being debugged",
            _ => "",
        }
    );
    for (rank, p) in m.proctable.iter().enumerate() {
        println!(
            "  rank {rank:<6} {:<20} pid {:<8} {}",
            p.host_name, p.pid, p.executable_name
        );
    }
    if let Some(dll) = &m.dll_name {
        println!("  message-queue DLL: {dll}");
    }
    if let Some(abort) = &m.abort_string {
        println!("  abort: {abort}");
    }
    Ok(())
}
