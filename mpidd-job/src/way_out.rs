//! Whether a rank is on its way out of the job, from its main thread's
//! stack and its MPI call: in `MPI_Abort`, in `MPI_Finalize`, exiting its
//! process, or in Python's handling of an exception nothing caught. Such a
//! rank answers no receive and enters no collective again.

use mpidd_read::PythonException;

use crate::model::{RankReport, RankState, WayOut};
use crate::mpi_call::CallClass;
use crate::reading::ThreadStack;

/// Functions of the Python interpreter (CPython 3.9 to 3.13) that run
/// while it reports an exception nothing caught, or handles a
/// `SystemExit`: `PyErr_Print` and its variants, the display of the
/// traceback, the default `sys.excepthook`, and `SystemExit`'s handling
/// (`handle_system_exit` up to 3.9, `_Py_HandleSystemExit` from 3.10).
const PYTHON_EXCEPTION: &[&str] = &[
    "PyErr_Print",
    "PyErr_PrintEx",
    "_PyErr_PrintEx",
    "_PyErr_Print",
    "PyErr_Display",
    "_PyErr_Display",
    "print_exception",
    "print_exception_recursive",
    "handle_system_exit",
    "_Py_HandleSystemExit",
    "pymain_err_print",
    "sys_excepthook",
    "sys_excepthook_impl",
];

/// Functions that run only while a process exits: the C library's `exit`
/// and its handlers, `_exit`, and the Python interpreter's shutdown.
const PROCESS_EXIT: &[&str] = &[
    "exit",
    "__run_exit_handlers",
    "_exit",
    "_Exit",
    "quick_exit",
    "__cxa_finalize",
    "Py_FinalizeEx",
    "Py_Finalize",
    "Py_Exit",
    "_Py_Finalize",
    "atexit_callfuncs",
    "_PyAtExit_Call",
    "call_py_exitfuncs",
];

/// How a rank in `call_class` with this main-thread stack is leaving,
/// and the frame that shows it (for a person: `exit`, `PyErr_Print`).
/// `MPI_Abort` first (the job is going down whatever else the stack
/// shows), then Python's exception handling (the cause, where it leads
/// on to `MPI_Finalize`), then `MPI_Finalize`, then the process's exit.
pub fn way_out(
    stack: Option<&ThreadStack>,
    call_class: Option<CallClass>,
) -> Option<(WayOut, Option<String>)> {
    if call_class == Some(CallClass::Abort) {
        return Some((WayOut::Abort, None));
    }
    let frame_in = |names: &[&str]| {
        stack?
            .frames
            .iter()
            // A Python function may be called `exit` or
            // `print_exception` (traceback's): only the interpreter's and
            // the C library's own functions say the process is leaving.
            .filter(|f| !f.name_guessed && !f.python)
            .filter_map(|f| f.function.as_deref())
            .find(|n| names.contains(n))
            .map(str::to_string)
    };
    if let Some(f) = frame_in(PYTHON_EXCEPTION) {
        return Some((WayOut::PythonException, Some(f)));
    }
    if call_class == Some(CallClass::Finalize) {
        return Some((WayOut::Finalize, None));
    }
    frame_in(PROCESS_EXIT).map(|f| (WayOut::ProcessExit, Some(f)))
}

/// `at job.c:14 in main()` from a location `main at job.c:14`, or `in
/// main()` without a line.
pub(crate) fn place(location: &str) -> String {
    match location.split_once(" at ") {
        Some((function, line)) => format!("at {line} in {function}()"),
        None => format!("in {location}()"),
    }
}

/// `ValueError('bad input') at job.py:12 in check()`: its type, message
/// and where it was raised (the file's name without its folders).
pub(crate) fn describe_exception(e: &PythonException) -> String {
    let mut out = e.type_name.clone();
    if let Some(m) = &e.message {
        let quote = if m.contains('\'') && !m.contains('"') {
            '"'
        } else {
            '\''
        };
        out.push_str(&format!("({quote}{m}{quote})"));
    }
    if let Some(at) = &e.raised_at {
        let file = at.file.rsplit('/').next().unwrap_or(&at.file);
        match at.line {
            Some(line) => out.push_str(&format!(" at {file}:{line}")),
            None => out.push_str(&format!(" in {file}")),
        }
        out.push_str(&format!(" in {}()", at.function));
    }
    out
}

/// What a leaving rank is doing, after `rank N `: `is in MPI_Finalize at
/// fin.c:15 in main(), and will send nothing more`, or, with an
/// exception, `raised ValueError('…') at job.py:12 in check(), and is in
/// Python's exception handling`.
pub(crate) fn describe_leaving(r: &RankReport) -> String {
    let at = r
        .location
        .as_deref()
        .map(|l| format!(" {}", place(l)))
        .unwrap_or_default();
    let frame = way_out(main_stack(r), r.call_class).and_then(|(_, f)| f);
    let state = match (r.way_out, r.state.clone()) {
        (Some(WayOut::Exited), _) | (None, RankState::Exited) => {
            "has exited (returned from main, or was killed)".to_string()
        }
        (Some(WayOut::Abort), _) => format!("is in MPI_Abort{at}, tearing the job down"),
        (Some(WayOut::Finalize), _) => {
            format!("is in MPI_Finalize{at}, and will send nothing more")
        }
        (Some(WayOut::ProcessExit), _) => format!(
            "is exiting its process ({}){at}",
            frame.map_or("exit".to_string(), |f| format!("in {f}"))
        ),
        (Some(WayOut::PythonException), _) => match frame {
            Some(f) => format!("is in Python's exception handling ({f})"),
            // Its own code handles it: where is where it waits.
            None => format!("is handling it{at}"),
        },
        (None, _) => "is not leaving".to_string(),
    };
    match &r.python_exception {
        Some(e) => format!("raised {}, and {state}", describe_exception(e)),
        None => state,
    }
}

/// A few words for a headline: `in MPI_Finalize`, `exiting its process`.
pub(crate) fn short_name(way: WayOut) -> &'static str {
    match way {
        WayOut::Exited => "has exited",
        WayOut::Abort => "is in MPI_Abort",
        WayOut::Finalize => "is in MPI_Finalize",
        WayOut::ProcessExit => "is exiting its process",
        WayOut::PythonException => "is in Python's exception handling",
    }
}

/// The stack the rank's call and way out were taken from: its main
/// thread's (the thread whose id is its pid), else its first.
pub(crate) fn main_stack(r: &RankReport) -> Option<&ThreadStack> {
    r.threads
        .iter()
        .find(|t| Some(t.tid) == r.pid)
        .or(r.threads.first())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reading::Frame;
    use mpidd_read::ExceptionState;

    fn stack(names: &[&str]) -> ThreadStack {
        ThreadStack {
            tid: 1,
            frames: names
                .iter()
                .map(|n| Frame {
                    function: Some(n.to_string()),
                    ..Frame::default()
                })
                .collect(),
            truncated: false,
            error: None,
        }
    }

    #[test]
    fn each_way_out_is_told_from_the_stack() {
        let exiting = stack(&["nanosleep", "linger", "__run_exit_handlers", "exit", "main"]);
        assert_eq!(
            way_out(Some(&exiting), None),
            Some((WayOut::ProcessExit, Some("__run_exit_handlers".to_string())))
        );
        let python = stack(&["write", "_PyErr_Display", "PyErr_PrintEx", "Py_RunMain"]);
        assert_eq!(
            way_out(Some(&python), None).map(|w| w.0),
            Some(WayOut::PythonException)
        );
        let finalize = stack(&["poll", "PMPI_Finalize", "main"]);
        assert_eq!(
            way_out(Some(&finalize), Some(CallClass::Finalize)),
            Some((WayOut::Finalize, None))
        );
        // mpi4py finalizes from the interpreter's exit: still MPI_Finalize.
        let atexit = stack(&["PMPI_Finalize", "atexit_callfuncs", "Py_FinalizeEx"]);
        assert_eq!(
            way_out(Some(&atexit), Some(CallClass::Finalize)).map(|w| w.0),
            Some(WayOut::Finalize)
        );
        assert_eq!(
            way_out(Some(&finalize), Some(CallClass::Abort)).map(|w| w.0),
            Some(WayOut::Abort)
        );
        let working = stack(&["poll", "PMPI_Recv", "main"]);
        assert_eq!(way_out(Some(&working), Some(CallClass::PointToPoint)), None);
        // A name guessed from the nearest symbol proves nothing.
        let mut guessed = stack(&["exit", "main"]);
        guessed.frames[0].name_guessed = true;
        assert_eq!(way_out(Some(&guessed), None), None);
        // Nor does a Python function of that name.
        let mut python = stack(&["print_exception", "exit", "_PyEval_EvalFrameDefault"]);
        python.frames[0].python = true;
        python.frames[1].python = true;
        assert_eq!(way_out(Some(&python), None), None);
    }

    #[test]
    fn places_and_exceptions_read_as_a_person_says_them() {
        assert_eq!(place("main at bcast.c:14"), "at bcast.c:14 in main()");
        assert_eq!(place("compute"), "in compute()");
        let e = PythonException {
            type_name: "ValueError".to_string(),
            message: Some("bad input on rank 1".to_string()),
            state: ExceptionState::Raised,
            raised_at: Some(mpidd_read::PythonFrame {
                function: "check".to_string(),
                file: "/home/me/job.py".to_string(),
                line: Some(12),
                last_of_call: true,
            }),
        };
        assert_eq!(
            describe_exception(&e),
            "ValueError('bad input on rank 1') at job.py:12 in check()"
        );
        let bare = PythonException {
            message: Some("it's".to_string()),
            raised_at: None,
            ..e
        };
        assert_eq!(describe_exception(&bare), "ValueError(\"it's\")");
    }
}
