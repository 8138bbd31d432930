//! `mpihandles::derive_mpich_layouts` (twice) over an arbitrary synthetic
//! process with MPICH's handle symbols: the layouts of a library with
//! symbols but no debug info (Intel MPI) found from its allocator records,
//! direct arrays, builtin objects and predefined communicators, accepted
//! only when every check holds. Then `mpihandles::check_layouts`, the
//! check every layout profile passes before use, with the layouts derived
//! and with the `handles` target's layout table bent by the input.
//!
//! ```text
//! input := process layout
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::{handles, limits, Cursor, Process, HANDLE_SYMBOLS};
use mpidd_read::TargetMemory;
use mpihandles::{check_layouts, derive_mpich_layouts};

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let process = Process::parse(&mut c, HANDLE_SYMBOLS);
    let word = process.abi().address_bytes() as u64;
    let bent = handles::SPEC.read(&mut c, word);
    let limits = limits();
    let first = derive_mpich_layouts(&process, &process);
    let again = derive_mpich_layouts(&process, &process);
    // The same process gives the same layouts, or the same refusal.
    assert_eq!(format!("{first:?}"), format!("{again:?}"));
    if let Ok(derived) = &first {
        assert!(
            !derived.checked.is_empty(),
            "layouts accepted with no check held"
        );
        let _ = check_layouts(&process, &process, &derived.table, &limits);
    }
    let checked = check_layouts(&process, &process, &bent, &limits);
    assert_eq!(
        checked,
        check_layouts(&process, &process, &bent, &limits),
        "the check of one process gives one answer"
    );
});
