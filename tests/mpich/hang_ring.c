/* A ring deadlock: every rank receives from its left neighbour (r-1 mod 4),
 * tag 0, before it sends to its right one. No receive is ever matched, so
 * the wait-for graph is the cycle 0 -> 3 -> 2 -> 1 -> 0. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_ring");
    int left = (rank + 3) % 4, right = (rank + 1) % 4;
    int in = 0, out = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    MPI_Recv(&in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* HANG_LINE */
    MPI_Send(&out, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
