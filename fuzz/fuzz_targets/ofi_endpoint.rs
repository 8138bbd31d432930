//! `mpihandles::read_ofi_endpoint` over an arbitrary synthetic process (see
//! `src/process.rs`) with libfabric 1.17.0's real layouts (the shipped
//! profile of Debian's libfabric, `src/ofi.rs`): the endpoint's provider
//! record, then shm's receive context (four rings of receive entries, each
//! unexpected one's command) and its table of sends, or rxm's two receive
//! queues (rings of receive entries and of receive buffers), read twice.
//!
//! ```text
//! input := process endpoint:u64
//! ```
//!
//! The endpoint is at the `fi_endpoint` symbol when the process defines
//! it, else at `endpoint`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::ofi::{layouts, ENDPOINT_SYMBOL, OFI_SYMBOLS};
use mpidd_fuzz::{limits, Cursor, Process};
use mpidd_read::SymbolSource;
use mpidd_types::TargetAddr;
use mpihandles::read_ofi_endpoint;

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let process = Process::parse(&mut c, OFI_SYMBOLS);
    let fallback = TargetAddr(c.u64());
    let endpoint = process.lookup(ENDPOINT_SYMBOL).map_or(fallback, |s| s.addr);
    let limits = limits();
    let first = read_ofi_endpoint(&process, layouts(), endpoint, &limits);
    if let Ok(q) = &first {
        let _ = serde_json::to_string(q).expect("an endpoint's queues serialize");
        // Two rings each, each within the limit.
        assert!(q.posted.len() as u64 <= 2 * limits.max_list_len);
        assert!(q.unexpected.len() as u64 <= 2 * limits.max_list_len);
        assert!(q.sends.len() as u64 <= limits.max_table_entries);
        assert!(
            q.posted.windows(2).all(|w| w[0].tagged || !w[1].tagged),
            "tagged receives come first"
        );
    }
    let again = read_ofi_endpoint(&process, layouts(), endpoint, &limits);
    match (&first, &again) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "reading twice gave two answers"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("reading twice gave queues and an error"),
    }
});
