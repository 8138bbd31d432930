/* Shared by the tests/mpich/hang_*.c programs: 4-rank MPICH jobs that hang
 * for real inside MPI calls (they never stop themselves). Each rank prints
 * "READY <rank> <pid>" just before it blocks; the test harness
 * (examples/tests/common/hung_job.rs) reads those lines and kills the job
 * when it is done. */
#ifndef HANG_COMMON_H
#define HANG_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int hang_init(int *argc, char ***argv, const char *name)
{
    int rank, size;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "%s: run with 4 ranks\n", name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return rank;
}

static void ready(int rank)
{
    printf("READY %d %ld\n", rank, (long) getpid());
    fflush(stdout);
}

#endif
