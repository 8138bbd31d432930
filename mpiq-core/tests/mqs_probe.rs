//! The mqs host against a small C library (tests/c/probe_dll.c) that calls
//! every callback and reports what it saw. The library is compiled here
//! against the interface header MPICH installs, so the host's C layouts are
//! checked against the vendor's declarations, not against our own.
//!
//! The target is synthetic: nodes laid out by hand by the C rules of each
//! ABI, with the type's DWARF from the ABI's own cross compiler.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock, RwLock};

use mpidd_read::{Limits, SymbolTable, SyntheticMemory, TypeOracle};
use mpidd_types::{ByteOrder, TargetAbi, TargetAddr};
use mpiq_core::model::Queue;
use mpiq_core::{MqsError, MqsLibrary, MqsTarget, TargetTypeSizes};

fn ref_mpich() -> PathBuf {
    let prefix = std::env::var_os("MPIDD_REF_MPICH")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
                .join(".cache/mpidd/mpich-4.0.2")
        });
    assert!(
        prefix.join("include/mpi_interface.h").exists(),
        "the reference MPICH is not built at {}: run `bash scripts/build-ref-mpich.sh` (scripts/test.sh does)",
        prefix.display()
    );
    prefix
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mpiq-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {cmd:?}: {e} (scripts/test.sh installs the compilers)")
    });
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn probe_library() -> &'static MqsLibrary {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    let path = LIB.get_or_init(|| {
        let out = scratch().join("libprobe_mqs.so");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/probe_dll.c");
        run(Command::new("gcc")
            .args([
                "-shared",
                "-fPIC",
                "-O1",
                "-Wall",
                "-Werror",
                "-Wno-unused-parameter",
                "-Wno-format-truncation",
                "-I",
            ])
            .arg(ref_mpich().join("include"))
            .arg("-o")
            .arg(&out)
            .arg(src));
        out
    });
    MqsLibrary::load(path).expect("the probe library loads")
}

/// The type's DWARF, compiled by the ABI's own compiler.
fn types_object(compiler: &str) -> PathBuf {
    // Tests run in parallel: build each ABI's object once.
    static BUILT: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, path)) = built.iter().find(|(c, _)| c == compiler) {
        return path.clone();
    }
    // Linked, because the DWARF of a relocatable .o is not final.
    let out = scratch().join(format!("probe_types-{compiler}.so"));
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/probe_types.c");
    run(Command::new(compiler)
        .args(["-g", "-shared", "-fPIC", "-nostdlib", "-o"])
        .arg(&out)
        .arg(src));
    built.push((compiler.to_string(), out.clone()));
    out
}

/// How `struct probe_node` is laid out on one ABI, by the C rules.
struct Layout {
    abi: TargetAbi,
    compiler: &'static str,
    word: usize,
    off_tag: usize,
    off_len: usize,
    off_name: usize,
    size: usize,
}

const LP64_LE: Layout = Layout {
    abi: TargetAbi::X86_64,
    compiler: "gcc",
    word: 8,
    off_tag: 8,
    off_len: 16,
    off_name: 24,
    size: 40,
};
const LP64_BE: Layout = Layout {
    abi: TargetAbi::S390X,
    compiler: "s390x-linux-gnu-gcc",
    ..LP64_LE
};
const ILP32_LE: Layout = Layout {
    abi: TargetAbi::I686,
    compiler: "i686-linux-gnu-gcc",
    word: 4,
    off_tag: 4,
    off_len: 8,
    off_name: 12,
    size: 24,
};

const HEAD: u64 = 0x1000;
const MODE: u64 = 0x1100;
const NODES: u64 = 0x2000;

fn put(buf: &mut [u8], at: usize, value: u64, width: usize, order: ByteOrder) {
    let bytes = value.to_le_bytes();
    let field = &mut buf[at..at + width];
    field.copy_from_slice(&bytes[..width]);
    if order == ByteOrder::Big {
        field.reverse();
    }
}

/// A target with `probe_mode = mode` and a list of nodes (name, tag, len);
/// `cycle` links the last node back to the first.
fn target_memory(
    l: &Layout,
    mode: u32,
    nodes: &[(&str, i32, i64)],
    cycle: bool,
) -> (SyntheticMemory, SymbolTable) {
    let order = l.abi.byte_order;
    let mut mem = SyntheticMemory::new(l.abi);
    let first = if nodes.is_empty() { 0 } else { NODES };
    let mut head = vec![0u8; l.word];
    put(&mut head, 0, first, l.word, order);
    mem.map(TargetAddr(HEAD), head);
    let mut mode_bytes = vec![0u8; 4];
    put(&mut mode_bytes, 0, mode as u64, 4, order);
    mem.map(TargetAddr(MODE), mode_bytes);
    let mut area = vec![0u8; l.size * nodes.len()];
    for (i, (name, tag, len)) in nodes.iter().enumerate() {
        let base = i * l.size;
        let next = if i + 1 < nodes.len() {
            NODES + ((i + 1) * l.size) as u64
        } else if cycle {
            NODES
        } else {
            0
        };
        put(&mut area, base, next, l.word, order);
        put(&mut area, base + l.off_tag, *tag as u32 as u64, 4, order);
        put(&mut area, base + l.off_len, *len as u64, l.word, order);
        area[base + l.off_name..base + l.off_name + name.len()].copy_from_slice(name.as_bytes());
    }
    if !area.is_empty() {
        mem.map(TargetAddr(NODES), area);
    }
    let mut symbols = SymbolTable::new();
    symbols.insert("/probe/app", "probe_head", TargetAddr(HEAD), l.word as u64);
    symbols.insert("/probe/app", "probe_mode", TargetAddr(MODE), 4);
    symbols.insert("/probe/app", "probe_function", TargetAddr(0x400), 16);
    (mem, symbols)
}

fn oracle(l: &Layout) -> TypeOracle {
    let mut types = TypeOracle::new();
    let obj = types_object(l.compiler);
    types.add_object("/probe/app", &obj, None);
    types
}

/// The probe's destroy counters are global: the test that counts takes
/// this for writing, every other read for reading.
static COUNTING: RwLock<()> = RwLock::new(());

fn read(
    l: &Layout,
    mode: u32,
    nodes: &[(&str, i32, i64)],
    cycle: bool,
    types: &TypeOracle,
    limits: &Limits,
) -> Result<mpiq_core::model::ProcessQueues, MqsError> {
    let _shared = COUNTING.read().unwrap_or_else(|e| e.into_inner());
    read_unlocked(l, mode, nodes, cycle, types, limits)
}

fn read_unlocked(
    l: &Layout,
    mode: u32,
    nodes: &[(&str, i32, i64)],
    cycle: bool,
    types: &TypeOracle,
    limits: &Limits,
) -> Result<mpiq_core::model::ProcessQueues, MqsError> {
    let (mem, symbols) = target_memory(l, mode, nodes, cycle);
    let target = MqsTarget {
        image_name: "/probe/app".into(),
        memory: &mem,
        symbols: &symbols,
        types,
        global_rank: 3,
        type_sizes: TargetTypeSizes::from_oracle(types, l.abi),
    };
    probe_library().read_queues(&target, limits)
}

fn check_every_callback(l: &Layout) {
    let lib = probe_library();
    assert_eq!(lib.version(), "mpidd probe library 1");
    assert_eq!(lib.compatibility(), 3);
    let types = oracle(l);
    let nodes = [("alpha", 7, 2), ("beta", -1, 5)];
    let q = read(l, 0, &nodes, false, &types, &Limits::default()).expect("the probe reads");
    assert!(!q.truncated);
    assert_eq!(q.global_rank, 3);
    let names: Vec<&str> = q.communicators.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["probe", "alpha", "beta"]);

    let report = &q.communicators[0];
    assert_eq!(report.size, l.size as i64, "mqs_sizeof");
    assert_eq!(report.local_rank, 3, "mqs_get_global_rank");
    // One entry per member; the probe fills the first 8, the host's -1
    // stays in the rest.
    let group = report.group.as_deref().expect("mqs_get_comm_group");
    assert_eq!(group.len(), l.size);
    assert_eq!(&group[..3], &[10, 11, 12]);
    assert_eq!(group[8], -1);
    assert_eq!(
        report.pending_sends,
        Queue::Read {
            operations: vec![],
            truncated: false
        }
    );
    let ops = report.pending_receives.operations();
    assert_eq!(ops.len(), 1);
    let op = &ops[0];
    assert_eq!(
        op.desired_local_rank, l.off_tag as i64,
        "mqs_field_offset(tag)"
    );
    assert_eq!(op.desired_global_rank, 0, "mqs_field_offset(next)");
    assert!(op.tag_wild, "a missing type is NULL");
    assert_eq!(op.desired_tag, -1, "a missing member is -1");
    assert_eq!(op.desired_length, l.word as i64, "long size");
    assert!(op.system_buffer, "mqs_get_image and image info round trip");
    assert_eq!(op.buffer, HEAD, "mqs_find_symbol");
    assert_eq!(op.actual_local_rank, l.word as i64, "pointer size");
    assert_eq!(op.actual_global_rank, 4, "int size");
    assert_eq!(op.actual_tag, -2, "a zero-extended 32-bit -2 is repaired");
    assert_eq!(
        op.actual_length, 3,
        "mqs_set_process_identity and mqs_get_process on the job"
    );
    assert_eq!(
        op.extra_text[0], "find_function=0",
        "NULL out-pointer accepted"
    );
    assert_eq!(op.extra_text[1], "missing_symbol=92");
    assert!(
        op.extra_text[2].starts_with("bad_fetch=90 the debugger could not read"),
        "{}",
        op.extra_text[2]
    );
    assert_eq!(
        op.extra_text[3],
        format!(
            "sizes=2,4,{},8,{} off_len={} off_name={}",
            l.word, l.word, l.off_len, l.off_name
        )
    );
    assert_eq!(op.extra_text.len(), 4);

    let alpha = &q.communicators[1];
    assert_eq!(
        (alpha.local_rank, alpha.size, alpha.unique_id),
        (7, 2, NODES)
    );
    let beta = &q.communicators[2];
    assert_eq!(
        beta.local_rank, -1,
        "fetched in target order, zero-extended by the library, repaired"
    );
    assert_eq!((beta.size, beta.unique_id), (5, NODES + l.size as u64));
    assert_eq!(beta.group.as_deref(), Some(&[10, 11, 12, 13, 14][..]));
    assert_eq!(beta.pending_sends, Queue::NoInformation);

    let diag = q.diagnostics.join("\n");
    for needle in ["no_such_type_t", "no_such_member", "no_such_symbol"] {
        assert!(diag.contains(needle), "diagnostics lack {needle}: {diag}");
    }
}

#[test]
fn every_callback_on_x86_64() {
    check_every_callback(&LP64_LE);
}

#[test]
fn every_callback_on_big_endian_s390x() {
    check_every_callback(&LP64_BE);
}

#[test]
fn every_callback_on_i686() {
    check_every_callback(&ILP32_LE);
}

#[test]
fn info_is_destroyed_once_per_read() {
    let lib = probe_library();
    let types = oracle(&LP64_LE);
    // The library is the same loaded object, so its counters are visible.
    // SAFETY: a test-only look at plain ints the probe exports.
    let counters = unsafe { libloading::Library::new(lib.path()) }.unwrap();
    let count = |name: &[u8]| -> i32 {
        // SAFETY: the probe defines these as `int`.
        unsafe { **counters.get::<*const i32>(name).unwrap() }
    };
    let _alone = COUNTING.write().unwrap_or_else(|e| e.into_inner());
    let before = (
        count(b"probe_destroyed_images"),
        count(b"probe_destroyed_processes"),
        count(b"probe_destroyed_jobs"),
    );
    read_unlocked(&LP64_LE, 0, &[], false, &types, &Limits::default()).unwrap();
    let after = (
        count(b"probe_destroyed_images"),
        count(b"probe_destroyed_processes"),
        count(b"probe_destroyed_jobs"),
    );
    assert_eq!(after, (before.0 + 1, before.1 + 1, before.2 + 1));
}

#[test]
fn garbage_is_bounded() {
    let types = oracle(&LP64_LE);
    let limits = Limits {
        max_communicators: 5,
        max_operations: 7,
        max_group_size: 16,
        ..Limits::default()
    };
    let q = read(&LP64_LE, 1, &[], false, &types, &limits).unwrap();
    assert!(q.truncated);
    assert_eq!(q.communicators.len(), 5);
    for c in &q.communicators {
        assert_eq!(
            c.name,
            "A".repeat(64),
            "an unterminated name stops at its 64 bytes"
        );
        assert_eq!(c.local_rank, -1);
        for queue in [
            &c.pending_sends,
            &c.pending_receives,
            &c.unexpected_messages,
        ] {
            match queue {
                Queue::Read {
                    operations,
                    truncated,
                } => {
                    assert!(truncated);
                    assert_eq!(operations.len(), 7);
                    assert!(operations[0]
                        .extra_text
                        .iter()
                        .all(|l| l == &"B".repeat(64)));
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }
}

#[test]
fn a_cyclic_target_list_stops_at_the_limit() {
    let types = oracle(&LP64_LE);
    let limits = Limits {
        max_communicators: 10,
        ..Limits::default()
    };
    let q = read(
        &LP64_LE,
        0,
        &[("a", 1, 1), ("b", 2, 2)],
        true,
        &types,
        &limits,
    )
    .unwrap();
    assert!(q.truncated);
    assert_eq!(q.communicators.len(), 10);
}

#[test]
fn missing_types_refuse_the_image_and_say_why() {
    let types = TypeOracle::new();
    let err = read(&LP64_LE, 0, &[], false, &types, &Limits::default()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, MqsError::NoQueuesInImage { .. }), "{text}");
    assert!(text.contains("probe image /probe/app checked"), "{text}");
    assert!(text.contains("probe_node_t"), "{text}");
}

#[test]
fn a_refused_process_reports_the_library_error() {
    let types = oracle(&LP64_LE);
    let err = read(&LP64_LE, 2, &[], false, &types, &Limits::default()).unwrap_err();
    assert!(matches!(err, MqsError::NoQueuesInProcess { .. }), "{err}");
    assert!(
        err.to_string().contains("probe: refused on purpose"),
        "{err}"
    );
}

#[test]
fn a_library_without_the_interface_is_refused() {
    let libc = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("libc.so.6");
    let err = MqsLibrary::load(Path::new(libc)).unwrap_err();
    assert!(
        matches!(
            err,
            MqsError::MissingEntryPoint {
                name: "mqs_version_string",
                ..
            }
        ),
        "{err}"
    );
}
