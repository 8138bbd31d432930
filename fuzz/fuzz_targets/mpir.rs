//! The MPIR reader over an arbitrary synthetic process: any subset of the
//! MPIR symbols, anywhere in any memory, with any sizes (see
//! `src/process.rs` for the input format). Also the debugger's two writes, which must touch
//! nothing but their own variable.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::{assert_only_changed, limits, names::MPIR as NAMES, Cursor, Process};
use mpidd_read::mpir::{self, names};
use mpidd_read::{SymbolSource, TargetMemory};

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let process = Process::parse(&mut c, NAMES);
    let limits = limits();
    if let Ok(state) = mpir::read_state(&process, &limits) {
        assert!(state.proctable.len() as u64 <= limits.max_table_entries);
        for p in &state.proctable {
            assert!(p.host_name.len() <= 3 * limits.max_string_len);
        }
        let _ = serde_json::to_string(&state).expect("the state serializes");
    }

    for (name, value) in [(names::BEING_DEBUGGED, 1), (names::DEBUG_GATE, 1)] {
        let mut written = process.clone();
        let done = if name == names::BEING_DEBUGGED {
            mpir::set_being_debugged(&mut written.memory, &process, value)
        } else {
            mpir::release_gate(&mut written.memory, &process)
        };
        let Some(sym) = process.lookup(name) else {
            assert!(matches!(done, Ok(false)), "{name} written without a symbol");
            continue;
        };
        // SyntheticMemory writes memory mapped past a 32-bit target's
        // address space, which reads refuse; only readable writes are
        // read back.
        if let (Ok(true), Ok(got)) = (done, written.memory.read_i32(sym.addr, name)) {
            assert_eq!(got, value, "{name} read back");
        }
        assert_only_changed(&process.memory, &written.memory, sym.addr, 4);
    }
});
