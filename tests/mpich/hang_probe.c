/* Probes that nothing will satisfy: ranks 0 and 1 each wait in MPI_Probe
 * for a message from the other, and so do ranks 2 and 3. No rank sends,
 * and a probe posts no receive, so the queues show nothing: every rank is
 * blocked in MPI_Probe with nothing in flight. */
#include "hang_common.h"

int main(int argc, char **argv)
{
    int rank = hang_init(&argc, &argv, "hang_probe");
    MPI_Status status;
    MPI_Barrier(MPI_COMM_WORLD);
    ready(rank);
    MPI_Probe(rank ^ 1, 3, MPI_COMM_WORLD, &status); /* HANG_LINE */
    MPI_Finalize();
    return 0;
}
