//! `mpidd`: shows what MPI launchers and libraries expose to debuggers.
//!
//! - `mpidd demo` writes a synthetic hung job as rank cores, reads them
//!   back and says why it hangs; then builds a synthetic MPIR and MPI-2
//!   job, writes it as ELF core files for several target ABIs, reads it
//!   back with the MPIR reader and the MPI-2 walker, and prints what it
//!   read.
//! - `mpidd procs` reads the MPIR process table of a core file or a live
//!   process.
//! - `mpidd queues` reads one MPI process's message queues through a vendor
//!   message-queue library.
//! - `mpidd types` prints the layout of C types from an object's DWARF.
//! - `mpidd handle` shows what an MPI handle of a process means.
//! - `mpidd job` reads every rank of a job and says why it hangs; with
//!   `--slurm` over the nodes of a Slurm job, through `mpidd agent` on
//!   each.
//! - `mpidd cache` shows or clears the layout cache.
//! - `mpidd identify` says which build an MPI library (a file, or a
//!   process's) is and what its layouts would come from.

use std::process::ExitCode;

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use error_chain::error_chain;
use mpidd_read::Limits;
use mpidd_types::Packing;
use target_args::TargetArgs;

mod agent;
mod cache;
mod demo;
mod error_chain;
mod handle;
mod identify;
mod job;
mod launch;
mod pmix_helper;
mod pmix_hold;
mod procs;
mod procs_pmix;
mod profile;
mod queues;
mod slurm;
mod target_args;
mod types;

#[derive(Parser)]
#[command(name = "mpidd", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Neither use nor fill the layout cache (`mpidd cache`): resolve the
    /// decoders' layouts from the MPI library's DWARF or a profile again,
    /// and read large objects' symbol tables from the files again.
    #[arg(long, global = true)]
    no_cache: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Write a synthetic hung MPI job as rank cores, read them back and say
    /// why it hangs (checked); then write a synthetic MPIR/MPI-2 job as core
    /// files for several target ABIs, read it back with the walker and
    /// print it.
    Demo {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Start an MPI launcher under control, run the MPIR protocol, print
    /// the process table when the job has spawned, and let the job run on
    /// (x86_64 hosts). A launcher without MPIR (Open MPI 5's prterun) runs
    /// on untraced; its ranks are shown from its PMIx server once they have
    /// all started, and its exit status is mpidd's. PRRTE's launcher is
    /// given --stop-in-init, so its ranks wait in PMIx_Init as MPIR's gate
    /// holds them, until --gate (or `mpidd attach --gate`) releases them.
    Launch {
        /// Print one JSON object per event.
        #[arg(long)]
        json: bool,
        /// Release the ranks once they are shown: set each rank's
        /// MPIR_debug_gate to 1, or send a PMIx job PMIX_DEBUGGER_RELEASE.
        #[arg(long)]
        gate: bool,
        /// Stay attached until the launcher ends, reporting every event
        /// (an abort, for one) instead of detaching after the spawn.
        #[arg(long)]
        watch: bool,
        /// The launcher and its arguments, after `--`.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// Stop a running launcher briefly, read its MPIR process table, and
    /// let it go; a launcher without MPIR (Open MPI 5's prterun) is asked
    /// through its PMIx server instead, without being stopped.
    Attach {
        /// The launcher's pid.
        #[arg(long)]
        pid: i32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Release the ranks: set each rank's MPIR_debug_gate to 1, or send
        /// a PMIx launcher's jobs PMIX_DEBUGGER_RELEASE (ranks held in
        /// PMIx_Init by --stop-in-init go on).
        #[arg(long)]
        gate: bool,
    },
    /// Print the MPIR process table of a core file or a live process.
    Procs {
        #[command(flatten)]
        target: TargetArgs,
        /// Read the MPI-2 records in the draft's packed layout. Without
        /// --packed or --natural the layout is detected: both are read
        /// where they differ, and the one with valid records is used (the
        /// output says which).
        #[arg(long, conflicts_with = "natural")]
        packed: bool,
        /// Read the MPI-2 records in the natural C layout that MPICH's
        /// mpi2_interface.h compiles to.
        #[arg(long)]
        natural: bool,
        /// Most entries accepted in a process table.
        #[arg(long, default_value_t = Limits::default().max_table_entries)]
        max_table_entries: u64,
        /// Print JSON instead of text.
        #[arg(long, conflicts_with = "summary")]
        json: bool,
        /// Print each table's size, its distinct hosts and executables and
        /// its first and last ranks instead of every rank (for jobs too
        /// large to list).
        #[arg(long)]
        summary: bool,
        /// How long a launcher's PMIx server (Open MPI 5's prterun, which
        /// has no MPIR table) may take to answer, in milliseconds.
        #[arg(long, default_value_t = mpidd_read::pmix::DEFAULT_TIMEOUT.as_millis() as u64)]
        pmix_timeout_ms: u64,
    },
    /// One PMIx query in a process of its own (started by procs and job).
    #[command(name = "pmix-helper", hide = true)]
    PmixHelper {
        /// The launcher.
        #[arg(long)]
        pid: i32,
        /// Give up after this long.
        #[arg(long)]
        timeout_ms: u64,
        /// Most processes read from one namespace.
        #[arg(long)]
        max_procs: usize,
        /// Then send the jobs PMIX_DEBUGGER_RELEASE.
        #[arg(long)]
        release: bool,
    },
    /// Print one MPI process's message queues (pending sends, pending
    /// receives, unexpected messages per communicator), read by the native
    /// decoder for its MPI, or through a vendor message-queue library such
    /// as MPICH's libtvmpich.so (--dll).
    Queues {
        #[command(flatten)]
        target: TargetArgs,
        /// Read a live process without stopping it (the queues may change
        /// while they are read). Otherwise it is stopped while it is read
        /// (every thread, through ptrace) and always let go.
        #[arg(long, requires = "pid")]
        no_stop: bool,
        /// Read through this vendor message-queue library instead of the
        /// native decoder.
        #[arg(long, value_name = "PATH", conflicts_with = "compare_dll")]
        dll: Option<PathBuf>,
        /// Read with both the native decoder and this vendor library, and
        /// print where they differ.
        #[arg(long, value_name = "PATH")]
        compare_dll: Option<PathBuf>,
        /// Read the lists MPICH keeps for debuggers (MPIR_Sendq_head,
        /// MPIR_Recvq_head, MPIR_Unexpq_head: MPICH 4.0.3 on with the ch4
        /// device, built with --enable-debuginfo) instead of the native
        /// decoder's queues.
        #[arg(long, conflicts_with_all = ["dll", "compare_dll", "compare_debugger_lists"])]
        debugger_lists: bool,
        /// Read with both the native decoder and MPICH's debugger lists,
        /// and print where they differ.
        #[arg(long, conflicts_with_all = ["dll", "compare_dll"])]
        compare_debugger_lists: bool,
        /// The process's MPI_COMM_WORLD rank, if it cannot be read from the
        /// process (MPICH's and Open MPI's are, from the library or from
        /// the launcher's environment).
        #[arg(long)]
        rank: Option<i32>,
        /// Most communicators taken from the library.
        #[arg(long, default_value_t = Limits::default().max_communicators)]
        max_communicators: usize,
        /// Most operations taken from one queue.
        #[arg(long, default_value_t = Limits::default().max_operations)]
        max_operations: usize,
        /// A layout profile to use when the MPI library has no debug info
        /// (besides the profiles mpidd ships); chosen only for a library
        /// whose build-id (or code digest) it lists. Repeatable.
        #[arg(long = "profile", value_name = "FILE")]
        profiles: Vec<PathBuf>,
        /// Take the layouts from a matching profile even when the library
        /// has debug info: reads a debug build as its stripped twin would
        /// be read, to check a profile against it.
        #[arg(long)]
        prefer_profile: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Say which build an MPI library is (a file, or the one a core or a
    /// live process loaded): what it states, its build-id or code digest,
    /// whether it has DWARF, the decoder that reads it, which layout
    /// profile or release family fits it and why the others do not, the
    /// layout source that would be used, and, for a process, whether those
    /// layouts pass the check on it. Run it when the queues are refused.
    Identify(identify::IdentifyArgs),
    /// Show what one MPI handle of a process (live or from a core) means:
    /// a communicator's name, ranks and topology, a datatype's constructor
    /// and holes, whether a handle was freed...
    Handle(handle::HandleArgs),
    /// Read every rank of a job at once (live, through its launcher, or
    /// from cores), match their pending operations into a wait-for graph,
    /// and say why the job hangs: deadlock cycles, the rank a chain of
    /// waiting ranks ends at, tag mismatches, ranks in different
    /// collectives. Stacks of every thread are merged into one tree.
    Job(job::JobArgs),
    /// The per-node reader of `mpidd job --slurm`: reads the ranks of a
    /// Slurm step that run on this node and writes them to standard output
    /// as JSON lines (format mpidd-agent/1, docs/slurm.md).
    Agent(agent::AgentArgs),
    /// Layout profiles: the sizes and offsets of an MPI library's private
    /// types, written from a debug build so that stripped builds of the
    /// same source can be decoded.
    #[command(subcommand)]
    Profile(profile::ProfileCommand),
    /// The layout cache: the layouts the decoders resolved from an MPI
    /// library's DWARF, kept per build-id so that later runs on the same
    /// build read no DWARF. In $MPIDD_CACHE_DIR, else
    /// $XDG_CACHE_HOME/mpidd/layouts, else ~/.cache/mpidd/layouts.
    Cache {
        #[command(subcommand)]
        command: Option<cache::CacheCommand>,
    },
    /// Print the size and members of C types from an object's DWARF, like
    /// gdb's `ptype /o`.
    Types {
        /// The ELF object (library or executable) whose DWARF is read.
        #[arg(long)]
        object: PathBuf,
        /// Its separate debug file, when the object itself is stripped.
        #[arg(long)]
        debug_file: Option<PathBuf>,
        /// Type names: a typedef or tag (`MPIR_Comm`), or `struct X`.
        #[arg(required = true)]
        types: Vec<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let no_cache = cli.no_cache;
    cache::keep_symbol_indexes(no_cache);
    let result = match cli.command {
        Command::Demo { json } => demo::run(json).map_err(|e| error_chain(&e)),
        Command::Launch {
            json,
            gate,
            watch,
            command,
        } => {
            let opts = launch::Options {
                json,
                gate,
                watch,
                limits: Limits::default(),
            };
            match launch::launch(
                &command,
                &opts,
                &pmix_helper::options(mpidd_read::pmix::DEFAULT_TIMEOUT),
            ) {
                // The launcher's own status is mpidd's, as if run directly.
                Ok(status) => return ExitCode::from(status.clamp(0, 255) as u8),
                Err(e) => Err(error_chain(&e)),
            }
        }
        Command::Attach { pid, json, gate } => {
            let opts = launch::Options {
                json,
                gate,
                watch: false,
                limits: Limits::default(),
            };
            launch::attach(
                pid,
                &opts,
                &pmix_helper::options(mpidd_read::pmix::DEFAULT_TIMEOUT),
            )
            .map_err(|e| error_chain(&e))
        }
        Command::Procs {
            target,
            packed,
            natural,
            max_table_entries,
            json,
            summary,
            pmix_timeout_ms,
        } => {
            let limits = Limits {
                max_table_entries,
                ..Limits::default()
            };
            let packing = match (packed, natural) {
                (true, _) => Some(Packing::Packed),
                (_, true) => Some(Packing::Natural),
                _ => None,
            };
            let format = match (json, summary) {
                (true, _) => procs::Format::Json,
                (false, true) => procs::Format::Summary,
                (false, false) => procs::Format::Text,
            };
            procs::run(
                target.source(&limits),
                format,
                packing,
                &limits,
                target.verbose(),
                &pmix_helper::options(std::time::Duration::from_millis(pmix_timeout_ms)),
            )
            .map_err(|e| error_chain(&e))
        }
        Command::PmixHelper {
            pid,
            timeout_ms,
            max_procs,
            release,
        } => pmix_helper::serve(pid, timeout_ms, max_procs, release),
        Command::Queues {
            target,
            no_stop,
            dll,
            compare_dll,
            debugger_lists,
            compare_debugger_lists,
            rank,
            max_communicators,
            max_operations,
            profiles,
            prefer_profile,
            json,
        } => {
            match profile::load_all(&profiles) {
                Err(e) => Err(error_chain(&e)),
                Ok(profiles) => {
                    let reader = match (dll, compare_dll) {
                        (Some(dll), _) => queues::Reader::Dll(dll),
                        (None, Some(both)) => queues::Reader::Compare(both),
                        (None, None) if debugger_lists => queues::Reader::DebuggerLists,
                        (None, None) if compare_debugger_lists => {
                            queues::Reader::CompareDebuggerLists
                        }
                        (None, None) => queues::Reader::Native,
                    };
                    let options = queues::Options {
                        reader,
                        profiles,
                        prefer_profile,
                        cache: cache::layout_cache(no_cache),
                        rank,
                        no_stop,
                        verbose: target.verbose(),
                        json,
                        limits: Limits {
                            max_communicators,
                            max_operations,
                            max_list_len: max_operations.max(max_communicators) as u64,
                            ..Limits::default()
                        },
                    };
                    // The queue limits are not meant for the dynamic linker's list.
                    let source = target.source(&Limits::default());
                    queues::run(source, &options).map_err(|e| error_chain(&e))
                }
            }
        }
        Command::Handle(args) => handle::run(args).map_err(|e| error_chain(&e)),
        Command::Identify(args) => identify::run(args).map_err(|e| error_chain(&e)),
        Command::Job(args) => job::run(args, no_cache).map_err(|e| error_chain(&e)),
        Command::Agent(args) => agent::run(args, no_cache).map_err(|e| error_chain(&e)),
        Command::Cache { command } => cache::run(command).map_err(|e| error_chain(&e)),
        Command::Profile(command) => profile::run(command).map_err(|e| error_chain(&e)),
        Command::Types {
            object,
            debug_file,
            types,
            json,
        } => types::run(&types::Options {
            object,
            debug_file,
            types,
            json,
        })
        .map_err(|e| error_chain(&e)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mpidd: {e}");
            ExitCode::FAILURE
        }
    }
}
