"""mpidd.Rank over callables that misbehave, as a debugger's may: each
failure must come back as one MpiddError with the reason, never a crash
or another exception. Run with the module's install directory first on
sys.path (examples/tests/gdb_module.rs runs it with the system's python3):

    python3 rank_callbacks.py SITE LIBMPI

LIBMPI is an MPI library file (the reference MPICH's libmpi.so.12): what
the crates find first in it is read through the misbehaving readers.
"""

import sys

sys.path.insert(0, sys.argv[1])

from mpidd import MpiddError, Rank  # noqa: E402

# A real object file with no MPI in it: the crates read its symbols and
# find no MPI library.
EXECUTABLE = sys.executable
LIBMPI = sys.argv[2]


def objects():
    return [(EXECUTABLE, EXECUTABLE, 0)]


def nothing_readable(address, size):
    return None


def raises(address, size):
    raise RuntimeError("the debugger lost the process")


def expect_error(call, *words):
    try:
        call()
    except MpiddError as e:
        text = str(e)
        assert "\n" not in text.strip(), "one line: %r" % text
        for w in words:
            assert w in text, "%r not in %r" % (w, text)
        return text
    raise AssertionError("no MpiddError from %r" % call)


checks = []


def check(f):
    checks.append(f)
    return f


@check
def no_mpi_library_is_a_refusal_naming_what_is_missing():
    rank = Rank(nothing_readable, objects)
    expect_error(rank.queues)
    expect_error(lambda: rank.handle("comm", 0x44000000))


@check
def a_reader_that_raises_is_an_error_not_a_crash():
    rank = Rank(raises, objects)
    expect_error(rank.queues)
    expect_error(lambda: rank.handle("comm", 0x44000000))


def with_libmpi():
    return [(LIBMPI, LIBMPI, 0x7F0000000000)]


@check
def a_reader_that_raises_in_a_read_is_named_in_the_error():
    expect_error(Rank(raises, with_libmpi).queues, "the debugger lost the process")
    expect_error(
        lambda: Rank(raises, with_libmpi).handle("comm", 0x44000000),
        "the debugger lost the process",
    )


@check
def a_reader_that_returns_no_bytes_is_an_error():
    expect_error(Rank(lambda a, n: 42, with_libmpi).queues, "neither bytes nor a buffer")


@check
def unreadable_memory_is_a_refusal():
    expect_error(Rank(nothing_readable, with_libmpi).queues)


@check
def a_bad_object_list_is_named():
    expect_error(Rank(nothing_readable, lambda: [("only a name",)]).queues, "(name, path, bias)")
    expect_error(Rank(nothing_readable, lambda: 42).queues)

    def boom():
        raise ValueError("no objects today")

    try:
        Rank(nothing_readable, boom).queues()
    except ValueError as e:
        # The caller's own exception comes back as it is.
        assert "no objects today" in str(e)
    else:
        raise AssertionError("objects() raised, and nothing came back")


@check
def an_unreadable_object_file_is_passed_over_and_named():
    rank = Rank(nothing_readable, lambda: [("/nonexistent/libmpi.so.12", "/nonexistent/libmpi.so.12", 0)])
    expect_error(rank.queues, "/nonexistent/libmpi.so.12")
    assert rank.objects_read()["unreadable"], rank.objects_read()


@check
def a_reader_calling_back_into_its_rank_is_refused():
    holder = {}

    def reentrant(address, size):
        holder["rank"].queues()
        return None

    rank = Rank(reentrant, objects)
    holder["rank"] = rank
    try:
        rank.queues()
    except MpiddError:
        pass


@check
def bad_arguments_are_errors():
    rank = Rank(nothing_readable, objects)
    expect_error(lambda: rank.handle("communicator", 1), "unknown handle kind")
    expect_error(lambda: rank.handle("status", 1), "unknown handle kind")
    expect_error(lambda: Rank(nothing_readable, objects, address_bytes=3), "4 or 8")
    rank.clear_cache()
    stats = rank.cache_stats()
    assert stats == {"hits": 0, "fetches": 0, "pages": 0, "unreadable": 0}, stats


failed = 0
for f in checks:
    try:
        f()
        print("ok", f.__name__)
    except Exception as e:  # report every check, then fail
        failed += 1
        print("FAILED", f.__name__, type(e).__name__, e)
print("%d passed, %d failed" % (len(checks) - failed, failed))
sys.exit(1 if failed else 0)
