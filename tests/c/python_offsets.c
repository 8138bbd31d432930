/* The offsets the Python frame reader's tables hold, as a C compiler lays
 * out CPython's own structures from its headers (built with Py_BUILD_CORE
 * so the internal ones are visible). scripts/python-offsets.sh builds it
 * against a version's headers; the names are those python_offsets()
 * prints, so the two lists compare line by line. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#endif
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"

#define P(name, value) printf("%s %zu\n", name, (size_t)(value))
#define O(name, type, field) P(name, offsetof(type, field))

int main(void) {
    O("_PyRuntimeState.interpreters.head", _PyRuntimeState, interpreters.head);
    O("PyInterpreterState.next", PyInterpreterState, next);
#if PY_VERSION_HEX >= 0x030B0000
    O("PyInterpreterState.threads.head", PyInterpreterState, threads.head);
#else
    O("PyInterpreterState.threads.head", PyInterpreterState, tstate_head);
#endif
    O("PyThreadState.next", PyThreadState, next);
    O("PyThreadState.interp", PyThreadState, interp);
#if PY_VERSION_HEX >= 0x030D0000
    O("PyThreadState.frame", PyThreadState, current_frame);
#elif PY_VERSION_HEX >= 0x030B0000
    O("PyThreadState.frame", PyThreadState, cframe);
    O("_PyCFrame.current_frame", _PyCFrame, current_frame);
#else
    O("PyThreadState.frame", PyThreadState, frame);
#endif
    O("PyThreadState.thread_id", PyThreadState, thread_id);
#if PY_VERSION_HEX >= 0x030B0000
    O("PyThreadState.native_thread_id", PyThreadState, native_thread_id);
#endif
#if PY_VERSION_HEX >= 0x030C0000
    O("PyThreadState.raised", PyThreadState, current_exception);
#else
    O("PyThreadState.raised", PyThreadState, curexc_value);
#endif
    O("PyThreadState.exc_info", PyThreadState, exc_info);
    O("_PyErr_StackItem.exc_value", _PyErr_StackItem, exc_value);
#if PY_VERSION_HEX >= 0x030B0000
    O("frame.previous", _PyInterpreterFrame, previous);
#if PY_VERSION_HEX >= 0x030D0000
    O("frame.code", _PyInterpreterFrame, f_executable);
    O("frame.instruction", _PyInterpreterFrame, instr_ptr);
#else
    O("frame.code", _PyInterpreterFrame, f_code);
    O("frame.instruction", _PyInterpreterFrame, prev_instr);
#endif
    O("frame.localsplus", _PyInterpreterFrame, localsplus);
#if PY_VERSION_HEX >= 0x030C0000
    O("_PyInterpreterFrame.owner", _PyInterpreterFrame, owner);
#else
    O("_PyInterpreterFrame.is_entry", _PyInterpreterFrame, is_entry);
#endif
    O("PyFrameObject.f_frame", PyFrameObject, f_frame);
    O("PyCodeObject.co_qualname", PyCodeObject, co_qualname);
    O("PyCodeObject.co_code_adaptive", PyCodeObject, co_code_adaptive);
    O("PyCodeObject.nlocals", PyCodeObject, co_nlocalsplus);
    O("PyCodeObject.lines", PyCodeObject, co_linetable);
#else
    O("frame.previous", PyFrameObject, f_back);
    O("frame.code", PyFrameObject, f_code);
    O("frame.instruction", PyFrameObject, f_lasti);
    O("frame.localsplus", PyFrameObject, f_localsplus);
    O("PyCodeObject.nlocals", PyCodeObject, co_nlocals);
#if PY_VERSION_HEX >= 0x030A0000
    O("PyCodeObject.lines", PyCodeObject, co_linetable);
#else
    O("PyCodeObject.lines", PyCodeObject, co_lnotab);
#endif
#endif
    O("PyCodeObject.co_filename", PyCodeObject, co_filename);
    O("PyCodeObject.co_name", PyCodeObject, co_name);
    O("PyCodeObject.co_firstlineno", PyCodeObject, co_firstlineno);
    P("sizeof PyASCIIObject", sizeof(PyASCIIObject));
    P("sizeof PyCompactUnicodeObject", sizeof(PyCompactUnicodeObject));
    O("PyASCIIObject.state", PyASCIIObject, state);
    O("PyASCIIObject.length", PyASCIIObject, length);
    O("PyBytesObject.ob_sval", PyBytesObject, ob_sval);
    O("PyVarObject.ob_size", PyVarObject, ob_size);
    O("PyTypeObject.tp_name", PyTypeObject, tp_name);
    O("PyTypeObject.tp_flags", PyTypeObject, tp_flags);
    O("PyBaseExceptionObject.args", PyBaseExceptionObject, args);
    O("PyBaseExceptionObject.traceback", PyBaseExceptionObject, traceback);
    O("PyTupleObject.ob_item", PyTupleObject, ob_item);
    O("PyTracebackObject.tb_next", PyTracebackObject, tb_next);
    O("PyTracebackObject.tb_frame", PyTracebackObject, tb_frame);
    O("PyTracebackObject.tb_lasti", PyTracebackObject, tb_lasti);
    O("PyTracebackObject.tb_lineno", PyTracebackObject, tb_lineno);
    return 0;
}
