//! A `Session` as a debugger holds it across stops: the caller's own
//! memory, symbols, types and list of loaded objects (no `ElfSymbols`, no
//! DWARF read here); the layouts resolved at the first stop are kept for
//! the build and said to be; each reading says what it rests on.

mod common;

use common::{layout, process, LIBRARY};
use mpidd_read::{LayoutOrigin, LayoutTable, ObjectInfo, TargetAbi, TargetParts};
use mpiq_core::{DecoderKind, Session};

/// The objects as a debugger lists them: the MPI library's name, read
/// from a real file (this test's own executable) so its build can be told.
fn objects() -> Vec<ObjectInfo> {
    let file = std::env::current_exe().expect("the test's executable");
    vec![ObjectInfo::new(LIBRARY, file, 0)]
}

#[test]
fn the_callers_types_are_used_and_kept_across_stops() {
    let (memory, symbols) = process(TargetAbi::X86_64);
    let types = layout();
    let target = TargetParts {
        memory: &memory,
        symbols: &symbols,
        layouts: &types,
    };
    let objects = objects();
    let session = Session::with_profiles(Vec::new());

    let first = session.read_queues(&target, &objects).unwrap();
    let world = &first.queues.communicators[0];
    assert_eq!(world.pending_receives.operations().len(), 2);
    assert_eq!(world.unexpected_messages.operations().len(), 1);
    let p = &first.provenance;
    assert_eq!(p.decoder(), DecoderKind::MpichCh3);
    assert_eq!(p.identified.version, "4.0.2");
    assert_eq!(p.identified.device, "ch3:nemesis");
    assert_eq!(p.identified.library, LIBRARY);
    assert_eq!(p.layouts, LayoutOrigin::Caller);
    assert!(!p.reused, "the first stop resolves");
    assert_eq!(
        p.to_string(),
        "decoder mpich-ch3 (checked on MPICH 4.0.2 with ch3:nemesis) on libmpi.so.12 \
         (4.0.2, ch3:nemesis), layouts from the caller's types"
    );

    // A later stop of the same build: the same queues, from the layouts
    // kept at the first, even though the caller now hands in none.
    let none = LayoutTable::default();
    let bare = TargetParts {
        memory: &memory,
        symbols: &symbols,
        layouts: &none,
    };
    let later = session.read_queues(&bare, &objects).unwrap();
    assert_eq!(later.queues, first.queues);
    assert!(later.provenance.reused);
    assert_eq!(later.provenance.layouts, LayoutOrigin::Caller);
    assert!(later
        .provenance
        .to_string()
        .ends_with("(kept from an earlier stop)"));
}

#[test]
fn a_new_session_without_the_callers_types_says_what_is_missing() {
    let (memory, symbols) = process(TargetAbi::X86_64);
    let none = LayoutTable::default();
    let target = TargetParts {
        memory: &memory,
        symbols: &symbols,
        layouts: &none,
    };
    let e = Session::with_profiles(Vec::new())
        .read_queues(&target, &objects())
        .unwrap_err();
    let text = e.to_string();
    assert!(text.contains("MPIR_Comm"), "{text}");
    // The types asked for are the decoder's: what the caller's must
    // answer.
    assert!(DecoderKind::MpichCh3.missing_layouts(&layout()).is_empty());
    assert!(!DecoderKind::MpichCh3.missing_layouts(&none).is_empty());
}

#[test]
fn another_build_of_the_library_is_resolved_again() {
    // The same process seen with its library at another file: another
    // build, so nothing kept for the first applies to it.
    let (memory, symbols) = process(TargetAbi::X86_64);
    let types = layout();
    let target = TargetParts {
        memory: &memory,
        symbols: &symbols,
        layouts: &types,
    };
    let session = Session::with_profiles(Vec::new());
    assert!(
        !session
            .read_queues(&target, &objects())
            .unwrap()
            .provenance
            .reused
    );
    let other = vec![ObjectInfo::new(LIBRARY, "/bin/sh", 0)];
    let again = session.read_queues(&target, &other).unwrap();
    assert!(!again.provenance.reused);
    assert!(
        session
            .read_queues(&target, &other)
            .unwrap()
            .provenance
            .reused
    );
}
