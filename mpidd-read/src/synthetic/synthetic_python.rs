//! A CPython 3.11 process laid out by hand: one interpreter, one thread,
//! a chain of frames with their code objects, names and line tables, and
//! optionally an exception the thread handles. The offsets are written
//! out here from CPython 3.11's headers (as `tests/c/python_offsets.c`
//! prints them), not taken from the reader's tables, so a test of the
//! reader on this process catches a wrong table.

use mpidd_types::{TargetAbi, TargetAddr};

use super::synthetic_memory::SyntheticMemory;
use crate::symbols::SymbolTable;

/// Where the process's one 64 KiB region starts: small enough for a fuzz
/// seed's single segment.
pub const SYNTHETIC_PYTHON_BASE: u64 = 0x10_0000;
const RUNTIME: u64 = SYNTHETIC_PYTHON_BASE;
const INTERP: u64 = SYNTHETIC_PYTHON_BASE + 0x1000;
const TSTATE: u64 = SYNTHETIC_PYTHON_BASE + 0x2000;
const CFRAME: u64 = SYNTHETIC_PYTHON_BASE + 0x3000;
const TYPES: u64 = SYNTHETIC_PYTHON_BASE + 0x4000;
const VERSION: u64 = SYNTHETIC_PYTHON_BASE + 0x5000;
const EXCEPTION: u64 = SYNTHETIC_PYTHON_BASE + 0x6000;
const FRAMES: u64 = SYNTHETIC_PYTHON_BASE + 0x8000;
const CODES: u64 = SYNTHETIC_PYTHON_BASE + 0xa000;
const STRINGS: u64 = SYNTHETIC_PYTHON_BASE + 0xc000;
const LINES: u64 = SYNTHETIC_PYTHON_BASE + 0xe000;
const CODE_TYPE: u64 = TYPES;
const STR_TYPE: u64 = TYPES + 0x400;
const EXCEPTION_TYPE: u64 = TYPES + 0x800;
/// Room per frame, code object, string and line table: at most 16
/// frames, names and files of at most 200 bytes.
const STRIDE: u64 = 0x100;
const MAX_FRAMES: usize = 16;
const MAX_NAME: usize = 200;
const SIZE: usize = 0x1_0000;
/// The kernel thread id the thread state records.
pub const SYNTHETIC_PYTHON_TID: i32 = 4242;

/// One Python frame of a [`SyntheticPython`] process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PythonFrameSpec {
    /// The function's qualified name.
    pub function: String,
    /// Its source file.
    pub file: String,
    /// Its first line (`co_firstlineno`).
    pub first_line: u32,
    /// The line it runs: at least `first_line`, at most 63 lines after it
    /// (one entry of the location table).
    pub line: u32,
}

/// A CPython 3.11 process (x86_64) with one thread, built by hand.
///
/// ```
/// use mpidd_read::{read_python, PythonFrameSpec, PythonLimits, SyntheticPython};
///
/// let frame = |f: &str, first, line| PythonFrameSpec {
///     function: f.into(), file: "/job/ring.py".into(), first_line: first, line,
/// };
/// let p = SyntheticPython::new(&[frame("ring", 10, 12), frame("<module>", 1, 20)]);
/// let py = read_python(&p.memory(), &p.symbols, &PythonLimits::default()).unwrap();
/// assert_eq!(py.threads[0].frames[0].line, Some(12));
/// ```
#[derive(Clone, Debug)]
pub struct SyntheticPython {
    image: Vec<u8>,
    /// Its symbols (`_PyRuntime`, `Py_Version`, `PyCode_Type`,
    /// `PyUnicode_Type`, in `/usr/bin/python3.11`).
    pub symbols: SymbolTable,
    frames: usize,
}

/// Little-endian words laid into a region.
struct Region(Vec<u8>);

impl Region {
    fn new(len: usize) -> Self {
        Region(vec![0; len])
    }
    fn word(mut self, at: usize, v: u64) -> Self {
        self.0[at..at + 8].copy_from_slice(&v.to_le_bytes());
        self
    }
    fn int(mut self, at: usize, v: u32) -> Self {
        self.0[at..at + 4].copy_from_slice(&v.to_le_bytes());
        self
    }
    fn bytes(mut self, at: usize, b: &[u8]) -> Self {
        self.0[at..at + b.len()].copy_from_slice(b);
        self
    }
}

impl SyntheticPython {
    /// The process with these frames, innermost first, all run by one
    /// call of the evaluation loop. Frames past the 16th, and names and
    /// files past 200 bytes, are left out.
    pub fn new(frames: &[PythonFrameSpec]) -> SyntheticPython {
        let frames = &frames[..frames.len().min(MAX_FRAMES)];
        let mut p = SyntheticPython {
            image: vec![0; SIZE],
            symbols: SymbolTable::new(),
            frames: frames.len(),
        };
        let exe = "/usr/bin/python3.11";
        p.symbols
            .insert(exe, "_PyRuntime", TargetAddr(RUNTIME), 0x1000);
        p.symbols.insert(exe, "Py_Version", TargetAddr(VERSION), 8);
        p.symbols
            .insert(exe, "PyCode_Type", TargetAddr(CODE_TYPE), 0x400);
        p.symbols
            .insert(exe, "PyUnicode_Type", TargetAddr(STR_TYPE), 0x400);
        p.set_version(0x030B_02F0);
        // _PyRuntime.interpreters.head; PyInterpreterState.threads.head.
        p.map(RUNTIME, Region::new(64).word(40, INTERP));
        p.map(INTERP, Region::new(64).word(16, TSTATE));
        p.thread_state(0);
        let first = if frames.is_empty() { 0 } else { FRAMES };
        p.map(CFRAME, Region::new(16).word(8, first));
        for (i, f) in frames.iter().enumerate() {
            let i = i as u64;
            let code = CODES + i * STRIDE;
            let (file, name) = (STRINGS + 2 * i * STRIDE, STRINGS + (2 * i + 1) * STRIDE);
            p.string(file, &f.file);
            p.string(name, &f.function);
            // co_filename, co_qualname, co_firstlineno, co_nlocalsplus 0,
            // co_linetable.
            let c = Region::new(256)
                .word(8, CODE_TYPE)
                .word(112, file)
                .word(128, name);
            p.map(code, c.int(72, f.first_line).word(136, LINES + i * STRIDE));
            // One "no columns" entry over 8 code units: the line delta.
            let delta = u8::try_from(f.line.saturating_sub(f.first_line).min(63)).unwrap_or(63);
            p.line_table(i as usize, &[0x80 | (13 << 3) | 7, delta << 1], 2);
            // f_code, previous, prev_instr (code unit 3), is_entry.
            let previous = if (i as usize) + 1 < frames.len() {
                FRAMES + (i + 1) * STRIDE
            } else {
                0
            };
            let last = (i as usize) + 1 == frames.len();
            let fr = Region::new(128)
                .word(32, code)
                .word(48, previous)
                .word(56, code + 184 + 6);
            p.map(FRAMES + i * STRIDE, fr.bytes(68, &[u8::from(last)]));
        }
        let types = Region::new(0xc00)
            .word(0x400 + 168, 1 << 28)
            .word(0x800 + 24, TYPES + 0xa00)
            .word(0x800 + 168, 1 << 30)
            .bytes(0xa00, b"ValueError\0");
        p.map(TYPES, types);
        p
    }

    /// Its memory: the one region.
    pub fn memory(&self) -> SyntheticMemory {
        let mut m = SyntheticMemory::new(TargetAbi::X86_64);
        m.map(TargetAddr(SYNTHETIC_PYTHON_BASE), self.image.clone());
        m
    }

    fn map(&mut self, addr: u64, r: Region) {
        let at = (addr - SYNTHETIC_PYTHON_BASE) as usize;
        self.image[at..at + r.0.len()].copy_from_slice(&r.0);
    }

    /// A compact ASCII `str`.
    fn string(&mut self, addr: u64, text: &str) {
        let text = &text[..text.len().min(MAX_NAME)];
        let state = (1 << 2) | (1 << 5) | (1 << 6) | (1 << 7);
        let r = Region::new(48 + text.len() + 1)
            .word(8, STR_TYPE)
            .word(16, text.len() as u64)
            .int(32, state)
            .bytes(48, text.as_bytes());
        self.map(addr, r);
    }

    fn thread_state(&mut self, exc_info: u64) {
        let t = Region::new(256)
            .word(16, INTERP)
            .word(56, CFRAME)
            .word(152, 0x7f00_0000_0000)
            .word(160, SYNTHETIC_PYTHON_TID as u64)
            .word(120, exc_info);
        self.map(TSTATE, t);
    }

    fn line_table(&mut self, frame: usize, table: &[u8], claimed: u64) {
        let r = Region::new(32 + table.len())
            .word(16, claimed)
            .bytes(32, table);
        self.map(LINES + frame as u64 * STRIDE, r);
    }

    /// Sets `Py_Version` (`PY_VERSION_HEX`).
    pub fn set_version(&mut self, hex: u32) {
        self.map(VERSION, Region::new(8).word(0, u64::from(hex)));
    }

    /// Makes the outermost frame's `previous` the innermost frame: a
    /// chain without end.
    pub fn loop_frames(&mut self) {
        if self.frames == 0 {
            return;
        }
        let last = FRAMES + (self.frames as u64 - 1) * STRIDE;
        let code = CODES + (self.frames as u64 - 1) * STRIDE;
        let fr = Region::new(128)
            .word(32, code)
            .word(48, FRAMES)
            .word(56, code + 184 + 6);
        self.map(last, fr.bytes(68, &[1]));
    }

    /// Makes the innermost frame's line table claim `bytes` bytes.
    pub fn claim_line_table(&mut self, bytes: u64) {
        self.line_table(0, &[0x80 | (13 << 3) | 7, 0], bytes);
    }

    /// Makes the thread handle a `ValueError(message)` (its `exc_info`).
    pub fn handle_value_error(&mut self, message: &str) {
        let item = EXCEPTION + 0x800;
        let args = EXCEPTION + 0x100;
        let text = EXCEPTION + 0x200;
        self.map(item, Region::new(16).word(0, EXCEPTION));
        self.map(
            EXCEPTION,
            Region::new(64).word(8, EXCEPTION_TYPE).word(24, args),
        );
        self.map(args, Region::new(32).word(16, 1).word(24, text));
        self.string(text, message);
        self.thread_state(item);
    }

    /// Makes the thread state's `interp` point elsewhere than at its
    /// interpreter.
    pub fn bend_thread_state(&mut self) {
        let t = Region::new(256).word(16, INTERP + 8).word(56, CFRAME);
        self.map(TSTATE, t);
    }

    /// Makes the innermost frame's qualified name point at its code
    /// object, which is not a string; returns that address.
    pub fn bend_name(&mut self) -> TargetAddr {
        let c = Region::new(256)
            .word(8, CODE_TYPE)
            .word(112, STRINGS)
            .word(128, CODES);
        self.map(CODES, c.int(72, 1).word(136, LINES));
        TargetAddr(CODES)
    }
}
