/* Collectives by their logical pattern (the pmpi backend, forced here so that the answer does not
 * depend on the MPI library's monitoring): each case runs one collective in its own session and
 * writes down the messages its pattern makes; the session's COLL matrix must be exactly that, with
 * no P2P or OSC data. Neighbours are worked out from coordinates, not with MPI's topology
 * functions. Insignificant arguments (a Gather's send arguments at an in-place root, a
 * Scatterv's at the other ranks) are invalid on purpose: the library must not look at them. */
#include "montest.h"

enum { BIG = 64 }; /* elements: enough for any buffer below at up to 8 ranks */

static int rank, size;
static int ints[BIG], ints2[BIG];
static double doubles[BIG], doubles2[BIG];

/* Every rank to every other, `bytes` each. */
static void all_pairs(expected_t *e, unsigned long bytes)
{
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++)
            if (i != j)
                expect(e, i, j, 1, bytes);
}

/* ---- rooted ---------------------------------------------------------------------------------- */

static void bcast(expected_t *e)
{
    MPI_Bcast(ints, 10, MPI_INT, size - 1, MPI_COMM_WORLD);
    for (int j = 0; j < size - 1; j++)
        expect(e, size - 1, j, 1, 10 * sizeof(int));
}

static void ibcast(expected_t *e)
{
    MPI_Request request;
    MPI_Ibcast(doubles, 7, MPI_DOUBLE, 0, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    for (int j = 1; j < size; j++)
        expect(e, 0, j, 1, 7 * sizeof(double));
}

static void reduce(expected_t *e)
{
    MPI_Reduce(doubles, doubles2, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    for (int i = 1; i < size; i++)
        expect(e, i, 0, 1, 3 * sizeof(double));
}

static void gather_in_place(expected_t *e)
{
    int root = 1 % size;
    if (rank == root)
        MPI_Gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, ints, 2, MPI_INT, root, MPI_COMM_WORLD);
    else
        MPI_Gather(ints, 2, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        if (i != root)
            expect(e, i, root, 1, 2 * sizeof(int));
}

/* Rank i sends i + 1 doubles. */
static void gatherv(expected_t *e)
{
    int counts[BIG], displs[BIG];
    for (int j = 0; j < size; j++) {
        counts[j] = j + 1;
        displs[j] = j * (j + 1) / 2;
    }
    MPI_Gatherv(doubles, rank + 1, MPI_DOUBLE, doubles2, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int i = 1; i < size; i++)
        expect(e, i, 0, 1, (i + 1) * sizeof(double));
}

static void scatter(expected_t *e)
{
    MPI_Scatter(ints, 3, MPI_INT, ints2, 3, MPI_INT, size - 1, MPI_COMM_WORLD);
    for (int j = 0; j < size - 1; j++)
        expect(e, size - 1, j, 1, 3 * sizeof(int));
}

/* Rank j gets j + 1 doubles. */
static void scatterv(expected_t *e)
{
    int counts[BIG], displs[BIG];
    for (int j = 0; j < size; j++) {
        counts[j] = j + 1;
        displs[j] = j * (j + 1) / 2;
    }
    if (rank == 0)
        MPI_Scatterv(doubles, counts, displs, MPI_DOUBLE, doubles2, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    else
        MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, doubles2, rank + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int j = 1; j < size; j++)
        expect(e, 0, j, 1, (j + 1) * sizeof(double));
}

/* ---- every rank to every other --------------------------------------------------------------- */

static void allreduce(expected_t *e)
{
    MPI_Allreduce(ints, ints2, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    all_pairs(e, 2 * sizeof(int));
}

static void barrier(expected_t *e)
{
    MPI_Barrier(MPI_COMM_WORLD);
    all_pairs(e, 0);
}

static void iallreduce_ibarrier(expected_t *e)
{
    MPI_Request requests[2];
    MPI_Iallreduce(doubles, doubles2, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &requests[0]);
    MPI_Ibarrier(MPI_COMM_WORLD, &requests[1]);
    wait_all(2, requests);
    all_pairs(e, 2 * sizeof(double));
    all_pairs(e, 0);
}

static void allgather(expected_t *e)
{
    MPI_Allgather(ints, 3, MPI_SHORT, ints2, 3, MPI_SHORT, MPI_COMM_WORLD);
    all_pairs(e, 3 * sizeof(short));
}

/* In place, the receive count and type say what each rank contributes. */
static void allgather_in_place(expected_t *e)
{
    MPI_Allgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, ints, 5, MPI_INT, MPI_COMM_WORLD);
    all_pairs(e, 5 * sizeof(int));
}

/* Rank i contributes i + 2 chars, in place: its own entry of the receive counts. */
static void allgatherv_in_place(expected_t *e)
{
    int counts[BIG], displs[BIG], total = 0;
    for (int j = 0; j < size; j++) {
        counts[j] = j + 2;
        displs[j] = total;
        total += counts[j];
    }
    MPI_Allgatherv(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, ints, counts, displs, MPI_CHAR, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++)
            if (i != j)
                expect(e, i, j, 1, (unsigned long)i + 2);
}

/* Rank j's block of the result is j + 1 ints: what every other rank sends it. */
static void reduce_scatter(expected_t *e)
{
    int counts[BIG];
    for (int j = 0; j < size; j++)
        counts[j] = j + 1;
    MPI_Reduce_scatter(ints, ints2, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++)
            if (i != j)
                expect(e, i, j, 1, (j + 1) * sizeof(int));
}

static void reduce_scatter_block(expected_t *e)
{
    MPI_Reduce_scatter_block(ints, ints2, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    all_pairs(e, 2 * sizeof(int));
}

/* ---- every rank to every rank above ---------------------------------------------------------- */

static void scan(expected_t *e)
{
    MPI_Scan(ints, ints2, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        for (int j = i + 1; j < size; j++)
            expect(e, i, j, 1, 4 * sizeof(int));
}

static void exscan(expected_t *e)
{
    MPI_Exscan(doubles, doubles2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        for (int j = i + 1; j < size; j++)
            expect(e, i, j, 1, sizeof(double));
}

/* ---- neighbourhoods -------------------------------------------------------------------------- */

/* A periodic 2-D grid of MPI_Dims_create's shape, ranks row-major (no reordering): each rank
 * sends 3 ints to its neighbours at -1 and +1 in each dimension (the same rank twice along a
 * dimension of 2, itself along a dimension of 1). */
static void cartesian_neighbor_allgather(expected_t *e)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Neighbor_allgather(ints, 3, MPI_INT, ints2, 3, MPI_INT, cart);
    MPI_Comm_free(&cart);
    for (int i = 0; i < size; i++)
        for (int dim = 0; dim < 2; dim++)
            for (int step = -1; step <= 1; step += 2) {
                int c[2] = {i / dims[1], i % dims[1]};
                c[dim] = (c[dim] + step + dims[dim]) % dims[dim];
                expect(e, i, c[0] * dims[1] + c[1], 1, 3 * sizeof(int));
            }
}

/* A non-periodic line: block 0 (2 ints) to rank - 1, block 1 (5 ints) to rank + 1, where they
 * exist (so 5 ints come from rank - 1 and 2 from rank + 1). */
static void line_neighbor_alltoallv(expected_t *e)
{
    int periods[1] = {0}, sendcounts[2] = {2, 5}, sdispls[2] = {0, 2}, recvcounts[2] = {5, 2}, rdispls[2] = {0, 5};
    MPI_Comm line;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &size, periods, 0, &line);
    MPI_Neighbor_alltoallv(ints, sendcounts, sdispls, MPI_INT, ints2, recvcounts, rdispls, MPI_INT, line);
    MPI_Comm_free(&line);
    for (int i = 0; i < size; i++) {
        if (i > 0)
            expect(e, i, i - 1, 1, 2 * sizeof(int));
        if (i < size - 1)
            expect(e, i, i + 1, 1, 5 * sizeof(int));
    }
}

/* A distributed graph: rank i sends 1 double to i + 1 and 3 doubles to i + 2 (mod size), with
 * or without weights (the library must read the neighbours of both). */
static void dist_graph_neighbor_alltoallv(expected_t *e, int weighted)
{
    int out[2] = {(rank + 1) % size, (rank + 2) % size};
    int in[2] = {(rank + size - 1) % size, (rank + 2 * size - 2) % size};
    int counts[2] = {1, 3}, displs[2] = {0, 1}, weights[2] = {7, 9};
    MPI_Comm graph;
/* MPI_UNWEIGHTED is a sentinel pointer that gcc takes for an empty array */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, weighted ? weights : MPI_UNWEIGHTED, 2, out,
                                   weighted ? weights : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
#pragma GCC diagnostic pop
    MPI_Neighbor_alltoallv(doubles, counts, displs, MPI_DOUBLE, doubles2, counts, displs, MPI_DOUBLE, graph);
    MPI_Comm_free(&graph);
    for (int i = 0; i < size; i++) {
        expect(e, i, (i + 1) % size, 1, sizeof(double));
        expect(e, i, (i + 2) % size, 1, 3 * sizeof(double));
    }
}

static void weighted_dist_graph(expected_t *e) { dist_graph_neighbor_alltoallv(e, 1); }
static void unweighted_dist_graph(expected_t *e) { dist_graph_neighbor_alltoallv(e, 0); }

/* A graph ring (neighbours i - 1 and i + 1), 4 chars to each, non-blocking. */
static void graph_ineighbor_allgather(expected_t *e)
{
    int index[BIG], edges[2 * BIG];
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + size - 1) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Comm graph;
    MPI_Request request;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph);
    MPI_Ineighbor_allgather(ints, 4, MPI_CHAR, ints2, 4, MPI_CHAR, graph, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Comm_free(&graph);
    for (int i = 0; i < size; i++) {
        expect(e, i, (i + size - 1) % size, 1, 4);
        expect(e, i, (i + 1) % size, 1, 4);
    }
}

/* ---- not counted ----------------------------------------------------------------------------- */

/* Between the even and the odd ranks: intercommunicator collectives are not counted. */
static void intercomm_allreduce(expected_t *e)
{
    (void)e;
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 0, &inter);
    MPI_Allreduce(ints, ints2, 2, MPI_INT, MPI_SUM, inter);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

static const struct {
    const char *name;
    void (*run)(expected_t *e);
} cases[] = {
    {"Bcast", bcast},
    {"Ibcast", ibcast},
    {"Reduce", reduce},
    {"Gather in place", gather_in_place},
    {"Gatherv", gatherv},
    {"Scatter", scatter},
    {"Scatterv", scatterv},
    {"Allreduce", allreduce},
    {"Barrier", barrier},
    {"Iallreduce and Ibarrier", iallreduce_ibarrier},
    {"Allgather", allgather},
    {"Allgather in place", allgather_in_place},
    {"Allgatherv in place", allgatherv_in_place},
    {"Reduce_scatter", reduce_scatter},
    {"Reduce_scatter_block", reduce_scatter_block},
    {"Scan", scan},
    {"Exscan", exscan},
    {"Cartesian Neighbor_allgather", cartesian_neighbor_allgather},
    {"line Neighbor_alltoallv", line_neighbor_alltoallv},
    {"weighted dist graph Neighbor_alltoallv", weighted_dist_graph},
    {"unweighted dist graph Neighbor_alltoallv", unweighted_dist_graph},
    {"graph Ineighbor_allgather", graph_ineighbor_allgather},
    {"intercommunicator Allreduce", intercomm_allreduce},
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size <= 8);
    setenv("MPILENS_MONITOR_BACKEND", "pmpi", 1);
    OK(MPI_M_init());

    expected_t e = expected_new(size);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        MPI_M_msid id;
        OK(MPI_M_start(MPI_COMM_WORLD, &id));
        expected_clear(&e);
        cases[c].run(&e);
        OK(MPI_M_suspend(id));
        check_matrices(cases[c].name, id, MPI_M_COLL_ONLY, &e);
        check_nothing(cases[c].name, id, MPI_M_P2P_ONLY | MPI_M_OSC_ONLY);
        OK(MPI_M_free(id));
    }

    expected_free(&e);
    OK(MPI_M_finalize());
    return mpitest_finish();
}
