/* Each rank prints "IDENTITY RANK NAMESPACE SIZE" (the PMIx namespace its
 * launcher set, "-" when none, and MPI_COMM_WORLD's size), then "READY
 * RANK PID HOST EXE" (EXE: what /proc/self/exe leads to), and then waits
 * forever in MPI_Recv from the next rank, which never sends: a job that
 * stays up, each rank blocked in MPI, for examples/tests/pmix_procs.rs to
 * compare with what its launcher's PMIx server reports, and for
 * examples/tests/pmix_cores.rs to compare with what its cores say. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank, size, buf = 0;
    char host[256] = "", exe[PATH_MAX] = "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gethostname(host, sizeof host - 1);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0)
        exe[n] = '\0';
    const char *ns = getenv("PMIX_NAMESPACE");
    printf("IDENTITY %d %s %d\n", rank, ns ? ns : "-", size);
    printf("READY %d %d %s %s\n", rank, (int)getpid(), host, exe);
    fflush(stdout);
    MPI_Recv(&buf, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
