/* A rank in MPI_Finalize while another waits in a receive from it: rank 1
 * waits in MPI_Recv for a message from rank 0 that rank 0 never sends;
 * ranks 0, 2 and 3 are in MPI_Finalize, which cannot complete before rank
 * 1 enters it. Rank 0, in MPI_Finalize, will never send what rank 1 waits
 * for. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_finalize");
    int word = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    if (rank == 1)
        MPI_Recv(&word, 1, MPI_INT, 0, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* HANG_LINE */ /* RECV_LINE */
    MPI_Finalize(); /* HANG_LINE */ /* FINALIZE_LINE */
    return 0;
}
