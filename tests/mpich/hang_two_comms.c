/* One collective on two communicators: ranks 0 and 2 enter MPI_Barrier on
 * MPI_COMM_WORLD, ranks 1 and 3 enter it on a duplicate named "solver".
 * Neither barrier gets all four ranks: every rank waits for ever, each in
 * the same call. Where the MPI library's queues show its collective
 * traffic (Open MPI's barrier is point-to-point with a negative tag), the
 * communicators tell the two barriers apart. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_two_comms");
    MPI_Comm solver;
    MPI_Comm_dup(MPI_COMM_WORLD, &solver);
    MPI_Comm_set_name(solver, "solver");
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    if (rank % 2 == 0)
        MPI_Barrier(MPI_COMM_WORLD); /* WORLD_LINE */
    else
        MPI_Barrier(solver); /* SOLVER_LINE */
    MPI_Finalize();
    return 0;
}
