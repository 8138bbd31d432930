/* Two ranks for mpidd-embed's tests. Each posts two receives from its
 * peer that are never matched (tags 11 and 12) and sends its peer one
 * message it never receives (tag 99, eager: it stays unexpected there).
 * Then each prints "READY <rank> <pid>" and waits for SIGUSR1 (a handler
 * notes it, so the signal is survived); then it receives with MPI_Recv a
 * message it sent itself (tag 5: that call returns), and blocks in MPI_Recv
 * from its peer with tag 7, which nobody sends: once both ranks are there,
 * the job is a receive-receive deadlock. Both MPI_Recv take a duplicate of
 * MPI_COMM_WORLD named "recv_stops_comm" and a committed vector type
 * named "int_strided" (2 blocks of 1 int, a stride of 2 ints: 8 bytes of
 * data, an extent of 12), so the handles a tracer shows at its entry are
 * neither predefined nor alike. alarm() ends a rank that is forgotten. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
    (void) sig;
    go = 1;
}

int main(int argc, char **argv)
{
    int rank, size, peer;
    int in[2], word = 42, late[3];
    MPI_Request posted[2], sent;
    MPI_Comm recv_comm;
    MPI_Datatype strided;
    struct sigaction action;

    action.sa_handler = on_usr1;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &action, NULL);
    alarm(600);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "recv_stops: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer = 1 - rank;
    MPI_Irecv(&in[0], 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &posted[0]);
    MPI_Irecv(&in[1], 1, MPI_INT, peer, 12, MPI_COMM_WORLD, &posted[1]);
    MPI_Isend(&word, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, &sent);
    MPI_Wait(&sent, MPI_STATUS_IGNORE);
    /* The peer's tag-99 message came before its barrier message, on the
     * same channel: it is unexpected here once the barrier is over. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_dup(MPI_COMM_WORLD, &recv_comm);
    MPI_Comm_set_name(recv_comm, "recv_stops_comm");
    MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    MPI_Type_set_name(strided, "int_strided");
    MPI_Type_commit(&strided);

    printf("READY %d %ld\n", rank, (long) getpid());
    fflush(stdout);
    while (!go)
        usleep(10000);

    MPI_Isend(&word, 1, MPI_INT, rank, 5, recv_comm, &sent);
    MPI_Recv(late, 1, strided, rank, 5, recv_comm, MPI_STATUS_IGNORE);
    MPI_Wait(&sent, MPI_STATUS_IGNORE);
    MPI_Recv(late, 1, strided, peer, 7, recv_comm, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
