//! The target every reading command is pointed at (a core file and where
//! to find the files it names, or a live pid), and how the commands that
//! stop a live process open it.

use std::path::PathBuf;

use mpidd_read::{
    AttachError, CoreTarget, CoreTargetError, CoreTargetOptions, DebugSearch, FileSearch,
    GdbRemoteError, GdbRemoteOptions, GdbRemoteTarget, Limits, LiveError, OpenTargetError,
    ReadTargetError, SymbolSource, TargetReader, LIST_IN_FULL,
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
pub use mpidd_read::TargetSource as Source;

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

/// An open target, core, live or behind gdbserver, as the readers take
/// it.
pub use mpidd_read::OpenedTarget as OpenTarget;

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

impl From<OpenTargetError> for OpenError {
    fn from(e: OpenTargetError) -> Self {
        match e {
            OpenTargetError::Core(e) => OpenError::Core(e),
            OpenTargetError::Live(e) => OpenError::Live(e),
            OpenTargetError::Attach(e) => OpenError::Attach(e),
            OpenTargetError::Remote(e) => OpenError::Remote(e),
        }
    }
}

/// Opens the target and reads it ([`Source::read`]: a live process is
/// stopped unless `stop` is false, and let go on every path). The
/// target's missing or changed files are warned about first. When the
/// reader fails, `verbose` lists every object the target's symbols were
/// searched in (the failure's own message names only the few that
/// matter); otherwise a message that counted them says how to see them.
pub fn read_target<R: TargetReader>(
    source: Source,
    stop: bool,
    verbose: bool,
    reader: R,
) -> Result<R::Output, R::Error>
where
    R::Error: From<OpenError> + std::fmt::Display,
{
    match source.read(stop, Explained { reader, verbose }) {
        Ok(output) => Ok(output),
        Err(ReadTargetError::Read(e)) => Err(e),
        Err(ReadTargetError::Open(e)) => Err(OpenError::from(e).into()),
    }
}

/// A command's reader, with the warnings and explanations printed around
/// it.
struct Explained<R> {
    reader: R,
    verbose: bool,
}

impl<R: TargetReader> TargetReader for Explained<R>
where
    R::Error: std::fmt::Display,
{
    type Output = R::Output;
    type Error = R::Error;
    fn read<T: OpenTarget>(self, t: &T) -> Result<R::Output, R::Error> {
        for problem in t.problems() {
            eprintln!("mpidd: warning: {problem}");
        }
        let read = self.reader.read(t);
        explain_failure(t, self.verbose, &read);
        read
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
