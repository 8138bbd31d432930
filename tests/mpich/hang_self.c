/* A receive from the rank itself: rank 0 waits in MPI_Recv for a message
 * from rank 0, which only it could send; rank 1 waits in MPI_Recv from rank
 * 0; ranks 2 and 3 are in MPI_Barrier, which ranks 0 and 1 never reach.
 * Rank 0 is a cycle of one, and the others wait on it. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_self");
    int word = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    if (rank < 2)
        MPI_Recv(&word, 1, MPI_INT, 0, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* HANG_LINE */
    MPI_Barrier(MPI_COMM_WORLD); /* HANG_LINE */
    MPI_Finalize();
    return 0;
}
