//! `mpidd-embed`: a small tracer that embeds the mpidd crates the way a
//! debugger does. It traces the MPI rank itself (ptrace), reads its memory
//! and registers itself, and at each of its stops hands them to the crates
//! for the rank's message queues, stacks and the handles of the MPI call
//! it stopped in. See README.md.

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod breakpoints;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod call_handles;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod job;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod launch;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod memory;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod objects;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod reading;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod registers;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod stop_loop;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod stop_view;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod tracer;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

/// Traces an MPI rank and shows, at each stop, its queues and stacks as the
/// mpidd crates read them from what the tracer holds.
#[derive(Parser)]
#[command(name = "mpidd-embed", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The bound, in seconds, on every wait: for a stop, for threads to
    /// stop, for a pause file to go.
    #[arg(long, global = true, default_value_t = 120)]
    timeout: u64,
}

#[derive(Subcommand)]
enum Command {
    /// Attaches to a running rank and shows its stops.
    Attach {
        /// The rank's process id.
        pid: i32,
        #[command(flatten)]
        stops: StopArgs,
    },
    /// Starts a program under the tracer, runs it to its entry point, then shows
    /// its stops as `attach` does.
    Run {
        #[command(flatten)]
        stops: StopArgs,
        /// The program and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "PROGRAM")]
        command: Vec<std::ffi::OsString>,
    },
    /// Stops every rank given, reads them through the crates and prints
    /// the job's verdict.
    Job {
        /// The ranks' process ids.
        #[arg(required = true)]
        pids: Vec<i32>,
        /// Print the job report as JSON (as `mpidd job --json` does).
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args)]
struct StopArgs {
    /// A function to stop at (repeatable).
    #[arg(long = "break", default_value = "MPI_Recv")]
    breakpoints: Vec<String>,
    /// How many stops to show before letting the rank go.
    #[arg(long, default_value_t = 1)]
    stops: u32,
    /// Print each stop as one JSON object on one line.
    #[arg(long)]
    json: bool,
    /// At each stop, create FILE and hold the rank stopped until FILE is
    /// removed (for a test to read the rank meanwhile).
    #[arg(long, value_name = "FILE")]
    pause_at_stop: Option<PathBuf>,
    /// Leave the rank stopped (SIGSTOP) when detaching, so that another
    /// debugger can attach to it; send it SIGCONT afterwards.
    #[arg(long)]
    leave_stopped: bool,
    /// Append the stops to FILE instead of printing them; `{pid}` in FILE
    /// is replaced by the traced process's id, so that each rank under a
    /// launcher has a file of its own.
    #[arg(long, value_name = "FILE")]
    out: Option<String>,
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
impl StopArgs {
    fn options(self, limit: Duration) -> stop_loop::LoopOptions {
        stop_loop::LoopOptions {
            breakpoints: self.breakpoints,
            stops: self.stops,
            json: self.json,
            pause_file: self.pause_at_stop,
            limit,
            leave_stopped: self.leave_stopped,
            out: self.out,
        }
    }
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let limit = Duration::from_secs(cli.timeout);
    let result = match cli.command {
        Command::Attach { pid, stops } => {
            stop_loop::run_attached(pid, &stops.options(limit)).map(|()| 0)
        }
        Command::Run { stops, command } => {
            stop_loop::run_launched(&command[0], &command[1..], &stops.options(limit))
        }
        Command::Job { pids, json } => job::run_job(&pids, json, limit).map(|()| 0),
    };
    match result {
        Ok(code) => std::process::ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            eprintln!("mpidd-embed: {}", stop_loop::error_chain(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn main() -> std::process::ExitCode {
    let _ = (Cli::parse(), Duration::ZERO, PathBuf::new());
    eprintln!("mpidd-embed traces x86_64 Linux processes only");
    std::process::ExitCode::FAILURE
}
