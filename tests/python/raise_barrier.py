"""One rank fails while the others wait for it: rank 1 raises
ValueError("bad input on rank 1") three calls deep, in parse_record(),
while every other rank waits in comm.Barrier() (the line marked
`# hang: ranks other than 1`), which rank 1 never reaches.

What rank 1 does then is the first argument:

- `hold` (the default): main() catches the error, prints its traceback and
  waits there for someone to attach a debugger, as codes that run at scale
  often do so that the failing rank can be looked at while it still holds
  its state. Rank 1 stays inside the `except` block, so the ValueError is
  the exception being handled by its thread, and it sleeps on the line
  marked `# hang: rank 1 (hold)`.
- `uncaught`: nothing catches it. Python prints the traceback and starts
  to exit, and its exit runs mpi4py's MPI_Finalize (an atexit handler),
  which waits for the other ranks: rank 1 hangs in MPI_Finalize with no
  Python frame left, the traceback on its stderr, the others in the
  barrier. This is the hang people meet when a script run as
  `python script.py` fails on one rank. (Run as `python -m mpi4py
  script.py`, mpi4py would call MPI_Abort instead and end the job; a rank
  that leaves without MPI_Finalize, by os._exit, makes the launcher kill
  every rank, with MPICH's hydra as with Open MPI's mpirun: a job cannot
  be left waiting on a rank that has exited.) Rank 1 prints READY just
  before it raises, on the line marked `# raise: rank 1`.

Each rank prints `READY RANK PID` just before its `# hang:` line (rank 1 in
`uncaught` mode: before its `# raise:` line).
"""

import os
import sys
import time
import traceback

from mpi4py import MPI

MODE = sys.argv[1] if len(sys.argv) > 1 else "hold"


def parse_record(rank, text):
    if text.startswith("bad"):
        if MODE == "uncaught":
            # One write(2): the ranks' READY lines never interleave, even unbuffered.
            os.write(1, f"READY {rank} {os.getpid()}\n".encode())
        raise ValueError(f"bad input on rank {rank}")  # raise: rank 1, three calls below main()
    return len(text)


def load_inputs(rank):
    record = "bad record" if rank == 1 else "good record"
    return [parse_record(rank, record)]


def prepare_step(rank):
    return sum(load_inputs(rank))


def wait_for_debugger(rank):
    os.write(1, f"READY {rank} {os.getpid()}\n".encode())
    while True:
        time.sleep(3600)  # hang: rank 1 (hold), sleeps in the except block of main()


def main():
    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    if rank != 1:
        os.write(1, f"READY {rank} {os.getpid()}\n".encode())
        world.Barrier()  # hang: ranks other than 1, Barrier that rank 1 never joins
        return
    if MODE == "uncaught":
        prepare_step(rank)
        return
    try:
        prepare_step(rank)
    except ValueError:
        traceback.print_exc()
        sys.stderr.flush()
        wait_for_debugger(rank)


if __name__ == "__main__":
    main()
