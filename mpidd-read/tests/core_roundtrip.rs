//! Synthetic jobs written as real ELF cores and executables, read back
//! through the core-file backend and ELF symbol lookup.

use std::path::PathBuf;

use mpidd_read::mpir;
use mpidd_read::{
    CoreTarget, CoreTargetError, Limits, SymbolSource, SyntheticCoreOptions, SyntheticJob,
    TargetMemory,
};
use mpidd_types::{AddressWidth, ByteOrder, MpirDebugState, TargetAbi};
use proptest::prelude::*;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("core_roundtrip")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const ABIS: [(&str, TargetAbi); 4] = [
    ("x86_64", TargetAbi::X86_64),
    ("i686", TargetAbi::I686),
    ("s390x", TargetAbi::S390X),
    ("powerpc", TargetAbi::POWERPC),
];

fn ranks(n: i32) -> Vec<(String, String, i32)> {
    (0..n)
        .map(|r| {
            (
                format!("node{:03}", r / 4),
                format!("/opt/app/bin/rank{}", r % 3),
                1000 + r,
            )
        })
        .collect()
}

#[test]
fn every_abi_round_trips_through_a_core_file() {
    for (name, abi) in ABIS {
        for omit_nt_file in [false, true] {
            let dir = scratch(&format!("{name}-{omit_nt_file}"));
            let spec = ranks(37);
            let spec_ref: Vec<_> = spec
                .iter()
                .map(|(h, e, p)| (h.as_str(), e.as_str(), *p))
                .collect();
            let job = SyntheticJob::builder(abi)
                .pid(31337)
                .mpir_starter(&spec_ref)
                .mpir_dll_name("/usr/lib/libtvmpich.so")
                .build();
            let (core, exe) = (dir.join("job.core"), dir.join("mpirun"));
            job.write_files(&core, &exe, SyntheticCoreOptions { omit_nt_file })
                .unwrap();

            let exe_arg = omit_nt_file.then_some(exe.as_path());
            let target = CoreTarget::open(&core, exe_arg, None).unwrap();
            assert_eq!(target.core().pids(), &[31337]);
            let t = target.core();
            assert_eq!(t.abi().byte_order, abi.byte_order, "{name}");
            assert_eq!(t.abi().address_width, abi.address_width);
            let raw = mpidd_read::CoreFile::open(&core).unwrap();
            assert_eq!(raw.mapped_files().is_empty(), omit_nt_file, "{name}");
            // Without NT_FILE the executable's own segments stand in for it.
            assert!(!t.mapped_files().is_empty());

            // The symbols come from the executable's .symtab plus the bias,
            // so they must land where the builder put the globals.
            for sym in job.symbols.iter() {
                let found = target.lookup(&sym.name).unwrap();
                assert_eq!(found.addr, sym.addr, "{name}: {}", sym.name);
                assert_eq!(found.size, sym.size, "{name}: {}", sym.name);
            }
            // What the core lends is what a read copies.
            let mut lent = 0;
            for sym in job.symbols.iter() {
                let len = sym.size as usize;
                if let Some(bytes) = mpidd_read::TargetMemory::mapped(&target, sym.addr, len) {
                    let mut copy = vec![0; len];
                    mpidd_read::TargetMemory::read_exact(&target, sym.addr, &mut copy, "symbol")
                        .unwrap();
                    assert_eq!(bytes, &copy[..], "{name}: {}", sym.name);
                    lent += 1;
                }
            }
            assert!(lent > 0, "{name}: the core lent no symbol's bytes");
            let state = mpir::read_state(&target, &Limits::default()).unwrap();
            assert_eq!(state.debug_state, MpirDebugState::Spawned);
            assert_eq!(state.dll_name.as_deref(), Some("/usr/lib/libtvmpich.so"));
            let got: Vec<_> = state
                .proctable
                .iter()
                .map(|p| {
                    (
                        p.host_name.to_string(),
                        p.executable_name.to_string(),
                        p.pid,
                    )
                })
                .collect();
            assert_eq!(got, spec, "{name}");
        }
    }
}

#[test]
fn a_core_without_nt_file_needs_the_executable() {
    let dir = scratch("no-exe");
    let job = SyntheticJob::builder(TargetAbi::S390X)
        .mpir_starter(&[("a", "b", 1)])
        .build();
    let core = dir.join("job.core");
    job.write_files(
        &core,
        &dir.join("mpirun"),
        SyntheticCoreOptions { omit_nt_file: true },
    )
    .unwrap();
    let err = CoreTarget::open(&core, None, None).unwrap_err();
    assert!(matches!(err, CoreTargetError::NoExecutable { .. }), "{err}");
    assert!(err.to_string().contains("qemu-user"), "{err}");
}

#[test]
fn a_sysroot_finds_moved_files() {
    let dir = scratch("sysroot");
    let job = SyntheticJob::builder(TargetAbi::I686)
        .mpir_starter(&[("a", "b", 1)])
        .build();
    // The core records /opt/mpirun; the file really sits under dir/root.
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("opt")).unwrap();
    let core = dir.join("job.core");
    let moved = root.join("opt/mpirun");
    job.write_files(&core, &moved, SyntheticCoreOptions::default())
        .unwrap();
    // Rewrite the core so that it names /opt/mpirun instead.
    let bytes = std::fs::read(&core).unwrap();
    let recorded = moved.to_string_lossy().into_owned();
    let pos = bytes
        .windows(recorded.len())
        .position(|w| w == recorded.as_bytes())
        .unwrap();
    let mut patched = bytes[..pos].to_vec();
    let replacement = format!(
        "/opt/mpirun{}",
        "\0".repeat(recorded.len() - "/opt/mpirun".len())
    );
    patched.extend_from_slice(replacement.as_bytes());
    patched.extend_from_slice(&bytes[pos + recorded.len()..]);
    std::fs::write(&core, patched).unwrap();

    assert!(CoreTarget::open(&core, None, None).is_err());
    let target = CoreTarget::open(&core, None, Some(&root)).unwrap();
    let state = mpir::read_state(&target, &Limits::default()).unwrap();
    assert_eq!(state.proctable.len(), 1);
}

#[test]
fn garbage_is_not_a_core() {
    let dir = scratch("garbage");
    let p = dir.join("not-a-core");
    std::fs::write(&p, b"\x7fELF\x02\x01\x01 truncated").unwrap();
    let err = CoreTarget::open(&p, None, None).unwrap_err();
    assert!(err.to_string().contains("not an ELF core file"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random jobs on random ABIs survive the trip through real files.
    #[test]
    fn random_jobs_round_trip(
        order in prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)],
        width in prop_oneof![Just(AddressWidth::W32), Just(AddressWidth::W64)],
        spec in proptest::collection::vec(("[a-z0-9]{1,12}", "/[a-z/]{1,30}", any::<i32>()), 0..50),
        case in 0u32..1_000_000,
    ) {
        let abi = TargetAbi::new(order, width);
        let dir = scratch(&format!("prop-{case}"));
        let spec_ref: Vec<_> = spec.iter().map(|(h, e, p)| (h.as_str(), e.as_str(), *p)).collect();
        let job = SyntheticJob::builder(abi).mpir_starter(&spec_ref).build();
        let (core, exe) = (dir.join("c"), dir.join("e"));
        job.write_files(&core, &exe, SyntheticCoreOptions::default()).unwrap();
        let target = CoreTarget::open(&core, None, None).unwrap();
        let state = mpir::read_state(&target, &Limits::default()).unwrap();
        let got: Vec<_> = state.proctable.iter()
            .map(|p| (p.host_name.to_string(), p.executable_name.to_string(), p.pid)).collect();
        prop_assert_eq!(got, spec);
        std::fs::remove_dir_all(&dir).ok();
    }
}
