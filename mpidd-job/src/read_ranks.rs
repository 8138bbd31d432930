//! Reading the ranks of a job: each rank's queues, world rank and stacks,
//! from a core file or a live process, many at once.
//!
//! A live rank is stopped only while it is read (every thread, through
//! `PTRACE_SEIZE` and `PTRACE_INTERRUPT`) and let go on every path. If the
//! reader itself dies, the kernel lets the ranks go: a seized thread that
//! was only interrupted resumes when its tracer exits.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mpidd_read::{
    core_stacks, CoreTarget, CoreTargetOptions, LayoutCache, Limits, LoadedObjects, ObjectFiles,
    ProfileSet, PythonLimits, StackLimits, StackUnwinder, Target, ThreadStack,
};
#[cfg(all(feature = "live", target_os = "linux"))]
use mpidd_read::{live_stacks, AttachGuard, LiveTarget, SharedLiveSymbols};
use mpiq_core::model::ProcessQueues;
use mpiq_core::{
    environment_world_rank, job_identity, read_native_queues, world_rank, Layouts, RankSource,
    Session, SessionReading,
};
#[cfg(feature = "mqs")]
use mpiq_core::{read_with_library, MqsLibrary, QueueTarget};

use crate::python_ranks::add_python;
use crate::read_timings::{ReadTimings, Stopwatch};
use crate::reading::RankReading;
use crate::shared_groups::SharedGroups;

/// One rank to read.
#[derive(Clone, Debug)]
pub enum RankTarget {
    /// A core file of the rank.
    Core {
        /// The core.
        path: PathBuf,
        /// Where to find the files it names.
        options: CoreTargetOptions,
        /// The host it ran on, when known.
        host: Option<String>,
        /// Its world rank as the launcher gave it, when known.
        world_rank: Option<i64>,
    },
    /// A running process on this machine. Read only with the `live`
    /// feature, on Linux; elsewhere its reading is an error saying so.
    Live {
        /// Its pid.
        pid: i32,
        /// The host it runs on, when known.
        host: Option<String>,
        /// Its world rank as the launcher gave it, when known.
        world_rank: Option<i64>,
    },
}

impl RankTarget {
    /// A core file with default options.
    pub fn core(path: impl Into<PathBuf>) -> Self {
        RankTarget::Core {
            path: path.into(),
            options: CoreTargetOptions::default(),
            host: None,
            world_rank: None,
        }
    }

    /// A live process.
    pub fn live(pid: i32) -> Self {
        RankTarget::Live {
            pid,
            host: None,
            world_rank: None,
        }
    }

    /// How the target is named in reports: the core's path or `pid N`.
    pub fn label(&self) -> String {
        match self {
            RankTarget::Core { path, .. } => path.display().to_string(),
            RankTarget::Live { pid, .. } => format!("pid {pid}"),
        }
    }
}

/// How ranks are read.
#[derive(Clone)]
pub struct ReadOptions {
    /// Bounds on every read of target memory and on a vendor library's
    /// iterators.
    pub limits: Limits,
    /// Whether to read message queues (default). Without them the verdict
    /// rests on the ranks' stacks alone.
    pub queues: bool,
    /// Whether to take every thread's call stack.
    pub stacks: bool,
    /// Bounds on each stack.
    pub stack_limits: StackLimits,
    /// Whether to stop a live rank while it is read (default). Without it
    /// the read may see the queues change under it.
    pub stop: bool,
    /// Ranks read at once (at least 1). Defaults to the machine's
    /// parallelism.
    pub parallel: usize,
    /// Layouts to decode with instead of each rank's DWARF: for targets
    /// that carry none (synthetic ranks) or whose layouts the caller has.
    pub layouts: Option<Arc<dyn Layouts + Send + Sync>>,
    /// Layout profiles for MPI libraries without debug info, each chosen
    /// only for a library whose build-id (or code digest) it lists, or
    /// whose release family it declares. By default the profiles mpidd
    /// ships, parsed only when a rank needs them.
    pub profiles: ProfileSet,
    /// Where layouts resolved from DWARF are kept for later runs, and
    /// found before any DWARF is read (see [`LayoutCache`]). None by
    /// default: a library writes no files unless asked.
    pub cache: Option<LayoutCache>,
    /// Whether to time each phase of every rank's reading
    /// ([`RankReading::timings`]). Off by default: the figures differ from
    /// run to run, and a report without them reads the same each time.
    pub timings: bool,
    /// Whether to read the Python frames of ranks that run CPython into
    /// their stacks (default; only with `stacks`).
    pub python: bool,
    /// Bounds on the reading of a rank's Python frames.
    pub python_limits: PythonLimits,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            limits: Limits::default(),
            queues: true,
            stacks: true,
            stack_limits: StackLimits::default(),
            stop: true,
            parallel: std::thread::available_parallelism().map_or(2, |n| n.get()),
            layouts: None,
            profiles: ProfileSet::shipped(),
            cache: None,
            timings: false,
            python: true,
            python_limits: PythonLimits::default(),
        }
    }
}

/// Reads ranks. One reader serves a whole job: each object file is found,
/// mapped and searched for its debug file once, and the unwinder's
/// per-object work is done once, for all the ranks that share it.
pub struct JobReader {
    options: ReadOptions,
    pub(crate) unwinder: StackUnwinder,
    /// The object files of the ranks' cores, each read once for the
    /// reader's life (a run): a job's ranks map the same few files.
    files: ObjectFiles,
    /// One copy of each communicator group for all the readings.
    groups: SharedGroups,
    /// Vendor libraries are not known to be thread-safe: one call at a
    /// time.
    #[cfg(feature = "mqs")]
    library: Option<(&'static MqsLibrary, Mutex<()>)>,
    /// The decoders' layouts, resolved once per library build and shared
    /// by every rank that loads it: indexing a debug build's DWARF is most
    /// of what reading one rank costs, and a job's ranks run a few builds
    /// between them.
    pub(crate) session: Session,
    /// The symbols of live ranks' objects, read for the first rank of a
    /// build and placed again for the others.
    #[cfg(all(feature = "live", target_os = "linux"))]
    live_symbols: SharedLiveSymbols,
}

impl JobReader {
    /// A reader with these options, decoding queues natively.
    pub fn new(options: ReadOptions) -> Self {
        JobReader {
            unwinder: StackUnwinder::new(options.stack_limits),
            files: ObjectFiles::default(),
            groups: SharedGroups::default(),
            #[cfg(feature = "mqs")]
            library: None,
            #[cfg(all(feature = "live", target_os = "linux"))]
            live_symbols: SharedLiveSymbols::new(),
            session: {
                let session =
                    Session::with_profiles(options.profiles.clone()).with_limits(options.limits);
                match &options.cache {
                    Some(cache) => session.with_cache(cache.clone()),
                    None => session,
                }
            },
            options,
        }
    }

    /// Reads queues through a vendor message-queue library where no native
    /// decoder knows the rank's MPI.
    #[cfg(feature = "mqs")]
    pub fn with_library(mut self, library: &'static MqsLibrary) -> Self {
        self.library = Some((library, Mutex::new(())));
        self
    }

    /// What went wrong with the layout cache so far, one line each (see
    /// [`Session::take_warnings`]).
    pub fn take_cache_warnings(&self) -> Vec<String> {
        self.session.take_warnings()
    }

    /// The options it reads with.
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// Reads every target, `options.parallel` at a time, calling
    /// `progress(done, total)` after each. The readings are in the order of
    /// `targets`; a target that cannot be read gives a reading with its
    /// errors and never stops the others.
    pub fn read_all(
        &self,
        targets: &[RankTarget],
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Vec<RankReading> {
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let out: Vec<Mutex<Option<RankReading>>> =
            targets.iter().map(|_| Mutex::new(None)).collect();
        let workers = self.options.parallel.clamp(1, targets.len().max(1));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(target) = targets.get(i) else {
                        break;
                    };
                    let reading = self.read_rank(target);
                    *out[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(reading);
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1, targets.len());
                });
            }
        });
        out.into_iter()
            .zip(targets)
            .map(|(slot, t)| {
                slot.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .unwrap_or_else(|| {
                        RankReading::failed(t.label(), None, None, "not read".to_string())
                    })
            })
            .collect()
    }

    /// Reads one rank.
    pub fn read_rank(&self, target: &RankTarget) -> RankReading {
        let mut reading = match target {
            RankTarget::Core {
                path,
                options,
                host,
                world_rank,
            } => self.read_core(path, options, host.clone(), *world_rank),
            RankTarget::Live {
                pid,
                host,
                world_rank,
            } => self.read_live(*pid, host.clone(), *world_rank),
        };
        if let Some(queues) = &mut reading.queues {
            self.groups.share(queues);
        }
        reading
    }

    fn read_core(
        &self,
        path: &Path,
        options: &CoreTargetOptions,
        host: Option<String>,
        hint: Option<i64>,
    ) -> RankReading {
        let label = path.display().to_string();
        let mut clock = Stopwatch::start();
        let mut timings = ReadTimings::default();
        let core = match CoreTarget::open_shared(path, options, &self.files) {
            Ok(core) => core,
            Err(e) => return RankReading::failed(label, None, host, e.to_string()),
        };
        let mut reading = RankReading {
            target: label,
            pid: core.core().pids().first().copied(),
            host,
            world_rank: hint,
            world_rank_source: hint.map(|_| LAUNCHER_TABLE.to_string()),
            pmix_namespace: None,
            pmix_rank: None,
            job_size: None,
            executable: file_name(core.executable()),
            queues: None,
            queues_unread: None,
            queues_provenance: None,
            threads: Vec::new(),
            errors: core.problems().iter().map(|p| p.to_string()).collect(),
            python: None,
            python_exception: None,
            python_statement: None,
            python_call: None,
            exited: false,
            timings: None,
        };
        timings.open = clock.lap();
        self.read_queues(
            &core,
            core.symbols(),
            Types::Dwarf,
            core.executable(),
            &mut reading,
        );
        timings.queues = clock.lap();
        self.read_world_rank(&core, &mut reading);
        self.read_job_identity(&core, &mut reading);
        timings.world_rank = clock.lap();
        if self.options.stacks {
            reading.threads = core_stacks(&core, &self.unwinder);
            stack_errors(&reading.threads, &mut reading.errors);
            if self.options.python {
                add_python(
                    &core,
                    &core,
                    None,
                    &self.options.python_limits,
                    &mut reading,
                );
            }
        }
        timings.stacks = clock.lap();
        timings.total = clock.total();
        if self.options.timings {
            reading.timings = Some(Box::new(timings));
        }
        reading
    }

    #[cfg(all(feature = "live", target_os = "linux"))]
    fn read_live(&self, pid: i32, host: Option<String>, hint: Option<i64>) -> RankReading {
        let label = format!("pid {pid}");
        let mut clock = Stopwatch::start();
        let mut timings = ReadTimings::default();
        if process_gone(pid) {
            return RankReading::exited(label, Some(pid), host);
        }
        // Its objects' symbols are found before it is stopped: they do not
        // change while it runs unless it loads or unloads a library, which
        // the refresh below finds. The rank is held stopped only while its
        // memory is read.
        let mut target = match LiveTarget::open_shared(pid, &self.live_symbols) {
            Ok(t) => t,
            Err(_) if process_gone(pid) => return RankReading::exited(label, Some(pid), host),
            Err(e) => return RankReading::failed(label, Some(pid), host, e.to_string()),
        };
        timings.open = clock.lap();
        // Stopped before anything is read, so that the queues and the
        // stacks are of one moment; the guard lets go when dropped, also
        // when a read below panics.
        let guard = if self.options.stop {
            match AttachGuard::attach(pid) {
                Ok(g) => Some(g),
                // It may have exited between the look and the attach.
                Err(_) if process_gone(pid) => return RankReading::exited(label, Some(pid), host),
                Err(e) => return RankReading::failed(label, Some(pid), host, e.to_string()),
            }
        } else {
            None
        };
        timings.threads_stopped = guard.as_ref().map_or(0, |g| g.threads().len());
        // What it maps now that it is stopped: one read of its maps when
        // nothing changed since it was opened.
        let refreshed = target.refresh();
        timings.stop = clock.lap();
        let mut errors = Vec::new();
        if let Err(e) = refreshed {
            errors.push(format!("its objects as they are once stopped: {e}"));
        }
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
        let mut reading = RankReading {
            target: label,
            pid: Some(pid),
            host,
            world_rank: hint,
            world_rank_source: hint.map(|_| LAUNCHER_TABLE.to_string()),
            pmix_namespace: None,
            pmix_rank: None,
            job_size: None,
            executable: file_name(&exe),
            queues: None,
            queues_unread: None,
            queues_provenance: None,
            threads: Vec::new(),
            errors,
            python: None,
            python_exception: None,
            python_statement: None,
            python_call: None,
            exited: false,
            timings: None,
        };
        self.read_queues(&target, target.symbols(), Types::Dwarf, &exe, &mut reading);
        timings.queues = clock.lap();
        self.read_world_rank(&target, &mut reading);
        self.read_job_identity(&target, &mut reading);
        timings.world_rank = clock.lap();
        if self.options.stacks {
            match &guard {
                Some(g) => match live_stacks(g, &target, &self.unwinder) {
                    Ok(threads) => reading.threads = threads,
                    Err(e) => reading.errors.push(format!("stacks: {e}")),
                },
                None => reading
                    .errors
                    .push("stacks: not taken, since the process was not stopped".to_string()),
            }
            stack_errors(&reading.threads, &mut reading.errors);
            if guard.is_some() && self.options.python {
                let root = PathBuf::from(format!("/proc/{pid}/root"));
                add_python(
                    &target,
                    target.symbols(),
                    Some(&root),
                    &self.options.python_limits,
                    &mut reading,
                );
            }
        }
        timings.stacks = clock.lap();
        if let Some(g) = guard {
            if let Err(e) = g.detach() {
                reading.errors.push(format!("letting the process go: {e}"));
            }
        }
        timings.release = clock.lap();
        timings.total = clock.total();
        if self.options.timings {
            reading.timings = Some(Box::new(timings));
        }
        reading
    }

    #[cfg(not(all(feature = "live", target_os = "linux")))]
    fn read_live(&self, pid: i32, host: Option<String>, _hint: Option<i64>) -> RankReading {
        RankReading::failed(
            format!("pid {pid}"),
            Some(pid),
            host,
            "live processes are read only on Linux, with mpidd-job's `live` feature".to_string(),
        )
    }

    /// Fills the queues and the world rank: natively, else through the
    /// vendor library when one was given. Failures become errors of the
    /// reading.
    pub(crate) fn read_queues(
        &self,
        t: &dyn Target,
        objects: &dyn LoadedObjects,
        types: Types,
        #[cfg_attr(not(feature = "mqs"), allow(unused_variables))] image: &Path,
        reading: &mut RankReading,
    ) {
        if !self.options.queues {
            reading.queues_unread = Some(QUEUES_SKIPPED.to_string());
            return;
        }
        let limits = &self.options.limits;
        let queues = match (&self.options.layouts, types) {
            (Some(layouts), _) => read_native_queues(
                t.memory(),
                t.symbols(),
                objects,
                layouts.as_ref(),
                self.options.profiles.all(),
                limits,
            )
            .map(|(queues, _)| (queues, None)),
            (None, Types::Dwarf) => self
                .session
                .read_queues_with_dwarf(t, objects)
                .map(rank_provenance),
            (None, Types::Target) => self.session.read_queues(t, objects).map(rank_provenance),
        };
        let queues = match queues {
            Ok((queues, provenance)) => {
                reading.queues_provenance = provenance;
                Ok(queues)
            }
            Err(e) => Err(e),
        };
        #[cfg(not(feature = "mqs"))]
        let queues: Result<ProcessQueues, String> = queues.map_err(|e| format!("queues: {e}"));
        #[cfg(feature = "mqs")]
        let queues: Result<ProcessQueues, String> = match (queues, &self.library) {
            (Ok(q), _) => Ok(q),
            (Err(native_error), Some((library, lock))) => {
                let oracle = mpidd_read::TypeOracle::from_objects(objects);
                let image = image.display().to_string();
                let target = QueueTarget {
                    memory: t.memory(),
                    symbols: t.symbols(),
                    objects,
                    image: &image,
                };
                let rank = reading.world_rank.and_then(|r| i32::try_from(r).ok());
                let _one_at_a_time = lock.lock().unwrap_or_else(|e| e.into_inner());
                read_with_library(library, target, &oracle, rank, || None, limits)
                    .map(|read| read.queues)
                    .map_err(|e| format!("queues: {native_error}; the vendor library: {e}"))
            }
            (Err(e), None) => Err(format!("queues: {e}")),
        };
        match queues {
            Ok(q) => {
                if q.global_rank >= 0 {
                    reading.world_rank = Some(q.global_rank);
                    reading.world_rank_source = Some(format!("its MPI library ({})", q.source));
                }
                reading.queues = Some(q);
            }
            Err(e) => reading.queues_unread = Some(e),
        }
    }

    /// The world rank when the queues did not give it: from the
    /// launcher's variables in the process's environment, else from the MPI
    /// library's memory where its layouts are known. The launcher's table
    /// stays the last resort.
    ///
    /// The environment comes first here, though the library's memory is
    /// what the queue decoders read: without the decoders, the library's
    /// memory needs its layouts, and indexing a debug build's DWARF for one
    /// member costs more than the rest of a stack-only reading (measured:
    /// 0.33 s against 0.96 s for 4 reference-MPICH cores). Both are the
    /// process's own word.
    pub(crate) fn read_world_rank(&self, t: &dyn Target, reading: &mut RankReading) {
        if reading.queues.as_ref().is_some_and(|q| q.global_rank >= 0) {
            return;
        }
        let limits = &self.options.limits;
        match environment_world_rank(t, limits).or_else(|_| world_rank(t, limits)) {
            Ok(found) => {
                let from = match found.source {
                    RankSource::Environment(var) => format!("{var} in its environment"),
                    other => format!("its MPI library ({other})"),
                };
                if let Some(table) = reading.world_rank.filter(|&r| r != i64::from(found.rank)) {
                    reading.errors.push(format!(
                        "its world rank is {} by {from}, but {table} by the launcher's table",
                        found.rank
                    ));
                }
                reading.world_rank = Some(i64::from(found.rank));
                reading.world_rank_source = Some(from);
            }
            Err(e) if reading.world_rank.is_none() => {
                reading.errors.push(format!("world rank: {e}"));
            }
            Err(_) => {}
        }
    }
}

impl JobReader {
    /// Its PMIx namespace and rank and its job's size (see
    /// [`job_identity`]): a value passed over, or where its PMIx library
    /// disagrees with its environment, becomes an error of the reading;
    /// an environment that cannot be read at all is only missing
    /// identity, which [`read_world_rank`](Self::read_world_rank) already
    /// tells.
    pub(crate) fn read_job_identity(&self, t: &dyn Target, reading: &mut RankReading) {
        let Ok(id) = job_identity(t, &self.options.limits) else {
            return;
        };
        reading.pmix_namespace = id.namespace.map(|n| n.value);
        reading.pmix_rank = id.pmix_rank.map(|r| i64::from(r.value));
        reading.job_size = id.job_size.map(|n| i64::from(n.value));
        reading
            .errors
            .extend(id.notes.into_iter().map(|n| format!("job identity: {n}")));
    }
}

/// A rank's queues and, for a person, what they rest on. Whether its
/// build's layouts were resolved for an earlier rank depends on the order
/// the ranks happened to be read in, not on the rank, so it is left out:
/// ranks of one build read the same.
fn rank_provenance(reading: SessionReading) -> (ProcessQueues, Option<String>) {
    let mut provenance = reading.provenance;
    provenance.reused = false;
    (reading.queues, Some(provenance.to_string()))
}

/// Where a rank's MPI library's types come from.
#[derive(Clone, Copy)]
pub(crate) enum Types {
    /// Its loaded objects' DWARF (once per build), else a profile.
    Dwarf,
    /// The target's own layouts (a caller's types), else a profile.
    Target,
}

/// Why a rank's queues are missing when [`ReadOptions::queues`] is off.
pub const QUEUES_SKIPPED: &str = "skipped: the reader was told not to read queues";

/// How the report names the launcher's table as a world rank's source.
const LAUNCHER_TABLE: &str = "the launcher's process table";

/// Whether a local process is gone: no entry in /proc, or a zombie whose
/// parent has not reaped it yet.
#[cfg(all(feature = "live", target_os = "linux"))]
fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and
        // may itself hold spaces or parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| matches!(state, "Z" | "X")),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// A stack whose walk failed part way is still shown; its reason is kept
/// only in the stack itself, unless no frame at all was found.
pub(crate) fn stack_errors(threads: &[ThreadStack], errors: &mut Vec<String>) {
    for t in threads {
        if t.frames.is_empty() {
            if let Some(e) = &t.error {
                errors.push(format!("stack of thread {}: {e}", t.tid));
            }
        }
    }
}
