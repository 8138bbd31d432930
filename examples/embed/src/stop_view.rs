//! What the tracer shows at each stop: why the rank stopped, its queues as
//! the crates read them, the handles of the MPI call it stopped at, and
//! every thread's stack. Text for a person, one
//! JSON object a line for a program (`--json`).

use std::io::Write;

use mpidd_read::ThreadStack;
use mpiq_core::model::ProcessQueues;
use serde::Serialize;

use crate::call_handles::{ArgumentView, CallView};

/// Why the rank stopped.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopReason {
    /// A thread reached a breakpoint.
    Breakpoint {
        /// The function it was planted at.
        function: String,
        /// Its address.
        address: u64,
    },
    /// A signal was about to be delivered to a thread.
    Signal {
        /// The signal's name, e.g. `SIGUSR1`.
        signal: String,
    },
}

/// One frame as shown: the function's name and the pc.
#[derive(Clone, Debug, Serialize)]
pub struct FrameView {
    /// The function, when the crates named it.
    pub function: Option<String>,
    /// The thread's pc for the first frame, a return address for the
    /// others.
    pub pc: u64,
}

/// One thread's stack as shown.
#[derive(Clone, Debug, Serialize)]
pub struct ThreadView {
    /// The thread.
    pub tid: i32,
    /// Its frames, innermost first.
    pub frames: Vec<FrameView>,
    /// Why the walk ended early, if it did.
    pub error: Option<String>,
}

impl From<&ThreadStack> for ThreadView {
    fn from(stack: &ThreadStack) -> ThreadView {
        ThreadView {
            tid: stack.tid,
            frames: stack
                .frames
                .iter()
                .map(|f| FrameView {
                    function: f.function.clone(),
                    pc: f.pc,
                })
                .collect(),
            error: stack.error.clone(),
        }
    }
}

/// Everything shown at one stop.
#[derive(Clone, Debug, Serialize)]
pub struct StopView {
    /// The stop's number, from 1.
    pub stop: u32,
    /// The process.
    pub pid: i32,
    /// The thread that stopped.
    pub tid: i32,
    /// Why.
    pub reason: StopReason,
    /// The queues, in the crates' model, when they could be read.
    pub queues: Option<ProcessQueues>,
    /// What the queues rest on: the decoder, the builds it was checked
    /// on, where its layouts came from.
    pub provenance: Option<String>,
    /// Why they could not, when they could not.
    pub queues_error: Option<String>,
    /// At a breakpoint on an MPI call whose handles are known
    /// (`MPI_Recv`), what its communicator and datatype mean.
    pub call: Option<CallView>,
    /// Every thread's stack, the stopped thread's first.
    pub threads: Vec<ThreadView>,
}

impl StopView {
    /// Prints the stop: one JSON object on one line, or text.
    pub fn print(&self, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
        if json {
            // One write for the whole line: a reader of a pipe never sees
            // it cut where a line buffer would have flushed.
            let mut line = serde_json::to_vec(self)?;
            line.push(b'\n');
            out.write_all(&line)?;
            return out.flush();
        }
        let why = match &self.reason {
            StopReason::Breakpoint { function, address } => {
                format!("breakpoint at {function} ({address:#x})")
            }
            StopReason::Signal { signal } => format!("signal {signal}"),
        };
        writeln!(
            out,
            "stop {}: {why} in thread {} of process {}",
            self.stop, self.tid, self.pid
        )?;
        match (&self.queues, &self.queues_error) {
            (Some(q), _) => {
                print_queues(q, out)?;
                if let Some(p) = &self.provenance {
                    writeln!(out, "    ({p})")?;
                }
            }
            (None, Some(e)) => writeln!(out, "  queues: cannot be read: {e}")?,
            (None, None) => {}
        }
        if let Some(call) = &self.call {
            writeln!(out, "  call {}:", call.function)?;
            print_argument("comm", &call.comm, out)?;
            print_argument("datatype", &call.datatype, out)?;
        }
        for t in &self.threads {
            writeln!(out, "  thread {}:", t.tid)?;
            for (i, f) in t.frames.iter().enumerate() {
                let name = f.function.as_deref().unwrap_or("??");
                writeln!(out, "    #{i:<2} {:#018x} {name}", f.pc)?;
            }
            if let Some(e) = &t.error {
                writeln!(out, "    (stack ends early: {e})")?;
            }
        }
        out.flush()
    }
}

/// The queues as `mpidd queues` prints them (the library's `Display`),
/// indented under the stop.
fn print_queues(q: &ProcessQueues, out: &mut dyn Write) -> std::io::Result<()> {
    for line in q.to_string().lines() {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}

/// One handle argument: its value, then the view as `mpidd handle` prints
/// it (the library's `Display`), indented under the call.
fn print_argument(label: &str, arg: &ArgumentView, out: &mut dyn Write) -> std::io::Result<()> {
    let Some(view) = &arg.view else {
        let why = arg.error.as_deref().unwrap_or("no view");
        return writeln!(
            out,
            "    {label} {:#x}: cannot be resolved: {why}",
            arg.value
        );
    };
    writeln!(out, "    {label} {:#x}:", arg.value)?;
    for line in view.to_string().lines() {
        writeln!(out, "      {line}")?;
    }
    Ok(())
}
