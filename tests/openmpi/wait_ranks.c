/*
 * wait_ranks: tiny MPI test fixture.
 *
 * Usage: wait_ranks RELEASE_FILE [MAX_SECONDS]
 *
 * Calls MPI_Init, prints one line "RANK <rank> SIZE <size> PID <pid> HOST <host>"
 * to stdout (flushed), then waits until RELEASE_FILE exists or MAX_SECONDS
 * (default 120) elapse, whichever comes first, then MPI_Barrier, MPI_Finalize
 * and exit 0.  Exits 2 on bad usage.  A timeout is not an error (exit 0) but is
 * reported on stderr so a hung test still terminates.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <time.h>

int main(int argc, char **argv)
{
    int rank = -1, size = -1, len = 0;
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    const char *release;
    long max_s = 120;
    struct timespec t0, now;

    MPI_Init(&argc, &argv);
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s RELEASE_FILE [MAX_SECONDS]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    release = argv[1];
    if (argc == 3)
        max_s = strtol(argv[2], NULL, 10);

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    printf("RANK %d SIZE %d PID %ld HOST %s\n", rank, size, (long)getpid(), host);
    fflush(stdout);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (access(release, F_OK) == 0)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= max_s) {
            fprintf(stderr, "wait_ranks rank %d: timeout after %ld s, finishing\n", rank, max_s);
            break;
        }
        usleep(50 * 1000);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
