//! What the `ofi_endpoint` target reads a libfabric endpoint with: the
//! layouts of the profile mpidd ships for Debian 12's libfabric 1.17.0
//! (x86_64, the real offsets gcc gives libfabric's structs), and the one
//! symbol its processes may define, which marks the endpoint so that it
//! moves with its segment.

use std::sync::OnceLock;

use mpidd_read::{shipped_profiles, LayoutTable};

/// The symbol naming the endpoint's address in an `ofi_endpoint` input.
pub const ENDPOINT_SYMBOL: &str = "fi_endpoint";

/// The symbols an `ofi_endpoint` process can define.
pub const OFI_SYMBOLS: &[&str] = &[ENDPOINT_SYMBOL];

/// The shipped libfabric 1.17.0 profile's layouts, parsed once.
pub fn layouts() -> &'static LayoutTable {
    static LAYOUTS: OnceLock<LayoutTable> = OnceLock::new();
    LAYOUTS.get_or_init(|| {
        shipped_profiles()
            .into_iter()
            .find(|p| p.identity.implementation == "libfabric" && p.identity.version == "1.17.0")
            .expect("mpidd-read ships the libfabric 1.17.0 profile")
            .layouts
    })
}
