//! The `python_frames` seeds: CPython 3.11 processes laid out by
//! `SyntheticPython` (its own offsets, not the reader's), sound, handling
//! an exception, and with a looping frame chain, each copied into the
//! fuzz process format as one segment.

use std::path::Path;

use mpidd_fuzz::python::{limits, PYTHON_SYMBOLS};
use mpidd_fuzz::{Process, OBJECT};
use mpidd_read::{read_python, PythonFrameSpec, SymbolSource, SymbolTable, SyntheticPython};

use crate::common::{check, encoded, write, Result};

fn frame(function: &str, first_line: u32, line: u32) -> PythonFrameSpec {
    PythonFrameSpec {
        function: function.into(),
        file: "/job/ring.py".into(),
        first_line,
        line,
    }
}

/// `p` as a fuzz process: its memory, and its symbols under the fuzz
/// format's one object name.
fn process_of(p: &SyntheticPython) -> Process {
    let mut symbols = SymbolTable::new();
    for name in PYTHON_SYMBOLS {
        let s = p
            .symbols
            .lookup(name)
            .expect("every Python symbol is laid out");
        symbols.insert(OBJECT, name, s.addr, s.size);
    }
    Process {
        memory: p.memory(),
        symbols,
    }
}

/// Every `python_frames` seed, each checked to read as intended.
pub fn python_frames(out: &Path) -> Result<()> {
    let frames = [
        frame("ring", 10, 12),
        frame("step", 30, 31),
        frame("<module>", 1, 40),
    ];
    let sound = SyntheticPython::new(&frames);
    let mut handling = sound.clone();
    handling.handle_value_error("bad input on rank 1");
    let mut looping = sound.clone();
    looping.loop_frames();
    for (label, p) in [
        ("sound", sound),
        ("handling", handling),
        ("looping", looping),
    ] {
        let process = process_of(&p);
        let read = read_python(&process, &process, &limits())
            .map_err(|e| format!("the {label} process does not read: {e}"))?;
        let t = &read.threads[0];
        check(t.frames.len() == 3, "every frame")?;
        check(t.frames[0].line == Some(12), "the innermost line")?;
        check(
            (label == "handling") == t.exception.is_some(),
            "the exception, only where laid out",
        )?;
        check(
            (label == "looping") == t.error.is_some(),
            "the loop, only where laid out",
        )?;
        write(
            out,
            "python_frames",
            label,
            &encoded(&process, PYTHON_SYMBOLS),
        )?;
    }
    Ok(())
}
