/* A 4-rank MPICH job that stops itself holding MPI handles of every kind
 * with known properties, for `mpidd handle` (examples/tests/mpich_handles.rs).
 *
 * Every rank makes:
 *   cart      MPI_Comm_split of MPI_COMM_WORLD with one color and key
 *             3 - rank (so split rank = 3 - world rank), named
 *             "mpidd_split", then MPI_Cart_create over it: 2 x 2, both
 *             dimensions periodic, no reordering, named "mpidd_cart", with
 *             the user error handler below set on it
 *   group     MPI_Comm_group of the split
 *   graph     MPI_Graph_create over MPI_COMM_WORLD: a ring of 4, index
 *             {2,4,6,8}, edges {1,3, 0,2, 1,3, 2,0}, named "mpidd_graph"
 *   inter     an intercommunicator between the even and the odd world
 *             ranks, named "mpidd_inter"
 *   doomed    a duplicate of MPI_COMM_WORLD named "mpidd_doomed", on which
 *             rank 0 posts a receive from rank 1 (tag TAG_DOOMED) and which
 *             every rank frees before the stop (rank 1 sends on its own
 *             duplicate only after the stop, so rank 0's receive is
 *             pending). Under CH3 that receive holds a reference that keeps
 *             rank 0's object alive; under ch4:ucx it holds none, and the
 *             object is freed at once.
 *   strct     MPI_Type_create_struct of struct rec {char c; double d; int i}
 *             (holes after c and after i), committed, named "mpidd_struct"
 *   pair      MPI_Type_contiguous(2, strct), committed, named "mpidd_pair"
 *   vector    MPI_Type_vector(3, 1, 2, MPI_INT), not committed, named
 *             "mpidd_vector"
 *   gone      MPI_Type_contiguous(5, MPI_INT), committed, and freed just
 *             before the stop
 *   op        MPI_Op_create(mpidd_op_fn, commute = 0)
 *   errh      MPI_Comm_create_errhandler(mpidd_errh_fn)
 *   info      an info object with three keys (mpidd_alpha=1, mpidd_beta=two,
 *             mpidd_gamma=3.0)
 *   preq      MPI_Recv_init of 4 ints from rank + 1, tag TAG_PERSIST, on
 *             MPI_COMM_WORLD, started (its sender sends after the stop)
 *   sreq      an MPI_Isend of BIG_COUNT ints to rank + 2, tag TAG_BIG, too
 *             large for the eager protocol: pending until rank + 2 receives
 *             it after the stop
 *   greq      MPI_Grequest_start with the three functions below and
 *             &greq_state as extra state, completed after the stop
 *   win       MPI_Win_create over a 64-int buffer, disp_unit sizeof(int),
 *             named "mpidd_win"
 *   file      MPI_File_open of DIR/mpidd_handles.dat (DIR is argv[1]),
 *             MPI_MODE_CREATE | MPI_MODE_RDWR, hint cb_buffer_size=65536
 *   status    an MPI_Recv from MPI_ANY_SOURCE of 3 ints that rank - 1 sent
 *             with tag TAG_STATUS + its rank
 *
 * Each rank writes DIR/handles.RANK: one line per handle, "NAME C FORTRAN"
 * (C as a decimal int, or a pointer for the file), and "addr NAME POINTER"
 * lines for addresses (the user functions, the window's buffer, the
 * status), and "const NAME VALUE" for the offsets and extents the test
 * needs. Then it prints "READY <rank> <pid>" and stops itself with
 * SIGSTOP. When continued it completes everything and finalizes.
 */
#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_DOOMED 21
#define TAG_PERSIST 77
#define TAG_STATUS 55
#define TAG_BIG 88
#define BIG_COUNT (1 << 18)

struct rec {
    char c;
    double d;
    int i;
};

/* Globals, so that `mpidd handle --var` can find them by name. */
MPI_Comm mpidd_cart_comm = MPI_COMM_NULL;
MPI_Request mpidd_persistent = MPI_REQUEST_NULL;
MPI_File mpidd_file = MPI_FILE_NULL;
MPI_Status mpidd_done_status;

void mpidd_op_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int *a = in, *b = inout;
    (void) type;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] - b[i];
}

void mpidd_errh_fn(MPI_Comm *comm, int *code, ...)
{
    (void) comm;
    fprintf(stderr, "mpidd handles: MPI error %d\n", *code);
}

static int greq_state;

int mpidd_query_fn(void *extra, MPI_Status *status)
{
    (void) extra;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int mpidd_free_fn(void *extra)
{
    (void) extra;
    return MPI_SUCCESS;
}

int mpidd_cancel_fn(void *extra, int complete)
{
    (void) extra;
    (void) complete;
    return MPI_SUCCESS;
}

static FILE *out;

static void handle(const char *name, int c, int f)
{
    fprintf(out, "%s %d %d\n", name, c, f);
}

static void address(const char *name, const void *p)
{
    fprintf(out, "addr %s %lu\n", name, (unsigned long) (size_t) p);
}

static void constant(const char *name, long v)
{
    fprintf(out, "const %s %ld\n", name, v);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4 || argc != 2) {
        if (rank == 0)
            fprintf(stderr, "handles: run with 4 ranks and a directory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/handles.%d", argv[1], rank);
    out = fopen(path, "w");
    if (!out)
        MPI_Abort(MPI_COMM_WORLD, 3);

    /* Communicators. */
    MPI_Comm split, cart, graph, local, inter, doomed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, 3 - rank, &split);
    MPI_Comm_set_name(split, "mpidd_split");
    int dims[2] = { 2, 2 }, periods[2] = { 1, 1 };
    MPI_Cart_create(split, 2, dims, periods, 0, &cart);
    MPI_Comm_set_name(cart, "mpidd_cart");
    mpidd_cart_comm = cart;
    MPI_Group group;
    MPI_Comm_group(split, &group);

    int index[4] = { 2, 4, 6, 8 }, edges[8] = { 1, 3, 0, 2, 1, 3, 2, 0 };
    MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &graph);
    MPI_Comm_set_name(graph, "mpidd_graph");

    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 99, &inter);
    MPI_Comm_set_name(inter, "mpidd_inter");

    MPI_Comm_dup(MPI_COMM_WORLD, &doomed);
    MPI_Comm_set_name(doomed, "mpidd_doomed");
    static int doomed_buf;
    MPI_Request doomed_req = MPI_REQUEST_NULL;
    if (rank == 0)
        MPI_Irecv(&doomed_buf, 1, MPI_INT, 1, TAG_DOOMED, doomed, &doomed_req);
    MPI_Comm doomed_kept = doomed;      /* rank 1 still sends on it later */
    int doomed_value = (int) doomed;

    /* Datatypes. */
    MPI_Datatype strct, pair, vector, gone;
    int blocklens[3] = { 1, 1, 1 };
    MPI_Aint displs[3] = { offsetof(struct rec, c), offsetof(struct rec, d),
        offsetof(struct rec, i)
    };
    MPI_Datatype types[3] = { MPI_CHAR, MPI_DOUBLE, MPI_INT };
    MPI_Type_create_struct(3, blocklens, displs, types, &strct);
    MPI_Type_commit(&strct);
    MPI_Type_set_name(strct, "mpidd_struct");
    MPI_Type_contiguous(2, strct, &pair);
    MPI_Type_commit(&pair);
    MPI_Type_set_name(pair, "mpidd_pair");
    MPI_Type_vector(3, 1, 2, MPI_INT, &vector);
    MPI_Type_set_name(vector, "mpidd_vector");
    MPI_Type_contiguous(5, MPI_INT, &gone);
    MPI_Type_commit(&gone);
    int gone_value = (int) gone;
    MPI_Aint lb, extent;
    MPI_Type_get_extent(strct, &lb, &extent);

    /* Op, error handler, info. */
    MPI_Op op;
    MPI_Op_create(mpidd_op_fn, 0, &op);
    MPI_Errhandler errh;
    MPI_Comm_create_errhandler(mpidd_errh_fn, &errh);
    MPI_Comm_set_errhandler(cart, errh);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpidd_alpha", "1");
    MPI_Info_set(info, "mpidd_beta", "two");
    MPI_Info_set(info, "mpidd_gamma", "3.0");

    /* A started persistent receive whose sender sends after the stop. */
    static int pbuf[4];
    MPI_Recv_init(pbuf, 4, MPI_INT, (rank + 1) % 4, TAG_PERSIST, MPI_COMM_WORLD,
                  &mpidd_persistent);
    MPI_Start(&mpidd_persistent);

    /* A send too large to complete before its receiver receives, and a
     * generalized request. */
    static int big_out[BIG_COUNT], big_in[BIG_COUNT];
    MPI_Request sreq, greq;
    MPI_Isend(big_out, BIG_COUNT, MPI_INT, (rank + 2) % 4, TAG_BIG, MPI_COMM_WORLD, &sreq);
    MPI_Grequest_start(mpidd_query_fn, mpidd_free_fn, mpidd_cancel_fn, &greq_state, &greq);

    /* Window. */
    static int winbuf[64];
    MPI_Win win;
    MPI_Win_create(winbuf, sizeof winbuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_name(win, "mpidd_win");

    /* File. */
    char fname[4096];
    snprintf(fname, sizeof fname, "%s/mpidd_handles.dat", argv[1]);
    MPI_Info hints;
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "cb_buffer_size", "65536");
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR;
    MPI_File_open(MPI_COMM_WORLD, fname, amode, hints, &mpidd_file);
    MPI_Info_free(&hints);

    /* A completed status. */
    int sendv[3] = { rank, rank, rank }, recvv[3];
    MPI_Request small;
    MPI_Isend(sendv, 3, MPI_INT, (rank + 1) % 4, TAG_STATUS + rank, MPI_COMM_WORLD, &small);
    MPI_Recv(recvv, 3, MPI_INT, MPI_ANY_SOURCE, TAG_STATUS + (rank + 3) % 4, MPI_COMM_WORLD,
             &mpidd_done_status);
    MPI_Wait(&small, MPI_STATUS_IGNORE);

    handle("world", (int) MPI_COMM_WORLD, (int) MPI_Comm_c2f(MPI_COMM_WORLD));
    handle("split", (int) split, (int) MPI_Comm_c2f(split));
    handle("cart", (int) cart, (int) MPI_Comm_c2f(cart));
    handle("graph", (int) graph, (int) MPI_Comm_c2f(graph));
    handle("inter", (int) inter, (int) MPI_Comm_c2f(inter));
    handle("doomed", doomed_value, doomed_value);
    handle("comm_null", (int) MPI_COMM_NULL, (int) MPI_Comm_c2f(MPI_COMM_NULL));
    handle("group", (int) group, (int) MPI_Group_c2f(group));
    handle("strct", (int) strct, (int) MPI_Type_c2f(strct));
    handle("pair", (int) pair, (int) MPI_Type_c2f(pair));
    handle("vector", (int) vector, (int) MPI_Type_c2f(vector));
    handle("gone", gone_value, gone_value);
    handle("mpi_int", (int) MPI_INT, (int) MPI_Type_c2f(MPI_INT));
    handle("mpi_char", (int) MPI_CHAR, (int) MPI_Type_c2f(MPI_CHAR));
    handle("mpi_double", (int) MPI_DOUBLE, (int) MPI_Type_c2f(MPI_DOUBLE));
    handle("op", (int) op, (int) MPI_Op_c2f(op));
    handle("op_sum", (int) MPI_SUM, (int) MPI_Op_c2f(MPI_SUM));
    handle("errh", (int) errh, (int) MPI_Errhandler_c2f(errh));
    handle("info", (int) info, (int) MPI_Info_c2f(info));
    handle("preq", (int) mpidd_persistent, (int) MPI_Request_c2f(mpidd_persistent));
    handle("doomed_req", (int) doomed_req, (int) MPI_Request_c2f(doomed_req));
    handle("sreq", (int) sreq, (int) MPI_Request_c2f(sreq));
    handle("greq", (int) greq, (int) MPI_Request_c2f(greq));
    handle("win", (int) win, (int) MPI_Win_c2f(win));
    fprintf(out, "file %lu %d\n", (unsigned long) (size_t) mpidd_file,
            (int) MPI_File_c2f(mpidd_file));
    fprintf(out, "filename %s\n", fname);
    address("op_fn", (const void *) mpidd_op_fn);
    address("errh_fn", (const void *) mpidd_errh_fn);
    address("winbuf", winbuf);
    address("status", &mpidd_done_status);
    address("query_fn", (const void *) mpidd_query_fn);
    address("free_fn", (const void *) mpidd_free_fn);
    address("cancel_fn", (const void *) mpidd_cancel_fn);
    address("greq_state", &greq_state);
    constant("rec_c", offsetof(struct rec, c));
    constant("rec_d", offsetof(struct rec, d));
    constant("rec_i", offsetof(struct rec, i));
    constant("sizeof_double", sizeof(double));
    constant("sizeof_int", sizeof(int));
    constant("struct_extent", extent);
    constant("struct_lb", lb);
    constant("winbuf_bytes", sizeof winbuf);
    constant("amode", amode);
    constant("tag_doomed", TAG_DOOMED);
    constant("tag_persist", TAG_PERSIST);
    constant("tag_status", TAG_STATUS);
    constant("tag_big", TAG_BIG);
    fclose(out);

    /* Freed last, so that no later object (ROMIO and windows make
     * datatypes and communicators) reuses theirs before the stop. */
    MPI_Type_free(&gone);
    if (rank != 1)
        MPI_Comm_free(&doomed);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("READY %d %ld\n", rank, (long) getpid());
    fflush(stdout);
    raise(SIGSTOP);

    /* Complete everything. */
    if (rank == 1) {
        int v = 7;
        MPI_Send(&v, 1, MPI_INT, 0, TAG_DOOMED, doomed_kept);
        MPI_Comm_free(&doomed);
    }
    if (rank == 0)
        MPI_Wait(&doomed_req, MPI_STATUS_IGNORE);
    MPI_Send(sendv, 3, MPI_INT, (rank + 3) % 4, TAG_PERSIST, MPI_COMM_WORLD);
    MPI_Recv(big_in, BIG_COUNT, MPI_INT, (rank + 2) % 4, TAG_BIG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    MPI_Grequest_complete(greq);
    MPI_Wait(&greq, MPI_STATUS_IGNORE);
    MPI_Wait(&mpidd_persistent, MPI_STATUS_IGNORE);
    MPI_Request_free(&mpidd_persistent);
    MPI_File_close(&mpidd_file);
    MPI_Win_free(&win);
    MPI_Info_free(&info);
    MPI_Errhandler_free(&errh);
    MPI_Op_free(&op);
    MPI_Type_free(&vector);
    MPI_Type_free(&pair);
    MPI_Type_free(&strct);
    MPI_Group_free(&group);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    MPI_Comm_free(&graph);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&split);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
