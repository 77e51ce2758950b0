/* bench/map_ompi_treematch: libmpilens-map's mapping against Open MPI's own TreeMatch reordering
 * (MPI_Dist_graph_create with reorder = 1, the topo/treematch component) on the same matrix and
 * the same machine. Run under Open MPI at any number of ranks:
 *
 *     mpirun -n P bench/map_ompi_treematch MATRIX [ALGO]
 *
 * MATRIX is a file mpilens_map_matrix_load reads (its order must be P); ALGO a libmpilens-map
 * algorithm (default treematch). Every rank declares its row of the matrix as weighted edges;
 * Open MPI's new ranks say where each role now runs. Rank 0 prints the cost model's figures for
 * the launcher's placement, Open MPI's reordering and libmpilens-map's, all on the slots the
 * ranks occupy (mpilens_map_topology_of_comm). Under another MPI library the reordering is the
 * identity (MPICH ignores `reorder`): the program says so rather than failing.
 *
 * Open MPI's component keeps the identity when the ranks oversubscribe the cores or are not
 * bound; so does the cost model's answer then, which the printout shows. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpilens/map.h"

static void fail(const char *what, mpilens_map_status_t status)
{
    fprintf(stderr, "map_ompi_treematch: %s: %s\n", what, mpilens_map_status_string(status));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* MPI edge weights are ints: bytes scaled so the largest is about 2^30, nonzero stays >= 1. */
static int edge_weight(double bytes, double largest)
{
    double w = largest > 0 ? bytes / largest * (1 << 30) : 0;
    return bytes > 0 && w < 1 ? 1 : (int)w;
}

/* This rank's row as Open MPI's weighted edges; returns the new rank it gives. */
static int ompi_new_rank(mpilens_map_matrix_t *matrix, int rank)
{
    size_t count;
    const int *from, *to;
    const double *bytes;
    mpilens_map_status_t status = mpilens_map_matrix_entries(matrix, &count, &from, &to, &bytes);
    if (status != MPILENS_MAP_OK)
        fail("matrix entries", status);
    double largest = 0;
    for (size_t e = 0; e < count; e++)
        largest = bytes[e] > largest ? bytes[e] : largest;
    int degree = 0, *dest = malloc((count + 1) * sizeof *dest), *weight = malloc((count + 1) * sizeof *weight);
    if (!dest || !weight)
        fail("edges", MPILENS_MAP_ERR_NOMEM);
    for (size_t e = 0; e < count; e++)
        if (from[e] == rank) {
            dest[degree] = to[e];
            weight[degree++] = edge_weight(bytes[e], largest);
        }
    MPI_Comm graph;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &degree, dest, weight, MPI_INFO_NULL, 1, &graph);
    int new_rank;
    MPI_Comm_rank(graph, &new_rank);
    MPI_Comm_free(&graph);
    free(dest);
    free(weight);
    return new_rank;
}

static void print_cost(const char *name, const mpilens_map_topology_t *topology, const mpilens_map_matrix_t *matrix,
                       const long *slot_of, double identity_weighted)
{
    mpilens_map_cost_t cost;
    mpilens_map_status_t status = mpilens_map_cost(topology, matrix, slot_of, &cost);
    if (status != MPILENS_MAP_OK)
        fail(name, status);
    printf("%-22s %16.0f %16.0f %14.0f %8.3g\n", name, cost.hop_bytes, cost.weighted_bytes, cost.busiest_link,
           identity_weighted > 0 ? cost.weighted_bytes / identity_weighted : 1.0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: map_ompi_treematch MATRIX [ALGO]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    mpilens_map_algo_t algo = MPILENS_MAP_TREEMATCH;
    mpilens_map_status_t status = argc > 2 ? mpilens_map_algo_parse(argv[2], &algo) : MPILENS_MAP_OK;
    if (status != MPILENS_MAP_OK)
        fail(argv[2], status);
    const char *algo_name;
    if ((status = mpilens_map_algo_name(algo, &algo_name)) != MPILENS_MAP_OK)
        fail("naming the algorithm", status);
    mpilens_map_matrix_t *matrix;
    int order;
    if ((status = mpilens_map_matrix_load(argv[1], &matrix)) != MPILENS_MAP_OK)
        fail(argv[1], status);
    mpilens_map_matrix_order(matrix, &order);
    if (order != size) {
        if (rank == 0)
            fprintf(stderr, "map_ompi_treematch: %s has %d processes, the job %d\n", argv[1], order, size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    mpilens_map_topology_t *topology;
    long *placed = malloc(size * sizeof *placed), *ompi = malloc(size * sizeof *ompi),
         *ours = malloc(size * sizeof *ours);
    int all_bound, *new_rank_of = malloc(size * sizeof *new_rank_of);
    if (!placed || !ompi || !ours || !new_rank_of)
        fail("arrays", MPILENS_MAP_ERR_NOMEM);
    if ((status = mpilens_map_topology_of_comm(MPI_COMM_WORLD, &topology, placed, &all_bound)) != MPILENS_MAP_OK)
        fail("topology of MPI_COMM_WORLD", status);
    int new_rank = ompi_new_rank(matrix, rank);
    MPI_Gather(&new_rank, 1, MPI_INT, new_rank_of, 1, MPI_INT, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        /* Role k (new rank k) runs where the process that was given rank k is. */
        int moved = 0;
        for (int r = 0; r < size; r++) {
            ompi[new_rank_of[r]] = placed[r];
            moved += new_rank_of[r] != r;
        }
        if ((status = mpilens_map_compute_onto(topology, matrix, algo, 0, placed, ours)) != MPILENS_MAP_OK)
            fail(algo_name, status);
        char text[256];
        mpilens_map_topology_describe(topology, text, sizeof text);
        char library[MPI_MAX_LIBRARY_VERSION_STRING];
        int length;
        MPI_Get_library_version(library, &length);
        printf("== bench/map_ompi_treematch: %d ranks on \"%s\", ranks %s\n", size, text,
               all_bound ? "bound" : "not all bound (slots guessed by local rank)");
        printf("MPI: %.60s\n", library);
        printf("the MPI library's reordering moved %d of %d ranks%s\n", moved, size,
               moved ? "" : " (the identity: oversubscribed, unbound, or a library that ignores reorder)");
        mpilens_map_cost_t identity;
        mpilens_map_cost(topology, matrix, placed, &identity);
        printf("%-22s %16s %16s %14s %8s\n", "mapping", "hop-bytes", "weighted", "busiest link", "ratio");
        print_cost("launcher's placement", topology, matrix, placed, identity.weighted_bytes);
        print_cost("MPI_Dist_graph_create", topology, matrix, ompi, identity.weighted_bytes);
        print_cost(algo_name, topology, matrix, ours, identity.weighted_bytes);
    }
    free(placed);
    free(ompi);
    free(ours);
    free(new_rank_of);
    mpilens_map_topology_free(topology);
    mpilens_map_matrix_free(matrix);
    MPI_Finalize();
    return 0;
}
