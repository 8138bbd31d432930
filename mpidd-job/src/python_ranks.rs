//! The Python side of a rank that runs CPython: its Python frames in its
//! stacks, the exception it has, and the statement it is in.

use std::path::{Path, PathBuf};

use mpidd_read::{
    is_eval_frame, mix_python_frames, read_python, PythonError, PythonLimits, PythonThread,
    SymbolSource, TargetMemory,
};

use crate::reading::{Frame, RankReading};

/// Most bytes of a source file read to find one line.
const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// Reads the rank's Python threads and puts their frames into its stacks.
/// A process without CPython is left as it is; one whose Python frames
/// cannot be read gets one line saying why. `root` is where the rank's
/// files are seen from here (`/proc/PID/root` of a live rank), for the
/// source line.
pub(crate) fn add_python(
    mem: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    root: Option<&Path>,
    limits: &PythonLimits,
    reading: &mut RankReading,
) {
    let process = match read_python(mem, symbols, limits) {
        Ok(p) => p,
        Err(PythonError::NotPython) => return,
        Err(e) => {
            reading
                .errors
                .push(format!("no Python frames: {e}; its stacks are native only"));
            return;
        }
    };
    reading.python = Some(process.version.to_string());
    let mut threads: Vec<&PythonThread> = process.threads.iter().collect();
    // Thread states are pushed at the head of the interpreter's list: the
    // oldest (the main thread) is last.
    threads.reverse();
    let mut unmatched: Vec<&PythonThread> = Vec::new();
    for t in threads {
        match t
            .native_tid
            .and_then(|tid| reading.threads.iter_mut().find(|s| s.tid == tid))
        {
            Some(stack) => mix_python_frames(stack, t),
            None => unmatched.push(t),
        }
    }
    // Before 3.11 a thread state does not keep the kernel's thread id: the
    // threads that run the evaluation loop take them in order.
    let mut unmatched = unmatched.into_iter().filter(|t| !t.frames.is_empty());
    let loops: Vec<usize> = reading
        .threads
        .iter()
        .enumerate()
        .filter(|(_, s)| s.frames.iter().any(is_eval_frame))
        .map(|(i, _)| i)
        .collect();
    for i in loops {
        match unmatched.next() {
            Some(t) => mix_python_frames(&mut reading.threads[i], t),
            None => break,
        }
    }
    for t in &process.threads {
        if let Some(e) = &t.error {
            reading.errors.push(format!("Python frames: {e}"));
        }
    }
    // The main thread's exception first.
    reading.python_exception = process
        .threads
        .iter()
        .rev()
        .find_map(|t| t.exception.clone());
    let own = reading
        .threads
        .first()
        .and_then(|s| own_python_frame(&s.frames));
    reading.python_call = reading.threads.first().and_then(|s| mpi4py_call(&s.frames));
    if let Some(frame) = own {
        reading.python_statement = frame
            .file
            .as_deref()
            .zip(frame.line)
            .and_then(|(file, line)| source_line(root, file, line));
    }
}

/// The mpi4py method a stack is in (`Comm.recv`), from the name Cython
/// gives its wrapper: `__pyx_pw_` and the module path and class as
/// length-prefixed names, then `_`, a number and the method
/// (`__pyx_pw_6mpi4py_3MPI_4Comm_259recv`).
pub(crate) fn mpi4py_call(frames: &[Frame]) -> Option<String> {
    frames.iter().find_map(|f| {
        let name = f
            .function
            .as_deref()?
            .strip_prefix("__pyx_pw_6mpi4py_3MPI_")?;
        let digits = name.chars().take_while(char::is_ascii_digit).count();
        let len: usize = name[..digits].parse().ok()?;
        let class = name.get(digits..digits + len)?;
        let method = name[digits + len..]
            .strip_prefix('_')?
            .trim_start_matches(|c: char| c.is_ascii_digit());
        (!class.is_empty() && !method.is_empty()).then(|| format!("{class}.{method}"))
    })
}

/// The innermost Python frame of the program's own code: not of an
/// installed package or of Python's own library, when another is there.
pub(crate) fn own_python_frame(frames: &[Frame]) -> Option<&Frame> {
    let python = || frames.iter().filter(|f| f.python);
    python()
        .find(|f| f.file.as_deref().is_some_and(|p| !is_library_file(p)))
        .or_else(|| python().next())
}

fn is_library_file(path: &str) -> bool {
    path.contains("/site-packages/")
        || path.contains("/dist-packages/")
        || path.starts_with('<')
        || path.contains("/lib/python3")
}

/// Line `line` of `file`, trimmed, seen from `root`.
fn source_line(root: Option<&Path>, file: &str, line: u32) -> Option<String> {
    use std::io::{BufRead, BufReader, Read};
    let path = match root {
        Some(r) => r.join(file.trim_start_matches('/')),
        None => PathBuf::from(file),
    };
    let f = std::fs::File::open(path).ok()?;
    let text = BufReader::new(f.take(MAX_SOURCE_BYTES))
        .lines()
        .nth(line.checked_sub(1)? as usize)?
        .ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.chars().take(200).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(file: &str) -> Frame {
        Frame {
            function: Some("f".into()),
            file: Some(file.into()),
            line: Some(3),
            python: true,
            ..Frame::default()
        }
    }

    #[test]
    fn mpi4py_methods_are_named_from_cythons_wrappers() {
        let native = |n: &str| Frame {
            function: Some(n.into()),
            ..Frame::default()
        };
        let frames = [
            native("PMPI_Mprobe"),
            native("__pyx_f_6mpi4py_3MPI_PyMPI_recv"),
            native("__pyx_pw_6mpi4py_3MPI_4Comm_259recv"),
        ];
        assert_eq!(mpi4py_call(&frames).as_deref(), Some("Comm.recv"));
        let barrier = [native("__pyx_pw_6mpi4py_3MPI_9Intracomm_31Barrier")];
        assert_eq!(mpi4py_call(&barrier).as_deref(), Some("Intracomm.Barrier"));
        for bad in [
            "__pyx_pw_6mpi4py_3MPI_99Comm_1recv",
            "__pyx_pw_6mpi4py_3MPI_4Comm",
            "__pyx_pw_6mpi4py_3MPI_",
        ] {
            assert_eq!(mpi4py_call(&[native(bad)]), None, "{bad}");
        }
    }

    #[test]
    fn the_programs_own_frame_is_not_a_packages() {
        let frames = [
            Frame::default(),
            py("/venv/lib/python3.11/site-packages/mpi4py/util/pkl5.py"),
            py("/home/u/ring.py"),
        ];
        assert_eq!(
            own_python_frame(&frames).unwrap().file.as_deref(),
            Some("/home/u/ring.py")
        );
        assert!(own_python_frame(&frames[..1]).is_none());
    }

    #[test]
    fn a_source_line_is_read_trimmed_and_a_missing_one_is_none() {
        let dir = std::env::temp_dir().join(format!("mpidd-src-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ring.py");
        std::fs::write(&file, "a = 1\n    data = comm.recv(source=left)\n").unwrap();
        let path = file.to_str().unwrap();
        assert_eq!(
            source_line(None, path, 2).as_deref(),
            Some("data = comm.recv(source=left)")
        );
        assert_eq!(source_line(None, path, 3), None);
        assert_eq!(source_line(None, path, 0), None);
        assert_eq!(
            source_line(Some(Path::new("/")), path, 1).as_deref(),
            Some("a = 1")
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
