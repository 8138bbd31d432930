//! `mpidd_read::read_python` over an arbitrary synthetic process (see
//! `src/process.rs`) whose symbols are CPython's (`_PyRuntime`,
//! `Py_Version`, `PyCode_Type`, `PyUnicode_Type`): the interpreters, their
//! thread states, every thread's frame chain with its code objects, names
//! and line tables, and the exception each thread raises, handles or
//! holds, read twice. Every Python frame mixed into a native stack must
//! keep that stack's native frames.
//!
//! ```text
//! input := process
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::python::{limits, PYTHON_SYMBOLS};
use mpidd_fuzz::{Cursor, Process};
use mpidd_read::{mix_python_frames, read_python, Frame, ThreadStack};

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let process = Process::parse(&mut c, PYTHON_SYMBOLS);
    let limits = limits();
    let first = read_python(&process, &process, &limits);
    if let Ok(p) = &first {
        let _ = serde_json::to_string(p).expect("a Python process serializes");
        assert!(p.threads.len() <= limits.max_threads);
        for t in &p.threads {
            assert!(t.frames.len() <= limits.max_frames);
            let native = Frame {
                function: Some("_PyEval_EvalFrameDefault".into()),
                ..Frame::default()
            };
            let mut stack = ThreadStack {
                tid: 1,
                frames: vec![Frame::default(), native.clone(), native, Frame::default()],
                truncated: false,
                error: None,
            };
            mix_python_frames(&mut stack, t);
            let kept = stack.frames.iter().filter(|f| !f.python).count();
            assert!(kept >= 2, "the frames around the evaluation loop are kept");
            assert_eq!(
                stack.frames.iter().filter(|f| f.python).count(),
                t.frames.len()
            );
        }
    }
    let again = read_python(&process, &process, &limits);
    match (&first, &again) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "reading twice gave two answers"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("reading twice gave threads and an error"),
    }
});
