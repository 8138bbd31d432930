//! What one PMIx tool session was told, as plain data: what a helper
//! process hands back as JSON, and what [`super::PmixTables`] is made of.

use serde::{Deserialize, Serialize};

/// One process as the server reported it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ReportedProc {
    pub(crate) rank: u32,
    pub(crate) host_name: String,
    pub(crate) executable_name: String,
    pub(crate) pid: i32,
    pub(crate) exit_code: i32,
    pub(crate) state: u8,
}

/// One namespace's table as the server reported it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ReportedNamespace {
    pub(crate) nspace: String,
    pub(crate) procs: Vec<ReportedProc>,
}

/// The answers of one session: what a helper process hands back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Reported {
    /// `PMIx_Get_version`.
    pub(crate) version: String,
    /// The library, as the launcher's map names it.
    pub(crate) library: String,
    /// This tool's own namespace.
    pub(crate) own_nspace: String,
    pub(crate) namespaces: Vec<ReportedNamespace>,
    /// The namespaces sent `PMIX_DEBUGGER_RELEASE`, when asked.
    #[serde(default)]
    pub(crate) released: Vec<String>,
}
