//! The DWARF type oracle on an arbitrary file (seeded with real objects
//! built with `gcc -g` for several CPUs and DWARF versions, and pieces of
//! the reference MPICH): every type the seeds define and some they do not,
//! each found type's members, their types and dotted paths to them, the
//! base-type sizes, the index statistics, and the offsets the MPICH queue
//! decoder resolves through the oracle. The oracle takes paths, so the
//! input goes to a tmpfs scratch file.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::scratch_file;
use mpidd_read::{SymbolTable, TypeLayout, TypeOracle};
use mpiq_core::{Layouts, MpichCh3};

const OBJECT: &str = "/fuzz/libtypes.so";

/// What the seeds define (the type-oracle test fixture and MPICH), what
/// they only declare, and what they lack.
const TYPES: &[&str] = &[
    "outer_alias_t",
    "struct outer",
    "outer_t",
    "struct inner",
    "struct flags",
    "union number",
    "number",
    "cv_handle_t",
    "struct basics",
    "elsewhere_t",
    "struct only_defined_elsewhere",
    "struct never_defined",
    "MPIR_Comm",
    "MPIR_Request",
    "MPIR_Comm_list",
    "MPIR_Sendq",
    "MPIDI_VCRT",
    "MPIR_Group",
    "MPIDI_Message_match",
    "MPIR_Process_t",
    "enum MPIR_Comm_kind_t",
    "int",
    "no_such_type",
];

/// Most members whose types are resolved, and most followed by a dotted
/// path, per type: each path costs a whole lookup, and a type with a
/// thousand members should cost no more than a small one.
const MAX_MEMBERS: usize = 16;
const MAX_PATHS: usize = 3;

fn explore(oracle: &TypeOracle, name: &str, layout: &TypeLayout) {
    let _ = format!("{layout:?}");
    let mut paths = 0;
    for field in layout.members.iter().take(MAX_MEMBERS) {
        let Ok(inner) = oracle.member_type(field) else {
            continue;
        };
        let (Some(first), Some(second)) = (
            &field.name,
            inner.members.iter().find_map(|m| m.name.as_ref()),
        ) else {
            continue;
        };
        if paths < MAX_PATHS {
            paths += 1;
            if let Ok(f) = oracle.offset_of(name, &format!("{first}.{second}")) {
                let _ = oracle.member_type(&f);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let path = scratch_file("types.so", data);
    let mut oracle = TypeOracle::new();
    oracle.add_object(OBJECT, &path, None);
    for &name in TYPES {
        match oracle.find_type(name) {
            Ok(layout) => explore(&oracle, name, &layout),
            Err(e) => {
                let _ = e.to_string();
            }
        }
        let _ = oracle.find_type_in(OBJECT, name);
        let _ = oracle.size_of(name);
    }
    let _ = oracle.offset_of("MPIR_Request", "dev.match.parts.tag");
    let _ = oracle.member_offset("MPIR_Comm", "dev");
    let _ = oracle.base_type_sizes();
    let _ = oracle.base_type_sizes_in(OBJECT);
    let _ = oracle.index_stats(OBJECT);
    let _ = MpichCh3::missing(&oracle, &SymbolTable::new());
});
