//! The target every reading command is pointed at (a core file and where
//! to find the files it names, or a live pid), and how the commands that
//! stop a live process open it.

use std::path::PathBuf;

use mpidd_read::{
    AttachError, AttachGuard, CoreTarget, CoreTargetError, CoreTargetOptions, DebugSearch,
    ElfSymbols, FileSearch, GdbRemoteError, GdbRemoteOptions, GdbRemoteTarget, Limits, LiveError,
    LiveTarget, SymbolSource, TargetMemory, LIST_IN_FULL,
};

/// The options that name a target, shared by `procs`, `queues` and
/// `handle`.
#[derive(clap::Args)]
pub struct TargetArgs {
    /// An ELF core file (of any ABI).
    #[arg(
        long,
        conflicts_with_all = ["pid", "gdbserver"],
        required_unless_present_any = ["pid", "gdbserver"]
    )]
    core: Option<PathBuf>,
    /// The executable the core came from (needed when the core has no
    /// NT_FILE note, as qemu-user cores do).
    #[arg(long, requires = "core")]
    exe: Option<PathBuf>,
    /// Look for the files a core names under this directory (for a
    /// foreign CPU, e.g. /usr/s390x-linux-gnu).
    #[arg(long, requires = "core")]
    sysroot: Option<PathBuf>,
    /// Look for files a core names by their base name in this directory
    /// too, when they are not where the core says (repeatable).
    #[arg(long = "search-path", value_name = "DIR", requires = "core")]
    search_path: Vec<PathBuf>,
    /// Look for separate debug files (by build-id or .gnu_debuglink)
    /// under this directory instead of /usr/lib/debug (repeatable).
    #[arg(long = "debug-dir", value_name = "DIR", requires = "core")]
    debug_dir: Vec<PathBuf>,
    /// A running process on this machine.
    #[arg(long, conflicts_with = "gdbserver")]
    pid: Option<i32>,
    /// A process behind gdbserver (`gdbserver --attach HOST:PORT PID`),
    /// read over its remote protocol; its files are read from this
    /// machine's disk. The process is detached, and runs on, at the end.
    #[arg(long, value_name = "HOST:PORT")]
    gdbserver: Option<String>,
    /// When something is not found, list every object searched (a live
    /// MPI process maps dozens; messages name only the MPI libraries and
    /// count the rest).
    #[arg(long)]
    verbose: bool,
}

/// Where to read from.
pub enum Source {
    /// A core file, and how to open it.
    Core {
        core: PathBuf,
        options: CoreTargetOptions,
    },
    /// A live process.
    Pid(i32),
    /// A process behind gdbserver, at `HOST:PORT`.
    Gdbserver(String),
}

impl TargetArgs {
    /// The target, opened with `limits` where opening reads the target
    /// (a core's `link_map`).
    pub fn source(&self, limits: &Limits) -> Source {
        if let Some(addr) = &self.gdbserver {
            return Source::Gdbserver(addr.clone());
        }
        match (self.core.clone(), self.pid) {
            (Some(core), _) => Source::Core {
                core,
                options: core_options(
                    self.exe.clone(),
                    self.sysroot.clone(),
                    self.search_path.clone(),
                    self.debug_dir.clone(),
                    limits,
                ),
            },
            // clap requires one of --core and --pid; a pid of 0 is then
            // refused by the kernel with a clear error, never a panic.
            (None, pid) => Source::Pid(pid.unwrap_or(0)),
        }
    }
}

impl TargetArgs {
    /// Whether `--verbose` was given.
    pub fn verbose(&self) -> bool {
        self.verbose
    }
}

/// How to open cores, from the options every command that reads cores
/// takes (`--exe`, `--sysroot`, `--search-path`, `--debug-dir`).
pub fn core_options(
    exe: Option<PathBuf>,
    sysroot: Option<PathBuf>,
    search_path: Vec<PathBuf>,
    debug_dir: Vec<PathBuf>,
    limits: &Limits,
) -> CoreTargetOptions {
    CoreTargetOptions {
        exe,
        search: FileSearch {
            sysroot,
            search_path,
        },
        debug: if debug_dir.is_empty() {
            DebugSearch::default()
        } else {
            DebugSearch::new(debug_dir)
        },
        limits: *limits,
    }
}

/// Opens a core file and warns about the files that were missing or
/// changed: they leave parts of the target unreadable, which may affect
/// the results printed after.
pub fn open_core(
    core: &std::path::Path,
    options: &CoreTargetOptions,
) -> Result<CoreTarget, CoreTargetError> {
    let t = CoreTarget::open_with(core, options)?;
    for problem in t.problems() {
        eprintln!("mpidd: warning: {problem}");
    }
    Ok(t)
}

/// Connects to a gdbserver and warns about the libraries whose files
/// were missing or of another build.
pub fn open_gdbserver(addr: &str) -> Result<GdbRemoteTarget, GdbRemoteError> {
    let t = GdbRemoteTarget::connect(addr, &GdbRemoteOptions::default())?;
    for problem in t.problems() {
        eprintln!("mpidd: warning: {problem}");
    }
    Ok(t)
}

/// An open target, core or live, as the readers take it.
pub trait OpenTarget: TargetMemory + SymbolSource {
    /// The ELF objects, for the type oracle.
    fn elf_symbols(&self) -> &ElfSymbols;
    /// The main executable's path.
    fn image(&self) -> PathBuf;
}

impl OpenTarget for CoreTarget {
    fn elf_symbols(&self) -> &ElfSymbols {
        self.symbols()
    }
    fn image(&self) -> PathBuf {
        self.executable().to_path_buf()
    }
}

impl OpenTarget for LiveTarget {
    fn elf_symbols(&self) -> &ElfSymbols {
        self.symbols()
    }
    fn image(&self) -> PathBuf {
        let exe = format!("/proc/{}/exe", self.process().pid());
        std::fs::read_link(&exe).unwrap_or_else(|_| PathBuf::from(exe))
    }
}

impl OpenTarget for GdbRemoteTarget {
    fn elf_symbols(&self) -> &ElfSymbols {
        self.symbols()
    }
    fn image(&self) -> PathBuf {
        self.executable().to_path_buf()
    }
}

/// Why a target could not be opened, or a live one stopped.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The core file or its executable could not be opened.
    #[error(transparent)]
    Core(#[from] CoreTargetError),
    /// The live process could not be opened.
    #[error(transparent)]
    Live(#[from] LiveError),
    /// The live process could not be stopped for a consistent read.
    #[error("{0} (pass --no-stop to read it while it runs)")]
    Attach(#[from] AttachError),
    /// The gdbserver could not be reached or read, or the process not let
    /// go.
    #[error(transparent)]
    Remote(#[from] GdbRemoteError),
}

/// What a command does with its target once open; generic over the kind
/// of target, so one reader serves cores and live processes.
pub trait ReadTarget {
    /// What the read gives.
    type Output;
    /// How it fails; opening and stopping failures convert into it.
    type Error: From<OpenError>;
    /// Reads the open target.
    fn read<T: OpenTarget>(self, target: &T) -> Result<Self::Output, Self::Error>;
}

/// Opens the target and reads it. A live process is stopped first (every
/// thread, through ptrace) unless `stop` is false, so that it cannot
/// change what is read, and it is let go on every path, the reader's
/// failure included; a process that was already stopped stays stopped.
/// When the reader fails, `verbose` lists every object the target's
/// symbols were searched in (the failure's own message names only the
/// few that matter); otherwise a message that counted them says how to
/// see them.
pub fn read_target<R: ReadTarget>(
    source: Source,
    stop: bool,
    verbose: bool,
    reader: R,
) -> Result<R::Output, R::Error>
where
    R::Error: std::fmt::Display,
{
    match source {
        Source::Core { core, options } => {
            let t = open_core(&core, &options).map_err(OpenError::from)?;
            let read = reader.read(&t);
            explain_failure(&t, verbose, &read);
            read
        }
        Source::Pid(pid) => {
            let guard = if stop {
                Some(AttachGuard::attach(pid).map_err(OpenError::from)?)
            } else {
                None
            };
            let read = LiveTarget::open(pid)
                .map_err(|e| R::Error::from(OpenError::from(e)))
                .and_then(|t| {
                    let read = reader.read(&t);
                    explain_failure(&t, verbose, &read);
                    read
                });
            if let Some(guard) = guard {
                guard.detach().map_err(OpenError::from)?;
            }
            read
        }
        // gdbserver --attach has stopped the process already; the detach
        // lets it run, on every path.
        Source::Gdbserver(addr) => {
            let t = open_gdbserver(&addr).map_err(OpenError::from)?;
            let read = reader.read(&t);
            explain_failure(&t, verbose, &read);
            t.detach().map_err(OpenError::from)?;
            read
        }
    }
}

/// After a failed read: with `verbose`, every object searched, one a line;
/// without, a pointer to `--verbose` when the failure's message counted
/// more objects than it named.
pub fn explain_failure<T: SymbolSource, O, E: std::fmt::Display>(
    t: &T,
    verbose: bool,
    read: &Result<O, E>,
) {
    let Err(e) = read else { return };
    let objects = t.searched_objects();
    if verbose {
        eprintln!("mpidd: the {} objects searched:", objects.len());
        for o in &objects {
            eprintln!("  {o}");
        }
    } else if objects.len() > LIST_IN_FULL
        && e.to_string()
            .contains(&format!("{} objects", objects.len()))
    {
        eprintln!(
            "mpidd: (--verbose lists all {} objects searched)",
            objects.len()
        );
    }
}
