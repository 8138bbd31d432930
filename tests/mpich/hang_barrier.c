/* A barrier against a receive whose send follows the barrier: rank 1
 * waits in MPI_Recv from rank 0, while rank 0 (and ranks 2 and 3) are in
 * MPI_Barrier, after which rank 0 would send. Rank 0 waits for rank 1 to
 * enter the barrier, rank 1 waits for rank 0's message: a cycle through a
 * collective. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_barrier");
    int word = 7;
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    if (rank == 1) {
        MPI_Recv(&word, 1, MPI_INT, 0, 71, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* HANG_LINE */
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Barrier(MPI_COMM_WORLD); /* HANG_LINE */
        if (rank == 0)
            MPI_Send(&word, 1, MPI_INT, 1, 71, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
