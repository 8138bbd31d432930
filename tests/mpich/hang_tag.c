/* A tag mismatch: rank 0 sends 4 bytes with tag 1 to rank 1 (eager, so the
 * send completes) and goes on to MPI_Barrier; rank 1 waits for tag 2 from
 * rank 0, so the tag-1 message stays unexpected at rank 1; ranks 2 and 3
 * wait in MPI_Barrier. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_tag");
    int word = 42;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Send(&word, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
        ready(rank);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (rank == 1) {
        ready(rank);
        MPI_Recv(&word, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        ready(rank);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
