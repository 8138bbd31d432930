/* Collectives that do not match: ranks 0, 2 and 3 wait in MPI_Bcast for
 * rank 1's data (rank 1 is the root), while rank 1 is in MPI_Reduce as its
 * root, waiting for contributions the others never send. No message
 * moves: every rank waits for ever. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_mismatch");
    int word = rank, sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    if (rank == 1)
        MPI_Reduce(&word, &sum, 1, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD); /* REDUCE_LINE */
    else
        MPI_Bcast(&word, 1, MPI_INT, 1, MPI_COMM_WORLD); /* BCAST_LINE */
    MPI_Finalize();
    return 0;
}
