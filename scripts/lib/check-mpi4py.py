"""Fails unless this Python's mpi4py runs on the MPI library whose version
text holds WANT, loaded from under PREFIX (a wheel's own MPICH, not the
system's, or the reverse).

    python check-mpi4py.py WANT PREFIX
"""

import sys

from mpi4py import MPI

want, prefix = sys.argv[1], sys.argv[2]
text = MPI.Get_library_version()
if want not in text:
    sys.exit(f"error: mpi4py runs on {text.splitlines()[0]!r}, not {want!r}")
with open("/proc/self/maps") as maps:
    libs = {line.split()[-1] for line in maps if "/libmpi" in line}
if not any(path.startswith(prefix) for path in libs):
    sys.exit(f"error: mpi4py loaded {sorted(libs)}, none under {prefix}")
