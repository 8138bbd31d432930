"""mpidd inside lldb: ``command script import mpidd.lldb`` (one line of
~/.lldbinit).

It adds, for the selected process (live, or a core):

- ``mpi queues [-json]``: the rank's communicators and pending operations,
  as ``mpidd queues`` shows them, and what the reading rests on;
- ``mpi handle [-kind KIND] [-fortran] [-json] EXPR``: what an MPI handle
  means (communicator, group, request, datatype, op, ...). The kind comes
  from EXPR's type when it is an MPI handle type (``MPI_Comm``...), else
  from ``-kind``; a trailing ``/f`` is ``-fortran``. ``MPI_COMM_WORLD`` and
  the other predefined communicators are known by name;
- ``mpi where [-json]``: the rank's MPI call, where its own code made it,
  and the ranks it waits for, from its threads' stacks and its queues;
- ``mpi job [-json] [-cores DIR | -launcher PID]``: the verdict of the
  whole job, this rank read through lldb and the others by mpidd (the
  cores in DIR, or the ranks behind the launcher, by default this
  process's parent);
- summaries for the handle types, by the typedef's own name (``MPI_Comm``
  is an int in MPICH and a pointer in Open MPI), so that ``frame variable
  comm`` shows ``mpidd_dup size 4, rank 0``, and synthetic children: the
  members of its view (``name``, ``size``, ``rank``, ...), which an IDE's
  variables tree expands (``frame variable -Y comm`` prints them).

Everything is read through lldb itself: its memory reads
(``SBProcess.ReadMemory``) and its modules. Pages read are kept until the
process stops again (its stop id changes). A failure is one line of error,
never a traceback; a summary that cannot be read shows the raw value and
the reason.

Debian 12's lldb 14 looks for its own Python package in the wrong place:
run it with ``PYTHONPATH=/usr/lib/llvm-14/lib/python3.11/dist-packages``.
"""

import json
import os

import lldb

from mpidd._handles import (
    HANDLE_TYPES,
    KINDS,
    UsageError,
    find_predefined,
    handle_arguments,
    job_arguments,
    job_text,
    parent_pid,
    predefined_kind,
    raw,
    view_members,
    where_text,
)
from mpidd._native import MpiddError, Rank, section_bias


class _Process:
    """What is kept for one process: its Rank and its objects, for one
    stop."""

    def __init__(self, process):
        self.process = process
        target = process.GetTarget()
        self.target = target
        self.stop_id = process.GetStopID()
        self.objects = None
        little = target.GetByteOrder() == lldb.eByteOrderLittle
        self.rank = Rank(self._read, self._objects, target.GetAddressByteSize(), little)

    def _read(self, address, size):
        error = lldb.SBError()
        data = self.process.ReadMemory(address, size, error)
        if error.Success() and data:
            return data
        # A core holds no read-only file-backed pages (a library's
        # constant data): lldb's target reads those from the file.
        error = lldb.SBError()
        data = self.target.ReadMemory(self.target.ResolveLoadAddress(address), size, error)
        if error.Success() and data:
            return data
        return None

    def _objects(self):
        if self.objects is None:
            self.objects = _loaded_objects(self.target)
        return self.objects

    def at_stop(self):
        """Forgets what an earlier stop read."""
        stop_id = self.process.GetStopID()
        if stop_id != self.stop_id:
            self.stop_id = stop_id
            self.rank.clear_cache()
            self.objects = None


def _loaded_objects(target):
    """The loaded objects as (name, path, bias), the executable first: each
    file's bias from where lldb placed its .text section."""
    placed = []
    seen = set()
    for module in target.module_iter():
        path = module.GetFileSpec().fullpath
        if not path or not path.startswith("/") or path in seen:
            continue
        section = module.FindSection(".text")
        if not section.IsValid():
            continue
        address = section.GetLoadAddress(target)
        if address == lldb.LLDB_INVALID_ADDRESS:
            continue
        seen.add(path)
        try:
            bias = section_bias(path, ".text", address)
        except MpiddError:
            # A file gone or changed since it was loaded: the crates are
            # told of it by its absence (a reading names what is missing).
            continue
        placed.append((path, path, bias))
    return placed


_processes = {}


def _state(process):
    """The state of `process`, made on first use and brought to its stop."""
    if process is None or not process.IsValid():
        raise MpiddError("no process or core file to read (run, attach or open a core first)")
    key = (process.GetUniqueID(), process.GetProcessID(), process.GetTarget().GetExecutable().fullpath)
    state = _processes.get(key)
    if state is None:
        state = _Process(process)
        _processes.clear()
        _processes[key] = state
    state.at_stop()
    return state


def _value_number(value):
    """A handle value's number: an int handle signed (MPICH's), a pointer
    unsigned (Open MPI's)."""
    if value.GetType().GetCanonicalType().IsPointerType():
        return value.GetValueAsUnsigned()
    return value.GetValueAsSigned()


def _kind_of(value):
    """The handle kind of a value, by its type's typedef name."""
    return HANDLE_TYPES.get(value.GetTypeName())


def _evaluate(frame, target, expression):
    """EXPR as a value: a variable path first (which works on cores and
    without running code), else an expression."""
    if frame is not None and frame.IsValid():
        value = frame.GetValueForVariablePath(expression)
        if value.IsValid() and value.GetError().Success():
            return value
        value = frame.EvaluateExpression(expression)
    else:
        value = target.EvaluateExpression(expression)
    if value.IsValid() and value.GetError().Success():
        return value
    return None


def _symbol_address(target, name):
    """The load address of the global `name`, or None."""
    for context in target.FindSymbols(name):
        address = context.GetSymbol().GetStartAddress().GetLoadAddress(target)
        if address != lldb.LLDB_INVALID_ADDRESS:
            return address
    return None


def _queues(exe_ctx, words):
    as_json = False
    for w in words:
        if w in ("-json", "--json"):
            as_json = True
        else:
            raise UsageError("usage: mpi queues [-json]")
    # The model is printed, never walked: its JSON comes made.
    reading = _state(exe_ctx.GetProcess()).rank.queues(model=False)
    if as_json:
        return reading["json"]
    text = reading["text"]
    return reading["provenance"] + "\n" + (text[:-1] if text.endswith("\n") else text)


def _handle(exe_ctx, argument):
    kind, fortran, as_json, expression = handle_arguments(argument)
    process = exe_ctx.GetProcess()
    target = exe_ctx.GetTarget()
    rank = _state(process).rank
    value = _evaluate(exe_ctx.GetFrame(), target, expression)
    if value is None:
        shown = None
        predefined = None if fortran else predefined_kind(expression, kind)
        if predefined is not None:
            address = _symbol_address(target, "ompi_mpi_" + expression[4:].lower())
            shown = find_predefined(rank, expression, predefined, address)
        if shown is None:
            raise MpiddError("cannot evaluate %s" % expression)
    else:
        kind = kind or _kind_of(value)
        if kind is None:
            raise UsageError(
                "%s is of type %s, not an MPI handle type: give its kind with -kind (%s)"
                % (expression, value.GetTypeName(), ", ".join(KINDS))
            )
        shown = rank.handle(kind, _value_number(value), fortran)
    if as_json:
        return json.dumps(shown["view"], indent=2)
    text = shown["text"]
    return text[:-1] if text.endswith("\n") else text


def _threads(process):
    """The threads of `process` as (tid, pc, sp, fp[, lr]), the selected
    one first, and the CPU."""
    triple = process.GetTarget().GetTriple() or ""
    if triple.startswith("x86_64"):
        cpu = "x86_64"
    elif triple.startswith("aarch64") or triple.startswith("arm64"):
        cpu = "aarch64"
    else:
        raise MpiddError("no unwinder for %s: x86_64 or aarch64" % (triple or "this target"))
    selected = process.GetSelectedThread().GetThreadID()
    threads = []
    for thread in sorted(process, key=lambda t: (t.GetThreadID() != selected, t.GetIndexID())):
        frame = thread.GetFrameAtIndex(0)
        if not frame.IsValid():
            continue
        lr = None
        if cpu == "aarch64":
            lr = frame.FindRegister("lr").GetValueAsUnsigned()
        threads.append((thread.GetThreadID(), frame.GetPC(), frame.GetSP(), frame.GetFP(), lr))
    return threads, cpu


def _where(exe_ctx, words):
    if any(w not in ("-json", "--json") for w in words):
        raise UsageError("usage: mpi where [-json]")
    process = exe_ctx.GetProcess()
    state = _state(process)
    threads, cpu = _threads(process)
    reading = state.rank.call(threads, cpu)
    if words:
        return json.dumps({"rank": reading["rank"], "waits": reading["waits"]}, indent=2)
    return where_text(reading)


def _core_file(process):
    """The core file lldb has open, or None (lldb 15 and later say;
    before, -cores DIR names the others)."""
    get = getattr(process, "GetCoreFile", None)
    if get is None:
        return None
    path = get().fullpath
    return path or None


def _job(exe_ctx, words):
    as_json, cores, launcher = job_arguments(words)
    process = exe_ctx.GetProcess()
    state = _state(process)
    core = _core_file(process)
    live = process.GetPluginName() != "elf-core"
    # A core's pid is its process's: its own core among the others is
    # then left out by it.
    pid = process.GetProcessID() or None
    if cores is None and launcher is None:
        if core:
            cores = os.path.dirname(os.path.abspath(core))
        elif live:
            launcher = parent_pid(pid)
        else:
            raise UsageError("this lldb does not say which core it has open: give -cores DIR")
    threads, cpu = _threads(process)
    reading = state.rank.job(threads, cpu, cores=cores, this_core=core, launcher=launcher, this_pid=pid)
    if as_json:
        return json.dumps(reading["report"], indent=2)
    return job_text(reading)


USAGE = (
    "usage: mpi queues [-json] | mpi handle [-kind KIND] [-fortran] [-json] EXPR "
    "| mpi where [-json] | mpi job [-json] [-cores DIR | -launcher PID]"
)


def mpi_command(debugger, command, exe_ctx, result, internal_dict):
    """``mpi queues [-json]``, ``mpi handle [-kind KIND] [-fortran]
    [-json] EXPR`` and ``mpi where [-json]``."""
    word, _, rest = command.strip().partition(" ")
    try:
        if word == "queues":
            output = _queues(exe_ctx, rest.split())
        elif word == "handle":
            output = _handle(exe_ctx, rest)
        elif word == "where":
            output = _where(exe_ctx, rest.split())
        elif word == "job":
            output = _job(exe_ctx, rest.split())
        else:
            raise UsageError(USAGE)
    except (MpiddError, UsageError) as e:
        result.SetError("mpidd: %s" % e)
        return
    except Exception as e:  # no traceback in lldb, whatever failed
        result.SetError("mpidd: %s: %s" % (type(e).__name__, e))
        return
    result.AppendMessage(output)


def handle_summary(value, internal_dict):
    """The summary of an MPI handle value: what it is, in one line; the raw
    value and the reason when it cannot be read."""
    try:
        number = _value_number(value)
    except Exception as e:
        return "<mpidd: %s>" % e
    kind = _kind_of(value)
    if kind is None:
        return raw(number)
    try:
        return _state(value.GetProcess()).rank.handle(kind, number)["summary"]
    except MpiddError as e:
        return "%s <mpidd: %s>" % (raw(number), e)
    except Exception as e:  # a summary must never stop a print
        return "%s <mpidd: %s: %s>" % (raw(number), type(e).__name__, e)


class HandleChildren:
    """The synthetic children of an MPI handle value: the members of its
    view (``mpi handle``'s: name, size, rank, ... of a communicator; peer,
    tag, ... of a request), so that an IDE's variables tree expands it.
    Integers and booleans are values of those types, the rest strings.
    Read on first use at each stop; a handle that cannot be read has one
    child, ``mpidd_error``, saying why."""

    def __init__(self, valobj, internal_dict):
        self.valobj = valobj
        self.members = None

    def update(self):
        # A new stop, or a new value: read again when asked.
        self.members = None
        return False

    def has_children(self):
        return True

    def _members(self):
        if self.members is None:
            self.members = self._read()
        return self.members

    def _read(self):
        value = self.valobj.GetNonSyntheticValue()
        kind = _kind_of(value)
        if kind is None:
            return []
        try:
            number = _value_number(value)
            shown = _state(value.GetProcess()).rank.handle(kind, number)
            return view_members(shown["text"])
        except MpiddError as e:
            return [("mpidd_error", str(e))]
        except Exception as e:  # children must never stop a print
            return [("mpidd_error", "%s: %s" % (type(e).__name__, e))]

    def num_children(self, max_children=None):
        return len(self._members())

    def get_child_index(self, name):
        for i, (member, _) in enumerate(self._members()):
            if member == name:
                return i
        return -1

    def get_child_at_index(self, index):
        members = self._members()
        if not 0 <= index < len(members):
            return None
        name, value = members[index]
        return _child(self.valobj, name, value)


def _child(valobj, name, value):
    """An SBValue named `name` holding `value` (an int, a bool or a str),
    made from data in the target's byte order: no expression runs, so it
    works on cores."""
    target = valobj.GetTarget()
    order = target.GetByteOrder()
    size = target.GetAddressByteSize()
    if isinstance(value, bool):
        raw_bytes = bytes([1 if value else 0])
        kind = target.GetBasicType(lldb.eBasicTypeBool)
    elif isinstance(value, int) and -(1 << 63) <= value < (1 << 63):
        raw_bytes = value.to_bytes(8, "little" if order == lldb.eByteOrderLittle else "big", signed=True)
        kind = target.GetBasicType(lldb.eBasicTypeLongLong)
    else:
        # A C string, its terminating NUL within the array.
        raw_bytes = str(value).encode() + b"\0"
        kind = target.GetBasicType(lldb.eBasicTypeChar).GetArrayType(len(raw_bytes))
    data = lldb.SBData()
    error = lldb.SBError()
    data.SetData(error, raw_bytes, order, size)
    return valobj.CreateValueFromData(name, data, kind)


def __lldb_init_module(debugger, internal_dict):
    debugger.HandleCommand(
        'command script add -h "MPI queues, handles and calls of this process, read by mpidd: '
        'mpi queues [-json]; mpi handle [-kind KIND] [-fortran] [-json] EXPR; mpi where [-json]; '
        'mpi job [-json] [-cores DIR | -launcher PID]" '
        "-f mpidd.lldb.mpi_command mpi"
    )
    debugger.HandleCommand(
        "type summary add -w mpidd -v -F mpidd.lldb.handle_summary " + " ".join(sorted(HANDLE_TYPES))
    )
    debugger.HandleCommand(
        "type synthetic add -w mpidd -l mpidd.lldb.HandleChildren " + " ".join(sorted(HANDLE_TYPES))
    )
    debugger.HandleCommand("type category enable mpidd")
