"""What the debugger modules (mpidd.gdb, mpidd.lldb) share: the MPI handle
types by their typedef names, the `mpi handle` arguments, the predefined
handles of MPICH's ABI, and how a raw handle is shown. Nothing here calls
a debugger."""

import re

# The C handle types and the kind names the crates take, by typedef name.
HANDLE_TYPES = {
    "MPI_Comm": "comm",
    "MPI_Group": "group",
    "MPI_Datatype": "datatype",
    "MPI_Errhandler": "errhandler",
    "MPI_Op": "op",
    "MPI_Info": "info",
    "MPI_Request": "request",
    "MPI_Win": "win",
    "MPI_File": "file",
}

KINDS = sorted(set(HANDLE_TYPES.values()))

HANDLE_USAGE = "mpi handle [-kind KIND] [-fortran] [-json] EXPR"

# The builtin communicators of MPICH's mpi.h (its ABI: programs carry
# these values compiled in): MPI_COMM_WORLD, MPI_COMM_SELF and the
# internal ones after them. Which is which is the view's to say.
MPICH_BUILTIN_COMMS = [0x44000000 + i for i in range(4)]
# The MPI-5 standard ABI's predefined communicators (MPI_COMM_WORLD,
# MPI_COMM_SELF), as a program linked with MPICH's mpicc_abi holds them.
ABI_BUILTIN_COMMS = [0x101, 0x102]

PREDEFINED_NAME = re.compile(r"^MPI_[A-Z0-9_]+$")


class UsageError(ValueError):
    """A command's words are off; the text says how they go."""


def handle_arguments(argument):
    """-kind KIND, -fortran, -json, then the expression (the rest of the
    line, as the debuggers' own commands take one); a trailing /f is
    -fortran. Returns (kind or None, fortran, as_json, expression)."""
    kind, fortran, as_json = None, False, False
    rest = argument.strip()
    if rest.endswith("/f"):
        fortran = True
        rest = rest[:-2].rstrip()
    while rest.startswith("-"):
        word, _, tail = rest.partition(" ")
        if word == "--":
            rest = tail.strip()
            break
        if word in ("-fortran", "--fortran"):
            fortran = True
        elif word in ("-json", "--json"):
            as_json = True
        elif word in ("-kind", "--kind"):
            kind, _, tail = tail.strip().partition(" ")
            if kind not in KINDS:
                raise UsageError("unknown kind %r: one of %s" % (kind, ", ".join(KINDS)))
        else:
            # A negative number is an expression, not an option.
            break
        rest = tail.strip()
    if not rest:
        raise UsageError("usage: " + HANDLE_USAGE)
    return kind, fortran, as_json, rest


def predefined_kind(name, kind):
    """The kind of the predefined handle `name` (MPI_COMM_WORLD), or None
    when `name` is not one whose kind is known."""
    if not PREDEFINED_NAME.match(name):
        return None
    return kind or ("comm" if name.startswith("MPI_COMM_") else None)


def find_predefined(rank, name, kind, open_mpi_address):
    """The view of the predefined handle `name` of `kind`, among the
    candidates its implementation has for it (Open MPI's global
    ompi_mpi_<name>, at `open_mpi_address` when the debugger found it;
    MPICH's builtin values, or the MPI-5 ABI's), believed only when the
    view names itself so; None when it is not found."""
    candidates = [] if open_mpi_address is None else [open_mpi_address]
    if kind == "comm":
        candidates.extend(MPICH_BUILTIN_COMMS + ABI_BUILTIN_COMMS)
    for value in candidates:
        try:
            shown = rank.handle(kind, value)
        except Exception:  # not this candidate: the next may be
            continue
        if shown["view"].get("predefined_name") == name:
            return shown
    return None


def raw(number):
    """A handle's raw value as a person reads it: 32-bit handles (MPICH's)
    as 8 hex digits, pointers (Open MPI's) whole."""
    return hex(number & 0xFFFFFFFF) if -(1 << 31) <= number < (1 << 31) else hex(number)


def where_text(reading):
    """`mpi where`'s text from Rank.call's reading: the MPI call and where
    the rank's own code made it, each peer it waits for and why, then its
    other pending operations."""
    rank = reading["rank"]
    lines = []
    call = rank.get("mpi_call")
    if call:
        line = "in %s (%s)" % (call, rank.get("call_class") or "unknown class")
    else:
        line = "in no MPI call (%s)" % rank.get("state", "unknown")
    if rank.get("location"):
        line += ", called from %s" % rank["location"]
    lines.append(line)
    for edge in reading["waits"]:
        tag = "any tag" if edge.get("tag") is None else "tag %d" % edge["tag"]
        source = " (any source)" if edge.get("any_source") else ""
        lines.append(
            "waits for rank %d: %s, %s, on %s%s"
            % (edge["to"], edge["kind"], tag, edge["communicator"], source)
        )
    if not reading["waits"]:
        queues = rank.get("basis", {}).get("queues", {})
        if queues.get("status") == "not_read":
            lines.append("waits for: not known, its queues were not read: %s" % queues.get("why", ""))
        else:
            lines.append("waits for no rank")
    return "\n".join(lines)


JOB_USAGE = "mpi job [-json] [-cores DIR | -launcher PID]"


def job_arguments(words):
    """-json, then -cores DIR or -launcher PID. Returns (as_json, cores or
    None, launcher pid or None)."""
    as_json, cores, launcher = False, None, None
    words = list(words)
    while words:
        word = words.pop(0)
        if word in ("-json", "--json"):
            as_json = True
        elif word in ("-cores", "--cores") and words:
            cores = words.pop(0)
        elif word in ("-launcher", "--launcher") and words:
            try:
                launcher = int(words.pop(0))
            except ValueError:
                raise UsageError("usage: " + JOB_USAGE) from None
        else:
            raise UsageError("usage: " + JOB_USAGE)
    if cores is not None and launcher is not None:
        raise UsageError("usage: " + JOB_USAGE)
    return as_json, cores, launcher


def parent_pid(pid):
    """The parent of process `pid` (its launcher, or the launcher's agent
    on this node, behind which mpidd finds the other ranks), or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: the fields after
    # it follow the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


def job_text(reading):
    """`mpi job`'s text: the verdict, one line each."""
    return "\n".join(reading["verdict"])


def _member_value(text):
    """A member's value as its type reads: an integer, a boolean, else the
    text itself."""
    if re.match(r"^-?[0-9]+$", text):
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    return text


def view_members(text):
    """The members of a handle view, from its text (``mpi handle``'s), as
    (name, value) pairs for a debugger's children: what is particular to
    its kind first (the ``details:`` lines: name, size, rank, ...), then
    what every handle has (state, reference count, ...). A name is the
    text's, words joined by ``_``; a value is an int, a bool or the text
    (a list is its items, in brackets). The kind, said by the handle's
    type, is left out."""
    details, common = [], []
    into = common
    for line in text.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        if indent == 0 and body == "details:":
            into = details
            continue
        if indent == 0:
            into = common
        elif indent > 2 or body.startswith("- "):
            # An item of the member above (a list, one item a line).
            if into:
                name, value = into[-1]
                item = body[2:] if body.startswith("- ") else body
                items = value[1:-1] + ", " if value not in ("", "[]") else ""
                into[-1] = (name, "[" + items + item + "]")
            continue
        name, sep, value = body.partition(":")
        if not sep:
            continue
        name = name.strip().replace(" ", "_")
        if name == "kind":
            continue
        into.append((name, _member_value(value.strip())))
    return details + common
