//! `mpihandles::read_ucx_worker` over an arbitrary synthetic process (see
//! `src/process.rs`) with UCX 1.13.1's real layouts (the shipped profile
//! of Debian's libucp, `src/ucx.rs`): the worker's expected queues (the
//! wildcard queue and the 1024 hashed ones), its unexpected list with each
//! descriptor's header, and its request pool chunk by chunk, read twice.
//!
//! ```text
//! input := process worker:u64
//! ```
//!
//! The worker is at the `ucp_worker` symbol when the process defines it,
//! else at `worker`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::ucx::{layouts, UCX_SYMBOLS, WORKER_SYMBOL};
use mpidd_fuzz::{limits, Cursor, Process};
use mpidd_read::SymbolSource;
use mpidd_types::TargetAddr;
use mpihandles::read_ucx_worker;

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let process = Process::parse(&mut c, UCX_SYMBOLS);
    let fallback = TargetAddr(c.u64());
    let worker = process.lookup(WORKER_SYMBOL).map_or(fallback, |s| s.addr);
    let limits = limits();
    let first = read_ucx_worker(&process, layouts(), worker, &limits);
    if let Ok(q) = &first {
        let _ = serde_json::to_string(q).expect("a worker's queues serialize");
        assert!(q.posted.len() as u64 <= limits.max_list_len);
        assert!(q.unexpected.len() as u64 <= limits.max_list_len);
        assert!((q.sends.len() + q.receives.len()) as u64 <= limits.max_table_entries);
        assert!(
            q.posted.windows(2).all(|w| w[0].sequence <= w[1].sequence),
            "posted receives out of posting order"
        );
    }
    let again = read_ucx_worker(&process, layouts(), worker, &limits);
    match (&first, &again) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "reading twice gave two answers"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("reading twice gave queues and an error"),
    }
});
