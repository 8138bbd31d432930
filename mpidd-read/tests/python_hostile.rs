//! The Python frame reader on a hand-laid CPython 3.11 process, sound and
//! bent: a frame chain that loops, a line table that claims 2^31 bytes, a
//! name that is not a string, a version without a table, a thread state
//! that does not point back. Each ends in a typed error or the stated
//! fallback, never a hang or a huge allocation.
//!
//! The offsets are written out here from CPython 3.11's headers (as
//! tests/c/python_offsets.c prints them), not taken from the reader.

use mpidd_read::{
    read_python, ExceptionState, PythonError, PythonLimits, PythonVersion, SymbolTable,
    SyntheticMemory,
};
use mpidd_types::{TargetAbi, TargetAddr};

const RUNTIME: u64 = 0x10_0000;
const INTERP: u64 = 0x11_0000;
const TSTATE: u64 = 0x12_0000;
const CFRAME: u64 = 0x13_0000;
const FRAMES: u64 = 0x14_0000;
const CODE: u64 = 0x15_0000;
const STRINGS: u64 = 0x16_0000;
const LINES: u64 = 0x17_0000;
const TYPES: u64 = 0x18_0000;
const VERSION: u64 = 0x19_0000;
const EXC: u64 = 0x1a_0000;
const CODE_TYPE: u64 = TYPES;
const STR_TYPE: u64 = TYPES + 0x400;
const EXC_TYPE: u64 = TYPES + 0x800;

/// A region of little-endian words being laid out.
struct Region(Vec<u8>);

impl Region {
    fn new(len: usize) -> Self {
        Region(vec![0; len])
    }
    fn word(&mut self, at: usize, v: u64) -> &mut Self {
        self.0[at..at + 8].copy_from_slice(&v.to_le_bytes());
        self
    }
    fn int(&mut self, at: usize, v: u32) -> &mut Self {
        self.0[at..at + 4].copy_from_slice(&v.to_le_bytes());
        self
    }
    fn bytes(&mut self, at: usize, b: &[u8]) -> &mut Self {
        self.0[at..at + b.len()].copy_from_slice(b);
        self
    }
}

/// A compact ASCII `str` of 3.11 at `addr`.
fn string(mem: &mut SyntheticMemory, addr: u64, text: &str) {
    let mut r = Region::new(48 + text.len() + 1);
    // ob_type, length, state: kind 1, compact, ascii, ready.
    r.word(8, STR_TYPE)
        .word(16, text.len() as u64)
        .int(32, (1 << 2) | (1 << 5) | (1 << 6) | (1 << 7));
    r.bytes(48, text.as_bytes());
    mem.map(TargetAddr(addr), r.0);
}

struct Process {
    mem: SyntheticMemory,
    symbols: SymbolTable,
}

/// One thread (kernel id 4242) in `ring` at ring.py:12, called from
/// `<module>` at ring.py:20. `frames` lays out the two frames' `previous`
/// links; `line_table_size` is what the table's bytes object claims.
fn process(version_hex: u64, frame_back: [u64; 2], line_table_size: u64) -> Process {
    let mut mem = SyntheticMemory::new(TargetAbi::X86_64);
    let mut symbols = SymbolTable::new();
    let exe = "/usr/bin/python3.11";
    symbols.insert(exe, "_PyRuntime", TargetAddr(RUNTIME), 0x1000);
    symbols.insert(exe, "Py_Version", TargetAddr(VERSION), 8);
    symbols.insert(exe, "PyCode_Type", TargetAddr(CODE_TYPE), 0x400);
    symbols.insert(exe, "PyUnicode_Type", TargetAddr(STR_TYPE), 0x400);
    mem.map(TargetAddr(VERSION), version_hex.to_le_bytes().to_vec());
    // _PyRuntime.interpreters.head
    mem.map(
        TargetAddr(RUNTIME),
        Region::new(64).word(40, INTERP).0.clone(),
    );
    // PyInterpreterState: next 0, threads.head
    mem.map(
        TargetAddr(INTERP),
        Region::new(64).word(16, TSTATE).0.clone(),
    );
    // PyThreadState: interp, cframe, thread_id, native_thread_id.
    let mut t = Region::new(256);
    t.word(16, INTERP)
        .word(56, CFRAME)
        .word(152, 0x7f00_0000_0000)
        .word(160, 4242);
    mem.map(TargetAddr(TSTATE), t.0);
    mem.map(
        TargetAddr(CFRAME),
        Region::new(16).word(8, FRAMES).0.clone(),
    );
    // Two code objects: `ring` (first line 10) and `<module>` (first 1).
    for (i, (name, first)) in [("ring", 10u32), ("<module>", 1)].into_iter().enumerate() {
        let code = CODE + i as u64 * 0x1000;
        let mut c = Region::new(256);
        c.word(8, CODE_TYPE)
            .word(112, STRINGS)
            .word(128, STRINGS + 0x100 * (i as u64 + 1));
        c.int(72, first)
            .word(136, LINES + i as u64 * 0x100)
            .int(76, 0);
        mem.map(TargetAddr(code), c.0);
        string(&mut mem, STRINGS + 0x100 * (i as u64 + 1), name);
        // One entry: "no columns", line delta +2 (ring: 12) or +19
        // (<module>: 20), covering 8 code units.
        let delta = if i == 0 { 2u8 } else { 19 };
        let table = [0x80 | (13 << 3) | 7, delta << 1];
        let mut b = Region::new(48);
        b.word(16, if i == 0 { line_table_size } else { 2 })
            .bytes(32, &table);
        mem.map(TargetAddr(LINES + i as u64 * 0x100), b.0);
    }
    string(&mut mem, STRINGS, "/home/u/ring.py");
    // Frames: f_code, previous, prev_instr (code unit 3), is_entry.
    for i in 0..2u64 {
        let code = CODE + i * 0x1000;
        let mut f = Region::new(128);
        f.word(32, code)
            .word(48, frame_back[i as usize])
            .word(56, code + 184 + 2 * 3);
        f.bytes(68, &[u8::from(i == 1)]);
        mem.map(TargetAddr(FRAMES + i * 0x100), f.0);
    }
    let mut types = Region::new(0xc00);
    // tp_flags of the exception type: a BaseException subclass.
    types
        .word(0x800 + 168, 1 << 30)
        .word(0x800 + 24, TYPES + 0xa00);
    types.bytes(0xa00, b"ValueError\0");
    // str's tp_flags: a unicode subclass.
    types.word(0x400 + 168, 1 << 28);
    mem.map(TargetAddr(TYPES), types.0);
    Process { mem, symbols }
}

fn sound() -> Process {
    process(0x030B_02F0, [FRAMES + 0x100, 0], 2)
}

#[test]
fn a_sound_process_gives_function_file_and_line() {
    let p = sound();
    let py = read_python(&p.mem, &p.symbols, &PythonLimits::default()).unwrap();
    assert_eq!(py.version, PythonVersion::new(3, 11));
    let t = &py.threads[0];
    assert_eq!(t.native_tid, Some(4242));
    assert_eq!(t.error, None);
    let got: Vec<_> = t
        .frames
        .iter()
        .map(|f| (f.function.as_str(), f.file.as_str(), f.line))
        .collect();
    assert_eq!(
        got,
        [
            ("ring", "/home/u/ring.py", Some(12)),
            ("<module>", "/home/u/ring.py", Some(20))
        ]
    );
    assert!(!t.frames[0].last_of_call && t.frames[1].last_of_call);
    assert!(t.exception.is_none());
}

#[test]
fn an_exception_being_handled_is_named_with_its_message() {
    let mut p = sound();
    // exc_info -> a stack item whose exc_value is a ValueError("bad").
    let item = EXC + 0x800;
    p.mem
        .map(TargetAddr(item), Region::new(16).word(0, EXC).0.clone());
    let mut t = Region::new(256);
    t.word(16, INTERP)
        .word(56, CFRAME)
        .word(160, 4242)
        .word(120, item);
    p.mem.map(TargetAddr(TSTATE), t.0);
    let args = EXC + 0x100;
    p.mem.map(
        TargetAddr(EXC),
        Region::new(64).word(8, EXC_TYPE).word(24, args).0.clone(),
    );
    p.mem.map(
        TargetAddr(args),
        Region::new(32)
            .word(16, 1)
            .word(24, STRINGS + 0x300)
            .0
            .clone(),
    );
    string(&mut p.mem, STRINGS + 0x300, "bad input on rank 1");
    let py = read_python(&p.mem, &p.symbols, &PythonLimits::default()).unwrap();
    let e = py.threads[0].exception.as_ref().expect("the exception");
    assert_eq!(e.type_name, "ValueError");
    assert_eq!(e.message.as_deref(), Some("bad input on rank 1"));
    assert_eq!(e.state, ExceptionState::Handled);
}

#[test]
fn a_frame_chain_that_loops_stops_at_the_limit_with_a_reason() {
    let p = process(0x030B_02F0, [FRAMES + 0x100, FRAMES], 2);
    let py = read_python(&p.mem, &p.symbols, &PythonLimits::default()).unwrap();
    let t = &py.threads[0];
    assert_eq!(t.frames.len(), 2);
    let error = t.error.as_deref().unwrap();
    assert!(
        error.contains("the frame chain") && error.contains("cycle"),
        "{error}"
    );
}

#[test]
fn a_line_table_of_2_pow_31_bytes_is_refused_not_allocated() {
    let p = process(0x030B_02F0, [FRAMES + 0x100, 0], 1 << 31);
    let py = read_python(&p.mem, &p.symbols, &PythonLimits::default()).unwrap();
    let error = py.threads[0].error.as_deref().unwrap();
    assert!(
        error.contains("2147483648 bytes") && error.contains("co_linetable"),
        "{error}"
    );
}

#[test]
fn a_version_without_a_table_says_so() {
    let p = process(0x030E_00F0, [0, 0], 2);
    let e = read_python(&p.mem, &p.symbols, &PythonLimits::default()).unwrap_err();
    assert!(
        matches!(e, PythonError::UnsupportedVersion { version, .. } if version == PythonVersion::new(3, 14))
    );
    assert!(
        e.to_string().contains("3.14") && e.to_string().contains("python3.11"),
        "{e}"
    );
}

#[test]
fn a_thread_state_that_does_not_point_back_refuses_the_table() {
    let mut p = sound();
    let mut t = Region::new(256);
    t.word(16, INTERP + 8).word(56, CFRAME);
    p.mem.map(TargetAddr(TSTATE), t.0);
    let e = read_python(&p.mem, &p.symbols, &PythonLimits::default()).unwrap_err();
    assert!(matches!(e, PythonError::LayoutMismatch { .. }), "{e}");
}

#[test]
fn a_name_that_is_not_a_string_stops_the_chain_with_its_address() {
    let mut p = sound();
    // ring's qualname points at the code object itself.
    let mut c = Region::new(256);
    c.word(8, CODE_TYPE)
        .word(112, STRINGS)
        .word(128, CODE)
        .int(72, 10)
        .word(136, LINES);
    p.mem.map(TargetAddr(CODE), c.0);
    let py = read_python(&p.mem, &p.symbols, &PythonLimits::default()).unwrap();
    let error = py.threads[0].error.as_deref().unwrap();
    assert!(
        error.contains("not a str") && error.contains(&format!("{:#x}", CODE)),
        "{error}"
    );
}

#[test]
fn a_32_bit_target_is_refused() {
    let mem = SyntheticMemory::new(TargetAbi::I686);
    let mut symbols = SymbolTable::new();
    symbols.insert("/usr/bin/python3.11", "_PyRuntime", TargetAddr(RUNTIME), 8);
    let e = read_python(&mem, &symbols, &PythonLimits::default()).unwrap_err();
    assert!(matches!(e, PythonError::UnsupportedAbi { bits: 32 }), "{e}");
}
