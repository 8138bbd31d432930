//! The Python frame reader on a hand-laid CPython 3.11 process
//! ([`SyntheticPython`], whose offsets are its own, not the reader's),
//! sound and bent: a frame chain that loops, a line table that claims
//! 2^31 bytes, a name that is not a string, a version without a table, a
//! thread state that does not point back. Each ends in a typed error or
//! the stated fallback, never a hang or a huge allocation.

use mpidd_read::{
    read_python, ExceptionState, PythonError, PythonFrameSpec, PythonLimits, PythonVersion,
    SymbolTable, SyntheticMemory, SyntheticPython, SYNTHETIC_PYTHON_TID,
};
use mpidd_types::{TargetAbi, TargetAddr};

fn frame(function: &str, first_line: u32, line: u32) -> PythonFrameSpec {
    PythonFrameSpec {
        function: function.into(),
        file: "/home/u/ring.py".into(),
        first_line,
        line,
    }
}

fn sound() -> SyntheticPython {
    SyntheticPython::new(&[frame("ring", 10, 12), frame("<module>", 1, 20)])
}

#[test]
fn a_sound_process_gives_function_file_and_line() {
    let p = sound();
    let py = read_python(&p.memory(), &p.symbols, &PythonLimits::default()).unwrap();
    assert_eq!(py.version, PythonVersion::new(3, 11));
    let t = &py.threads[0];
    assert_eq!(t.native_tid, Some(SYNTHETIC_PYTHON_TID));
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
    p.handle_value_error("bad input on rank 1");
    let py = read_python(&p.memory(), &p.symbols, &PythonLimits::default()).unwrap();
    let e = py.threads[0].exception.as_ref().expect("the exception");
    assert_eq!(e.type_name, "ValueError");
    assert_eq!(e.message.as_deref(), Some("bad input on rank 1"));
    assert_eq!(e.state, ExceptionState::Handled);
}

#[test]
fn a_frame_chain_that_loops_stops_at_the_limit_with_a_reason() {
    let mut p = sound();
    p.loop_frames();
    let py = read_python(&p.memory(), &p.symbols, &PythonLimits::default()).unwrap();
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
    let mut p = sound();
    p.claim_line_table(1 << 31);
    let py = read_python(&p.memory(), &p.symbols, &PythonLimits::default()).unwrap();
    let error = py.threads[0].error.as_deref().unwrap();
    assert!(
        error.contains("2147483648 bytes") && error.contains("co_linetable"),
        "{error}"
    );
}

#[test]
fn a_version_without_a_table_says_so() {
    let mut p = sound();
    p.set_version(0x030E_00F0);
    let e = read_python(&p.memory(), &p.symbols, &PythonLimits::default()).unwrap_err();
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
    p.bend_thread_state();
    let e = read_python(&p.memory(), &p.symbols, &PythonLimits::default()).unwrap_err();
    assert!(matches!(e, PythonError::LayoutMismatch { .. }), "{e}");
}

#[test]
fn a_name_that_is_not_a_string_stops_the_chain_with_its_address() {
    let mut p = sound();
    let at = p.bend_name();
    let py = read_python(&p.memory(), &p.symbols, &PythonLimits::default()).unwrap();
    let error = py.threads[0].error.as_deref().unwrap();
    assert!(
        error.contains("not a str") && error.contains(&at.to_string()),
        "{error}"
    );
}

#[test]
fn a_32_bit_target_is_refused() {
    let mem = SyntheticMemory::new(TargetAbi::I686);
    let mut symbols = SymbolTable::new();
    symbols.insert("/usr/bin/python3.11", "_PyRuntime", TargetAddr(0x1000), 8);
    let e = read_python(&mem, &symbols, &PythonLimits::default()).unwrap_err();
    assert!(matches!(e, PythonError::UnsupportedAbi { bits: 32 }), "{e}");
}
