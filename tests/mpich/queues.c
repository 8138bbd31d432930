/* A 4-rank MPICH job that stops itself with known message queues.
 *
 * Every rank creates a duplicate of MPI_COMM_WORLD named "mpidd_dup" and a
 * split by rank parity named "mpidd_split_even" / "mpidd_split_odd". Then:
 *
 *   rank 0 posts three receives that nothing will match before the stop:
 *     WORLD  source 1, tag 11, 10 ints
 *     dup    MPI_ANY_SOURCE, tag 22, 20 ints
 *     split  source 1 (world rank 2), MPI_ANY_TAG, 30 ints
 *   rank 1 sends rank 0 two messages no receive matches (unexpected there):
 *     WORLD  MPI_Send,  tag 99, 5 ints
 *     dup    MPI_Isend, tag 44, 3 ints (also a pending send at rank 1)
 *   rank 2 starts a send of BIG_COUNT ints to rank 3, tag 33, too large for
 *     the eager protocol, so it stays pending at rank 2 and shows up as
 *     unexpected at rank 3.
 *
 * After a barrier each rank prints "READY <rank> <pid>" and stops itself
 * with SIGSTOP. When continued, it completes everything and finalizes.
 * With an argument "scale N", rank 0 instead posts N receives with tags
 * 1000.. from rank 1 on WORLD and the others post nothing. With an
 * argument "issend", rank 1's MPI_Isend and rank 2's are MPI_Issend: each
 * then waits for its match (rank 1's small one after its data is sent).
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIG_COUNT (1 << 18)

static void ready(int rank)
{
    printf("READY %d %ld\n", rank, (long) getpid());
    fflush(stdout);
    raise(SIGSTOP);
}

static int scale(int rank, int n)
{
    int *bufs = NULL;
    MPI_Request *reqs = NULL;
    if (rank == 0) {
        bufs = calloc((size_t) n, sizeof(int));
        reqs = calloc((size_t) n, sizeof(MPI_Request));
        if (!bufs || !reqs)
            return 1;
        for (int i = 0; i < n; i++)
            MPI_Irecv(&bufs[i], 1, MPI_INT, 1, 1000 + i, MPI_COMM_WORLD, &reqs[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    if (rank == 0) {
        for (int i = 0; i < n; i++) {
            MPI_Cancel(&reqs[i]);
            MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
        }
    }
    free(bufs);
    free(reqs);
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "queues: run with 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc == 3 && strcmp(argv[1], "scale") == 0) {
        int rc = scale(rank, atoi(argv[2]));
        MPI_Finalize();
        return rc;
    }

    int (*isend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) =
        argc == 2 && strcmp(argv[1], "issend") == 0 ? MPI_Issend : MPI_Isend;
    MPI_Comm dup, split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "mpidd_dup");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
    MPI_Comm_set_name(split, rank % 2 ? "mpidd_split_odd" : "mpidd_split_even");

    static int r11[10], r22[20], r33[30], s44[3], s99[5];
    static int big[BIG_COUNT];
    MPI_Request recvs[3], send44 = MPI_REQUEST_NULL, sendbig = MPI_REQUEST_NULL;

    if (rank == 0) {
        MPI_Irecv(r11, 10, MPI_INT, 1, 11, MPI_COMM_WORLD, &recvs[0]);
        MPI_Irecv(r22, 20, MPI_INT, MPI_ANY_SOURCE, 22, dup, &recvs[1]);
        MPI_Irecv(r33, 30, MPI_INT, 1, MPI_ANY_TAG, split, &recvs[2]);
    } else if (rank == 1) {
        MPI_Send(s99, 5, MPI_INT, 0, 99, MPI_COMM_WORLD);
        isend(s44, 3, MPI_INT, 0, 44, dup, &send44);
    } else if (rank == 2) {
        isend(big, BIG_COUNT, MPI_INT, 3, 33, MPI_COMM_WORLD, &sendbig);
    }
    /* The barrier alone does not order these messages before the stop (a
     * dissemination barrier need not hear from every rank), so the
     * receivers probe for them: a probe leaves the message unexpected. */
    if (rank == 0) {
        MPI_Probe(1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Probe(1, 44, dup, MPI_STATUS_IGNORE);
    } else if (rank == 3) {
        MPI_Probe(2, 33, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);

    if (rank == 0) {
        MPI_Recv(s99, 5, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(s44, 3, MPI_INT, 1, 44, dup, MPI_STATUS_IGNORE);
        for (int i = 0; i < 3; i++) {
            MPI_Cancel(&recvs[i]);
            MPI_Wait(&recvs[i], MPI_STATUS_IGNORE);
        }
    } else if (rank == 1) {
        MPI_Wait(&send44, MPI_STATUS_IGNORE);
    } else if (rank == 2) {
        MPI_Wait(&sendbig, MPI_STATUS_IGNORE);
    } else if (rank == 3) {
        MPI_Recv(big, BIG_COUNT, MPI_INT, 2, 33, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
