//! One stack as a person reads it: the native frames of a thread with its
//! Python frames in place of the evaluation-loop calls that run them.

use super::python_threads::PythonThread;
use crate::{Frame, ThreadStack};

/// Whether a native frame is a call of CPython's evaluation loop, which
/// runs Python frames (its split-off cold part too).
pub fn is_eval_frame(frame: &Frame) -> bool {
    !frame.python
        && frame
            .function
            .as_deref()
            .is_some_and(|f| f.starts_with("_PyEval_EvalFrameDefault"))
}

/// Puts `python`'s frames into `stack`. Each call of the evaluation loop,
/// innermost first, is replaced by the Python frames it runs, innermost
/// first. Python frames left over when the native stack shows fewer calls
/// (a walk that stopped early) go in place of the outermost call; when it
/// shows none (an interpreter whose evaluation loop has no symbol), they
/// go before the first frame in the interpreter's own object (one whose
/// name holds `python`), or last.
///
/// ```
/// use mpidd_read::{mix_python_frames, Frame, PythonFrame, PythonThread, ThreadStack};
///
/// let native = |f: &str| Frame { function: Some(f.into()), ..Frame::default() };
/// let mut stack = ThreadStack {
///     tid: 7,
///     frames: vec![native("MPI_Recv"), native("_PyEval_EvalFrameDefault"), native("main")],
///     truncated: false,
///     error: None,
/// };
/// let py = |f: &str, line| PythonFrame { function: f.into(), file: "ring.py".into(), line: Some(line), last_of_call: false };
/// let mut outer = py("<module>", 20);
/// outer.last_of_call = true;
/// let thread = PythonThread { native_tid: Some(7), pthread: 0, frames: vec![py("ring", 12), outer], exception: None, error: None };
/// mix_python_frames(&mut stack, &thread);
/// let names: Vec<_> = stack.frames.iter().map(|f| f.function.clone().unwrap()).collect();
/// assert_eq!(names, ["MPI_Recv", "ring", "<module>", "main"]);
/// assert!(stack.frames[1].python && stack.frames[1].line == Some(12));
/// ```
pub fn mix_python_frames(stack: &mut ThreadStack, python: &PythonThread) {
    let mut groups: Vec<Vec<Frame>> = Vec::new();
    let mut current = Vec::new();
    for f in &python.frames {
        current.push(Frame {
            function: Some(f.function.clone()),
            file: Some(f.file.clone()),
            line: f.line,
            python: true,
            ..Frame::default()
        });
        if f.last_of_call {
            groups.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        groups.push(current);
    }
    if groups.is_empty() {
        return;
    }
    let evals: Vec<usize> = stack
        .frames
        .iter()
        .enumerate()
        .filter(|(_, f)| is_eval_frame(f))
        .map(|(i, _)| i)
        .collect();
    let mut out = Vec::with_capacity(stack.frames.len() + python.frames.len());
    if evals.is_empty() {
        let at = stack
            .frames
            .iter()
            .position(|f| f.object.as_deref().is_some_and(|o| o.contains("python")))
            .unwrap_or(stack.frames.len());
        out.extend(stack.frames[..at].iter().cloned());
        out.extend(groups.into_iter().flatten());
        out.extend(stack.frames[at..].iter().cloned());
        stack.frames = out;
        return;
    }
    let last_used = evals.len().min(groups.len()) - 1;
    let mut groups = groups.into_iter();
    for (i, frame) in stack.frames.drain(..).enumerate() {
        match evals.iter().position(|&e| e == i) {
            Some(k) if k < last_used => out.extend(groups.next().into_iter().flatten()),
            Some(k) if k == last_used => out.extend(groups.by_ref().flatten()),
            _ => out.push(frame),
        }
    }
    stack.frames = out;
}
