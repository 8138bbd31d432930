//! [`Rank`]: one MPI process as a debugger sees it at its stops, read
//! through the debugger's own memory reader and object list.

use std::sync::{Arc, Mutex};

use mpidd_job::{CallerRank, JobReader, ReadOptions};
use mpidd_read::{Layouts, Limits, StackArch, TargetParts, ThreadRegisters};
use mpidd_types::{AddressWidth, ByteOrder, TargetAbi};
use mpihandles::{
    open_resolver, Availability, Details, HandleKind, OpenResolverError, OpenedResolver,
    ProfileLayouts,
};
use mpiq_core::Session;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::callback_memory::CallbackMemory;
use crate::errors::{error_chain, guarded, MpiddError};
use crate::objects::{ListedObject, ProcessObjects};
use crate::page_cache::PageCache;
use crate::summary::summary;
use crate::to_python::to_python;

/// Which layouts the handle resolver chose for the objects now listed,
/// kept so that later stops do not choose again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HandleLayouts {
    /// The loaded objects' DWARF.
    Dwarf,
    /// The profile at this index of [`Kept`]'s `profiles`.
    Profile(usize),
}

/// What a rank keeps between calls: its objects (made again only when
/// the caller's list changes) and the handle resolver's choice of layouts.
struct Kept {
    objects: Option<ProcessObjects>,
    /// The profiles of the objects listed (those a profile names), chosen
    /// by the first handle read since the list changed.
    profiles: Option<Arc<[mpidd_read::LayoutProfile]>>,
    handle_layouts: Option<HandleLayouts>,
}

/// One MPI process read through the caller's functions:
/// `read_memory(address, size)` returns the bytes at `address` (fewer, or
/// `None`, where memory cannot be read; an exception is the debugger's
/// failure), and `objects()` returns the loaded objects as
/// `(name, path, bias)` tuples, the executable first.
///
/// Pages read are kept until [`clear_cache`](Rank::clear_cache), which the
/// caller calls at each stop. Every call into the caller happens within a
/// call into the rank, on the calling thread.
#[pyclass(module = "mpidd._native")]
pub struct Rank {
    read_memory: Py<PyAny>,
    objects: Py<PyAny>,
    abi: TargetAbi,
    session: Session,
    /// Reads the rank as `mpidd job` reads one (`call`), keeping what it
    /// resolved per build.
    job_reader: JobReader,
    profiles: mpidd_read::ProfileSet,
    cache: Mutex<PageCache>,
    kept: Mutex<Kept>,
}

/// The lock of a rank's part, or the error a re-entrant call gets (a
/// reader callback that calls back into its own rank).
fn lock<'a, T>(m: &'a Mutex<T>) -> PyResult<std::sync::MutexGuard<'a, T>> {
    match m.try_lock() {
        Ok(g) => Ok(g),
        Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => Err(MpiddError::new_err(
            "the rank is being read already (a reader function called back into it)",
        )),
    }
}

#[pymethods]
impl Rank {
    /// A rank read through `read_memory(address, size)` and `objects()`,
    /// whose words are `address_bytes` (4 or 8) long, in little- or
    /// big-endian order.
    #[new]
    #[pyo3(signature = (read_memory, objects, address_bytes = 8, little_endian = true))]
    fn new(
        read_memory: Py<PyAny>,
        objects: Py<PyAny>,
        address_bytes: u32,
        little_endian: bool,
    ) -> PyResult<Rank> {
        let width = match address_bytes {
            4 => AddressWidth::W32,
            8 => AddressWidth::W64,
            n => {
                return Err(MpiddError::new_err(format!(
                    "address_bytes must be 4 or 8, not {n}"
                )))
            }
        };
        let order = if little_endian {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        };
        Ok(Rank {
            read_memory,
            objects,
            abi: TargetAbi::new(order, width),
            session: Session::new(),
            job_reader: JobReader::new(ReadOptions::default()),
            profiles: mpidd_read::ProfileSet::shipped(),
            cache: Mutex::new(PageCache::default()),
            kept: Mutex::new(Kept {
                objects: None,
                profiles: None,
                handle_layouts: None,
            }),
        })
    }

    /// Forgets the pages read: call it at each stop, and whenever the
    /// target's memory may have changed.
    fn clear_cache(&self) -> PyResult<()> {
        lock(&self.cache)?.clear();
        Ok(())
    }

    /// What the page cache did since it was cleared: `hits` (reads
    /// answered from kept pages), `fetches` (calls of `read_memory`),
    /// `pages` kept, pages found `unreadable`.
    fn cache_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = lock(&self.cache)?.stats();
        let d = PyDict::new(py);
        d.set_item("hits", stats.hits)?;
        d.set_item("fetches", stats.fetches)?;
        d.set_item("pages", stats.pages)?;
        d.set_item("unreadable", stats.unreadable)?;
        Ok(d)
    }

    /// The message queues: a dict with `queues` (the crates' model as
    /// Python values, the keys of `mpidd queues --json`; left out when
    /// `model` is false, which saves converting thousands of operations
    /// a caller only prints), `json` (that model as `mpidd queues --json`
    /// prints it), `provenance` (the decoder, its library, where the
    /// layouts came from, as one line), and `text` (as `mpidd queues`
    /// prints it). Raises `MpiddError` with the crates' reason when the
    /// queues cannot be read.
    #[pyo3(signature = (model = true))]
    fn queues<'py>(&self, py: Python<'py>, model: bool) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let mut kept = lock(&self.kept)?;
            self.refresh_objects(py, &mut kept)?;
            let objects = kept.objects.as_ref().ok_or_else(no_objects)?;
            let mut cache = lock(&self.cache)?;
            let read = self.read_memory.bind(py);
            let memory = CallbackMemory::new(read, &mut cache, self.abi);
            let target = TargetParts {
                memory: &memory,
                symbols: &objects.symbols,
                layouts: &objects.layouts,
            };
            let reading = self
                .session
                .read_queues(&target, &objects.symbols)
                .map_err(|e| failed(&error_chain(&e), &memory, objects))?;
            let d = PyDict::new(py);
            let json = serde_json::to_string_pretty(&reading.queues)
                .map_err(|e| MpiddError::new_err(format!("cannot convert the result: {e}")))?;
            if model {
                d.set_item("queues", to_python(py, &reading.queues)?)?;
            }
            d.set_item("json", json)?;
            d.set_item("provenance", reading.provenance.to_string())?;
            d.set_item("text", reading.queues.to_string())?;
            Ok(d)
        })
    }

    /// What the handle `value` of `kind` (`comm`, `group`, `datatype`,
    /// `errhandler`, `op`, `info`, `request`, `win`, `file`) means: a dict
    /// with `view` (the crates' model, as `mpidd handle --json` prints
    /// it), `text` (as `mpidd handle` prints it) and `summary` (one line:
    /// `MPI_COMM_WORLD size 4, rank 0`). With `fortran`, `value` is the
    /// Fortran INTEGER handle. An MPICH handle may be given as its int or
    /// its 32-bit pattern.
    #[pyo3(signature = (kind, value, fortran = false))]
    fn handle<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        value: i64,
        fortran: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let kind = HandleKind::from_short_name(kind)
                .filter(|k| *k != HandleKind::Status)
                .ok_or_else(|| {
                    let names: Vec<&str> = HandleKind::ALL
                        .iter()
                        .filter(|k| **k != HandleKind::Status)
                        .map(|k| k.short_name())
                        .collect();
                    MpiddError::new_err(format!(
                        "unknown handle kind {kind:?}: one of {}",
                        names.join(", ")
                    ))
                })?;
            let mut kept = lock(&self.kept)?;
            self.refresh_objects(py, &mut kept)?;
            let Kept {
                objects,
                profiles,
                handle_layouts: chosen,
            } = &mut *kept;
            let objects = objects.as_ref().ok_or_else(no_objects)?;
            let profiles = profiles
                .get_or_insert_with(|| self.profiles.for_objects(&objects.symbols))
                .clone();
            let mut cache = lock(&self.cache)?;
            let read = self.read_memory.bind(py);
            let memory = CallbackMemory::new(read, &mut cache, self.abi);
            let opened = open_with_kept_layouts(&memory, objects, &profiles, chosen)
                .map_err(|e| failed(&error_chain(&e), &memory, objects))?;
            let resolver = opened.resolver();
            let view = if fortran {
                let v = i32::try_from(value).map_err(|_| {
                    MpiddError::new_err(format!("{value} is not a Fortran INTEGER"))
                })?;
                resolver.resolve_fortran(kind, v)
            } else {
                let value = if opened.handles_are_pointers() || kind == HandleKind::File {
                    value
                } else {
                    // MPICH's int handles: a 32-bit pattern is the int.
                    u32::try_from(value).map_or(value, |v| i64::from(v as i32))
                };
                resolver.resolve(kind, value)
            };
            let mut view = view.map_err(|e| failed(&error_chain(&e), &memory, objects))?;
            if let Details::Comm(comm) = &mut view.details {
                fill_world_rank(&mut comm.world_rank, &memory, objects, opened.layouts);
            }
            drop(opened);
            let d = PyDict::new(py);
            d.set_item("view", to_python(py, &view)?)?;
            d.set_item("text", view.to_string())?;
            d.set_item("summary", summary(&view))?;
            Ok(d)
        })
    }

    /// What the rank is doing, from the stacks of the threads the caller
    /// gives (`(tid, pc, sp, fp, lr)` each, the selected or first thread
    /// first; `lr` on aarch64, else `None`) and its queues: a dict with
    /// `rank` (this rank as `mpidd job --json` reports it: its MPI call,
    /// the call's class, its own code's location, its pending operations,
    /// what the reading rests on), `waits` (the edges of the wait-for
    /// graph from it: the peers it waits for, and why) and `verdict` (the
    /// job's verdict over this rank alone). `arch` is the CPU, `x86_64` or
    /// `aarch64`.
    #[pyo3(signature = (threads, arch = "x86_64"))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        threads: Vec<ThreadTuple>,
        arch: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let reading = self.read_this_rank(py, threads, arch, None)?;
            let report = mpidd_job::analyze(&[reading]);
            let this = report
                .ranks
                .first()
                .ok_or_else(|| MpiddError::new_err("the job reader gave no report of the rank"))?;
            let waits: Vec<&mpidd_job::Edge> = report
                .edges
                .iter()
                .filter(|e| e.from == this.world_rank)
                .collect();
            let d = PyDict::new(py);
            d.set_item("rank", to_python(py, this)?)?;
            d.set_item("waits", to_python(py, &waits)?)?;
            d.set_item("verdict", report.verdict.clone())?;
            Ok(d)
        })
    }

    /// The verdict of the whole job: this rank read through the caller
    /// (as [`call`](Rank::call) reads it), the others by mpidd itself,
    /// either from the cores in `cores` (a directory of `core*` files, as
    /// `mpidd job --core-dir` takes; `this_core`, the core the caller has
    /// open, is left out) or live, as `mpidd job --pid LAUNCHER` finds
    /// them behind `launcher` (the launcher, or any parent of the ranks:
    /// its MPIR table, its PMIx server, else its descendants that load an
    /// MPI library; `this_pid`, the process the caller holds, is left
    /// out, and the others are stopped only while they are read; a core
    /// among `cores` of the process `this_pid` is left out too). A dict
    /// with `report` (as `mpidd job --json` prints it), `verdict` and
    /// `cycles`.
    #[pyo3(signature = (threads, arch = "x86_64", cores = None, this_core = None, launcher = None, this_pid = None))]
    #[allow(clippy::too_many_arguments)]
    fn job<'py>(
        &self,
        py: Python<'py>,
        threads: Vec<ThreadTuple>,
        arch: &str,
        cores: Option<std::path::PathBuf>,
        this_core: Option<std::path::PathBuf>,
        launcher: Option<i32>,
        this_pid: Option<i32>,
    ) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let others = other_ranks(
                cores,
                this_core.as_deref(),
                launcher,
                this_pid,
                &self.job_reader,
            )?;
            let this = self.read_this_rank(py, threads, arch, this_pid)?;
            // The others are read with the GIL released: they call nothing
            // of the caller's, and a live one is stopped meanwhile.
            let mut readings = py.detach(|| self.job_reader.read_all(&others, &|_, _| {}));
            // A core of the caller's own rank among the others (a debugger
            // that cannot say which core it has open) is read through the
            // caller alone.
            if let Some(pid) = this_pid {
                readings.retain(|r| r.pid != Some(pid));
            }
            readings.push(this);
            let report = mpidd_job::analyze(&readings);
            let d = PyDict::new(py);
            d.set_item("report", to_python(py, &report)?)?;
            d.set_item("verdict", report.verdict.clone())?;
            d.set_item("cycles", report.cycles.clone())?;
            Ok(d)
        })
    }

    /// The objects the rank was last read with, as `(name, path, bias)`,
    /// and those whose files could not be read, with why.
    fn objects_read<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let kept = lock(&self.kept)?;
        let d = PyDict::new(py);
        let (listed, unreadable) = match &kept.objects {
            Some(o) => (o.listed.clone(), o.unreadable.clone()),
            None => (Vec::new(), Vec::new()),
        };
        let rows = PyList::empty(py);
        for o in listed {
            rows.append((o.name, o.path.display().to_string(), o.bias))?;
        }
        d.set_item("objects", rows)?;
        d.set_item("unreadable", unreadable)?;
        Ok(d)
    }
}

/// A thread as the caller gives it: `(tid, pc, sp, fp, lr)`.
type ThreadTuple = (i32, u64, u64, u64, Option<u64>);

impl Rank {
    /// This rank read as `mpidd job` reads one, through the caller's
    /// memory and objects, its stacks unwound from `threads`.
    fn read_this_rank(
        &self,
        py: Python<'_>,
        threads: Vec<ThreadTuple>,
        arch: &str,
        pid: Option<i32>,
    ) -> PyResult<mpidd_job::RankReading> {
        let arch = match arch {
            "x86_64" => StackArch::X86_64,
            "aarch64" => StackArch::Aarch64,
            other => {
                return Err(MpiddError::new_err(format!(
                    "no unwinder for {other:?}: x86_64 or aarch64"
                )))
            }
        };
        let registers: Vec<ThreadRegisters> = threads
            .into_iter()
            .map(|(tid, pc, sp, fp, lr)| ThreadRegisters {
                tid,
                arch,
                pc,
                sp,
                fp,
                lr,
                general: Vec::new(),
            })
            .collect();
        let mut kept = lock(&self.kept)?;
        self.refresh_objects(py, &mut kept)?;
        let objects = kept.objects.as_ref().ok_or_else(no_objects)?;
        let mut cache = lock(&self.cache)?;
        let read = self.read_memory.bind(py);
        let memory = CallbackMemory::new(read, &mut cache, self.abi);
        let target = TargetParts {
            memory: &memory,
            symbols: &objects.symbols,
            layouts: &objects.layouts,
        };
        let label = match pid {
            Some(pid) => format!("pid {pid} (the debugger's)"),
            None => "the debugger's rank".to_string(),
        };
        let mut rank = CallerRank::new(label, &target, &objects.symbols).with_threads(&registers);
        if let Some(pid) = pid {
            rank = rank.with_pid(pid);
        }
        if let Some(executable) = objects.listed.first() {
            rank = rank.with_executable(executable.path.clone());
        }
        Ok(self.job_reader.read_caller_rank(&rank))
    }

    /// Takes the objects as the caller lists them now; their symbols are
    /// read again only when the list changed.
    fn refresh_objects(&self, py: Python<'_>, kept: &mut Kept) -> PyResult<()> {
        let listed = self.list_objects(py)?;
        if kept.objects.as_ref().map(|o| &o.listed) != Some(&listed) {
            kept.objects = Some(ProcessObjects::new(listed));
            kept.profiles = None;
            kept.handle_layouts = None;
        }
        Ok(())
    }

    fn list_objects(&self, py: Python<'_>) -> PyResult<Vec<ListedObject>> {
        let answer = self.objects.bind(py).call0()?;
        let mut listed = Vec::new();
        let items = answer.try_iter().map_err(|e| {
            MpiddError::new_err(format!(
                "objects() must give a list of (name, path, bias) tuples: {e}"
            ))
        })?;
        for item in items {
            let (name, path, bias): (String, String, i128) = item?.extract().map_err(|e| {
                MpiddError::new_err(format!(
                    "objects() must give (name, path, bias) tuples: {e}"
                ))
            })?;
            // A bias below the link-time address (a prelinked object moved
            // down) is given negative, or as its 64-bit pattern.
            let bias = if bias < 0 {
                (bias as i64) as u64
            } else {
                u64::try_from(bias).map_err(|_| {
                    MpiddError::new_err(format!("the bias of {name} is too large: {bias}"))
                })?
            };
            listed.push(ListedObject {
                name,
                path: path.into(),
                bias,
            });
        }
        Ok(listed)
    }
}

fn no_objects() -> PyErr {
    MpiddError::new_err("the rank's objects were not read")
}

/// The error of a failed reading: the crates' reason, how the caller's
/// reader failed when it did (a debugger failing, not memory missing: the
/// crates may have taken it for memory that is not there), and the
/// objects that could not be read.
fn failed(reason: &str, memory: &CallbackMemory<'_, '_>, objects: &ProcessObjects) -> PyErr {
    let mut text = reason.to_string();
    if let Some(raised) = memory.failure() {
        text.push_str(&format!(" (the memory reader failed: {raised})"));
    }
    if !objects.unreadable.is_empty() {
        text.push_str(&format!(
            " (objects not read: {})",
            objects.unreadable.join("; ")
        ));
    }
    MpiddError::new_err(text)
}

/// The process's resolver, on the layouts an earlier call chose when there
/// was one; else chosen now (the DWARF when it answers, else the profile
/// of the library's build) and the choice kept in `chosen`.
fn open_with_kept_layouts<'a>(
    memory: &'a CallbackMemory<'_, '_>,
    objects: &'a ProcessObjects,
    profiles: &'a [mpidd_read::LayoutProfile],
    chosen: &mut Option<HandleLayouts>,
) -> Result<OpenedResolver<'a>, OpenResolverError> {
    let limits = Limits::default();
    let symbols = &objects.symbols;
    let kept: Option<&dyn Layouts> = match *chosen {
        Some(HandleLayouts::Dwarf) => Some(objects.layouts.dwarf()),
        Some(HandleLayouts::Profile(i)) => profiles.get(i).map(|p| &p.layouts as _),
        None => None,
    };
    if let Some(layouts) = kept {
        if let Ok(opened) = open_resolver(memory, symbols, symbols, layouts, &[], limits) {
            return Ok(opened);
        }
    }
    let opened = open_resolver(
        memory,
        symbols,
        symbols,
        objects.layouts.dwarf(),
        profiles,
        limits,
    )?;
    *chosen = match &opened.profile {
        Some(ProfileLayouts { origin, .. }) if origin.profile().is_some() => profiles
            .iter()
            .position(|p| Some(&p.identity) == origin.profile())
            .map(HandleLayouts::Profile),
        _ => Some(HandleLayouts::Dwarf),
    };
    Ok(opened)
}

/// The world rank by the other ways `mpiq_core::world_rank` knows (the MPI
/// library's globals, the launcher's environment), when the communicator's
/// decoder could not read it, as `mpidd handle` does.
fn fill_world_rank(
    field: &mut Availability<i32>,
    memory: &CallbackMemory<'_, '_>,
    objects: &ProcessObjects,
    layouts: &dyn Layouts,
) {
    if let Availability::NotAvailable { reason } = field {
        let parts = TargetParts {
            memory,
            symbols: &objects.symbols,
            layouts,
        };
        *field = match mpiq_core::world_rank(&parts, &Limits::default()) {
            Ok(found) => Availability::Value(found.rank),
            Err(e) => Availability::not_available(format!("{reason}; {e}")),
        };
    }
}

/// The ranks other than the caller's: the cores in `cores` but
/// `this_core`, or the live ranks behind `launcher` but `this_pid`.
fn other_ranks(
    cores: Option<std::path::PathBuf>,
    this_core: Option<&std::path::Path>,
    launcher: Option<i32>,
    this_pid: Option<i32>,
    reader: &JobReader,
) -> PyResult<Vec<mpidd_job::RankTarget>> {
    let same_file = |a: &std::path::Path, b: &std::path::Path| match (
        std::fs::canonicalize(a),
        std::fs::canonicalize(b),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    match (cores, launcher) {
        (Some(dir), None) => {
            let found = mpidd_job::discover::cores_in(&dir, &Default::default())
                .map_err(|e| MpiddError::new_err(e.to_string()))?;
            Ok(found
                .into_iter()
                .filter(|t| match (t, this_core) {
                    (mpidd_job::RankTarget::Core { path, .. }, Some(this)) => {
                        !same_file(path, this)
                    }
                    _ => true,
                })
                .collect())
        }
        (None, Some(pid)) => {
            let (_, found) = mpidd_job::discover::ranks_of_pid(
                pid,
                &reader.options().limits,
                &Default::default(),
            )
            .map_err(|e| MpiddError::new_err(e.to_string()))?;
            Ok(found
                .into_iter()
                .filter(|t| !matches!(t, mpidd_job::RankTarget::Live { pid, .. } if Some(*pid) == this_pid))
                .collect())
        }
        _ => Err(MpiddError::new_err(
            "give the other ranks: a directory of their cores, or their launcher's pid",
        )),
    }
}
