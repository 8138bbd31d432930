//! What the `ucx_worker` target reads a UCP worker with: the layouts of
//! the profile mpidd ships for Debian 12's libucp 1.13.1 (x86_64, the real
//! offsets gcc gives UCX's structs), and the one symbol its processes may
//! define, which marks the worker so that it moves with its segment.

use std::sync::OnceLock;

use mpidd_read::{shipped_profiles, LayoutTable};

/// The symbol naming the worker's address in a `ucx_worker` input.
pub const WORKER_SYMBOL: &str = "ucp_worker";

/// The symbols a `ucx_worker` process can define.
pub const UCX_SYMBOLS: &[&str] = &[WORKER_SYMBOL];

/// The shipped UCX 1.13.1 profile's layouts, parsed once.
pub fn layouts() -> &'static LayoutTable {
    static LAYOUTS: OnceLock<LayoutTable> = OnceLock::new();
    LAYOUTS.get_or_init(|| {
        shipped_profiles()
            .into_iter()
            .find(|p| p.identity.implementation == "UCX" && p.identity.version == "1.13.1")
            .expect("mpidd-read ships the UCX 1.13.1 profile")
            .layouts
    })
}
