//! Real guest cores of foreign CPUs, written by qemu-user, read on this
//! machine.
//!
//! `tests/qemu/make-cores.sh` cross-compiles `tests/qemu/mpir_target.c` as a
//! PIE for s390x (64-bit big-endian), powerpc (32-bit big-endian), armhf and
//! i686 (32-bit little-endian), runs it under qemu-user until it aborts, and
//! keeps the core with what the program printed about itself. These cores
//! have no NT_FILE note and omit the executable's read-only pages (on all
//! but i686), so the load bias comes from the auxiliary vector and the
//! `.rodata` strings from the executable file. The program also links a
//! shared library of its own, loaded from a scratch directory that is gone
//! when the core is read: it is found only through the dynamic linker's
//! `link_map` list in the core and a search path, and libc only through a
//! sysroot (`/usr/<triple>`).
//!
//! Missing tools are a failure with instructions: `bash scripts/test.sh`
//! installs qemu-user and the cross C libraries.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use mpidd_read::mpi2dd::{self, PackingChoice};
use mpidd_read::mpir;
use mpidd_read::{
    CoreTarget, CoreTargetOptions, FileSearch, Limits, ObjectProblem, ReadRecords, SymbolSource,
    TargetMemory,
};
use mpidd_types::{
    Mpi2ddDirectoryEntry, Mpi2ddInfo, Mpi2ddProcdesc, Mpi2ddSpawndesc, MpirDebugState,
    MpirProcdesc, Packing, Record, TargetAddr,
};

/// Builds the cores once for all tests of this file.
fn cores() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("qemu-cores");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("qemu/make-cores.sh");
        let out = Command::new("bash")
            .arg(&script)
            .arg(&dir)
            .output()
            .expect("run bash");
        assert!(
            out.status.success(),
            "{} failed (bash scripts/test.sh installs what it needs):\n{}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

struct Expected(HashMap<String, String>);

impl Expected {
    fn load(arch: &str) -> Self {
        let text = std::fs::read_to_string(cores().join(format!("mpir_target-{arch}.expected")))
            .expect("expected file");
        assert!(
            text.contains("\nend=1"),
            "{arch}: the program's output is incomplete"
        );
        Expected(
            text.lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn str(&self, key: &str) -> &str {
        self.0
            .get(key)
            .unwrap_or_else(|| panic!("{key} not in the program's output"))
    }

    fn int(&self, key: &str) -> i64 {
        let v = self.str(key);
        match v.strip_prefix("0x") {
            Some(hex) => i64::from_str_radix(hex, 16).unwrap(),
            None => v.parse().unwrap(),
        }
    }

    fn addr(&self, key: &str) -> TargetAddr {
        TargetAddr(self.int(key) as u64)
    }
}

fn triple(arch: &str) -> &'static str {
    match arch {
        "s390x" => "s390x-linux-gnu",
        "powerpc" => "powerpc-linux-gnu",
        "armhf" => "arm-linux-gnueabihf",
        "i686" => "i686-linux-gnu",
        "s390x_packed" => "s390x-linux-gnu",
        _ => panic!("unknown arch {arch}"),
    }
}

fn open_with(arch: &str, search: FileSearch) -> CoreTarget {
    let dir = cores();
    CoreTarget::open_with(
        &dir.join(format!("mpir_target-{arch}.core")),
        &CoreTargetOptions {
            exe: Some(dir.join(format!("mpir_target-{arch}"))),
            search,
            debug: Default::default(),
            limits: Limits::default(),
        },
    )
    .unwrap_or_else(|e| panic!("{arch}: {e}"))
}

fn open(arch: &str) -> CoreTarget {
    open_with(
        arch,
        FileSearch {
            sysroot: Some(PathBuf::from("/usr").join(triple(arch))),
            search_path: vec![cores().to_path_buf()],
        },
    )
}

/// The libraries come from link_map alone: this core has no NT_FILE.
fn check_shared_libraries(arch: &str) {
    let exp = Expected::load(arch);
    let t = open(arch);
    assert!(t.problems().is_empty(), "{arch}: {:?}", t.problems());
    let searched = t.searched_objects();
    let lib = format!("libmpidd_fixture-{arch}.so");
    assert!(
        searched
            .iter()
            .any(|o| o.ends_with(&format!(".run-{arch}/{lib}"))),
        "{arch}: the link_map path of {lib} is not among {searched:?}"
    );
    assert!(
        searched.iter().any(|o| o.contains("libc.so")),
        "{searched:?}"
    );

    let banner = t.lookup("mpidd_lib_banner").expect("library symbol");
    assert!(banner.object.ends_with(&lib), "{}", banner.object);
    assert_eq!(banner.addr, exp.addr("addr.mpidd_lib_banner"));
    // The library's .rodata is not in qemu's core (but on i686): these
    // bytes come from the library file, placed by link_map's l_addr.
    assert_eq!(
        t.read_string(banner.addr, 256).unwrap(),
        exp.str("mpidd_lib_banner.str")
    );
    let counter = t.lookup("mpidd_lib_counter").expect("counter");
    assert_eq!(
        i64::from(t.read_i32(counter.addr, "mpidd_lib_counter").unwrap()),
        exp.int("mpidd_lib_counter")
    );
    let abort = t.lookup("abort").expect("libc's abort");
    assert!(abort.object.contains("libc.so"), "{}", abort.object);
    assert_eq!(abort.addr, exp.addr("addr.abort"));
}

/// Without the search path the moved library is reported, not guessed.
fn check_missing_library_is_reported(arch: &str) {
    let t = open_with(
        arch,
        FileSearch {
            sysroot: Some(PathBuf::from("/usr").join(triple(arch))),
            search_path: Vec::new(),
        },
    );
    let lib = format!("libmpidd_fixture-{arch}.so");
    assert!(
        t.problems().iter().any(|p| matches!(p,
            ObjectProblem::NotFound { recorded, .. } if recorded.ends_with(&lib))),
        "{arch}: {:?}",
        t.problems()
    );
    assert!(t.lookup("mpidd_lib_banner").is_none());
    // libc still resolves through the sysroot.
    assert!(t.lookup("abort").is_some());
}

fn check_mpir(arch: &str) {
    let exp = Expected::load(arch);
    let t = open(arch);
    let abi = t.abi();
    assert_eq!(
        abi.address_bytes() as i64,
        exp.int("pointer_size"),
        "{arch}"
    );
    assert_eq!(
        format!("{:?}", abi.byte_order).to_lowercase(),
        exp.str("endian"),
        "{arch}"
    );
    // The core has no NT_FILE: every mapping known comes from the files.
    let raw =
        mpidd_read::CoreFile::open(&cores().join(format!("mpir_target-{arch}.core"))).unwrap();
    assert!(raw.mapped_files().is_empty(), "{arch}");
    for name in [
        "MPIR_proctable",
        "MPIR_proctable_size",
        "MPIR_debug_state",
        "MPIR_executable_path",
        "MPIR_dll_name",
        "MPI2DD_info",
    ] {
        let sym = t
            .lookup(name)
            .unwrap_or_else(|| panic!("{arch}: no {name}"));
        assert_eq!(
            sym.addr,
            exp.addr(&format!("addr.{name}")),
            "{arch}: {name}"
        );
    }
    assert_eq!(
        MpirProcdesc::size_for(abi) as i64,
        exp.int("sizeof.MPIR_PROCDESC")
    );

    let s = mpir::read_state(&t, &Limits::default()).unwrap();
    assert_eq!(
        s.debug_state,
        MpirDebugState::from(exp.int("MPIR_debug_state") as i32)
    );
    assert_eq!(i64::from(s.proctable_size), exp.int("MPIR_proctable_size"));
    assert_eq!(s.debug_gate, Some(exp.int("MPIR_debug_gate") as i32));
    assert_eq!(
        s.being_debugged,
        Some(exp.int("MPIR_being_debugged") as i32)
    );
    assert!(
        s.presence.i_am_starter && s.presence.partial_attach_ok,
        "{arch}"
    );
    assert_eq!(
        s.abort_string.as_deref(),
        Some(exp.str("MPIR_debug_abort_string.str"))
    );
    assert_eq!(s.dll_name.as_deref(), Some(exp.str("MPIR_dll_name.str")));
    assert_eq!(
        s.executable_path.as_deref(),
        Some(exp.str("MPIR_executable_path.str"))
    );
    assert_eq!(s.proctable.len(), s.proctable_size as usize);
    for (i, p) in s.proctable.iter().enumerate() {
        let k = |f: &str| format!("MPIR_proctable[{i}].{f}");
        assert_eq!(p.host_name, exp.str(&k("host_name.str")), "{arch} rank {i}");
        assert_eq!(
            p.executable_name,
            exp.str(&k("executable_name.str")),
            "{arch} rank {i}"
        );
        assert_eq!(i64::from(p.pid), exp.int(&k("pid")), "{arch} rank {i}");
    }
}

/// The layout the program compiled its MPI-2 records in.
fn compiled_packing(exp: &Expected) -> Packing {
    match exp.str("mpi2dd_layout") {
        "packed" => Packing::Packed,
        "natural" => Packing::Natural,
        other => panic!("mpi2dd_layout={other}"),
    }
}

fn check_mpi2dd(arch: &str) {
    let exp = Expected::load(arch);
    let t = open(arch);
    let abi = t.abi().with_packing(compiled_packing(&exp));
    let limits = Limits::default();
    for (size, key) in [
        (Mpi2ddInfo::size_for(abi), "sizeof.MPI2DD_INFO"),
        (Mpi2ddProcdesc::size_for(abi), "sizeof.MPI2DD_PROCDESC"),
        (
            Mpi2ddDirectoryEntry::size_for(abi),
            "sizeof.MPI2DD_DIRECTORYENTRY",
        ),
        (Mpi2ddSpawndesc::size_for(abi), "sizeof.MPI2DD_SPAWNDESC"),
    ] {
        assert_eq!(size as i64, exp.int(key), "{arch}: {key}");
    }
    let at = t.lookup("MPI2DD_info").unwrap().addr;
    let info: Mpi2ddInfo = t.read_record_as(at, abi).unwrap();
    info.validate().unwrap();
    let f = |k: &str| exp.int(&format!("MPI2DD_info.{k}"));
    assert_eq!(i64::from(u8::from(info.debug_state)), f("debug_state"));
    assert_eq!(i64::from(info.mpi_flags.bits()), f("mpi_flags"));
    assert_eq!(
        info.meta_pid as i64,
        f("meta_pid"),
        "{arch}: sign extension"
    );
    assert_eq!(info.proctable.0 as i64, f("proctable"));
    assert_eq!(info.directory_table.0 as i64, f("directory_table"));
    assert_eq!(
        t.read_string(info.meta_host_name, 256).unwrap(),
        exp.str("MPI2DD_info.meta_host_name.str")
    );

    let procs: Vec<Mpi2ddProcdesc> = t
        .read_records_as(info.proctable, info.proctable_size.into(), abi, &limits)
        .unwrap();
    assert_eq!(procs.len() as i64, f("proctable_size"));
    for (i, p) in procs.iter().enumerate() {
        let k = |f: &str| format!("MPI2DD_proctable[{i}].{f}");
        assert_eq!(i64::from(p.pid), exp.int(&k("pid")), "{arch} {i}");
        assert_eq!(i64::from(p.rank), exp.int(&k("rank")), "{arch} {i}");
        assert_eq!(p.spawn_desc, exp.addr(&k("spawn_desc")), "{arch} {i}");
        assert_eq!(
            t.read_string(p.host_name, 256).unwrap(),
            exp.str(&k("host_name.str"))
        );
        assert_eq!(
            t.read_string(p.executable_name, 256).unwrap(),
            exp.str(&k("executable_name.str"))
        );
        assert_eq!(
            t.read_string(p.comm_world_id, 256).unwrap(),
            exp.str(&k("comm_world_id.str"))
        );
        if !p.spawn_desc.is_null() {
            let d: Mpi2ddSpawndesc = t.read_record_as(p.spawn_desc, abi).unwrap();
            assert_eq!(
                t.read_string(d.parent_comm_world_id, 256).unwrap(),
                exp.str("MPI2DD_spawndesc.parent_comm_world_id.str")
            );
            assert_eq!(
                i64::from(d.parent_rank),
                exp.int("MPI2DD_spawndesc.parent_rank")
            );
            assert_eq!(i64::from(d.sequence), exp.int("MPI2DD_spawndesc.sequence"));
        }
    }
    let dirs: Vec<Mpi2ddDirectoryEntry> = t
        .read_records_as(
            info.directory_table,
            info.directory_size.into(),
            abi,
            &limits,
        )
        .unwrap();
    assert_eq!(dirs.len() as i64, f("directory_size"));
    for (i, d) in dirs.iter().enumerate() {
        let k = |f: &str| format!("MPI2DD_directory[{i}].{f}");
        assert_eq!(i64::from(d.pid), exp.int(&k("pid")));
        assert_eq!(
            t.read_string(d.executable_name, 256).unwrap(),
            exp.str(&k("executable_name.str"))
        );
    }
}

/// Without being told, the reader finds the layout the compiler used
/// where the two differ (the directory entries of s390x, a 64-bit ABI),
/// and reads the same records as with the layout forced.
fn check_mpi2dd_layout_is_detected(arch: &str) {
    let exp = Expected::load(arch);
    let t = open(arch);
    let compiled = compiled_packing(&exp);
    let limits = Limits::default();
    let found =
        mpi2dd::read_process(&t, &t, None, &limits).unwrap_or_else(|e| panic!("{arch}: {e}"));
    let forced = mpi2dd::read_process(&t, &t, compiled, &limits).unwrap();
    assert_eq!(found.directory_table, forced.directory_table, "{arch}");
    assert_eq!(found.proctable, forced.proctable, "{arch}");
    assert_eq!(
        found.directory_table.len() as i64,
        exp.int("MPI2DD_info.directory_size")
    );
    for (i, d) in found.directory_table.iter().enumerate() {
        assert_eq!(
            i64::from(d.pid),
            exp.int(&format!("MPI2DD_directory[{i}].pid")),
            "{arch} {i}"
        );
    }
    let expected = if t.abi().address_bytes() == 8 {
        (compiled, PackingChoice::Detected)
    } else {
        (Packing::Natural, PackingChoice::Either)
    };
    assert_eq!(
        (found.packing.packing, found.packing.chosen),
        expected,
        "{arch}"
    );
}

macro_rules! arch_tests {
    ($($arch:ident),*) => {$(
        mod $arch {
            #[test]
            fn mpir_table_matches_what_the_program_wrote() {
                super::check_mpir(stringify!($arch));
            }

            #[test]
            fn mpi2dd_records_match_what_the_program_wrote() {
                super::check_mpi2dd(stringify!($arch));
            }

            #[test]
            fn mpi2dd_layout_is_detected() {
                super::check_mpi2dd_layout_is_detected(stringify!($arch));
            }

            #[test]
            fn shared_libraries_come_from_link_map() {
                super::check_shared_libraries(stringify!($arch));
            }

            #[test]
            fn a_library_not_found_is_reported() {
                super::check_missing_library_is_reported(stringify!($arch));
            }
        }
    )*};
}

arch_tests!(s390x, powerpc, armhf, i686, s390x_packed);
