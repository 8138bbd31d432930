/* A cycle across three communicators: "pair02" holds world ranks {0, 2},
 * "pair12" holds {1, 2} (each split from MPI_COMM_WORLD with MPI_UNDEFINED
 * for the others). Rank 0 receives from 1 on MPI_COMM_WORLD, rank 1 from 2
 * on pair12 (its local rank 1), rank 2 from 0 on pair02 (its local rank 0),
 * all with tag 3: 0 -> 1 -> 2 -> 0. Rank 3 receives from 0 with
 * MPI_ANY_TAG on MPI_COMM_WORLD, and so waits on the cycle. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_comms");
    MPI_Comm pair02, pair12;
    int value = 0;
    MPI_Comm_split(MPI_COMM_WORLD, (rank == 0 || rank == 2) ? 0 : MPI_UNDEFINED, rank, &pair02);
    MPI_Comm_split(MPI_COMM_WORLD, (rank == 1 || rank == 2) ? 0 : MPI_UNDEFINED, rank, &pair12);
    if (pair02 != MPI_COMM_NULL)
        MPI_Comm_set_name(pair02, "pair02");
    if (pair12 != MPI_COMM_NULL)
        MPI_Comm_set_name(pair12, "pair12");
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    switch (rank) {
    case 0:
        MPI_Recv(&value, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    case 1:
        MPI_Recv(&value, 1, MPI_INT, 1, 3, pair12, MPI_STATUS_IGNORE);
        break;
    case 2:
        MPI_Recv(&value, 1, MPI_INT, 0, 3, pair02, MPI_STATUS_IGNORE);
        break;
    default:
        MPI_Recv(&value, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    }
    MPI_Finalize();
    return 0;
}
