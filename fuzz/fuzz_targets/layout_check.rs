//! A release family's choice and the check every profile or family passes
//! on a process before anything is read through it, over an arbitrary
//! synthetic process and arbitrary layouts: the Open MPI check (the
//! predefined communicators' names and ranks, a debug build's object
//! magic, each object's class and its size) or MPICH's (the builtin
//! communicators' handles and names), then every shipped family asked
//! whether an arbitrary stated build is of it.
//!
//! ```text
//! input  := which:u8 rest
//! rest   := an `ompi_handles` input (which even) or a `handles` input
//!           (which odd): a process, then the handle objects' layout;
//!           what follows is the stated build
//! stated := arch:u8 version:bytes{..64}
//! ```

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::{handles, limits, ompi_handles, Cursor, Process, HANDLE_SYMBOLS};
use mpidd_read::{LayoutFamily, ProfileSet, StatedBuild, TargetMemory};
use mpihandles::{check_layouts, OMPI_SYMBOLS};

/// The architectures a stated build may name: the families', and others.
const ARCHES: [&str; 4] = ["x86_64", "aarch64", "x86_64-be", ""];

/// The families the shipped profiles declare, parsed once.
fn families() -> &'static [LayoutFamily] {
    static FAMILIES: OnceLock<Vec<LayoutFamily>> = OnceLock::new();
    FAMILIES.get_or_init(|| {
        ProfileSet::shipped()
            .all()
            .iter()
            .flat_map(|p| p.families().map(|(f, _)| f.clone()).collect::<Vec<_>>())
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let ompi = c.u8() & 1 == 0;
    let (process, types) = if ompi {
        let process = Process::parse(&mut c, OMPI_SYMBOLS);
        let word = process.abi().address_bytes() as u64;
        let types = ompi_handles::table(&ompi_handles::parse(&mut c, word), word);
        (process, types)
    } else {
        let process = Process::parse(&mut c, HANDLE_SYMBOLS);
        let word = process.abi().address_bytes() as u64;
        let types = handles::SPEC.read(&mut c, word);
        (process, types)
    };
    let limits = limits();
    let first = check_layouts(&process, &process, &types, &limits);
    if let Err(refused) = &first {
        assert!(!refused.0.is_empty(), "a refusal that says nothing");
        assert!(
            !refused.0.contains('\n'),
            "a refusal of more than one line: {refused}"
        );
    }
    assert_eq!(first, check_layouts(&process, &process, &types, &limits));

    let arch = ARCHES[usize::from(c.u8()) % ARCHES.len()];
    let version = String::from_utf8_lossy(c.take(64)).into_owned();
    for family in families() {
        for implementation in ["Open MPI", "MPICH", family.implementation.as_str()] {
            let device = ["ch3:nemesis", "ch4:ucx", ""][usize::from(c.u8()) % 3];
            let stated = StatedBuild {
                implementation,
                version: &version,
                arch,
                device: (!device.is_empty()).then_some(device),
            };
            let why = family.mismatch(&stated);
            assert_eq!(family.contains(&stated), why.is_none());
            if let Some(why) = why {
                assert!(!why.is_empty() && !why.contains('\n'), "{why:?}");
            }
        }
    }
});
