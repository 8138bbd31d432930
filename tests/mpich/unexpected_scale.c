/* N messages that no receive matches, waiting at rank 0 (plain MPI: built
 * for MPICH and Open MPI alike).
 *
 *   unexpected_scale N
 *
 * Run with 2 or more ranks. Rank 1 sends rank 0 N one-int messages on
 * MPI_COMM_WORLD with tags 2000.., blocking sends small enough for the
 * eager protocol, so they complete at rank 1 and wait at rank 0 as
 * unexpected messages. The barrier that follows reaches rank 0 after them
 * on the same channel, so once rank 0 has left it, its MPI (or UCX under
 * it) has taken in all N. Then each rank prints "READY <rank> <pid>" and
 * stops itself with SIGSTOP. When continued, rank 0 receives the N
 * messages and every rank finalizes.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc == 2 ? atoi(argv[1]) : 0;
    if (size < 2 || n <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 unexpected_scale N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int value = 7;
    if (rank == 1) {
        for (int i = 0; i < n; i++)
            MPI_Send(&value, 1, MPI_INT, 0, 2000 + i, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("READY %d %ld\n", rank, (long) getpid());
    fflush(stdout);
    raise(SIGSTOP);
    if (rank == 0) {
        for (int i = 0; i < n; i++)
            MPI_Recv(&value, 1, MPI_INT, 1, 2000 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
