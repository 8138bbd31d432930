"""A ring deadlock: every rank receives from its left neighbour before it
sends to its right one, so every rank waits in comm.recv and no message is
ever sent. Each rank prints `READY RANK PID` just before the line marked
`# hang:`, the line all of them block on."""

import os

from mpi4py import MPI


def pass_token(comm):
    rank, size = comm.Get_rank(), comm.Get_size()
    # One write(2): the ranks' READY lines never interleave, even unbuffered.
    os.write(1, f"READY {rank} {os.getpid()}\n".encode())
    token = comm.recv(source=(rank - 1) % size)  # hang: every rank, recv from its left neighbour
    comm.send(token, dest=(rank + 1) % size)


if __name__ == "__main__":
    pass_token(MPI.COMM_WORLD)
