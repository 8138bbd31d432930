//! Which MPI function a thread is in, and where a rank is in its own code,
//! from its call stack.

use crate::reading::{Frame, ThreadStack};

/// The MPI function a stack is in: its outermost frame named like an MPI
/// entry point (`MPI_Recv`, or the profiling name `PMPI_Recv`), given
/// without the profiling prefix. Frames are innermost first, as unwinders
/// give them; the outermost one is what the program called, so an
/// `MPI_Wait` that MPI calls inside `MPI_Sendrecv` is not taken for it.
pub fn mpi_call(stack: &ThreadStack) -> Option<String> {
    stack
        .frames
        .iter()
        .rev()
        .find_map(|f| f.function.as_deref().and_then(entry_point))
        .map(str::to_string)
}

/// `MPI_Xxx` for a function name that is an MPI entry point: `MPI_` or
/// `PMPI_` followed by an upper-case letter and then no other upper-case
/// letter before a `_` (so `MPI_Recv` and `MPI_Comm_split`, but not
/// MPICH's internal `MPIR_`/`MPID_` functions or `MPI_T_` tool calls).
pub fn entry_point(name: &str) -> Option<&str> {
    let name = name.strip_prefix('P').unwrap_or(name);
    let rest = name.strip_prefix("MPI_")?;
    let mut chars = rest.chars();
    let first = chars.next()?;
    if !first.is_ascii_uppercase() {
        return None;
    }
    let second = chars.next()?;
    if !second.is_ascii_lowercase() {
        return None;
    }
    Some(name)
}

/// Whether an MPI function is a collective that every rank of its
/// communicator must enter.
pub fn is_collective(call: &str) -> bool {
    const COLLECTIVES: &[&str] = &[
        "Barrier",
        "Bcast",
        "Reduce",
        "Allreduce",
        "Gather",
        "Gatherv",
        "Allgather",
        "Allgatherv",
        "Scatter",
        "Scatterv",
        "Alltoall",
        "Alltoallv",
        "Alltoallw",
        "Reduce_scatter",
        "Reduce_scatter_block",
        "Scan",
        "Exscan",
        "Comm_split",
        "Comm_split_type",
        "Comm_dup",
        "Comm_create",
        "Comm_free",
        "Cart_create",
        "Finalize",
        "Win_fence",
        "File_open",
        "File_close",
    ];
    call.strip_prefix("MPI_")
        .is_some_and(|name| COLLECTIVES.contains(&name))
}

/// The innermost frame of the program's own code (its executable), as
/// `function at file:line`, or the innermost named frame when no frame is
/// the program's.
pub fn own_code_location(stack: &ThreadStack, executable: Option<&str>) -> Option<String> {
    let own = stack
        .frames
        .iter()
        .find(|f| executable.is_some() && f.object.as_deref() == executable);
    own.or_else(|| stack.frames.iter().find(|f| f.function.is_some()))
        .map(describe_frame)
}

/// `function at file:line`, `function` alone, or the address.
pub fn describe_frame(frame: &Frame) -> String {
    let function = frame
        .function
        .clone()
        .unwrap_or_else(|| format!("{:#x}", frame.pc));
    match (&frame.file, frame.line) {
        (Some(file), Some(line)) => {
            let file = file.rsplit('/').next().unwrap_or(file);
            format!("{function} at {file}:{line}")
        }
        _ => function,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str) -> Frame {
        Frame {
            pc: 0x1000,
            function: Some(name.to_string()),
            name_guessed: false,
            offset: 0,
            object: None,
            file: None,
            line: None,
        }
    }

    #[test]
    fn entry_points_are_told_from_internals() {
        assert_eq!(entry_point("PMPI_Recv"), Some("MPI_Recv"));
        assert_eq!(entry_point("MPI_Comm_split"), Some("MPI_Comm_split"));
        assert_eq!(entry_point("MPIR_Barrier_impl"), None);
        assert_eq!(entry_point("MPID_Recv"), None);
        assert_eq!(entry_point("MPI_T_init_thread"), None);
        assert_eq!(entry_point("ompi_request_wait"), None);
    }

    #[test]
    fn the_outermost_mpi_frame_is_the_call() {
        let stack = ThreadStack {
            tid: 1,
            frames: vec![
                frame("poll"),
                frame("MPIDI_CH3I_Progress"),
                frame("PMPI_Wait"),
                frame("PMPI_Sendrecv"),
                frame("main"),
            ],
            truncated: false,
            error: None,
        };
        assert_eq!(mpi_call(&stack).as_deref(), Some("MPI_Sendrecv"));
        assert!(is_collective("MPI_Barrier"));
        assert!(!is_collective("MPI_Recv"));
    }
}
