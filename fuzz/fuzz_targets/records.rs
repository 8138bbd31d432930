//! Every `mpidd-types` record decoded from arbitrary bytes, for every ABI
//! preset and packing, then encoded again.
//!
//! Checked beyond "no panic": the record decoder and its scroll glue agree;
//! decoding fails exactly when the bytes are shorter than the record;
//! encoding a decoded record gives back the input's bytes in every field
//! and zeros in the padding, and decodes to the same value; and encoding
//! for another ABI either fits or says why, never panics.

#![no_main]

use std::fmt::Debug;

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::{abi_from, all_abis};
use mpidd_types::{
    Mpi2ddDirectoryEntry, Mpi2ddInfo, Mpi2ddProcdesc, Mpi2ddSpawndesc, MpirProcdesc,
    MqsCommunicatorRecord, MqsPendingOperationRecord, Record, TargetAbi, TypesError,
};
use scroll::ctx::TryFromCtx;
use scroll::Pread;
use serde::Serialize;

fn check<R>(bytes: &[u8], abi: TargetAbi, other: TargetAbi)
where
    R: Record
        + PartialEq
        + Debug
        + Serialize
        + for<'a> TryFromCtx<'a, TargetAbi, Error = TypesError>,
{
    let size = R::size_for(abi);
    let layout = R::layout(abi);
    assert_eq!(
        layout.size,
        size,
        "{} layout and size_for disagree",
        R::C_NAME
    );

    let decoded = R::decode(bytes, abi);
    let scrolled: Result<R, TypesError> = bytes.pread_with(0, abi);
    let value = match (decoded, scrolled) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "{}: decode and pread_with disagree", R::C_NAME);
            a
        }
        (Err(_), Err(_)) => {
            assert!(
                bytes.len() < size,
                "{} refused {} bytes, needs {size}",
                R::C_NAME,
                bytes.len()
            );
            return;
        }
        (a, b) => panic!("{}: decode {a:?} but pread_with {b:?}", R::C_NAME),
    };
    assert!(
        bytes.len() >= size,
        "{} decoded from too few bytes",
        R::C_NAME
    );
    let _ = serde_json::to_string(&value).expect("records always serialize");

    let encoded = value
        .to_bytes(abi)
        .expect("a decoded record encodes for its own ABI");
    assert_eq!(encoded.len(), size);
    for slot in &layout.fields {
        let r = slot.offset..slot.offset + slot.size;
        assert_eq!(
            encoded[r.clone()],
            bytes[r],
            "{}.{} changed",
            R::C_NAME,
            slot.field.name
        );
    }
    for gap in layout.padding() {
        assert!(
            encoded[gap].iter().all(|&b| b == 0),
            "{} padding not zeroed",
            R::C_NAME
        );
    }
    assert_eq!(R::decode(&encoded, abi).expect("re-decode"), value);

    // A value from a 64-bit target does not always fit a 32-bit one, which
    // must be an error; when it fits, it must come back unchanged.
    let mut out = vec![0u8; R::size_for(other)];
    if value.encode(&mut out, other).is_ok() {
        let back = R::decode(&out, other).expect("what was encoded decodes");
        assert_eq!(back, value, "{} changed through {other}", R::C_NAME);
    }
    // A buffer one byte short is refused, not overrun.
    if size > 0 {
        let mut short = vec![0u8; size - 1];
        assert!(value.encode(&mut short, abi).is_err());
    }
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the ABI each value is re-encoded for.
    let Some((&sel, bytes)) = data.split_first() else {
        return;
    };
    let other = abi_from(sel);
    for abi in all_abis() {
        check::<MpirProcdesc>(bytes, abi, other);
        check::<Mpi2ddInfo>(bytes, abi, other);
        check::<Mpi2ddProcdesc>(bytes, abi, other);
        check::<Mpi2ddSpawndesc>(bytes, abi, other);
        check::<Mpi2ddDirectoryEntry>(bytes, abi, other);
        check::<MqsCommunicatorRecord>(bytes, abi, other);
        check::<MqsPendingOperationRecord>(bytes, abi, other);
    }
});
