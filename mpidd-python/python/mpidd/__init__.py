"""mpidd: what MPI libraries keep in a process, read the way a debugger
sees it, from inside the debugger.

``mpidd.Rank`` reads one MPI process through the caller's own functions
(a memory reader and the list of loaded objects); ``mpidd.gdb`` puts it
into gdb (``python import mpidd.gdb`` in ~/.gdbinit): the commands
``mpi queues`` and ``mpi handle``, and pretty-printers for the MPI handle
types; ``mpidd.lldb`` does the same in lldb (``command script import
mpidd.lldb`` in ~/.lldbinit), with summaries for the handle types.
"""

from mpidd._native import MpiddError, Rank, section_bias, __version__

__all__ = ["MpiddError", "Rank", "section_bias", "__version__"]
