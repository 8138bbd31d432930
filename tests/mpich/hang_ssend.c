/* Head-to-head synchronous sends: ranks 0 and 1 MPI_Ssend 8 MiB to each
 * other (tag 5) before receiving. Neither send is in a send queue (MPICH
 * queues only nonblocking sends): each shows up only as a rendezvous
 * request unexpected at the other rank. Ranks 2 and 3 receive from rank 0
 * (tag 9), which never sends to them. */
#include "hang_common.h"

#define BIG (8 << 20)

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_ssend");
    char *buf = calloc(BIG, 1);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    if (rank < 2) {
        MPI_Ssend(buf, BIG, MPI_CHAR, 1 - rank, 5, MPI_COMM_WORLD); /* HANG_LINE */
        MPI_Recv(buf, BIG, MPI_CHAR, 1 - rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, 4, MPI_CHAR, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* HANG_LINE */
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
