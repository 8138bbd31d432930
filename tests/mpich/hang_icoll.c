/* Nonblocking collectives that do not match: ranks 0 and 1 start an
 * MPI_Ibcast on a communicator of the two of them while ranks 2 and 3 do
 * the same on theirs, then ranks 0 and 2 wait on theirs while ranks 1 and
 * 3 first wait in MPI_Ireduce on MPI_COMM_WORLD, which ranks 0 and 2 never
 * start. The broadcasts' roots (1 and 3) never enter their broadcast, so
 * every rank is blocked in MPI_Wait and nothing can complete. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_icoll");
    MPI_Comm pair;
    MPI_Request request;
    int word = rank, sum = 0;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank % 2 == 0) {
        /* The root, local rank 1, is in the reduce below instead. */
        MPI_Ibcast(&word, 1, MPI_INT, 1, pair, &request);
    } else {
        MPI_Ireduce(&word, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &request);
    }
    ready(rank);
    MPI_Wait(&request, MPI_STATUS_IGNORE); /* HANG_LINE */
    MPI_Finalize();
    return 0;
}
