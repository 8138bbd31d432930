/* Completion calls over receives that never match: every rank posts two
 * receives, from its left and from its right neighbour, that no rank ever
 * sends for. Ranks 0 and 1 wait in MPI_Waitany (one would do), ranks 2 and
 * 3 in MPI_Waitall (both are needed). */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_waitany");
    int left = (rank + 3) % 4, right = (rank + 1) % 4;
    int a = 0, b = 0, which;
    MPI_Request requests[2];
    MPI_Status statuses[2];
    MPI_Irecv(&a, 1, MPI_INT, left, 21, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(&b, 1, MPI_INT, right, 22, MPI_COMM_WORLD, &requests[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    if (rank < 2)
        MPI_Waitany(2, requests, &which, MPI_STATUS_IGNORE); /* HANG_LINE */
    else
        MPI_Waitall(2, requests, statuses); /* HANG_LINE */
    MPI_Finalize();
    return 0;
}
