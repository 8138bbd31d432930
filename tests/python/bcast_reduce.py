"""Mismatched collectives: rank 1 calls comm.reduce while every other rank
calls comm.bcast from root 0. Rank 0's broadcast waits for rank 1 to join
it, rank 1's reduction waits for the others: neither can finish. Each rank
prints `READY RANK PID` just before its `# hang:` line."""

import os

from mpi4py import MPI


def share_config(comm):
    config = {"steps": 10} if comm.Get_rank() == 0 else None
    # One write(2): the ranks' READY lines never interleave, even unbuffered.
    os.write(1, f"READY {comm.Get_rank()} {os.getpid()}\n".encode())
    return comm.bcast(config, root=0)  # hang: ranks other than 1, bcast from root 0


def sum_norms(comm):
    os.write(1, f"READY {comm.Get_rank()} {os.getpid()}\n".encode())
    return comm.reduce(1.0, op=MPI.SUM, root=0)  # hang: rank 1, reduce to root 0


if __name__ == "__main__":
    world = MPI.COMM_WORLD
    if world.Get_rank() == 1:
        sum_norms(world)
    else:
        share_config(world)
