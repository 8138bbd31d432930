//! Which MPI function a thread is in, and where a rank is in its own code,
//! from its call stack.

use serde::{Deserialize, Serialize};

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
        .find_map(|f| {
            let name = f.function.as_deref()?;
            entry_point(name).or_else(|| tail_called_body(name))
        })
        .map(str::to_string)
}

/// The entry point whose body a library function is, where the entry
/// point jumps to it rather than calls it, so that its own frame is not
/// on the stack: Open MPI's `MPI_Finalize`, `MPI_Init` and `MPI_Abort`
/// jump to `ompi_mpi_finalize`, `ompi_mpi_init` and `ompi_mpi_abort`.
pub fn tail_called_body(name: &str) -> Option<&'static str> {
    match name {
        "ompi_mpi_finalize" => Some("MPI_Finalize"),
        "ompi_mpi_init" => Some("MPI_Init"),
        "ompi_mpi_abort" => Some("MPI_Abort"),
        _ => None,
    }
}

/// `MPI_Xxx` for a function name that is an MPI entry point: `MPI_`,
/// `MPIX_` or their profiling twins `PMPI_`, `PMPIX_`, followed by an
/// upper-case letter and a lower-case one (so `MPI_Recv`, `MPI_Comm_split`,
/// `MPIX_Comm_revoke` and the large-count `MPI_Send_c`, but not MPICH's
/// internal `MPIR_`/`MPID_` functions or `MPI_T_` tool calls).
pub fn entry_point(name: &str) -> Option<&str> {
    let name = name.strip_prefix('P').unwrap_or(name);
    let rest = name
        .strip_prefix("MPI_")
        .or_else(|| name.strip_prefix("MPIX_"))?;
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

/// What kind of wait a rank is in while it is inside an MPI call, as the
/// call's name alone tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallClass {
    /// A blocking point-to-point call that returns only once a peer acts:
    /// `MPI_Recv`, `MPI_Probe`, `MPI_Mprobe`, `MPI_Mrecv`, `MPI_Ssend`,
    /// `MPI_Send` (which blocks for a large message), `MPI_Sendrecv`, ...
    PointToPoint,
    /// A completion call over requests: `MPI_Wait`, `MPI_Waitall` (every
    /// request), `MPI_Waitany` and `MPI_Waitsome` (any one).
    Completion,
    /// A blocking collective: it returns once every member of its
    /// communicator has entered it (or a matching nonblocking one).
    Collective,
    /// `MPI_Finalize`, collective over every process.
    Finalize,
    /// `MPI_Abort`: the job is being torn down.
    Abort,
    /// A call that returns by itself (`MPI_Test`, `MPI_Iprobe`, `MPI_Isend`,
    /// `MPI_Ibcast`, `MPI_Comm_rank`, ...): a rank found in one is in a loop
    /// of its own, not blocked.
    Returns,
}

impl CallClass {
    /// Whether a rank in such a call cannot go on until another acts.
    pub fn blocks(self) -> bool {
        matches!(
            self,
            CallClass::PointToPoint
                | CallClass::Completion
                | CallClass::Collective
                | CallClass::Finalize
        )
    }
}

/// The class of an MPI call named as [`entry_point`] gives it (with or
/// without the large-count `_c` suffix).
pub fn classify(call: &str) -> CallClass {
    let name = call
        .strip_prefix("MPI_")
        .or_else(|| call.strip_prefix("MPIX_"))
        .unwrap_or(call);
    let name = name.strip_suffix("_c").unwrap_or(name);
    const POINT_TO_POINT: &[&str] = &[
        "Recv",
        "Mrecv",
        "Probe",
        "Mprobe",
        "Send",
        "Ssend",
        "Bsend",
        "Rsend",
        "Sendrecv",
        "Sendrecv_replace",
    ];
    const COMPLETION: &[&str] = &["Wait", "Waitall", "Waitany", "Waitsome"];
    if POINT_TO_POINT.contains(&name) {
        CallClass::PointToPoint
    } else if COMPLETION.contains(&name) {
        CallClass::Completion
    } else if name == "Finalize" {
        CallClass::Finalize
    } else if name == "Abort" {
        CallClass::Abort
    } else if is_collective(call) {
        CallClass::Collective
    } else {
        CallClass::Returns
    }
}

/// Whether a completion call is released by any one of its requests
/// (`MPI_Waitany`, `MPI_Waitsome`) rather than by all of them.
pub fn completes_on_any(call: &str) -> bool {
    let name = call.strip_prefix("MPI_").unwrap_or(call);
    let name = name.strip_suffix("_c").unwrap_or(name);
    matches!(name, "Waitany" | "Waitsome")
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
        "Comm_create_group",
        "Comm_idup",
        "Intercomm_create",
        "Intercomm_merge",
        "Cart_create",
        "Graph_create",
        "Dist_graph_create",
        "Dist_graph_create_adjacent",
        "Neighbor_allgather",
        "Neighbor_allgatherv",
        "Neighbor_alltoall",
        "Neighbor_alltoallv",
        "Neighbor_alltoallw",
        "Finalize",
        "Win_create",
        "Win_allocate",
        "Win_fence",
        "Win_free",
        "File_open",
        "File_close",
    ];
    call.strip_prefix("MPI_")
        .map(|name| name.strip_suffix("_c").unwrap_or(name))
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
            ..Frame::default()
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
        assert_eq!(entry_point("PMPIX_Comm_revoke"), Some("MPIX_Comm_revoke"));
        assert_eq!(entry_point("MPI_Send_c"), Some("MPI_Send_c"));
    }

    #[test]
    fn calls_are_classed_by_how_they_wait() {
        assert_eq!(classify("MPI_Recv"), CallClass::PointToPoint);
        assert_eq!(classify("MPI_Probe"), CallClass::PointToPoint);
        assert_eq!(classify("MPI_Ssend_c"), CallClass::PointToPoint);
        assert_eq!(classify("MPI_Waitany"), CallClass::Completion);
        assert_eq!(classify("MPI_Allreduce_c"), CallClass::Collective);
        assert_eq!(classify("MPI_Finalize"), CallClass::Finalize);
        assert_eq!(classify("MPI_Abort"), CallClass::Abort);
        assert_eq!(classify("MPI_Iprobe"), CallClass::Returns);
        assert_eq!(classify("MPI_Ibcast"), CallClass::Returns);
        assert_eq!(classify("MPI_Test"), CallClass::Returns);
        assert!(CallClass::Collective.blocks());
        assert!(!CallClass::Returns.blocks());
        assert!(completes_on_any("MPI_Waitsome"));
        assert!(!completes_on_any("MPI_Waitall"));
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
        // Open MPI's MPI_Finalize jumps to its body: no MPI_ frame.
        let finalize = ThreadStack {
            tid: 1,
            frames: vec![frame("usleep"), frame("ompi_mpi_finalize"), frame("main")],
            truncated: false,
            error: None,
        };
        assert_eq!(mpi_call(&finalize).as_deref(), Some("MPI_Finalize"));
        // And its MPI_Abort to ompi_mpi_abort (seen with mpi_abort_delay).
        let abort = ThreadStack {
            tid: 1,
            frames: vec![
                frame("sleep"),
                frame("opal_delay_abort"),
                frame("ompi_mpi_abort"),
                frame("main"),
            ],
            truncated: false,
            error: None,
        };
        assert_eq!(mpi_call(&abort).as_deref(), Some("MPI_Abort"));
        assert!(is_collective("MPI_Barrier"));
        assert!(!is_collective("MPI_Recv"));
    }
}
