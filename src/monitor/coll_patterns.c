/* Collectives by their logical pattern (docs/monitor.md, "Collectives", pmpi backend): what the
 * program asked for, whatever algorithm the MPI library uses to carry it out. Each collective's
 * hook in wrapped.spec names its pattern and the data each destination gets; the blocking,
 * non-blocking and (MPI-4) persistent forms share both, the first two counting at once, the
 * persistent ones keeping the messages for each MPI_Start. Collectives on intercommunicators are
 * not counted. When Open MPI's backend is active the engine reads collective traffic from Open
 * MPI instead, and these counts go unused. */
#include "coll_patterns.h"

#include <stdlib.h>

/* ---- where the messages go ------------------------------------------------------------------- */

static void message(ml_plan_t *plan, MPI_Comm comm, int rank, uint64_t bytes)
{
    int world = ml_world_rank(comm, rank);
    if (world < 0)
        return; /* a missing Cartesian neighbour (MPI_PROC_NULL), a process of another job */
    if (!plan) {
        ml_count_world(ML_COLL, world, bytes);
        return;
    }
    if (plan->n == plan->capacity) {
        int capacity = plan->capacity ? 2 * plan->capacity : 16;
        ml_message_t *grown = realloc(plan->messages, sizeof *grown * (size_t)capacity);
        if (!grown) {
            plan->failed = 1;
            return;
        }
        plan->messages = grown;
        plan->capacity = capacity;
    }
    plan->messages[plan->n++] = (ml_message_t){world, bytes};
}

int ml_coll_counted(MPI_Comm comm)
{
    int inter;
    return ml_recording() && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

static int my_rank(MPI_Comm comm)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    return rank;
}

/* ---- what each destination gets ---------------------------------------------------------------- */

static int has_counts(ml_counts_t c) { return c.small || c.large; }
static MPI_Count count_at(ml_counts_t c, int k) { return c.small ? c.small[k] : c.large[k]; }

ml_blocks_t ml_per_rank_of(ml_counts_t counts, MPI_Datatype type)
{
    return (ml_blocks_t){.counts = counts, .type = type};
}

ml_blocks_t ml_per_rank_typed_of(ml_counts_t counts, const MPI_Datatype *types)
{
    return (ml_blocks_t){.counts = counts, .types = types};
}

static uint64_t block(ml_blocks_t b, int k)
{
    return ml_bytes(has_counts(b.counts) ? count_at(b.counts, k) : b.count, b.types ? b.types[k] : b.type);
}

ml_blocks_t ml_own_block(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, MPI_Count recvcount,
                         MPI_Datatype recvtype)
{
    return sendbuf == MPI_IN_PLACE ? ml_uniform(recvcount, recvtype) : ml_uniform(sendcount, sendtype);
}

ml_blocks_t ml_allgatherv_block_of(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   ml_counts_t recvcounts, MPI_Datatype recvtype, MPI_Comm comm)
{
    return sendbuf == MPI_IN_PLACE ? ml_uniform(count_at(recvcounts, my_rank(comm)), recvtype)
                                   : ml_uniform(sendcount, sendtype);
}

ml_blocks_t ml_alltoallv_blocks_of(const void *sendbuf, ml_counts_t sendcounts, MPI_Datatype sendtype,
                                   ml_counts_t recvcounts, MPI_Datatype recvtype)
{
    return sendbuf == MPI_IN_PLACE ? ml_per_rank_of(recvcounts, recvtype) : ml_per_rank_of(sendcounts, sendtype);
}

ml_blocks_t ml_alltoallw_blocks_of(const void *sendbuf, ml_counts_t sendcounts, const MPI_Datatype *sendtypes,
                                   ml_counts_t recvcounts, const MPI_Datatype *recvtypes)
{
    return sendbuf == MPI_IN_PLACE ? ml_per_rank_typed_of(recvcounts, recvtypes)
                                   : ml_per_rank_typed_of(sendcounts, sendtypes);
}

/* ---- patterns -------------------------------------------------------------------------------- */

/* Every rank to every other: Allreduce, Allgather(v), Alltoall(v,w), Reduce_scatter(_block),
 * Barrier (0 bytes). */
void ml_to_others(ml_plan_t *plan, MPI_Comm comm, ml_blocks_t b)
{
    int me = my_rank(comm), size;
    PMPI_Comm_size(comm, &size);
    for (int k = 0; k < size; k++)
        if (k != me)
            message(plan, comm, k, block(b, k));
}

/* Bcast, Scatter(v): the root to every other rank. */
void ml_from_root(ml_plan_t *plan, MPI_Comm comm, int root, ml_blocks_t b)
{
    if (my_rank(comm) == root)
        ml_to_others(plan, comm, b);
}

/* Reduce, Gather(v): every other rank to the root (which sends nothing to itself). */
void ml_to_root(ml_plan_t *plan, MPI_Comm comm, int root, ml_blocks_t b)
{
    if (my_rank(comm) != root)
        message(plan, comm, root, block(b, root));
}

/* Scan, Exscan: rank i to every rank above i. */
void ml_to_higher(ml_plan_t *plan, MPI_Comm comm, ml_blocks_t b)
{
    int size;
    PMPI_Comm_size(comm, &size);
    for (int k = my_rank(comm) + 1; k < size; k++)
        message(plan, comm, k, block(b, k));
}

/* The out-neighbours of comm's topology in the order neighbourhood collectives use them
 * (Cartesian: per dimension, displacement -1 then +1, MPI_PROC_NULL where there is none); *n of
 * them, malloc'ed. NULL without a topology or memory. */
static int *out_neighbours(MPI_Comm comm, int *n)
{
    int topology, *out = NULL;
    *n = 0;
    PMPI_Topo_test(comm, &topology);
    if (topology == MPI_CART) {
        int dims;
        PMPI_Cartdim_get(comm, &dims);
        if ((out = malloc(sizeof *out * (size_t)(2 * dims + 1)))) {
            for (int d = 0; d < dims; d++)
                PMPI_Cart_shift(comm, d, 1, &out[2 * d], &out[2 * d + 1]);
            *n = 2 * dims;
        }
    } else if (topology == MPI_GRAPH) {
        int me = my_rank(comm), count;
        PMPI_Graph_neighbors_count(comm, me, &count);
        if ((out = malloc(sizeof *out * (size_t)(count + 1)))) {
            PMPI_Graph_neighbors(comm, me, count, out);
            *n = count;
        }
    } else if (topology == MPI_DIST_GRAPH) {
        int in, count, weighted;
        PMPI_Dist_graph_neighbors_count(comm, &in, &count, &weighted);
        /* destinations first, then sources and the weights, which are not needed but must be
         * taken when the graph has them */
        int *all = malloc(sizeof *all * (size_t)(2 * (in + count) + 1));
        if (all) {
            int *sources = all + count, *weights = sources + in;
            PMPI_Dist_graph_neighbors(comm, in, sources, weighted ? weights : MPI_UNWEIGHTED, count, all,
                                      weighted ? weights + in : MPI_UNWEIGHTED);
            out = all;
            *n = count;
        }
    }
    return out;
}

/* Neighbourhood collectives: block k to the k-th out-neighbour. */
void ml_to_neighbours(ml_plan_t *plan, MPI_Comm comm, ml_blocks_t b)
{
    int n;
    int *out = out_neighbours(comm, &n);
    for (int k = 0; k < n; k++)
        message(plan, comm, out[k], block(b, k));
    free(out);
}

/* Out of memory, the request goes uncounted rather than counted short. */
void ml_plan_keep(ml_plan_t *plan, MPI_Request request)
{
    if (!plan->failed && plan->n > 0)
        ml_persistent_add(request, ML_COLL, plan->messages, plan->n);
    free(plan->messages);
}
