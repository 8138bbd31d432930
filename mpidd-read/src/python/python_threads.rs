//! The Python threads of a process: from `_PyRuntime` to each thread
//! state, its chain of frames, and the exception it raises or handles.
//!
//! The table of the interpreter's version is checked on the way: the
//! first thread state must point back at its interpreter, every frame's
//! code must be a code object (`PyCode_Type`), and every name a `str`.
//! A table that does not fit is refused with what did not fit, and no
//! frame is made up.

use std::collections::{HashMap, HashSet};

use mpidd_types::TargetAddr;
use serde::{Deserialize, Serialize};

use super::line_table::line_of;
use super::python_error::PythonError;
use super::python_layout::{layout_of, shared, EntryMark, FrameShape, LineFormat, PythonVersion};
use super::python_objects::{add, mismatch, KnownTypes, Objects};
use super::PythonLimits;
use crate::{decode_uint, SymbolSource, TargetMemory};

/// The Python side of a process that runs CPython.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonProcess {
    /// The interpreter's version.
    pub version: PythonVersion,
    /// The object that holds the interpreter (the `python3.X` executable
    /// or `libpython3.X.so`).
    pub object: String,
    /// Its threads that run Python, in the interpreter's order.
    pub threads: Vec<PythonThread>,
}

/// One thread that runs Python.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonThread {
    /// The kernel's id of the thread, when the interpreter keeps it
    /// (3.11 on).
    pub native_tid: Option<i32>,
    /// Its `pthread_t`.
    pub pthread: u64,
    /// Its Python frames, innermost first.
    pub frames: Vec<PythonFrame>,
    /// The exception it raises, handles or holds, when memory shows one.
    pub exception: Option<PythonException>,
    /// Why its frame chain stops early, when it does.
    pub error: Option<String>,
}

/// One Python frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonFrame {
    /// The function's qualified name (`Ring.step`; `<module>` for a
    /// module's code).
    pub function: String,
    /// The source file, as the code object names it.
    pub file: String,
    /// The line being run, when the line table gives one.
    pub line: Option<u32>,
    /// The outermost of the frames that one call of the C evaluation loop
    /// runs: the native frames go on below it.
    pub last_of_call: bool,
}

/// How a thread has an exception.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExceptionState {
    /// Raised and propagating: no handler has taken it yet.
    Raised,
    /// Being handled, in an `except` block.
    Handled,
    /// A variable of a Python frame holds it (an `except ... as e` block
    /// that left, or `sys.excepthook`'s argument).
    Held,
}

/// An exception a thread raises, handles or holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonException {
    /// Its type's name (`ValueError`).
    pub type_name: String,
    /// Its first argument, when that is a string.
    pub message: Option<String>,
    /// How the thread has it.
    pub state: ExceptionState,
    /// Where it was raised: the innermost entry of its traceback.
    pub raised_at: Option<PythonFrame>,
}

/// A code object's fields, read once per code object.
#[derive(Clone)]
struct Code {
    function: String,
    file: String,
    first_line: i32,
    lines: Vec<u8>,
    nlocals: u64,
}

/// Reads the Python threads of a process, if it runs CPython 3.9 to
/// 3.13. `Err(PythonError::NotPython)` when it runs none.
///
/// ```
/// use mpidd_read::{read_python, PythonError, PythonLimits, SymbolTable, SyntheticMemory};
/// use mpidd_types::TargetAbi;
///
/// let mem = SyntheticMemory::new(TargetAbi::X86_64);
/// let err = read_python(&mem, &SymbolTable::new(), &PythonLimits::default()).unwrap_err();
/// assert!(matches!(err, PythonError::NotPython));
/// ```
pub fn read_python(
    mem: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    limits: &PythonLimits,
) -> Result<PythonProcess, PythonError> {
    let runtime = symbols.lookup("_PyRuntime").ok_or(PythonError::NotPython)?;
    let bits = mem.abi().address_bytes() as u32 * 8;
    if bits != 64 {
        return Err(PythonError::UnsupportedAbi { bits });
    }
    let version = version_of(mem, symbols, &runtime.object)?;
    let mut layout = *layout_of(version).ok_or_else(|| PythonError::UnsupportedVersion {
        version,
        object: runtime.object.clone(),
    })?;
    let types = KnownTypes {
        code: symbols.lookup("PyCode_Type").map(|s| s.addr),
        unicode: symbols.lookup("PyUnicode_Type").map(|s| s.addr),
    };
    let own = debug_offsets(
        &Objects {
            mem,
            layout: &layout,
            types,
            limits,
        },
        runtime.addr,
    )?;
    if let Some((head, next, threads)) = own {
        layout.runtime_interpreters_head = head;
        layout.interp_next = next;
        layout.interp_threads_head = threads;
    }
    let objects = Objects {
        mem,
        layout: &layout,
        types,
        limits,
    };
    let mut walk = Walk {
        o: &objects,
        codes: HashMap::new(),
    };
    let threads = walk.threads(runtime.addr)?;
    Ok(PythonProcess {
        version,
        object: runtime.object,
        threads,
    })
}

/// The version from `Py_Version` (3.11 on), else from the object's name
/// (`python3.10`, `libpython3.9.so.1.0`).
fn version_of(
    mem: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    object: &str,
) -> Result<PythonVersion, PythonError> {
    if let Some(sym) = symbols.lookup("Py_Version").filter(|s| s.object == object) {
        // `unsigned long`: 8 bytes on the 64-bit targets read here.
        let mut b = [0u8; 8];
        if mem.read_exact(sym.addr, &mut b, "Py_Version").is_ok() {
            let hex = decode_uint(&b, mem.abi().byte_order);
            let v = PythonVersion::from_hex(hex);
            if v.major == 3 {
                return Ok(v);
            }
        }
    }
    version_in_name(object).ok_or_else(|| PythonError::VersionUnknown {
        object: object.to_string(),
    })
}

/// `3.X` from a file name that contains `python3.X`.
pub(crate) fn version_in_name(path: &str) -> Option<PythonVersion> {
    let name = path.rsplit('/').next()?;
    let at = name.find("python")? + "python".len();
    let rest = &name[at..];
    let (major, rest) = rest.split_once('.')?;
    let minor: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some(PythonVersion::new(major.parse().ok()?, minor.parse().ok()?))
}

/// 3.13 describes itself: `_PyRuntime` starts with `_Py_DebugOffsets`
/// (the cookie `xdebugpy`). Its runtime and interpreter offsets depend on
/// the build's configuration, so they are taken from there.
fn debug_offsets(
    o: &Objects<'_>,
    runtime: TargetAddr,
) -> Result<Option<(u64, u64, u64)>, PythonError> {
    if o.layout.version < PythonVersion::new(3, 13) {
        return Ok(None);
    }
    let mut cookie = [0u8; 8];
    o.mem
        .read_exact(runtime, &mut cookie, "_Py_DebugOffsets.cookie")?;
    if &cookie != b"xdebugpy" {
        return Err(mismatch(
            o.layout,
            "_PyRuntime does not start with the cookie xdebugpy".into(),
            runtime,
        ));
    }
    if o.u64_at(runtime, 16, "_Py_DebugOffsets.free_threaded")? != 0 {
        return Err(mismatch(
            o.layout,
            "the interpreter is a free-threaded build".into(),
            runtime,
        ));
    }
    let head = o.u64_at(
        runtime,
        40,
        "_Py_DebugOffsets.runtime_state.interpreters_head",
    )?;
    let next = o.u64_at(runtime, 64, "_Py_DebugOffsets.interpreter_state.next")?;
    let threads = o.u64_at(
        runtime,
        72,
        "_Py_DebugOffsets.interpreter_state.threads_head",
    )?;
    let bound = 1 << 20;
    if head > bound || next > bound || threads > bound {
        return Err(mismatch(
            o.layout,
            "_Py_DebugOffsets gives offsets past 1 MiB".into(),
            runtime,
        ));
    }
    Ok(Some((head, next, threads)))
}

struct Walk<'a> {
    o: &'a Objects<'a>,
    codes: HashMap<TargetAddr, Code>,
}

impl Walk<'_> {
    fn threads(&mut self, runtime: TargetAddr) -> Result<Vec<PythonThread>, PythonError> {
        let o = self.o;
        let l = o.layout;
        let mut out = Vec::new();
        let mut interp = o.at(
            runtime,
            l.runtime_interpreters_head,
            "_PyRuntime.interpreters.head",
        )?;
        let mut seen = HashSet::new();
        while !interp.is_null() {
            if !seen.insert(interp) || seen.len() > o.limits.max_threads {
                return Err(PythonError::TooLong {
                    what: "the interpreters",
                    addr: interp,
                    limit: o.limits.max_threads,
                });
            }
            let mut tstate = o.at(
                interp,
                l.interp_threads_head,
                "PyInterpreterState.threads.head",
            )?;
            let mut first = true;
            while !tstate.is_null() {
                if !seen.insert(tstate) || seen.len() > o.limits.max_threads {
                    return Err(PythonError::TooLong {
                        what: "the thread states",
                        addr: tstate,
                        limit: o.limits.max_threads,
                    });
                }
                if first && o.at(tstate, l.tstate_interp, "PyThreadState.interp")? != interp {
                    return Err(mismatch(
                        l,
                        "PyThreadState.interp does not point back at its interpreter".into(),
                        tstate,
                    ));
                }
                first = false;
                out.push(self.thread(tstate)?);
                tstate = o.at(tstate, l.tstate_next, "PyThreadState.next")?;
            }
            interp = o.at(interp, l.interp_next, "PyInterpreterState.next")?;
        }
        Ok(out)
    }

    fn thread(&mut self, tstate: TargetAddr) -> Result<PythonThread, PythonError> {
        let o = self.o;
        let l = o.layout;
        let pthread = o.u64_at(tstate, l.tstate_thread_id, "PyThreadState.thread_id")?;
        let native_tid = match l.tstate_native_thread_id {
            Some(off) => Some(o.u64_at(tstate, off, "PyThreadState.native_thread_id")? as i32),
            None => None,
        };
        let mut frames = Vec::new();
        let mut locals = Vec::new();
        let error = self
            .frames(tstate, &mut frames, &mut locals)
            .err()
            .map(|e| e.to_string());
        // The exception is a detail of a thread whose frames were read: an
        // unreadable one leaves the thread without it, not the process
        // without its threads.
        let exception = self.exception(tstate, &locals).unwrap_or(None);
        Ok(PythonThread {
            native_tid,
            pthread,
            frames,
            exception,
            error,
        })
    }

    /// Follows the frame chain into `frames`; `locals` gets the addresses
    /// of the first frames' local variables, for the exception search.
    fn frames(
        &mut self,
        tstate: TargetAddr,
        frames: &mut Vec<PythonFrame>,
        locals: &mut Vec<(TargetAddr, u64)>,
    ) -> Result<(), PythonError> {
        let o = self.o;
        let l = o.layout;
        let mut frame = o.at(tstate, l.tstate_frame, "PyThreadState.frame")?;
        if let Some(off) = l.cframe_current_frame {
            if frame.is_null() {
                return Ok(());
            }
            frame = o.at(frame, off, "_PyCFrame.current_frame")?;
        }
        let mut seen = HashSet::new();
        while !frame.is_null() {
            if !seen.insert(frame) || seen.len() > o.limits.max_frames {
                return Err(PythonError::TooLong {
                    what: "the frame chain",
                    addr: frame,
                    limit: o.limits.max_frames,
                });
            }
            let previous = o.at(frame, l.frame_previous, "frame.previous")?;
            let shim = match l.frame_shape {
                FrameShape::Interpreter(EntryMark::CStackShim(off)) => {
                    o.u8_at(frame, off, "_PyInterpreterFrame.owner")? == shared::OWNED_BY_CSTACK
                }
                _ => false,
            };
            if shim {
                if let Some(last) = frames.last_mut() {
                    last.last_of_call = true;
                }
                frame = previous;
                continue;
            }
            let code_addr = o.at(frame, l.frame_code, "frame.code")?;
            if code_addr.is_null() || !o.is_code(code_addr)? {
                // 3.13 runs frames whose executable is not code (the
                // evaluation loop's own trampolines): not a Python line.
                frame = previous;
                continue;
            }
            let instruction = self.instruction(frame, code_addr)?;
            let code = self.code(code_addr)?;
            let line = line_of(l.line_format, &code.lines, code.first_line, instruction);
            let last_of_call = match l.frame_shape {
                FrameShape::Objects => true,
                FrameShape::Interpreter(EntryMark::IsEntry(off)) => {
                    o.u8_at(frame, off, "_PyInterpreterFrame.is_entry")? != 0
                }
                FrameShape::Interpreter(EntryMark::CStackShim(_)) => false,
            };
            if locals.len() < o.limits.max_exception_frames {
                locals.push((
                    add(frame, l.frame_locals, "frame.localsplus")?,
                    code.nlocals,
                ));
            }
            frames.push(PythonFrame {
                function: code.function,
                file: code.file,
                line: line.and_then(|n| u32::try_from(n).ok()),
                last_of_call,
            });
            frame = previous;
        }
        if let Some(last) = frames.last_mut() {
            last.last_of_call = true;
        }
        Ok(())
    }

    /// The instruction a frame runs: a byte offset (3.9), a code-unit
    /// index (3.10 on).
    fn instruction(&self, frame: TargetAddr, code: TargetAddr) -> Result<i64, PythonError> {
        let o = self.o;
        let l = o.layout;
        match l.code_instructions {
            None => Ok(i64::from(o.i32_at(
                frame,
                l.frame_instruction,
                "PyFrameObject.f_lasti",
            )?)),
            Some(start) => {
                let ip = o.at(frame, l.frame_instruction, "_PyInterpreterFrame.instr_ptr")?;
                let first = add(code, start, "PyCodeObject.co_code_adaptive")?;
                Ok((ip.0 as i64).wrapping_sub(first.0 as i64) / 2)
            }
        }
    }

    fn code(&mut self, addr: TargetAddr) -> Result<Code, PythonError> {
        if let Some(c) = self.codes.get(&addr) {
            return Ok(c.clone());
        }
        let o = self.o;
        let l = o.layout;
        let name_field = l.code_qualname.unwrap_or(l.code_name);
        let function = o.string(
            o.at(addr, name_field, "PyCodeObject.co_qualname")?,
            "PyCodeObject.co_qualname",
        )?;
        let file = o.string(
            o.at(addr, l.code_filename, "PyCodeObject.co_filename")?,
            "PyCodeObject.co_filename",
        )?;
        let first_line = o.i32_at(addr, l.code_firstlineno, "PyCodeObject.co_firstlineno")?;
        let lines = o.bytes(
            o.at(addr, l.code_lines, "PyCodeObject.co_linetable")?,
            "PyCodeObject.co_linetable",
        )?;
        let nlocals = u64::from(
            o.i32_at(addr, l.code_nlocals, "PyCodeObject.co_nlocals")?
                .max(0) as u32,
        );
        let code = Code {
            function,
            file,
            first_line,
            lines,
            nlocals,
        };
        if self.codes.len() < o.limits.max_frames {
            self.codes.insert(addr, code.clone());
        }
        Ok(code)
    }

    /// The exception of a thread: the one it raises, else the one it
    /// handles, else one that a variable of its innermost frames holds.
    fn exception(
        &mut self,
        tstate: TargetAddr,
        locals: &[(TargetAddr, u64)],
    ) -> Result<Option<PythonException>, PythonError> {
        let o = self.o;
        let l = o.layout;
        let raised = o.at(tstate, l.tstate_raised, "PyThreadState.current_exception")?;
        if o.is_exception(raised)? {
            return self.describe(raised, ExceptionState::Raised).map(Some);
        }
        let item = o.at(tstate, l.tstate_exc_info, "PyThreadState.exc_info")?;
        if !item.is_null() {
            let handled = o.at(item, l.err_item_exc_value, "_PyErr_StackItem.exc_value")?;
            if o.is_exception(handled)? {
                return self.describe(handled, ExceptionState::Handled).map(Some);
            }
        }
        for &(slots, n) in locals {
            for i in 0..n.min(o.limits.max_locals as u64) {
                let Ok(value) = o.at(slots, i * 8, "frame.localsplus[i]") else {
                    break;
                };
                if o.is_exception(value).unwrap_or(false) {
                    return self.describe(value, ExceptionState::Held).map(Some);
                }
            }
        }
        Ok(None)
    }

    fn describe(
        &mut self,
        exc: TargetAddr,
        state: ExceptionState,
    ) -> Result<PythonException, PythonError> {
        let o = self.o;
        let type_name = o.type_name(o.type_of(exc)?)?;
        let message = self.message(exc).ok().flatten();
        let raised_at = self.raised_at(exc).ok().flatten();
        Ok(PythonException {
            type_name,
            message,
            state,
            raised_at,
        })
    }

    fn message(&self, exc: TargetAddr) -> Result<Option<String>, PythonError> {
        let o = self.o;
        let args = o.at(exc, shared::EXCEPTION_ARGS, "PyBaseExceptionObject.args")?;
        if args.is_null() || o.u64_at(args, shared::OB_SIZE, "PyTupleObject.ob_size")? == 0 {
            return Ok(None);
        }
        let first = o.at(args, shared::TUPLE_ITEMS, "PyTupleObject.ob_item[0]")?;
        Ok(o.string(first, "the exception's first argument").ok())
    }

    /// The innermost entry of the exception's traceback.
    fn raised_at(&mut self, exc: TargetAddr) -> Result<Option<PythonFrame>, PythonError> {
        let o = self.o;
        let l = o.layout;
        let mut tb = o.at(
            exc,
            l.exception_traceback,
            "PyBaseExceptionObject.traceback",
        )?;
        let mut last = TargetAddr::NULL;
        let mut n = 0;
        while !tb.is_null() {
            n += 1;
            if n > o.limits.max_frames {
                return Err(PythonError::TooLong {
                    what: "the traceback",
                    addr: tb,
                    limit: o.limits.max_frames,
                });
            }
            last = tb;
            tb = o.at(tb, shared::TB_NEXT, "PyTracebackObject.tb_next")?;
        }
        if last.is_null() {
            return Ok(None);
        }
        let frame_object = o.at(last, shared::TB_FRAME, "PyTracebackObject.tb_frame")?;
        let frame = match l.frame_object_frame {
            Some(off) => o.at(frame_object, off, "PyFrameObject.f_frame")?,
            None => frame_object,
        };
        let code_addr = o.at(frame, l.frame_code, "frame.code")?;
        if !o.is_code(code_addr)? {
            return Ok(None);
        }
        let code = self.code(code_addr)?;
        let lineno = o.i32_at(last, shared::TB_LINENO, "PyTracebackObject.tb_lineno")?;
        let line = if lineno >= 0 {
            Some(lineno)
        } else {
            let lasti =
                i64::from(o.i32_at(last, shared::TB_LASTI, "PyTracebackObject.tb_lasti")?);
            let at = if l.line_format == LineFormat::Lnotab {
                lasti
            } else {
                lasti / 2
            };
            line_of(l.line_format, &code.lines, code.first_line, at)
        };
        Ok(Some(PythonFrame {
            function: code.function,
            file: code.file,
            line: line.and_then(|n| u32::try_from(n).ok()),
            last_of_call: false,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_in_file_names() {
        assert_eq!(
            version_in_name("/usr/bin/python3.11"),
            Some(PythonVersion::new(3, 11))
        );
        assert_eq!(
            version_in_name("/usr/lib/x86_64-linux-gnu/libpython3.9.so.1.0"),
            Some(PythonVersion::new(3, 9))
        );
        assert_eq!(
            version_in_name("/opt/py/bin/python3.13d"),
            Some(PythonVersion::new(3, 13))
        );
        assert_eq!(version_in_name("/usr/bin/python"), None);
        assert_eq!(version_in_name("/usr/lib/libmpich.so.12"), None);
    }
}
