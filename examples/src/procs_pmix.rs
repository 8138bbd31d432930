//! `mpidd procs`' text for a launcher's jobs read through its PMIx
//! server.

use std::io::Write;

use mpidd_read::pmix::PmixTables;

use crate::procs::ProcsError;

/// Who answered: PRRTE's launcher by its command name, else the pid.
fn server_of(p: &PmixTables) -> String {
    let comm = std::fs::read_to_string(format!("/proc/{}/comm", p.launcher_pid))
        .map(|c| c.trim().to_string())
        .unwrap_or_default();
    match comm.as_str() {
        "prterun" | "prte" | "mpirun" | "mpiexec" => {
            format!("PRRTE's PMIx server ({comm}, pid {})", p.launcher_pid)
        }
        _ => format!("the PMIx server of pid {}", p.launcher_pid),
    }
}

/// Each namespace's ranks (or, with `summary`, its size and its first
/// and last ranks), under a line saying where they came from.
pub fn print_pmix(out: &mut impl Write, p: &PmixTables, summary: bool) -> Result<(), ProcsError> {
    writeln!(
        out,
        "PMIx: {} namespace{}, through {}; {} ({})",
        p.namespaces.len(),
        if p.namespaces.len() == 1 { "" } else { "s" },
        server_of(p),
        p.version,
        p.library
    )?;
    for ns in &p.namespaces {
        writeln!(
            out,
            "  namespace {}: {} processes",
            ns.nspace,
            ns.proctable.len()
        )?;
        let last = ns.proctable.len().saturating_sub(1);
        for (rank, proc_) in ns.proctable.iter().enumerate() {
            if summary && rank != 0 && rank != last {
                continue;
            }
            let state = ns
                .states
                .get(rank)
                .map(|s| s.to_string())
                .unwrap_or_default();
            let exit = match ns.exit_codes.get(rank) {
                Some(0) | None => String::new(),
                Some(code) => format!(", exit code {code}"),
            };
            writeln!(
                out,
                "  rank {rank:<6} {:<20} pid {:<8} {} ({state}{exit})",
                proc_.host_name, proc_.pid, proc_.executable_name
            )?;
        }
    }
    if !p.tool_namespaces.is_empty() {
        writeln!(
            out,
            "  tools' namespaces (not jobs): {}",
            p.tool_namespaces.join(", ")
        )?;
    }
    Ok(())
}
