/* A chain that ends outside MPI: rank 0 never leaves compute(), its own
 * code; rank r (1..3) receives from rank r-1 before it would send to r+1.
 * compute() sleeps in its loop so that it costs no CPU; the whole loop is
 * on one line (marked HANG_LINE, which the test looks up) so that wherever
 * rank 0 is read, its location is that line. */
#include "hang_common.h"

static volatile unsigned long spins;

__attribute__((noinline)) static void compute(void)
{
    for (;;) { spins++; usleep(1000); } /* HANG_LINE */
}

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_chain");
    int value = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    if (rank == 0) {
        compute();
    } else {
        MPI_Recv(&value, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank < 3)
        MPI_Send(&value, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
