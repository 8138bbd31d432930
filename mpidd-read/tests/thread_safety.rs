//! A debugger's extensions must be `Send + Sync`: these fail to compile
//! when a type that a debugger keeps across threads stops being so.
//!
//! `ReadBudget` borrows the memory it wraps and is as thread-safe as it
//! (checked below over a core). `LayeredLayouts` borrows `&dyn Layouts`
//! and is built per process, so it is left out, as is the DWARF walker's
//! per-query unit cache, which is internal.

use mpidd_read::*;

fn assert_send_sync<T: Send + Sync + ?Sized>() {}

#[test]
fn backends_are_send_and_sync() {
    assert_send_sync::<CoreFile>();
    assert_send_sync::<GdbRemote>();
    #[cfg(all(feature = "live", target_os = "linux"))]
    assert_send_sync::<LiveProcess>();
    assert_send_sync::<SyntheticMemory>();
    assert_send_sync::<ReadBudget<'static, CoreFile>>();
}

#[test]
fn targets_are_send_and_sync() {
    assert_send_sync::<CoreTarget>();
    assert_send_sync::<GdbRemoteTarget>();
    #[cfg(all(feature = "live", target_os = "linux"))]
    assert_send_sync::<LiveTarget>();
    assert_send_sync::<SyntheticJob>();
}

#[test]
fn symbols_types_and_layouts_are_send_and_sync() {
    assert_send_sync::<ElfSymbols>();
    assert_send_sync::<SymbolTable>();
    assert_send_sync::<TypeOracle>();
    assert_send_sync::<LoadedLayouts>();
    assert_send_sync::<LayoutTable>();
    assert_send_sync::<LayoutProfile>();
    assert_send_sync::<LayoutCache>();
    assert_send_sync::<DebugSearch>();
}

#[test]
fn stacks_are_send_and_sync() {
    assert_send_sync::<StackUnwinder>();
    assert_send_sync::<ThreadStack>();
    assert_send_sync::<ThreadRegisters>();
}

#[test]
fn errors_are_send_and_sync() {
    assert_send_sync::<ReadError>();
    assert_send_sync::<CoreError>();
    assert_send_sync::<GdbRemoteError>();
    assert_send_sync::<TypeError>();
    assert_send_sync::<LayoutError>();
    assert_send_sync::<SymbolError>();
    assert_send_sync::<CoreTargetError>();
    #[cfg(all(feature = "live", target_os = "linux"))]
    assert_send_sync::<LiveError>();
}

/// One core shared by threads that read it at once gives each what it
/// gives one thread alone: the segment hint they share is only a hint.
#[test]
fn a_shared_core_reads_the_same_from_every_thread() {
    let ranks: Vec<(String, String, i32)> = (0..64)
        .map(|r| (format!("node{}", r % 5), format!("/bin/rank{r}"), 100 + r))
        .collect();
    let spec: Vec<_> = ranks
        .iter()
        .map(|(h, e, p)| (h.as_str(), e.as_str(), *p))
        .collect();
    let job = SyntheticJob::builder(mpidd_types::TargetAbi::S390X)
        .pid(4242)
        .mpir_starter(&spec)
        .build();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("thread_safety");
    std::fs::create_dir_all(&dir).unwrap();
    let (core, exe) = (dir.join("job.core"), dir.join("mpirun"));
    job.write_files(&core, &exe, SyntheticCoreOptions::default())
        .unwrap();
    let core = CoreFile::open(&core).unwrap();
    // Every segment the builder wrote, as the builder holds it.
    let segments: Vec<(mpidd_types::TargetAddr, Vec<u8>)> = job
        .memory
        .segments()
        .map(|(a, b)| (a, b.to_vec()))
        .collect();
    assert!(segments.len() > 1, "the job spans several segments");
    let (core, segments) = (&core, &segments);
    std::thread::scope(|s| {
        for t in 0..4usize {
            s.spawn(move || {
                for round in 0..500usize {
                    // Threads hop between segments in different orders, so
                    // each often finds another thread's hint.
                    let (addr, bytes) = &segments[(round * (t + 1) + t) % segments.len()];
                    let mut buf = vec![0u8; bytes.len()];
                    core.read_exact(*addr, &mut buf, "segment").unwrap();
                    assert_eq!(&buf, bytes, "segment at {addr:?}");
                }
            });
        }
    });
}
