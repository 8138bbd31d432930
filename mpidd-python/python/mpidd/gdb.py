"""mpidd inside gdb: ``python import mpidd.gdb`` (one line of ~/.gdbinit).

It registers, for the selected inferior (a live process or a core):

- ``mpi queues [-json]``: the rank's communicators and pending operations,
  as ``mpidd queues`` shows them, and what the reading rests on;
- ``mpi handle [-kind KIND] [-fortran] [-json] EXPR``: what an MPI handle
  means (a communicator, group, request, datatype, op, ...). The kind comes
  from EXPR's type when it is an MPI handle type (``MPI_Comm``...), else
  from ``-kind``; a trailing ``/f`` is ``-fortran`` (EXPR is the Fortran
  INTEGER handle). ``MPI_COMM_WORLD`` and the other predefined
  communicators are known by name even where gdb has no macros;
- ``mpi where [-json]``: the rank's MPI call, where its own code made it,
  and the ranks it waits for (peer, operation, tag, communicator), from
  its threads' stacks (unwound from gdb's registers) and its queues;
- ``mpi job [-json] [-cores DIR | -launcher PID]``: the verdict of the
  whole job, this rank read through gdb and the others by mpidd (the
  other cores beside gdb's, or the ranks behind the launcher);
- pretty-printers for the handle types, chosen by the typedef's own name
  (``MPI_Comm`` is an int in MPICH and a pointer in Open MPI), so that
  ``print comm`` shows ``mpidd_dup size 4, rank 0``; in gdb's DAP mode
  (VS Code) a handle also expands to the members of its view.

Everything is read through gdb itself: its memory reads
(``Inferior.read_memory``) and its list of loaded objects (``info files``).
Pages read are kept until the inferior runs, stops or changes. gdb is not
thread-safe: every call into it happens on gdb's own thread, within a
command or a printer. A failure is one line (gdb.GdbError), never a
traceback.
"""

import contextlib
import json
import os
import re
import sys

import gdb

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

# One `info files` line of a section: "0xSTART - 0xEND is NAME [in FILE]".
_SECTION_LINE = re.compile(
    r"^\s*(0x[0-9a-fA-F]+) - (0x[0-9a-fA-F]+) is (\S+)(?: in (.+))?$"
)


def _loaded_objects():
    """The loaded objects as (name, path, bias), the executable first: each
    file's bias from where gdb placed its .text section."""
    text = gdb.execute("info files", to_string=True)
    progspace = gdb.current_progspace()
    executable = progspace.filename if progspace is not None else None
    placed = []
    seen = set()
    for line in text.splitlines():
        m = _SECTION_LINE.match(line)
        if m is None or m.group(3) != ".text":
            continue
        path = m.group(4) or executable
        # gdb's vDSO ("system-supplied DSO at 0x...") has no file.
        if not path or not path.startswith("/") or path in seen:
            continue
        seen.add(path)
        try:
            bias = section_bias(path, ".text", int(m.group(1), 16))
        except MpiddError:
            # A file gone or changed since it was loaded: the crates are
            # told of it by its absence (a reading names what is missing).
            continue
        placed.append((path, path, bias))
    return placed


class _Inferior:
    """What is kept for one inferior: its Rank and its objects, until it
    runs, stops, or loads or drops objects."""

    def __init__(self, inferior):
        self.inferior = inferior
        self.objects = None
        # The target's word size and byte order, as gdb has them.
        address_bytes = gdb.lookup_type("void").pointer().sizeof
        little = "little endian" in gdb.execute("show endian", to_string=True)
        self.rank = Rank(self._read, self._objects, address_bytes, little)

    def _read(self, address, size):
        try:
            return self.inferior.read_memory(address, size)
        except gdb.MemoryError:
            return None

    def _objects(self):
        if self.objects is None:
            self.objects = _loaded_objects()
        return self.objects

    def forget(self, objects=False):
        self.rank.clear_cache()
        if objects:
            self.objects = None


_inferiors = {}


def _current():
    """The selected inferior's state, made on first use; one that has no
    process or core has nothing to read."""
    inferior = gdb.selected_inferior()
    if inferior.pid == 0 and not _has_core():
        raise gdb.GdbError("mpidd: no process or core file to read (run, attach or open a core first)")
    key = (inferior.num, inferior.pid, gdb.current_progspace().filename)
    state = _inferiors.get(key)
    if state is None:
        state = _Inferior(inferior)
        _inferiors.clear()
        _inferiors[key] = state
    return state


def _has_core():
    try:
        return "core dump file" in gdb.execute("info target", to_string=True).lower()
    except gdb.error:
        return False


def _forget(_event=None, objects=False):
    for state in _inferiors.values():
        state.forget(objects)


def _forget_objects(_event=None):
    _forget(objects=True)


gdb.events.stop.connect(_forget)
gdb.events.cont.connect(_forget)
gdb.events.memory_changed.connect(_forget)
gdb.events.inferior_call.connect(_forget)
gdb.events.exited.connect(_forget_objects)
gdb.events.new_objfile.connect(_forget_objects)
gdb.events.clear_objfiles.connect(_forget_objects)


def _fail(e):
    """A failure as the one line gdb prints."""
    return gdb.GdbError("mpidd: " + str(e))


@contextlib.contextmanager
def _one_line():
    """Within it, whatever fails is the one line gdb prints (the crates'
    reason, or what else failed), never a Python traceback; gdb's own
    errors pass as they are."""
    try:
        yield
    except MpiddError as e:
        raise _fail(e) from None
    except gdb.GdbError:
        raise
    except Exception as e:  # no traceback in gdb, whatever failed
        raise _fail("%s: %s" % (type(e).__name__, e)) from None


class MpiPrefix(gdb.Command):
    """MPI queues and handles of this process, read by mpidd.

mpi queues [-json]            this rank's communicators and pending operations
mpi handle [-kind KIND] [-fortran] [-json] EXPR
                              what an MPI handle means
mpi where [-json]             this rank's MPI call and what it waits for
mpi job [-json] [-cores DIR | -launcher PID]
                              the verdict of the whole job"""

    def __init__(self):
        super().__init__("mpi", gdb.COMMAND_DATA, gdb.COMPLETE_NONE, True)


class MpiQueues(gdb.Command):
    """This rank's communicators and pending operations (receives, sends,
unexpected messages), as `mpidd queues` shows them.

Usage: mpi queues [-json]
With -json, the queues as `mpidd queues --json` prints them."""

    def __init__(self):
        super().__init__("mpi queues", gdb.COMMAND_DATA, gdb.COMPLETE_NONE)

    def invoke(self, argument, from_tty):
        words = gdb.string_to_argv(argument)
        as_json = False
        for w in words:
            if w in ("-json", "--json"):
                as_json = True
            else:
                raise gdb.GdbError("mpidd: usage: mpi queues [-json]")
        with _one_line():
            # The model is printed, never walked: its JSON comes made.
            reading = _current().rank.queues(model=False)
        if as_json:
            gdb.write(reading["json"] + "\n")
        else:
            gdb.write(reading["provenance"] + "\n")
            gdb.write(reading["text"])
            if not reading["text"].endswith("\n"):
                gdb.write("\n")


def _threads():
    """The threads of the selected inferior as (tid, pc, sp, fp[, lr]),
    the selected one first, and the CPU; the selection is restored."""
    inferior = gdb.selected_inferior()
    arch = inferior.architecture().name()
    if "x86-64" in arch:
        cpu, registers = "x86_64", ("rsp", "rbp")
    elif "aarch64" in arch:
        cpu, registers = "aarch64", ("sp", "x29")
    else:
        raise gdb.GdbError("mpidd: no unwinder for %s: x86_64 or aarch64" % arch)
    selected = gdb.selected_thread()
    frame = gdb.selected_frame() if selected is not None else None
    ordered = sorted(inferior.threads(), key=lambda t: (t != selected, t.num))
    threads = []
    try:
        for thread in ordered:
            thread.switch()
            newest = gdb.newest_frame()
            sp, fp = (int(newest.read_register(r)) for r in registers)
            lr = int(newest.read_register("x30")) if cpu == "aarch64" else None
            tid = thread.ptid[1] or thread.ptid[0]
            threads.append((tid, newest.pc(), sp, fp, lr))
    finally:
        if selected is not None:
            selected.switch()
            if frame is not None and frame.is_valid():
                frame.select()
    return threads, cpu


class MpiWhere(gdb.Command):
    """What this rank is doing: its MPI call, where its own code made it,
and the ranks it waits for (peer, operation, tag, communicator), from its
stacks and queues as `mpidd job` reads a rank.

Usage: mpi where [-json]"""

    def __init__(self):
        super().__init__("mpi where", gdb.COMMAND_DATA, gdb.COMPLETE_NONE)

    def invoke(self, argument, from_tty):
        words = gdb.string_to_argv(argument)
        if any(w not in ("-json", "--json") for w in words):
            raise gdb.GdbError("mpidd: usage: mpi where [-json]")
        with _one_line():
            threads, cpu = _threads()
            reading = _current().rank.call(threads, cpu)
        if words:
            gdb.write(json.dumps({"rank": reading["rank"], "waits": reading["waits"]}, indent=2) + "\n")
        else:
            gdb.write(where_text(reading) + "\n")


def _core_file():
    """The core file gdb has open, or None."""
    try:
        text = gdb.execute("info target", to_string=True)
    except gdb.error:
        return None
    m = re.search(r"core dump file:\s*`([^']+)'", text)
    return m.group(1) if m else None


class MpiJob(gdb.Command):
    """The verdict of the whole job: this rank read through gdb, the others
by mpidd, as `mpidd job` reads them: from the other cores (those in the
directory of the core gdb has open, or -cores DIR), or live behind the
launcher (this process's parent, or -launcher PID), each stopped only
while it is read.

Usage: mpi job [-json] [-cores DIR | -launcher PID]"""

    def __init__(self):
        super().__init__("mpi job", gdb.COMMAND_DATA, gdb.COMPLETE_FILENAME)

    def invoke(self, argument, from_tty):
        try:
            as_json, cores, launcher = job_arguments(gdb.string_to_argv(argument))
        except UsageError as e:
            raise gdb.GdbError("mpidd: %s" % e) from None
        with _one_line():
            state = _current()
            core = _core_file()
            pid = None if core else state.inferior.pid
            if cores is None and launcher is None:
                if core:
                    cores = os.path.dirname(os.path.abspath(core))
                else:
                    launcher = parent_pid(pid)
            threads, cpu = _threads()
            reading = state.rank.job(
                threads, cpu, cores=cores, this_core=core, launcher=launcher, this_pid=pid
            )
        if as_json:
            gdb.write(json.dumps(reading["report"], indent=2) + "\n")
        else:
            gdb.write(job_text(reading) + "\n")


class MpiHandle(gdb.Command):
    """What an MPI handle means: communicator, group, request, datatype, op,
errhandler, info, win or file, as `mpidd handle` shows it.

Usage: mpi handle [-kind KIND] [-fortran] [-json] EXPR
The kind comes from EXPR's type when it is an MPI handle type (MPI_Comm...),
else from -kind. With -fortran (or a trailing /f), EXPR is the Fortran
INTEGER handle."""

    def __init__(self):
        super().__init__("mpi handle", gdb.COMMAND_DATA, gdb.COMPLETE_EXPRESSION)

    def invoke(self, argument, from_tty):
        kind, fortran, as_json, expression = _handle_arguments(argument)
        with _one_line():
            try:
                value = gdb.parse_and_eval(expression)
            except gdb.error as e:
                # A predefined handle's name is a macro of mpi.h, which
                # gdb knows only from a program built with -g3.
                shown = None if fortran else _predefined(expression, kind)
                if shown is None:
                    raise _fail(e) from None
            else:
                kind = kind or _kind_of(value.type)
                if kind is None:
                    raise gdb.GdbError(
                        "mpidd: %s is of type %s, not an MPI handle type: give its kind with -kind (%s)"
                        % (expression, value.type, ", ".join(KINDS))
                    )
                shown = _current().rank.handle(kind, int(value), fortran)
        if as_json:
            gdb.write(json.dumps(shown["view"], indent=2) + "\n")
        else:
            gdb.write(shown["text"])


def _predefined(name, kind):
    """The view of the predefined handle `name` (MPI_COMM_WORLD), or None
    when it is not found (mpidd._handles.find_predefined)."""
    kind = predefined_kind(name, kind)
    if kind is None:
        return None
    try:
        address = int(gdb.parse_and_eval("&ompi_mpi_" + name[4:].lower()))
    except gdb.error:
        address = None
    return find_predefined(_current().rank, name, kind, address)


def _handle_arguments(argument):
    """mpidd._handles.handle_arguments, its usage errors as gdb's."""
    try:
        return handle_arguments(argument)
    except UsageError as e:
        raise gdb.GdbError("mpidd: %s" % e) from None


def _kind_of(gdb_type):
    """The handle kind of a value's type, by the typedef's own name (before
    any typedef is stripped: MPICH's MPI_Comm is an int)."""
    t = gdb_type.unqualified()
    return HANDLE_TYPES.get(t.name) if t.name else None


class HandlePrinter:
    """An MPI handle printed as what it means, in one line."""

    def __init__(self, kind, value):
        self.kind = kind
        self.value = value

    def to_string(self):
        try:
            number = int(self.value)
        except (gdb.error, ValueError, TypeError) as e:
            return "<mpidd: %s>" % e
        try:
            return _current().rank.handle(self.kind, number)["summary"]
        except gdb.GdbError as e:
            return "%s <%s>" % (raw(number), e)
        except MpiddError as e:
            return "%s <mpidd: %s>" % (raw(number), e)
        except Exception as e:  # a printer must never stop a print
            return "%s <mpidd: %s: %s>" % (raw(number), type(e).__name__, e)


class ExpandingHandlePrinter(HandlePrinter):
    """The same, with children: the members of the handle's view (name,
    size, rank, ... of a communicator), for an IDE's variables tree."""

    def children(self):
        try:
            shown = _current().rank.handle(self.kind, int(self.value))
            members = view_members(shown["text"])
        except Exception as e:  # a printer must never stop a print
            members = [("mpidd_error", "%s" % e)]
        for name, value in members:
            yield name, value


def _in_dap():
    """Whether gdb runs as a DAP server (``gdb -i=dap``, for VS Code):
    its variables tree expands a handle, while ``print`` keeps to one
    line (``mpi handle`` shows the whole view)."""
    return "gdb.dap.server" in sys.modules


def _lookup_printer(value):
    kind = _kind_of(value.type)
    if kind is None:
        return None
    if _in_dap():
        return ExpandingHandlePrinter(kind, value)
    return HandlePrinter(kind, value)


_lookup_printer.name = "mpidd"
_lookup_printer.enabled = True

MpiPrefix()
MpiQueues()
MpiHandle()
MpiWhere()
MpiJob()
if _lookup_printer not in gdb.pretty_printers:
    gdb.pretty_printers.append(_lookup_printer)
