//! Proves the `mpidd-types` layouts against real C compilers.
//!
//! `tests/c/records.c` declares every record from the interface documents.
//! For each target ABI it is compiled with that target's gcc, and the object
//! file is read with the `object` crate. The compiler's `sizeof` and
//! `offsetof` must equal ours, the initialized instances must decode to the
//! values the C source wrote, and our encoder must reproduce their bytes.
//!
//! A missing cross compiler is a failure, not a skip: `bash scripts/test.sh`
//! installs them.

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::process::Command;

use mpidd_types::{
    AddressWidth, CChars, DebuggerFlags, Mpi2ddDebugState, Mpi2ddDirectoryEntry, Mpi2ddInfo,
    Mpi2ddMagic, Mpi2ddProcdesc, Mpi2ddSpawndesc, MpiFlags, MpirProcdesc, MqsCommunicatorRecord,
    MqsPendingOperationRecord, MqsStatus, Packing, Record, TargetAbi, TargetAddr,
};
use object::{Object, ObjectSection, ObjectSymbol};

struct Target {
    name: &'static str,
    cc: &'static str,
    package: &'static str,
    abi: TargetAbi,
    arch: object::Architecture,
}

// ---- Values the C source wrote (see the comments in records.c).

/// `ADDR(n)` of records.c.
fn addr(abi: TargetAbi, n: u64) -> TargetAddr {
    TargetAddr(match abi.address_width {
        AddressWidth::W64 => 0xfedc_ba98_7654_0000 + 0x10101 * n,
        AddressWidth::W32 => 0x8000_1000 + 0x10101 * n,
    })
}

/// `BIG_WORD` of records.c: `1l << (8 * sizeof(long) - 2)`.
fn big_word(abi: TargetAbi) -> i64 {
    1i64 << (8 * abi.address_bytes() - 2)
}

fn text<const N: usize>(s: &str) -> CChars<N> {
    CChars::from_text(s).expect("test text fits")
}

fn mpir_procdesc(abi: TargetAbi) -> (MpirProcdesc, [MpirProcdesc; 3]) {
    let a = |n| addr(abi, n);
    let e = |h, x, pid| MpirProcdesc {
        host_name: a(h),
        executable_name: a(x),
        pid,
    };
    (e(1, 2, -1), [e(3, 4, 100), e(5, 6, 101), e(7, 8, 102)])
}

fn mqs_communicator(abi: TargetAbi) -> (MqsCommunicatorRecord, [MqsCommunicatorRecord; 3]) {
    let c = |id, local_rank, size, name: &str| MqsCommunicatorRecord {
        unique_id: addr(abi, id),
        local_rank,
        size,
        name: text(name),
    };
    (
        c(9, -1, big_word(abi), "MPI_COMM_WORLD"),
        [c(10, 0, 4, "a"), c(11, 1, 4, "b"), c(12, 2, 4, "c")],
    )
}

fn mqs_pending_operation(
    abi: TargetAbi,
) -> (MqsPendingOperationRecord, [MqsPendingOperationRecord; 3]) {
    let lines = |l: [&str; 3]| [text(l[0]), text(l[1]), text(l[2]), text(""), text("")];
    let instance = MqsPendingOperationRecord {
        status: MqsStatus::Matched,
        desired_local_rank: -1,
        desired_global_rank: -2,
        tag_wild: 1,
        desired_tag: -1,
        desired_length: big_word(abi),
        system_buffer: 0,
        buffer: addr(abi, 13),
        actual_local_rank: 5,
        actual_global_rank: 7,
        actual_tag: 99,
        actual_length: 1024,
        extra_text: lines(["MPI_Irecv", "from ring.c:42", ""]),
    };
    let small = |status: i32, n: i64, sysbuf, buf, t: &str| MqsPendingOperationRecord {
        status: MqsStatus::from(status),
        desired_local_rank: n,
        desired_global_rank: n,
        tag_wild: 0,
        desired_tag: 10 * n,
        desired_length: 8 << (n - 1),
        system_buffer: sysbuf,
        buffer: addr(abi, buf),
        actual_local_rank: n,
        actual_global_rank: n,
        actual_tag: 10 * n,
        actual_length: 8 << (n - 1),
        extra_text: lines([t, "", ""]),
    };
    (
        instance,
        [
            small(0, 1, 0, 14, "x"),
            small(2, 2, 1, 15, "y"),
            small(7, 3, 0, 16, "z"),
        ],
    )
}

fn mpi2dd_info(abi: TargetAbi) -> (Mpi2ddInfo, [Mpi2ddInfo; 3]) {
    let a = |n| addr(abi, n);
    let instance = Mpi2ddInfo {
        magic: Mpi2ddMagic(*b"MPI2\x7f"),
        version: 1,
        variant: 1,
        debug_state: Mpi2ddDebugState::DirectoryChanged,
        debugger_flags: DebuggerFlags::from_bits_retain(0x8000_0005),
        mpi_flags: MpiFlags::I_AM_METADIR | MpiFlags::I_AM_DIR | MpiFlags::PARTIAL_ATTACH_OK,
        dll_name_32: a(20),
        dll_name_64: a(21),
        meta_host_name: a(22),
        meta_executable_name: a(23),
        abort_string: a(24),
        proctable: a(25),
        directory_table: a(26),
        metadirectory_table: a(27),
        proctable_size: 6,
        directory_size: 2,
        metadirectory_size: 0,
        meta_pid: -1,
        padding: [0, -1, 2, -3, 4, -5, 6, 0x7fff_ffff],
    };
    let small = |state: u8, flags: u32, dll: u64| Mpi2ddInfo {
        debug_state: state.into(),
        mpi_flags: MpiFlags::from_bits_retain(flags),
        dll_name_64: a(dll),
        ..Mpi2ddInfo::default()
    };
    (
        instance,
        [small(1, 1, 30), small(2, 2, 31), small(3, 4, 32)],
    )
}

fn mpi2dd_procdesc(abi: TargetAbi) -> (Mpi2ddProcdesc, [Mpi2ddProcdesc; 3]) {
    let a = |n| {
        if n == 0 {
            TargetAddr::NULL
        } else {
            addr(abi, n)
        }
    };
    let p = |h, x, s, w, pid, rank| Mpi2ddProcdesc {
        host_name: a(h),
        executable_name: a(x),
        spawn_desc: a(s),
        comm_world_id: a(w),
        pid,
        rank,
    };
    (
        p(40, 41, 0, 43, -1, i32::MAX),
        [
            p(44, 45, 0, 46, 1000, 0),
            p(47, 48, 49, 50, 1001, 1),
            p(51, 52, 0, 53, 1002, 2),
        ],
    )
}

fn mpi2dd_spawndesc(abi: TargetAbi) -> (Mpi2ddSpawndesc, [Mpi2ddSpawndesc; 3]) {
    let s = |w, parent_rank, sequence| Mpi2ddSpawndesc {
        parent_comm_world_id: addr(abi, w),
        parent_rank,
        sequence,
    };
    (s(60, i32::MIN, 3), [s(61, 0, 0), s(62, 0, 1), s(63, 1, 0)])
}

fn mpi2dd_directoryentry(abi: TargetAbi) -> (Mpi2ddDirectoryEntry, [Mpi2ddDirectoryEntry; 3]) {
    let d = |h, x, pid| Mpi2ddDirectoryEntry {
        host_name: addr(abi, h),
        executable_name: addr(abi, x),
        pid,
    };
    (
        d(70, 71, -1),
        [d(72, 73, 4200), d(74, 75, 4201), d(76, 77, 4202)],
    )
}

// ---- Compiling and reading the object file.

fn compile(t: &Target) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("c");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("records-{}.o", t.name));
    let run = Command::new(t.cc)
        .args(["-c", "-O0", "-g0", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&out)
        .arg(src.join("records.c"))
        .output();
    match run {
        Err(e) => panic!(
            "cannot run the {} C compiler `{}`: {e}. Install the Debian package {} \
             (`bash scripts/test.sh` installs every compiler the tests need).",
            t.name, t.cc, t.package
        ),
        Ok(o) if !o.status.success() => panic!(
            "`{}` failed to compile records.c:\n{}",
            t.cc,
            String::from_utf8_lossy(&o.stderr)
        ),
        Ok(_) => out,
    }
}

struct Compiled<'a> {
    file: object::File<'a>,
}

impl<'a> Compiled<'a> {
    /// The bytes of a data symbol, as the compiler sized it.
    fn symbol(&self, name: &str) -> &'a [u8] {
        let sym = self
            .file
            .symbols()
            .find(|s| s.name() == Ok(name))
            .unwrap_or_else(|| panic!("symbol {name} not in the object"));
        let section = self
            .file
            .section_by_index(sym.section_index().expect("symbol has a section"))
            .expect("section exists");
        assert_eq!(
            section.relocations().count(),
            0,
            "section {:?} holding {name} has relocations; the C data must be plain integers",
            section.name()
        );
        let data = section.data().expect("section data");
        // In a relocatable object a symbol's value is its offset in the section.
        let start = sym.address() as usize;
        &data[start..start + sym.size() as usize]
    }

    /// An array of C `unsigned int`, in the object's byte order.
    fn u32s(&self, name: &str) -> Vec<usize> {
        let little = self.file.is_little_endian();
        self.symbol(name)
            .chunks_exact(4)
            .map(|c| {
                let b = [c[0], c[1], c[2], c[3]];
                (if little {
                    u32::from_le_bytes(b)
                } else {
                    u32::from_be_bytes(b)
                }) as usize
            })
            .collect()
    }
}

/// Checks one record in one packing; returns its C size for the report.
fn check<R: Record + PartialEq + Debug>(
    obj: &Compiled<'_>,
    abi: TargetAbi,
    suffix: &str,
    (instance, array): (R, [R; 3]),
    failures: &mut Vec<String>,
) -> usize {
    let name = R::C_NAME;
    let what = format!("{name}{suffix} on {abi}");
    let c_layout = obj.u32s(&format!("layout_{name}{suffix}"));
    let ours = R::layout(abi);
    let c_size = c_layout[0];
    if c_size != ours.size || c_size != R::size_for(abi) {
        failures.push(format!(
            "{what}: C sizeof is {c_size}, ours {} (size_for {})",
            ours.size,
            R::size_for(abi)
        ));
    }
    if c_layout.len() - 1 != ours.fields.len() {
        failures.push(format!(
            "{what}: C has {} fields, ours {}",
            c_layout.len() - 1,
            ours.fields.len()
        ));
    }
    for (slot, &c_off) in ours.fields.iter().zip(&c_layout[1..]) {
        if slot.offset != c_off {
            failures.push(format!(
                "{what}: offsetof({}) is {c_off} in C, {} in ours",
                slot.field.name, slot.offset
            ));
        }
    }

    let bytes = obj.symbol(&format!("instance_{name}{suffix}"));
    if bytes.len() != c_size {
        failures.push(format!("{what}: instance is {} bytes", bytes.len()));
    }
    match R::decode(bytes, abi) {
        Ok(v) if v == instance => {}
        Ok(v) => failures.push(format!(
            "{what}: instance decodes to\n{v:#?}\nC wrote\n{instance:#?}"
        )),
        Err(e) => failures.push(format!("{what}: instance does not decode: {e}")),
    }
    match instance.to_bytes(abi) {
        Ok(ours) if ours == bytes => {}
        Ok(ours) => failures.push(format!(
            "{what}: encoder gives\n{ours:02x?}\nC compiled\n{bytes:02x?}"
        )),
        Err(e) => failures.push(format!("{what}: encoder failed: {e}")),
    }

    let arr = obj.symbol(&format!("array_{name}{suffix}"));
    if arr.len() != 3 * R::size_for(abi) {
        failures.push(format!(
            "{what}: array of 3 is {} bytes, so the stride is not {}",
            arr.len(),
            R::size_for(abi)
        ));
        return c_size;
    }
    for (i, (chunk, want)) in arr.chunks_exact(R::size_for(abi)).zip(&array).enumerate() {
        match R::decode(chunk, abi) {
            Ok(v) if &v == want => {}
            Ok(v) => failures.push(format!(
                "{what}: array[{i}] decodes to {v:?}, C wrote {want:?}"
            )),
            Err(e) => failures.push(format!("{what}: array[{i}] does not decode: {e}")),
        }
        match want.to_bytes(abi) {
            Ok(ours) if ours == chunk => {}
            Ok(ours) => failures.push(format!(
                "{what}: array[{i}] encodes to {ours:02x?}, C compiled {chunk:02x?}"
            )),
            Err(e) => failures.push(format!("{what}: array[{i}] encoder failed: {e}")),
        }
    }
    c_size
}

fn prove(t: &Target) {
    let path = compile(t);
    let data = std::fs::read(&path).expect("read object");
    let file = object::File::parse(&*data).expect("parse object");
    assert_eq!(file.architecture(), t.arch, "{}: wrong architecture", t.cc);
    assert_eq!(
        file.is_little_endian(),
        t.abi.byte_order == mpidd_types::ByteOrder::Little,
        "{}: the object's byte order is not the ABI's",
        t.name
    );
    assert_eq!(
        file.is_64(),
        t.abi.address_width == AddressWidth::W64,
        "{}: the object's class is not the ABI's width",
        t.name
    );
    let obj = Compiled { file };
    let mut failures = Vec::new();
    let mut sizes = Vec::new();
    let abi = t.abi;

    let f = &mut failures;
    sizes.push((
        "MPIR_PROCDESC".to_string(),
        check(&obj, abi, "", mpir_procdesc(abi), f),
    ));
    sizes.push((
        "mqs_communicator".to_string(),
        check(&obj, abi, "", mqs_communicator(abi), f),
    ));
    sizes.push((
        "mqs_pending_operation".to_string(),
        check(&obj, abi, "", mqs_pending_operation(abi), f),
    ));
    for (packing, suffix) in [(Packing::Natural, "_natural"), (Packing::Packed, "_packed")] {
        let abi = abi.with_packing(packing);
        let label = |n: &str| format!("{n} {suffix}");
        sizes.push((
            label("MPI2DD_INFO"),
            check(&obj, abi, suffix, mpi2dd_info(abi), f),
        ));
        sizes.push((
            label("MPI2DD_PROCDESC"),
            check(&obj, abi, suffix, mpi2dd_procdesc(abi), f),
        ));
        sizes.push((
            label("MPI2DD_SPAWNDESC"),
            check(&obj, abi, suffix, mpi2dd_spawndesc(abi), f),
        ));
        sizes.push((
            label("MPI2DD_DIRECTORYENTRY"),
            check(&obj, abi, suffix, mpi2dd_directoryentry(abi), f),
        ));
    }
    eprintln!("C sizeof on {} ({}):", t.name, t.cc);
    for (n, s) in &sizes {
        eprintln!("  {n:<32} {s:>4}");
    }
    assert!(
        failures.is_empty(),
        "{}: {} mismatches against {}:\n{}",
        t.name,
        failures.len(),
        t.cc,
        failures.join("\n")
    );
}

macro_rules! compiler_tests {
    ($($test:ident: $name:literal, $cc:literal, $pkg:literal, $abi:expr, $arch:ident;)*) => {$(
        #[test]
        fn $test() {
            prove(&Target {
                name: $name,
                cc: $cc,
                package: $pkg,
                abi: $abi,
                arch: object::Architecture::$arch,
            });
        }
    )*};
}

compiler_tests! {
    x86_64_gcc: "x86_64", "x86_64-linux-gnu-gcc", "gcc", TargetAbi::X86_64, X86_64;
    i686_gcc: "i686", "i686-linux-gnu-gcc", "gcc-i686-linux-gnu", TargetAbi::I686, I386;
    aarch64_gcc: "aarch64", "aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu", TargetAbi::AARCH64, Aarch64;
    armhf_gcc: "armhf", "arm-linux-gnueabihf-gcc", "gcc-arm-linux-gnueabihf", TargetAbi::ARMHF, Arm;
    s390x_gcc: "s390x", "s390x-linux-gnu-gcc", "gcc-s390x-linux-gnu", TargetAbi::S390X, S390x;
    powerpc_gcc: "powerpc", "powerpc-linux-gnu-gcc", "gcc-powerpc-linux-gnu", TargetAbi::POWERPC, PowerPc;
    mips_gcc: "mips", "mips-linux-gnu-gcc", "gcc-mips-linux-gnu", TargetAbi::MIPS, Mips;
}
