//! The ABIs the targets cycle through and the bounds every run is held to.

use mpidd_read::Limits;
use mpidd_types::{Packing, TargetAbi};

/// The ABI presets of `mpidd-types`, each read with natural and with
/// packed MPI-2 records.
pub const PRESETS: [TargetAbi; 7] = [
    TargetAbi::X86_64,
    TargetAbi::I686,
    TargetAbi::AARCH64,
    TargetAbi::ARMHF,
    TargetAbi::S390X,
    TargetAbi::POWERPC,
    TargetAbi::MIPS,
];

/// Every preset with every packing.
pub fn all_abis() -> impl Iterator<Item = TargetAbi> {
    PRESETS.iter().flat_map(|abi| {
        [Packing::Natural, Packing::Packed]
            .into_iter()
            .map(move |p| abi.with_packing(p))
    })
}

/// The ABI a selector byte stands for.
pub fn abi_from(selector: u8) -> TargetAbi {
    let n = PRESETS.len() * 2;
    let i = usize::from(selector) % n;
    let packing = if i.is_multiple_of(2) {
        Packing::Natural
    } else {
        Packing::Packed
    };
    PRESETS[i / 2].with_packing(packing)
}

/// The selector byte of an ABI (the inverse of [`abi_from`]).
pub fn abi_selector(abi: TargetAbi) -> u8 {
    (0..=u8::MAX)
        .find(|&s| abi_from(s) == abi)
        .expect("every preset with either packing has a selector")
}

/// Bounds small enough that one input can neither allocate much nor run
/// long, yet large enough for every seed to decode in full.
// Limits another change may add keep their defaults, hence the update.
#[allow(clippy::needless_update)]
pub fn limits() -> Limits {
    Limits {
        max_table_entries: 512,
        max_string_len: 512,
        max_walk_depth: 4,
        max_walk_processes: 16,
        max_list_len: 128,
        max_record_bytes: 1 << 16,
        ..Limits::default()
    }
}
