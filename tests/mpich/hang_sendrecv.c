/* MPI_Sendrecv in a ring that is wired the wrong way: every rank sends 4
 * bytes with tag 31 to its right neighbour and receives with tag 31 from
 * its right neighbour too. The sends are eager and complete; the receives
 * wait for a message the right neighbour sends to its own right. Each rank
 * waits on the next: one cycle 0 -> 1 -> 2 -> 3 -> 0, and at each rank the
 * left neighbour's message waits unexpected. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_sendrecv");
    int right = (rank + 1) % 4;
    int out = rank, in = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    /* One line, so that the call has one line to be found at. */
    MPI_Sendrecv(&out, 1, MPI_INT, right, 31, &in, 1, MPI_INT, right, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* HANG_LINE */
    MPI_Finalize();
    return 0;
}
