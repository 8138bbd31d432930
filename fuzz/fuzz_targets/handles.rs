//! The MPICH handle resolver of `mpihandles` over an arbitrary synthetic
//! process (see `src/process.rs`) and an arbitrary layout of MPICH's
//! handle objects (the synthetic MPICH of `src/handles.rs` for the
//! process's pointer width, with offsets, widths and enumerator values
//! changed or removed by the input): every kind of handle resolved from
//! its C value and its Fortran INTEGER, statuses read at any address with
//! and without a datatype, each twice, and the handle bits decoded.
//!
//! ```text
//! input := process layout query{n % 33}
//! n     := u8
//! query := op:u8 value:u64 datatype:u32
//! ```
//!
//! `op % 10` is the kind ([`HandleKind::ALL`]), `op / 10 % 4` the call:
//! `resolve` of `value` as an i64, `resolve` of its low 32 bits as an
//! i32 (a handle as the program holds it), `resolve_fortran` of those
//! bits, or `status` at `value` (with `datatype` as the datatype handle
//! when the kind is a datatype).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::checks::{check_view, same};
use mpidd_fuzz::{handles, limits, Cursor, Process, HANDLE_SYMBOLS};
use mpidd_read::TargetMemory;
use mpidd_types::TargetAddr;
use mpihandles::mpich_handle_bits::MpichHandle;
use mpihandles::{HandleKind, HandleResolver, Mpich, StatusView};

/// Most queries one input makes.
const MAX_QUERIES: usize = 32;

fn check_status(s: &StatusView) {
    let _ = serde_json::to_string(s).expect("a status serializes");
}

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let process = Process::parse(&mut c, HANDLE_SYMBOLS);
    let word = process.abi().address_bytes() as u64;
    let types = handles::SPEC.read(&mut c, word);
    let limits = limits();
    let n = usize::from(c.u8()) % (MAX_QUERIES + 1);
    let queries: Vec<(u8, u64, u32)> = (0..n).map(|_| (c.u8(), c.u64(), c.u32())).collect();
    for &(_, value, _) in &queries {
        let _ = MpichHandle::decode(value as u32);
        let _ = MpichHandle::decode_request(value as u32);
    }
    let Ok(mpich) = Mpich::from_parts(&process, &process, &types, limits) else {
        return;
    };
    let _ = serde_json::to_string(mpich.implementation()).expect("a string serializes");
    let r: &dyn HandleResolver = &mpich;
    for (op, value, dt) in queries {
        let kind = HandleKind::ALL[usize::from(op) % HandleKind::ALL.len()];
        let low = value as u32 as i32;
        match op / 10 % 4 {
            call @ 0..=2 => {
                let ask = || match call {
                    0 => r.resolve(kind, value as i64),
                    1 => r.resolve(kind, i64::from(low)),
                    _ => r.resolve_fortran(kind, low),
                };
                let first = ask();
                if let Ok(v) = &first {
                    check_view(v, kind, &limits, limits.max_list_len);
                }
                same(&first, &ask());
            }
            _ => {
                let datatype = (kind == HandleKind::Datatype).then_some(i64::from(dt as i32));
                let ask = || r.status(TargetAddr(value), datatype);
                let first = ask();
                if let Ok(s) = &first {
                    check_status(s);
                }
                same(&first, &ask());
            }
        }
    }
});
