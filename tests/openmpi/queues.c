/* A 4-rank Open MPI job that stops itself with known message queues, and
 * writes down what each rank posted and what reached it unexpectedly, in
 * DIR/posted.RANK (DIR is the first argument), one line per operation:
 *
 *   recv COMM SOURCE TAG BYTES BUFFER REQUEST   a posted receive (SOURCE/TAG
 *                                              -1: any)
 *   send COMM DEST TAG BYTES BUFFER PROTOCOL STATE REQUEST SYNC
 *   unexpected COMM SOURCE TAG BYTES PROTOCOL SYNC
 *
 * REQUEST is the MPI_Request (a pointer in Open MPI); SYNC says whether
 * the send was synchronous. PROTOCOL and STATE are what ob1 does; the UCX
 * PML's tests derive their own from the sizes (see their comments).
 * COMM is the communicator's name. Every rank creates a duplicate of
 * MPI_COMM_WORLD named "mpidd_dup" and a split by rank parity named
 * "mpidd_split_even" / "mpidd_split_odd". Then:
 *
 *   rank 0 posts three receives that nothing will match before the stop:
 *     WORLD  source 1, tag 11, 10 ints
 *     dup    MPI_ANY_SOURCE, tag 22, 20 ints
 *     split  source 1 (world rank 2), MPI_ANY_TAG, 30 ints
 *   rank 1 sends rank 0 two messages no receive matches (unexpected there):
 *     WORLD  MPI_Send, tag 99, 5 ints (so small that ob1 sends it inline,
 *            with no request: nothing pending at rank 1)
 *     dup    MPI_Isend, tag 44, MID_COUNT ints: eager, complete at once, and
 *            not waited for before the stop (a pending send at rank 1)
 *   rank 2 starts a send of BIG_COUNT ints to rank 3, tag 33, too large for
 *     the eager protocol: a pending rendezvous send at rank 2, unexpected
 *     at rank 3.
 *   rank 3 starts a synchronous send (MPI_Issend) of 4 ints to rank 2 on
 *     dup, tag 55: pending at rank 3 until matched, unexpected at rank 2.
 *
 * The receivers probe for the messages they expect (a probe leaves the
 * message unexpected) and write down what the probe saw. After a barrier
 * each rank prints "READY <rank> <pid> <MPI_COMM_WORLD>" (the handle, a
 * pointer) and stops itself with SIGSTOP. When continued, it completes
 * everything and finalizes.
 *
 * With the arguments "scale N" instead of a directory, rank 0 posts N
 * receives of one int from rank 1 on MPI_COMM_WORLD, tags 1000.., that
 * nothing matches, the others post nothing, and every rank stops as above
 * (for the benchmarks: scripts/bench-ompi-queues.sh).
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MID_COUNT 500
#define BIG_COUNT (1 << 18)

static FILE *posted;

static const char *name_of(MPI_Comm comm)
{
    static char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(comm, name, &len);
    return name;
}

static void irecv(void *buf, int count, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    MPI_Irecv(buf, count, MPI_INT, source, tag, comm, req);
    fprintf(posted, "recv %s %d %d %zu %p %p\n", name_of(comm), source, tag,
            count * sizeof(int), buf, (void *) *req);
}

static void sent(const void *buf, int count, int dest, int tag, MPI_Comm comm,
                 const char *protocol, const char *state, MPI_Request req, const char *sync)
{
    fprintf(posted, "send %s %d %d %zu %p %s %s %p %s\n", name_of(comm), dest, tag,
            count * sizeof(int), buf, protocol, state, (void *) req, sync);
}

static void probe(int source, int tag, MPI_Comm comm, const char *protocol, const char *sync)
{
    MPI_Status st;
    int bytes;
    MPI_Probe(source, tag, comm, &st);
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    fprintf(posted, "unexpected %s %d %d %d %s %s\n", name_of(comm), st.MPI_SOURCE,
            st.MPI_TAG, bytes, protocol, sync);
}

static void ready(int rank)
{
    printf("READY %d %ld %p\n", rank, (long) getpid(), (void *) MPI_COMM_WORLD);
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
    if (size == 4 && argc == 3 && strcmp(argv[1], "scale") == 0) {
        int rc = scale(rank, atoi(argv[2]));
        MPI_Finalize();
        return rc;
    }
    if (size != 4 || argc != 2) {
        if (rank == 0)
            fprintf(stderr, "queues: run with 4 ranks and a directory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/posted.%d", argv[1], rank);
    posted = fopen(path, "w");
    if (!posted)
        MPI_Abort(MPI_COMM_WORLD, 3);

    MPI_Comm dup, split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "mpidd_dup");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
    MPI_Comm_set_name(split, rank % 2 ? "mpidd_split_odd" : "mpidd_split_even");

    static int r11[10], r22[20], r33[30], s44[MID_COUNT], s99[5], s55[4];
    static int big[BIG_COUNT];
    MPI_Request recvs[3], send44 = MPI_REQUEST_NULL, sendbig = MPI_REQUEST_NULL,
                send55 = MPI_REQUEST_NULL;

    if (rank == 0) {
        irecv(r11, 10, 1, 11, MPI_COMM_WORLD, &recvs[0]);
        irecv(r22, 20, MPI_ANY_SOURCE, 22, dup, &recvs[1]);
        irecv(r33, 30, 1, MPI_ANY_TAG, split, &recvs[2]);
    } else if (rank == 1) {
        MPI_Send(s99, 5, MPI_INT, 0, 99, MPI_COMM_WORLD);
        MPI_Isend(s44, MID_COUNT, MPI_INT, 0, 44, dup, &send44);
        sent(s44, MID_COUNT, 0, 44, dup, "eager", "complete", send44, "no");
    } else if (rank == 2) {
        MPI_Isend(big, BIG_COUNT, MPI_INT, 3, 33, MPI_COMM_WORLD, &sendbig);
        sent(big, BIG_COUNT, 3, 33, MPI_COMM_WORLD, "rendezvous", "pending", sendbig, "no");
    } else if (rank == 3) {
        MPI_Issend(s55, 4, MPI_INT, 2, 55, dup, &send55);
        sent(s55, 4, 2, 55, dup, "rendezvous", "pending", send55, "yes");
    }
    if (rank == 0) {
        probe(1, 99, MPI_COMM_WORLD, "eager", "no");
        probe(1, 44, dup, "eager", "no");
    } else if (rank == 2) {
        probe(3, 55, dup, "rendezvous", "yes");
    } else if (rank == 3) {
        probe(2, 33, MPI_COMM_WORLD, "rendezvous", "unknown");
    }
    fclose(posted);
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);

    if (rank == 0) {
        MPI_Recv(s99, 5, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(s44, MID_COUNT, MPI_INT, 1, 44, dup, MPI_STATUS_IGNORE);
        for (int i = 0; i < 3; i++) {
            MPI_Cancel(&recvs[i]);
            MPI_Wait(&recvs[i], MPI_STATUS_IGNORE);
        }
    } else if (rank == 1) {
        MPI_Wait(&send44, MPI_STATUS_IGNORE);
    } else if (rank == 2) {
        MPI_Recv(s55, 4, MPI_INT, 3, 55, dup, MPI_STATUS_IGNORE);
        MPI_Wait(&sendbig, MPI_STATUS_IGNORE);
    } else if (rank == 3) {
        MPI_Recv(big, BIG_COUNT, MPI_INT, 2, 33, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&send55, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
