//! Where CPython keeps what a frame walk reads, per minor version.
//!
//! CPython's interpreter structures change with every minor release and
//! carry no description of themselves before 3.13, so the reader keeps a
//! table per version, chosen by the version the target's interpreter says
//! it is and then checked on the target (see `python_threads`). The numbers
//! are those of a 64-bit build with the default configuration (not the
//! free-threaded one), which is what Debian, `pip`'s interpreters and the
//! official builds ship on x86_64 and aarch64. They were taken with a C
//! compiler from each version's own headers (3.10's and 3.12's from
//! pystack's copies of them). `mpidd-read/tests/python_offsets.rs` does
//! that again with `tests/c/python_offsets.c` for the versions whose
//! headers Debian ships (3.9, 3.11, 3.13) and compares.

use serde::{Deserialize, Serialize};

/// A CPython version, as `major.minor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PythonVersion {
    /// 3.
    pub major: u8,
    /// 9 to 13 for the versions with a table.
    pub minor: u8,
}

impl PythonVersion {
    /// The version `major.minor`.
    pub const fn new(major: u8, minor: u8) -> PythonVersion {
        PythonVersion { major, minor }
    }

    /// The versions the reader has a table for, oldest first.
    pub const SUPPORTED: [PythonVersion; 5] = [
        PythonVersion::new(3, 9),
        PythonVersion::new(3, 10),
        PythonVersion::new(3, 11),
        PythonVersion::new(3, 12),
        PythonVersion::new(3, 13),
    ];

    /// The version `PY_VERSION_HEX` encodes (CPython's `Py_Version`).
    pub const fn from_hex(hex: u64) -> PythonVersion {
        PythonVersion::new(((hex >> 24) & 0xff) as u8, ((hex >> 16) & 0xff) as u8)
    }
}

impl std::fmt::Display for PythonVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// How a frame's line number is kept in its code object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LineFormat {
    /// 3.9: `co_lnotab`, pairs of byte and line increments, against the
    /// frame's last instruction in bytes.
    Lnotab,
    /// 3.10: `co_linetable`, pairs of byte and line deltas with -128 for
    /// "no line", against the last instruction in code units.
    Linetable310,
    /// 3.11 and later: `co_linetable` as the location table of varint
    /// entries, against the instruction pointer's offset in code units.
    Locations,
}

/// What a thread's frame chain is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FrameShape {
    /// 3.9 and 3.10: `PyFrameObject`s linked by `f_back`, one per C call
    /// of the evaluation loop.
    Objects,
    /// 3.11 and later: `_PyInterpreterFrame`s linked by `previous`; one C
    /// call of the evaluation loop runs several of them.
    Interpreter(EntryMark),
}

/// How the frames one evaluation-loop call runs are told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntryMark {
    /// 3.11: a `bool` in the first frame a call runs.
    IsEntry(u64),
    /// 3.12 and later: a shim frame owned by the C stack (`owner` = 3)
    /// sits below the frames a call runs.
    CStackShim(u64),
}

/// The offsets of one CPython version (64-bit, default build).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PythonLayout {
    pub version: PythonVersion,
    /// `_PyRuntime.interpreters.head`.
    pub runtime_interpreters_head: u64,
    /// `PyInterpreterState.next`.
    pub interp_next: u64,
    /// `PyInterpreterState.threads.head` (`tstate_head` before 3.11).
    pub interp_threads_head: u64,
    /// `PyThreadState.next`.
    pub tstate_next: u64,
    /// `PyThreadState.interp`.
    pub tstate_interp: u64,
    /// `PyThreadState.frame` (3.9, 3.10), `.cframe` (3.11, 3.12) or
    /// `.current_frame` (3.13).
    pub tstate_frame: u64,
    /// `_PyCFrame.current_frame`, when `tstate_frame` leads to a C frame.
    pub cframe_current_frame: Option<u64>,
    /// `PyThreadState.thread_id` (the `pthread_t`).
    pub tstate_thread_id: u64,
    /// `PyThreadState.native_thread_id` (the kernel's thread id), 3.11 on.
    pub tstate_native_thread_id: Option<u64>,
    /// The exception being raised: `curexc_value` before 3.12,
    /// `current_exception` from 3.12.
    pub tstate_raised: u64,
    /// `PyThreadState.exc_info`, the exception being handled.
    pub tstate_exc_info: u64,
    /// `_PyErr_StackItem.exc_value`.
    pub err_item_exc_value: u64,
    pub frame_shape: FrameShape,
    /// `f_back` or `previous`.
    pub frame_previous: u64,
    /// `f_code`, or `f_executable` in 3.13.
    pub frame_code: u64,
    /// `f_lasti` (an `int`) before 3.11; `prev_instr` or `instr_ptr` (a
    /// pointer into the code) after.
    pub frame_instruction: u64,
    /// `f_localsplus` or `localsplus`.
    pub frame_locals: u64,
    /// `PyFrameObject.f_frame` (3.11 on): a frame object of a traceback
    /// points at its interpreter frame.
    pub frame_object_frame: Option<u64>,
    pub code_filename: u64,
    pub code_name: u64,
    /// `co_qualname`, 3.11 on.
    pub code_qualname: Option<u64>,
    pub code_firstlineno: u64,
    /// `co_lnotab` (3.9) or `co_linetable`.
    pub code_lines: u64,
    /// `co_code_adaptive`, 3.11 on: the instructions, inside the code
    /// object.
    pub code_instructions: Option<u64>,
    /// `co_nlocals` before 3.11, `co_nlocalsplus` after.
    pub code_nlocals: u64,
    pub line_format: LineFormat,
    /// Where a compact ASCII string's characters start.
    pub unicode_ascii_data: u64,
    /// Where another compact string's characters start.
    pub unicode_compact_data: u64,
    /// `PyBaseExceptionObject.traceback`.
    pub exception_traceback: u64,
}

/// Offsets every version 3.9 to 3.13 shares (64-bit).
pub(crate) mod shared {
    /// `ob_type` of every object.
    pub const OB_TYPE: u64 = 8;
    /// `ob_size` of a variable-size object (a tuple, a bytes object).
    pub const OB_SIZE: u64 = 16;
    /// A string's length in characters.
    pub const UNICODE_LENGTH: u64 = 16;
    /// A string's state bits (kind, compact, ascii).
    pub const UNICODE_STATE: u64 = 32;
    /// A bytes object's first byte.
    pub const BYTES_DATA: u64 = 32;
    /// `PyTypeObject.tp_name`, a C string.
    pub const TYPE_NAME: u64 = 24;
    /// `PyTypeObject.tp_flags`.
    pub const TYPE_FLAGS: u64 = 168;
    /// `Py_TPFLAGS_BASE_EXC_SUBCLASS`: the type derives from BaseException.
    pub const FLAG_BASE_EXC: u64 = 1 << 30;
    /// `Py_TPFLAGS_UNICODE_SUBCLASS`.
    pub const FLAG_UNICODE: u64 = 1 << 28;
    /// `PyBaseExceptionObject.args`, a tuple.
    pub const EXCEPTION_ARGS: u64 = 24;
    /// `PyTupleObject.ob_item`.
    pub const TUPLE_ITEMS: u64 = 24;
    /// `PyTracebackObject.tb_next`, `tb_frame`, `tb_lasti`, `tb_lineno`.
    pub const TB_NEXT: u64 = 16;
    pub const TB_FRAME: u64 = 24;
    pub const TB_LASTI: u64 = 32;
    pub const TB_LINENO: u64 = 36;
    /// `_PyInterpreterFrame.owner` of a shim frame of the C stack.
    pub const OWNED_BY_CSTACK: u8 = 3;
}

const V3_9: PythonLayout = PythonLayout {
    version: PythonVersion::new(3, 9),
    runtime_interpreters_head: 32,
    interp_next: 0,
    interp_threads_head: 8,
    tstate_next: 8,
    tstate_interp: 16,
    tstate_frame: 24,
    cframe_current_frame: None,
    tstate_thread_id: 176,
    tstate_native_thread_id: None,
    tstate_raised: 96,
    tstate_exc_info: 144,
    err_item_exc_value: 8,
    frame_shape: FrameShape::Objects,
    frame_previous: 24,
    frame_code: 32,
    frame_instruction: 104,
    frame_locals: 360,
    frame_object_frame: None,
    code_filename: 104,
    code_name: 112,
    code_qualname: None,
    code_firstlineno: 40,
    code_lines: 120,
    code_instructions: None,
    code_nlocals: 28,
    line_format: LineFormat::Lnotab,
    unicode_ascii_data: 48,
    unicode_compact_data: 72,
    exception_traceback: 32,
};

const V3_10: PythonLayout = PythonLayout {
    version: PythonVersion::new(3, 10),
    frame_instruction: 96,
    frame_locals: 352,
    line_format: LineFormat::Linetable310,
    ..V3_9
};

const V3_11: PythonLayout = PythonLayout {
    version: PythonVersion::new(3, 11),
    runtime_interpreters_head: 40,
    interp_next: 0,
    interp_threads_head: 16,
    tstate_next: 8,
    tstate_interp: 16,
    tstate_frame: 56,
    cframe_current_frame: Some(8),
    tstate_thread_id: 152,
    tstate_native_thread_id: Some(160),
    tstate_raised: 104,
    tstate_exc_info: 120,
    err_item_exc_value: 0,
    frame_shape: FrameShape::Interpreter(EntryMark::IsEntry(68)),
    frame_previous: 48,
    frame_code: 32,
    frame_instruction: 56,
    frame_locals: 72,
    frame_object_frame: Some(24),
    code_filename: 112,
    code_name: 120,
    code_qualname: Some(128),
    code_firstlineno: 72,
    code_lines: 136,
    code_instructions: Some(184),
    code_nlocals: 76,
    line_format: LineFormat::Locations,
    unicode_ascii_data: 48,
    unicode_compact_data: 72,
    exception_traceback: 40,
};

const V3_12: PythonLayout = PythonLayout {
    version: PythonVersion::new(3, 12),
    runtime_interpreters_head: 40,
    interp_threads_head: 72,
    tstate_frame: 56,
    cframe_current_frame: Some(0),
    tstate_thread_id: 136,
    tstate_native_thread_id: Some(144),
    tstate_raised: 96,
    tstate_exc_info: 104,
    frame_shape: FrameShape::Interpreter(EntryMark::CStackShim(70)),
    frame_previous: 8,
    frame_code: 0,
    frame_instruction: 56,
    frame_locals: 72,
    code_firstlineno: 68,
    code_instructions: Some(192),
    code_nlocals: 72,
    unicode_ascii_data: 40,
    unicode_compact_data: 56,
    ..V3_11
};

const V3_13: PythonLayout = PythonLayout {
    version: PythonVersion::new(3, 13),
    runtime_interpreters_head: 632,
    interp_next: 7264,
    interp_threads_head: 7344,
    tstate_frame: 72,
    cframe_current_frame: None,
    tstate_thread_id: 152,
    tstate_native_thread_id: Some(160),
    tstate_raised: 112,
    tstate_exc_info: 120,
    code_instructions: Some(200),
    ..V3_12
};

/// The table of `version`, if there is one.
pub(crate) fn layout_of(version: PythonVersion) -> Option<&'static PythonLayout> {
    [&V3_9, &V3_10, &V3_11, &V3_12, &V3_13]
        .into_iter()
        .find(|l| l.version == version)
}

/// The offsets of a version's table, named as `tests/c/python_offsets.c`
/// prints a C compiler's layout of them, so that a test compares the
/// two. `None` for a version without a table.
pub fn python_offsets(version: PythonVersion) -> Option<Vec<(&'static str, u64)>> {
    let l = layout_of(version)?;
    let mut v = vec![
        (
            "_PyRuntimeState.interpreters.head",
            l.runtime_interpreters_head,
        ),
        ("PyInterpreterState.next", l.interp_next),
        ("PyInterpreterState.threads.head", l.interp_threads_head),
        ("PyThreadState.next", l.tstate_next),
        ("PyThreadState.interp", l.tstate_interp),
        ("PyThreadState.frame", l.tstate_frame),
        ("PyThreadState.thread_id", l.tstate_thread_id),
        ("PyThreadState.raised", l.tstate_raised),
        ("PyThreadState.exc_info", l.tstate_exc_info),
        ("_PyErr_StackItem.exc_value", l.err_item_exc_value),
        ("frame.previous", l.frame_previous),
        ("frame.code", l.frame_code),
        ("frame.instruction", l.frame_instruction),
        ("frame.localsplus", l.frame_locals),
        ("PyCodeObject.co_filename", l.code_filename),
        ("PyCodeObject.co_name", l.code_name),
        ("PyCodeObject.co_firstlineno", l.code_firstlineno),
        ("PyCodeObject.lines", l.code_lines),
        ("PyCodeObject.nlocals", l.code_nlocals),
        ("sizeof PyASCIIObject", l.unicode_ascii_data),
        ("sizeof PyCompactUnicodeObject", l.unicode_compact_data),
        ("PyASCIIObject.state", shared::UNICODE_STATE),
        ("PyASCIIObject.length", shared::UNICODE_LENGTH),
        ("PyBytesObject.ob_sval", shared::BYTES_DATA),
        ("PyVarObject.ob_size", shared::OB_SIZE),
        ("PyTypeObject.tp_name", shared::TYPE_NAME),
        ("PyTypeObject.tp_flags", shared::TYPE_FLAGS),
        ("PyBaseExceptionObject.args", shared::EXCEPTION_ARGS),
        ("PyBaseExceptionObject.traceback", l.exception_traceback),
        ("PyTupleObject.ob_item", shared::TUPLE_ITEMS),
        ("PyTracebackObject.tb_next", shared::TB_NEXT),
        ("PyTracebackObject.tb_frame", shared::TB_FRAME),
        ("PyTracebackObject.tb_lasti", shared::TB_LASTI),
        ("PyTracebackObject.tb_lineno", shared::TB_LINENO),
    ];
    let optional = [
        ("_PyCFrame.current_frame", l.cframe_current_frame),
        ("PyThreadState.native_thread_id", l.tstate_native_thread_id),
        ("PyFrameObject.f_frame", l.frame_object_frame),
        ("PyCodeObject.co_qualname", l.code_qualname),
        ("PyCodeObject.co_code_adaptive", l.code_instructions),
    ];
    v.extend(optional.into_iter().filter_map(|(n, o)| o.map(|o| (n, o))));
    match l.frame_shape {
        FrameShape::Interpreter(EntryMark::IsEntry(o)) => {
            v.push(("_PyInterpreterFrame.is_entry", o))
        }
        FrameShape::Interpreter(EntryMark::CStackShim(o)) => {
            v.push(("_PyInterpreterFrame.owner", o))
        }
        FrameShape::Objects => {}
    }
    Some(v)
}
