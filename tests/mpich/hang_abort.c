/* A rank in MPI_Abort while the others wait for it in a collective: rank 2
 * calls MPI_Abort; ranks 0, 1 and 3 wait in MPI_Allreduce, which cannot
 * complete without rank 2's contribution. An MPI tears the job down at
 * once, unless told to keep the aborting rank there (Open MPI's
 * mpi_abort_delay of -1), as a user does to look at it. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_abort");
    int word = rank, sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    if (rank == 2)
        MPI_Abort(MPI_COMM_WORLD, 3); /* ABORT_LINE */
    MPI_Allreduce(&word, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* ALLREDUCE_LINE */
    MPI_Finalize();
    return 0;
}
