/* A 4-rank MPICH job that stops itself with unexpected messages of every
 * kind the CH3 decoder classifies, for the facts a job-level analysis
 * matches across ranks (context ids, protocol, synchronous sends, world
 * ranks of every communicator).
 *
 * Every rank creates a duplicate of MPI_COMM_WORLD named "jf_dup" and a
 * split by rank parity named "jf_split_even" / "jf_split_odd". Then, with
 * no receive posted at rank 0 before the stop:
 *
 *   rank 1 -> rank 0 on WORLD
 *     tag 1  MPI_Send   of 5 ints       eager: the data waits at rank 0
 *     tag 2  MPI_Isend  of BIG bytes    rendezvous: only the envelope came
 *     tag 3  MPI_Issend of 3 ints       eager and synchronous
 *     tag 4  MPI_Send   of 0 ints       eager with no data (no buffer)
 *   rank 2 -> rank 0 on jf_dup
 *     tag 5  MPI_Isend  of BIG bytes    rendezvous (from the other "node"
 *                                        when launched on two)
 *     tag 6  MPI_Issend of 0 ints       eager, synchronous, no data
 *
 * BIG is 8 MiB, far above every CH3 eager limit (nemesis shared memory and
 * TCP). Rank 0 probes for each message, which leaves it unexpected, so all
 * are queued before the barrier. Then each rank prints "READY <rank> <pid>"
 * and stops itself with SIGSTOP; continued, it receives or completes
 * everything and finalizes.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BIG (8 << 20)

static void ready(int rank)
{
    printf("READY %d %ld\n", rank, (long) getpid());
    fflush(stdout);
    raise(SIGSTOP);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "jobfacts: run with 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    MPI_Comm dup, split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "jf_dup");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
    MPI_Comm_set_name(split, rank % 2 ? "jf_split_odd" : "jf_split_even");

    static int small[5], sync3[3];
    char *big = calloc(BIG, 1);
    if (!big)
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Request reqs[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };

    if (rank == 1) {
        MPI_Send(small, 5, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Isend(big, BIG, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &reqs[0]);
        MPI_Issend(sync3, 3, MPI_INT, 0, 3, MPI_COMM_WORLD, &reqs[1]);
        MPI_Send(NULL, 0, MPI_INT, 0, 4, MPI_COMM_WORLD);
    } else if (rank == 2) {
        MPI_Isend(big, BIG, MPI_CHAR, 0, 5, dup, &reqs[0]);
        MPI_Issend(NULL, 0, MPI_INT, 0, 6, dup, &reqs[1]);
    } else if (rank == 0) {
        for (int tag = 1; tag <= 4; tag++)
            MPI_Probe(1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Probe(2, 5, dup, MPI_STATUS_IGNORE);
        MPI_Probe(2, 6, dup, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);

    if (rank == 0) {
        MPI_Recv(small, 5, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(big, BIG, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(sync3, 3, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(NULL, 0, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(big, BIG, MPI_CHAR, 2, 5, dup, MPI_STATUS_IGNORE);
        MPI_Recv(NULL, 0, MPI_INT, 2, 6, dup, MPI_STATUS_IGNORE);
    } else {
        for (int i = 0; i < 2; i++)
            MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(big);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
