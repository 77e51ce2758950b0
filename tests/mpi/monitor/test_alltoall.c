/* All-to-all exchanges counted by their logical pattern, one message from each rank to every
 * other rank carrying what that rank gets (the block a rank keeps for itself is no message):
 * - MPI_Alltoall of C ints, blocking and non-blocking, and in place (the receive arguments
 *   then describe what is sent);
 * - MPI_Alltoallv with rank-dependent counts: i sends i + 2j + 1 doubles to j;
 * - MPI_Alltoallw with a type per destination: i sends j + 1 ints to odd j, j + 1 doubles to
 *   even j.
 * All collective data, no point-to-point. The library's choice of algorithm (pairwise,
 * Bruck, ...) must not show. */
#include "montest.h"

enum { C = 3, INPLACE_C = 2 };

static int rank, size;

static void alltoall(void)
{
    int *out = calloc((size_t)size * C, sizeof(int)), *in = calloc((size_t)size * C, sizeof(int));
    MPI_Alltoall(out, C, MPI_INT, in, C, MPI_INT, MPI_COMM_WORLD);
    free(out);
    free(in);
}

static void ialltoall(void)
{
    int *out = calloc((size_t)size * C, sizeof(int)), *in = calloc((size_t)size * C, sizeof(int));
    MPI_Request request;
    MPI_Ialltoall(out, C, MPI_INT, in, C, MPI_INT, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    free(out);
    free(in);
}

/* In place: the send count and type are insignificant (garbage on purpose). */
static void alltoall_in_place(void)
{
    int *buf = calloc((size_t)size * INPLACE_C, sizeof(int));
    MPI_Alltoall(MPI_IN_PLACE, -7, MPI_DATATYPE_NULL, buf, INPLACE_C, MPI_INT, MPI_COMM_WORLD);
    free(buf);
}

static int v_count(int from, int to) { return from + 2 * to + 1; }

static void alltoallv(void)
{
    exchange_t x = exchange_new(rank, size, v_count, NULL, sizeof(double));
    MPI_Alltoallv(x.out, x.sendcounts, x.sdispls, MPI_DOUBLE, x.in, x.recvcounts, x.rdispls, MPI_DOUBLE,
                  MPI_COMM_WORLD);
    exchange_free(&x);
}

/* Alltoallw: what rank j gets from anyone is j + 1 elements of its own type (displacements in
 * bytes). */
static MPI_Datatype w_type(int to) { return to % 2 ? MPI_INT : MPI_DOUBLE; }
static int w_size(int to) { return to % 2 ? (int)sizeof(int) : (int)sizeof(double); }
static int w_count(int from, int to)
{
    (void)from;
    return to + 1;
}

static void alltoallw(void)
{
    exchange_t x = exchange_new(rank, size, w_count, w_size, 1);
    MPI_Datatype *sendtypes = malloc(sizeof(MPI_Datatype) * (size_t)size);
    MPI_Datatype *recvtypes = malloc(sizeof(MPI_Datatype) * (size_t)size);
    REQUIRE(sendtypes && recvtypes);
    for (int j = 0; j < size; j++) {
        sendtypes[j] = w_type(j);
        recvtypes[j] = w_type(rank);
    }
    MPI_Alltoallw(x.out, x.sendcounts, x.sdispls, sendtypes, x.in, x.recvcounts, x.rdispls, recvtypes, MPI_COMM_WORLD);
    exchange_free(&x);
    free(sendtypes);
    free(recvtypes);
}

typedef enum { ALLTOALL, IALLTOALL, IN_PLACE, ALLTOALLV, ALLTOALLW, CASES } exchange;
static const char *names[CASES] = {"Alltoall", "Ialltoall", "Alltoall in place", "Alltoallv", "Alltoallw"};
static void (*const run[CASES])(void) = {alltoall, ialltoall, alltoall_in_place, alltoallv, alltoallw};

/* Bytes i sends j. */
static unsigned long bytes(exchange c, int i, int j)
{
    switch (c) {
    case IN_PLACE: return INPLACE_C * sizeof(int);
    case ALLTOALLV: return (unsigned long)v_count(i, j) * sizeof(double);
    case ALLTOALLW: return (unsigned long)w_count(i, j) * (unsigned long)w_size(j);
    default: return C * sizeof(int);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    setenv("MPILENS_MONITOR_BACKEND", "pmpi", 1); /* the logical pattern, whatever the MPI */
    OK(MPI_M_init());

    expected_t e = expected_new(size);
    for (exchange c = ALLTOALL; c < CASES; c++) {
        MPI_M_msid id;
        OK(MPI_M_start(MPI_COMM_WORLD, &id));
        run[c]();
        OK(MPI_M_suspend(id));
        expected_clear(&e);
        for (int i = 0; i < size; i++)
            for (int j = 0; j < size; j++)
                if (i != j)
                    expect(&e, i, j, 1, bytes(c, i, j));
        check_matrices(names[c], id, MPI_M_COLL_ONLY, &e);
        check_nothing(names[c], id, MPI_M_P2P_ONLY | MPI_M_OSC_ONLY);
        OK(MPI_M_free(id));
    }

    expected_free(&e);
    OK(MPI_M_finalize());
    return mpitest_finish();
}
