/* A 1-rank MPICH job with two messages to itself that nothing matches:
 *
 *   MPI_Isend  to rank 0, tag 5, 7 ints from sendbuf  (no receive for tag 5)
 *   MPI_Irecv  from rank 0, tag 6, 9 ints into recvbuf (no send of tag 6)
 *
 * both on MPI_COMM_WORLD, both pending. Under MPICH's CH4 a communicator
 * of one rank takes CH4's self path (src/mpid/ch4/src/ch4_self.c), never
 * the netmod. The program prints "READY 0 <pid> <sendbuf> <recvbuf> <send
 * request> <receive request>" (the buffers' addresses in hex, the
 * requests' handles in decimal) and stops itself with SIGSTOP; continued, it
 * cancels both requests and finalizes.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    static int sendbuf[7], recvbuf[9];
    int rank, size;
    MPI_Request reqs[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 1) {
        fprintf(stderr, "self_pending: run with 1 rank\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Isend(sendbuf, 7, MPI_INT, 0, 5, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(recvbuf, 9, MPI_INT, 0, 6, MPI_COMM_WORLD, &reqs[1]);
    printf("READY %d %ld %p %p %d %d\n", rank, (long) getpid(), (void *) sendbuf,
           (void *) recvbuf, (int) reqs[0], (int) reqs[1]);
    fflush(stdout);
    raise(SIGSTOP);
    MPI_Cancel(&reqs[0]);
    MPI_Cancel(&reqs[1]);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
