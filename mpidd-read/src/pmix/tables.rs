//! A launcher's jobs as its PMIx server reports them, in the process-table
//! vocabulary of MPIR: each namespace's ranks are a [`ProcTable`] (entry
//! `i` is PMIx rank `i`), with PMIx's state and exit code beside each.

use serde::Serialize;

use crate::mpir::{MpirProcess, ProcTable};
use crate::pmix::error::PmixError;
use crate::pmix::reported::{Reported, ReportedNamespace};

/// The jobs a launcher's PMIx server runs, as it reported them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PmixTables {
    /// The launcher whose server answered.
    pub launcher_pid: i32,
    /// Its libpmix, as its memory map names it.
    pub library: String,
    /// That library's `PMIx_Get_version`.
    pub version: String,
    /// The application namespaces (jobs), in the server's order.
    pub namespaces: Vec<PmixNamespace>,
    /// Namespaces of tools connected to the server now or before (mpidd's
    /// own among them), left out of `namespaces`.
    pub tool_namespaces: Vec<String>,
    /// The namespaces this session sent `PMIX_DEBUGGER_RELEASE`, which
    /// lets ranks held in `PMIx_Init` go on ([`release_pmix_ranks`]);
    /// empty for a session that only read.
    ///
    /// [`release_pmix_ranks`]: crate::pmix::release_pmix_ranks
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub released: Vec<String>,
}

/// One namespace (a job) and its processes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PmixNamespace {
    /// The namespace, such as `prterun-host-4242@1`.
    pub nspace: String,
    /// Its processes in rank order: entry `i` is PMIx rank `i` (for a job
    /// of one namespace, its rank in `MPI_COMM_WORLD`).
    pub proctable: ProcTable,
    /// Each rank's state, by rank.
    pub states: Vec<PmixProcState>,
    /// Each rank's exit code (0 while it runs), by rank.
    pub exit_codes: Vec<i32>,
}

/// A `pmix_proc_state_t`, shown by its name in `pmix_common.h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PmixProcState(pub u8);

impl PmixProcState {
    /// The state's name without `PMIX_PROC_STATE_`, lower case; `None`
    /// for a value OpenPMIx 5 does not define.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "undef",
            1 => "prepped",
            2 => "launch_underway",
            3 => "restart",
            4 => "terminate",
            5 => "running",
            6 => "connected",
            15 => "unterminated",
            20 => "terminated",
            50 => "error",
            51 => "killed_by_cmd",
            52 => "aborted",
            53 => "failed_to_start",
            54 => "aborted_by_sig",
            55 => "term_wo_sync",
            56 => "comm_failed",
            57 => "sensor_bound_exceeded",
            58 => "called_abort",
            59 => "heartbeat_failed",
            60 => "migrating",
            61 => "cannot_restart",
            62 => "term_non_zero",
            63 => "failed_to_launch",
            _ => return None,
        })
    }

    /// Whether the process has ended (`PMIX_PROC_STATE_UNTERMINATED` and
    /// above).
    pub fn has_ended(self) -> bool {
        self.0 > 15
    }
}

impl std::fmt::Display for PmixProcState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "state {}", self.0),
        }
    }
}

impl Serialize for PmixProcState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl PmixTables {
    /// The tables of what a session reported, each namespace in rank
    /// order, tools' namespaces ([`is_tool`]) set apart.
    pub(crate) fn assemble(
        launcher_pid: i32,
        reported: Reported,
        here: Option<&str>,
        is_descendant: impl Fn(i32) -> bool,
    ) -> Result<PmixTables, PmixError> {
        let mut namespaces = Vec::new();
        let mut tool_namespaces = Vec::new();
        for mut ns in reported.namespaces {
            if is_tool(&ns, &reported.own_nspace, here, &is_descendant) {
                tool_namespaces.push(ns.nspace);
                continue;
            }
            ns.procs.sort_by_key(|p| p.rank);
            if let Some((i, p)) = ns
                .procs
                .iter()
                .enumerate()
                .find(|(i, p)| p.rank as usize != *i)
            {
                return Err(PmixError::Answer {
                    pid: launcher_pid,
                    query: format!("PMIX_QUERY_PROC_TABLE of {}", ns.nspace),
                    what: format!(
                        "rank {} where rank {i} belongs (ranks 0 to N-1 expected)",
                        p.rank
                    ),
                });
            }
            let proctable = ProcTable::from_processes(ns.procs.iter().map(|p| MpirProcess {
                host_name: &p.host_name,
                executable_name: &p.executable_name,
                pid: p.pid,
            }));
            namespaces.push(PmixNamespace {
                nspace: ns.nspace,
                proctable,
                states: ns.procs.iter().map(|p| PmixProcState(p.state)).collect(),
                exit_codes: ns.procs.iter().map(|p| p.exit_code).collect(),
            });
        }
        Ok(PmixTables {
            launcher_pid,
            library: reported.library,
            version: reported.version,
            namespaces,
            tool_namespaces,
            released: reported.released,
        })
    }
}

/// Whether `ns` is a tool's namespace rather than a job's: this session's
/// own, or one whose every process is on this host and none a descendant
/// of the launcher (PRRTE registers each tool that connects as a
/// namespace of its own, and keeps it after the tool has gone).
pub(crate) fn is_tool(
    ns: &ReportedNamespace,
    own_nspace: &str,
    here: Option<&str>,
    is_descendant: &dyn Fn(i32) -> bool,
) -> bool {
    let on_this_host = |h: &str| here.is_some_and(|here| short(here) == short(h));
    ns.nspace == own_nspace
        || (!ns.procs.is_empty()
            && ns
                .procs
                .iter()
                .all(|p| on_this_host(&p.host_name) && !is_descendant(p.pid)))
}

fn short(host: &str) -> &str {
    host.split('.').next().unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pmix::reported::{ReportedNamespace, ReportedProc};

    fn proc_(rank: u32, host: &str, pid: i32) -> ReportedProc {
        ReportedProc {
            rank,
            host_name: host.into(),
            executable_name: "/bin/ring".into(),
            pid,
            exit_code: 0,
            state: 6,
        }
    }

    #[test]
    fn ranks_are_put_in_order_and_tools_set_apart() {
        let reported = Reported {
            version: "OpenPMIx 5.0.7".into(),
            library: "/usr/lib/libpmix.so.2".into(),
            own_nspace: "p@3".into(),
            namespaces: vec![
                ReportedNamespace {
                    nspace: "p@1".into(),
                    procs: vec![proc_(1, "n1", 11), proc_(0, "n1", 10), proc_(2, "n2", 12)],
                },
                ReportedNamespace {
                    nspace: "p@2".into(),
                    procs: vec![proc_(0, "n1.example", 99)],
                },
                ReportedNamespace {
                    nspace: "p@3".into(),
                    procs: vec![proc_(0, "n1", 100)],
                },
            ],
            released: vec!["p@1".into()],
        };
        let t = PmixTables::assemble(7, reported, Some("n1"), |pid| pid < 20).unwrap();
        assert_eq!(t.tool_namespaces, ["p@2", "p@3"]);
        assert_eq!(t.namespaces.len(), 1);
        let pids: Vec<i32> = t.namespaces[0].proctable.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [10, 11, 12]);
        assert_eq!(t.namespaces[0].states[0].to_string(), "connected");
        assert_eq!(t.released, ["p@1"]);
    }

    #[test]
    fn a_rank_missing_from_a_table_is_refused() {
        let reported = Reported {
            version: String::new(),
            library: String::new(),
            own_nspace: String::new(),
            namespaces: vec![ReportedNamespace {
                nspace: "p@1".into(),
                procs: vec![proc_(0, "n2", 10), proc_(2, "n2", 12)],
            }],
            released: Vec::new(),
        };
        let err = PmixTables::assemble(7, reported, Some("n1"), |_| true).unwrap_err();
        assert!(
            err.to_string().contains("rank 2 where rank 1 belongs"),
            "{err}"
        );
    }
}
