//! The Open MPI handle resolver of `mpihandles` over an arbitrary
//! synthetic process (see `src/process.rs`) and an arbitrary layout of
//! Open MPI's handle objects (the synthetic layout of
//! `src/ompi_handles.rs` for the process's pointer width, with sizes,
//! offsets, widths and enumerator values changed or removed by the input):
//! every kind of handle resolved from its pointer and its Fortran INTEGER,
//! statuses read at any address with and without a datatype, each twice.
//!
//! ```text
//! input := process layout query{n % 33}
//! n     := u8
//! query := op:u8 value:u64 datatype:u64
//! ```
//!
//! `op % 10` is the kind ([`HandleKind::ALL`]), `op / 10 % 3` the call:
//! `resolve` of `value` as an i64, `resolve_fortran` of its low 32 bits,
//! or `status` at `value` (with `datatype` as the datatype pointer when the
//! kind is a datatype).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::checks::{check_view, same};
use mpidd_fuzz::{limits, ompi_handles, Cursor, Process};
use mpidd_read::TargetMemory;
use mpidd_types::TargetAddr;
use mpihandles::{ompi_missing_layouts, HandleKind, HandleResolver, Ompi, OMPI_SYMBOLS};

/// Most queries one input makes.
const MAX_QUERIES: usize = 32;

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let process = Process::parse(&mut c, OMPI_SYMBOLS);
    let word = process.abi().address_bytes() as u64;
    let types = ompi_handles::table(&ompi_handles::parse(&mut c, word), word);
    let limits = limits();
    let n = usize::from(c.u8()) % (MAX_QUERIES + 1);
    let queries: Vec<(u8, u64, u64)> = (0..n).map(|_| (c.u8(), c.u64(), c.u64())).collect();
    let missing = ompi_missing_layouts(&types);
    let Ok(ompi) = Ompi::from_parts(&process, &process, &types, limits) else {
        return;
    };
    assert!(
        missing.is_empty(),
        "a resolver made without every required layout"
    );
    let _ = serde_json::to_string(ompi.implementation_name()).expect("a string serializes");
    let r: &dyn HandleResolver = &ompi;
    for (op, value, dt) in queries {
        let kind = HandleKind::ALL[usize::from(op) % HandleKind::ALL.len()];
        match op / 10 % 3 {
            call @ 0..=1 => {
                let ask = || match call {
                    0 => r.resolve(kind, value as i64),
                    _ => r.resolve_fortran(kind, value as u32 as i32),
                };
                let first = ask();
                if let Ok(v) = &first {
                    check_view(v, kind, &limits, limits.max_table_entries);
                }
                same(&first, &ask());
            }
            _ => {
                let datatype = (kind == HandleKind::Datatype).then_some(dt as i64);
                let ask = || r.status(TargetAddr(value), datatype);
                let first = ask();
                if let Ok(s) = &first {
                    let _ = serde_json::to_string(s).expect("a status serializes");
                }
                same(&first, &ask());
            }
        }
    }
});
