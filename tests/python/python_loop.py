"""A rank that never leaves Python code: rank 0 spins in a pure-Python loop
in compute() and never sends, so rank 1 waits in comm.recv(source=0) for
ever; ranks 2 and up wait in comm.Barrier(), which rank 0 never reaches.
The loop is one line, so wherever rank 0 is read, its Python line is the
one marked `# hang:`. Each rank prints `READY RANK PID` just before its
`# hang:` line."""

import os

from mpi4py import MPI


def compute(rank):
    x = 1
    # One write(2): the ranks' READY lines never interleave, even unbuffered.
    os.write(1, f"READY {rank} {os.getpid()}\n".encode())
    while True: x = (x * 31 + 7) % 1000003  # hang: rank 0, pure-Python loop  # noqa: E701


def wait_for_result(comm):
    os.write(1, f"READY {comm.Get_rank()} {os.getpid()}\n".encode())
    return comm.recv(source=0)  # hang: rank 1, recv from rank 0


def wait_for_all(comm):
    os.write(1, f"READY {comm.Get_rank()} {os.getpid()}\n".encode())
    comm.Barrier()  # hang: ranks 2 and up, Barrier that rank 0 never joins


if __name__ == "__main__":
    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    if rank == 0:
        compute(rank)
    elif rank == 1:
        wait_for_result(world)
    else:
        wait_for_all(world)
    world.Barrier()
