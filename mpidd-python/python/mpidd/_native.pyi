"""Type hints of the compiled part of mpidd (mpidd-python's Rust crate)."""

from typing import Any, Callable, Dict, Iterable, Optional, Tuple, Union

__version__: str

class MpiddError(Exception):
    """A rank's queues or a handle could not be read; the text is the
    crates' reason, naming what is missing."""

ReadMemory = Callable[[int, int], Optional[Union[bytes, bytearray, memoryview]]]
"""read_memory(address, size): the bytes at address (fewer, or None, where
memory cannot be read); an exception is a failure of the debugger."""

ListObjects = Callable[[], Iterable[Tuple[str, str, int]]]
"""objects(): the loaded objects as (name, path, bias), the executable
first; bias is run-time minus link-time address."""

class Rank:
    """One MPI process read through the caller's functions. Pages read are
    kept until clear_cache(), which the caller calls at each stop."""

    def __init__(
        self,
        read_memory: ReadMemory,
        objects: ListObjects,
        address_bytes: int = 8,
        little_endian: bool = True,
    ) -> None: ...
    def clear_cache(self) -> None:
        """Forgets the pages read (at each stop, after any write)."""
    def cache_stats(self) -> Dict[str, int]:
        """hits, fetches, pages and unreadable pages since the last clear."""
    def queues(self, model: bool = True) -> Dict[str, Any]:
        """{"queues": the model as Python values (left out when model is
        False), "json": the model as `mpidd queues --json` prints it,
        "provenance": one line, "text": as `mpidd queues` prints it}."""
    def handle(self, kind: str, value: int, fortran: bool = False) -> Dict[str, Any]:
        """{"view": the model as `mpidd handle --json` prints it, "text": as
        `mpidd handle` prints it, "summary": one line}. kind is comm, group,
        datatype, errhandler, op, info, request, win or file."""
    def call(
        self,
        threads: Iterable[Tuple[int, int, int, int, Optional[int]]],
        arch: str = "x86_64",
    ) -> Dict[str, Any]:
        """What the rank is doing, from its threads (tid, pc, sp, fp, lr),
        the selected one first (lr on aarch64, else None), and its queues:
        {"rank": the rank as `mpidd job --json` reports it, "waits": the
        wait-for edges from it, "verdict": the verdict over it alone}."""
    def objects_read(self) -> Dict[str, Any]:
        """{"objects": [(name, path, bias)], "unreadable": [reason]}."""

def section_bias(path: str, section: str, address: int) -> int:
    """The load bias of the object file at path whose section the process
    has at address."""
