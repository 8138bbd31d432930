/* Nonblocking collectives that do not match: on each pair's communicator
 * ({0,1} and {2,3}) the even rank starts an MPI_Ibcast whose root is the
 * odd rank, while the odd ranks start an MPI_Ireduce on MPI_COMM_WORLD to
 * rank 0 instead, and every rank waits in MPI_Wait. The broadcasts' roots
 * never enter their broadcast, so ranks 0 and 2 wait for ever. The odd
 * ranks' reduce may complete (a contribution that is not the root's can
 * leave at once) and then they wait in MPI_Finalize for ranks 0 and 2; or
 * it does not, and they stay in MPI_Wait. Either way every rank is
 * blocked in MPI and nothing can release any of them. */
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
    MPI_Finalize(); /* HANG_LINE */
    return 0;
}
