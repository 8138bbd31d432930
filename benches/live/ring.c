/* An N-rank ring deadlock for the live-job benchmark
 * (scripts/bench-live-job.sh): every rank receives from its left neighbour
 * before it sends to its right one, so no receive is ever matched. Each
 * rank prints "READY <rank> <pid>" just before it blocks. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, in = 0, out;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    out = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    printf("READY %d %ld\n", rank, (long) getpid());
    fflush(stdout);
    MPI_Recv(&in, 1, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&out, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
