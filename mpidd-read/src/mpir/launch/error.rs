//! Why driving a launcher failed: each error names the process or thread,
//! and the request or step that failed.

use nix::errno::Errno;
use nix::sys::signal::Signal;

use crate::backend::attach_guard::AttachError;
use crate::backend::live_process::LiveError;
use crate::error::ReadError;
use crate::mpir::MpirError;

/// Why starting, driving or leaving a launcher failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// This host's breakpoint instruction is not known to the driver (see
    /// [`SUPPORTED_HOSTS`](super::SUPPORTED_HOSTS)); nothing was started.
    #[error(
        "launching under the MPIR protocol needs an x86_64 host; this one is {arch} \
         (`mpidd attach` and reading a running launcher work on any host)"
    )]
    UnsupportedHost {
        /// This host's architecture.
        arch: &'static str,
    },
    /// The command line is empty.
    #[error("no launcher command given")]
    NoCommand,
    /// An argument holds a NUL byte, which no C string can.
    #[error("argument {index} of the launcher command contains a NUL byte")]
    NulInArgument {
        /// Its index in the command line (0 is the program).
        index: usize,
    },
    /// `fork` failed.
    #[error("cannot fork to start {program}: {errno}")]
    Fork {
        /// The program.
        program: String,
        /// What the kernel said.
        errno: Errno,
    },
    /// The signal mask of this thread could not be set or restored.
    #[error("cannot set this thread's signal mask: {errno}")]
    SignalMask {
        /// What the kernel said.
        errno: Errno,
    },
    /// A ptrace request on a thread of the launcher failed.
    #[error("{request} of thread {tid} of launcher {pid} failed: {errno}{}", ptrace_hint(*errno))]
    Ptrace {
        /// The launcher.
        pid: i32,
        /// The thread.
        tid: i32,
        /// The request (`PTRACE_SEIZE`, `PTRACE_CONT`, `PTRACE_SINGLESTEP`,
        /// `PTRACE_GETREGS`, ...).
        request: &'static str,
        /// What the kernel said.
        errno: Errno,
    },
    /// Waiting for a thread of the launcher failed.
    #[error("waiting for thread {tid} of launcher {pid} failed: {errno}")]
    Wait {
        /// The launcher.
        pid: i32,
        /// The thread waited for.
        tid: i32,
        /// What the kernel said.
        errno: Errno,
    },
    /// The launcher ended before it ran its own program (`exec` failed:
    /// the command is not on `PATH`, or not executable).
    #[error("{program} could not be started: {how}")]
    NotStarted {
        /// The program.
        program: String,
        /// What became of it.
        how: StartFailure,
    },
    /// The launcher ended after `exec` but before its entry point.
    #[error("{program} exited with status {status} before reaching its entry point")]
    ExitedBeforeEntry {
        /// The program.
        program: String,
        /// Its exit status as a shell shows it (128 + signal when killed).
        status: i32,
    },
    /// The launcher stopped somewhere the driver did not expect before
    /// its entry point.
    #[error("{program} stopped unexpectedly before its entry point: {stop}")]
    UnexpectedStop {
        /// The program.
        program: String,
        /// The stop, as the driver saw it.
        stop: String,
    },
    /// The auxiliary vector, where the entry point is, could not be read.
    #[error("cannot read the entry point of launcher {pid} from {path}: {cause}")]
    Auxv {
        /// The launcher.
        pid: i32,
        /// `/proc/PID/auxv`.
        path: String,
        /// Why: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
    /// The auxiliary vector has no `AT_ENTRY`.
    #[error("launcher {pid} has no AT_ENTRY in its auxiliary vector")]
    NoEntryPoint {
        /// The launcher.
        pid: i32,
    },
    /// A breakpoint could not be planted or taken out.
    #[error("the breakpoint at {addr:#x} in launcher {pid}: {cause}")]
    Breakpoint {
        /// The launcher.
        pid: i32,
        /// The breakpoint's address.
        addr: u64,
        /// Why: shown in the message, so not also as `source()`.
        cause: ReadError,
    },
    /// The launcher's memory could not be opened.
    #[error(transparent)]
    Live(#[from] LiveError),
    /// A running process could not be stopped or let go.
    #[error(transparent)]
    Attach(#[from] AttachError),
    /// The MPIR protocol failed: its symbols, or reading or writing its
    /// variables.
    #[error(transparent)]
    Mpir(#[from] MpirError),
    /// The launcher defines no usable MPIR interface. It was let go, and
    /// runs on as if no debugger had been there.
    #[error("launcher {pid} runs on without the debugger: {cause}")]
    NotAStarter {
        /// The launcher.
        pid: i32,
        /// What is missing: shown in the message, so not also as `source()`.
        cause: MpirError,
    },
}

/// What became of a launcher that never ran its program.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StartFailure {
    /// It exited with this status: 127 when `exec` failed.
    #[error("it exited with status {0} before exec (is the command on PATH and executable?)")]
    Exited(i32),
    /// A signal killed it.
    #[error("{0} killed it before exec")]
    Killed(Signal),
    /// It did not stop where it should have, before exec.
    #[error("it did not stop before exec: {0}")]
    NoStop(String),
}

/// What to add when the kernel refuses to let us trace.
fn ptrace_hint(errno: Errno) -> &'static str {
    if errno == Errno::EPERM {
        " (tracing needs /proc/sys/kernel/yama/ptrace_scope at most 1, or CAP_SYS_PTRACE)"
    } else {
        ""
    }
}
