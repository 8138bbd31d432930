/* A rank on its way out while the others wait for it in a collective:
 * rank 3 returns from main without MPI_Finalize, and the exit handler it
 * registered keeps it in exit() (as a slow atexit handler or a flush
 * would); ranks 0, 1 and 2 wait in MPI_Barrier for it. Its process has
 * not ended, so the launcher does not tear the job down. */
#include "hang_common.h"

static int my_rank = -1;

static void linger(void)
{
    ready(my_rank);
    for (;;)
        pause(); /* LINGER_LINE */
}

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_exit");
    my_rank = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 3) {
        atexit(linger);
        return 0;
    }
    ready(rank);
    MPI_Barrier(MPI_COMM_WORLD); /* BARRIER_LINE */
    MPI_Finalize();
    return 0;
}
