/* print_rank.c: each rank prints "rank R pid P", waits at a barrier and
 * exits 0. mpidd launch tests compare the MPIR table with these lines. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("rank %d pid %d\n", rank, (int)getpid());
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
