/* Collectives by their logical pattern (docs/monitor.md, "Collectives", pmpi backend): what the
 * program asked for, whatever algorithm the MPI library uses to carry it out. Each collective
 * names its pattern (from_root, to_root, to_others, to_higher, to_neighbours) and the data each
 * destination gets; the blocking, non-blocking and (MPI-4) persistent forms share both, the first
 * two counting at once, the persistent ones keeping the messages for each MPI_Start.
 * Collectives on intercommunicators are not counted. When Open MPI's backend is active the
 * engine reads collective traffic from Open MPI instead, and these counts go unused. */
#include <stdlib.h>

#include "monitor.h"
#include "next.h"

/* ---- where the messages go ------------------------------------------------------------------- */

/* A persistent collective's messages, gathered to be counted at each start. The patterns take a
 * plan, or NULL to count each message at once. */
typedef struct {
    ml_message_t *messages;
    int n, capacity, failed;
} plan_t;

static void message(plan_t *plan, MPI_Comm comm, int rank, uint64_t bytes)
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

/* Whether a collective on comm is counted: only while the engine counts (it translates ranks),
 * and only on intracommunicators. */
static int counted(MPI_Comm comm)
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

/* The data for destination k (a rank, or the k-th neighbour): count x type, counts[k] x type or
 * counts[k] x types[k]. Sizes are asked for only for the destinations a rank really sends to, as
 * the other arguments may be insignificant (a Gather's send type at the root, a Scatter's at the
 * other ranks). */
typedef struct {
    int count;
    const int *counts;
    MPI_Datatype type;
    const MPI_Datatype *types;
} blocks_t;

static blocks_t uniform(int count, MPI_Datatype type) { return (blocks_t){.count = count, .type = type}; }
static blocks_t per_rank(const int *counts, MPI_Datatype type) { return (blocks_t){.counts = counts, .type = type}; }
static blocks_t per_rank_typed(const int *counts, const MPI_Datatype *types)
{
    return (blocks_t){.counts = counts, .types = types};
}

static uint64_t block(blocks_t b, int k)
{
    return ml_bytes(b.counts ? b.counts[k] : b.count, b.types ? b.types[k] : b.type);
}

/* Allgather, Alltoall: in place, a rank sends (part of) its receive buffer, described by the
 * receive arguments. */
static blocks_t own_block(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                          MPI_Datatype recvtype)
{
    return sendbuf == MPI_IN_PLACE ? uniform(recvcount, recvtype) : uniform(sendcount, sendtype);
}

static blocks_t allgatherv_block(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int recvcounts[],
                                 MPI_Datatype recvtype, MPI_Comm comm)
{
    return sendbuf == MPI_IN_PLACE ? uniform(recvcounts[my_rank(comm)], recvtype) : uniform(sendcount, sendtype);
}

static blocks_t alltoallv_blocks(const void *sendbuf, const int sendcounts[], MPI_Datatype sendtype,
                                 const int recvcounts[], MPI_Datatype recvtype)
{
    return sendbuf == MPI_IN_PLACE ? per_rank(recvcounts, recvtype) : per_rank(sendcounts, sendtype);
}

static blocks_t alltoallw_blocks(const void *sendbuf, const int sendcounts[], const MPI_Datatype sendtypes[],
                                 const int recvcounts[], const MPI_Datatype recvtypes[])
{
    return sendbuf == MPI_IN_PLACE ? per_rank_typed(recvcounts, recvtypes) : per_rank_typed(sendcounts, sendtypes);
}

/* ---- patterns -------------------------------------------------------------------------------- */

/* Every rank to every other: Allreduce, Allgather(v), Alltoall(v,w), Reduce_scatter(_block),
 * Barrier (0 bytes). */
static void to_others(plan_t *plan, MPI_Comm comm, blocks_t b)
{
    int me = my_rank(comm), size;
    PMPI_Comm_size(comm, &size);
    for (int k = 0; k < size; k++)
        if (k != me)
            message(plan, comm, k, block(b, k));
}

/* Bcast, Scatter(v): the root to every other rank. */
static void from_root(plan_t *plan, MPI_Comm comm, int root, blocks_t b)
{
    if (my_rank(comm) == root)
        to_others(plan, comm, b);
}

/* Reduce, Gather(v): every other rank to the root (which sends nothing to itself). */
static void to_root(plan_t *plan, MPI_Comm comm, int root, blocks_t b)
{
    if (my_rank(comm) != root)
        message(plan, comm, root, block(b, root));
}

/* Scan, Exscan: rank i to every rank above i. */
static void to_higher(plan_t *plan, MPI_Comm comm, blocks_t b)
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
static void to_neighbours(plan_t *plan, MPI_Comm comm, blocks_t b)
{
    int n;
    int *out = out_neighbours(comm, &n);
    for (int k = 0; k < n; k++)
        message(plan, comm, out[k], block(b, k));
    free(out);
}

/* ---- Barrier --------------------------------------------------------------------------------- */

int MPI_Barrier(MPI_Comm comm)
{
    if (counted(comm))
        to_others(NULL, comm, uniform(0, MPI_DATATYPE_NULL));
    ML_FORWARD(MPI_Barrier, comm);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_others(NULL, comm, uniform(0, MPI_DATATYPE_NULL));
    ML_FORWARD(MPI_Ibarrier, comm, request);
}

/* ---- Bcast ----------------------------------------------------------------------------------- */

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (counted(comm))
        from_root(NULL, comm, root, uniform(count, datatype));
    ML_FORWARD(MPI_Bcast, buffer, count, datatype, root, comm);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        from_root(NULL, comm, root, uniform(count, datatype));
    ML_FORWARD(MPI_Ibcast, buffer, count, datatype, root, comm, request);
}

/* ---- Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan ---------------------------------- */

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm)
{
    if (counted(comm))
        to_root(NULL, comm, root, uniform(count, datatype));
    ML_FORWARD(MPI_Reduce, sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_root(NULL, comm, root, uniform(count, datatype));
    ML_FORWARD(MPI_Ireduce, sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (counted(comm))
        to_others(NULL, comm, uniform(count, datatype));
    ML_FORWARD(MPI_Allreduce, sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request)
{
    if (counted(comm))
        to_others(NULL, comm, uniform(count, datatype));
    ML_FORWARD(MPI_Iallreduce, sendbuf, recvbuf, count, datatype, op, comm, request);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm)
{
    if (counted(comm))
        to_others(NULL, comm, per_rank(recvcounts, datatype));
    ML_FORWARD(MPI_Reduce_scatter, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_others(NULL, comm, per_rank(recvcounts, datatype));
    ML_FORWARD(MPI_Ireduce_scatter, sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm)
{
    if (counted(comm))
        to_others(NULL, comm, uniform(recvcount, datatype));
    ML_FORWARD(MPI_Reduce_scatter_block, sendbuf, recvbuf, recvcount, datatype, op, comm);
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_others(NULL, comm, uniform(recvcount, datatype));
    ML_FORWARD(MPI_Ireduce_scatter_block, sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (counted(comm))
        to_higher(NULL, comm, uniform(count, datatype));
    ML_FORWARD(MPI_Scan, sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request *request)
{
    if (counted(comm))
        to_higher(NULL, comm, uniform(count, datatype));
    ML_FORWARD(MPI_Iscan, sendbuf, recvbuf, count, datatype, op, comm, request);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (counted(comm))
        to_higher(NULL, comm, uniform(count, datatype));
    ML_FORWARD(MPI_Exscan, sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                MPI_Request *request)
{
    if (counted(comm))
        to_higher(NULL, comm, uniform(count, datatype));
    ML_FORWARD(MPI_Iexscan, sendbuf, recvbuf, count, datatype, op, comm, request);
}

/* ---- Allgather(v), Alltoall(v,w) ------------------------------------------------------------- */

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    if (counted(comm))
        to_others(NULL, comm, own_block(sendbuf, sendcount, sendtype, recvcount, recvtype));
    ML_FORWARD(MPI_Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_others(NULL, comm, own_block(sendbuf, sendcount, sendtype, recvcount, recvtype));
    ML_FORWARD(MPI_Iallgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (counted(comm))
        to_others(NULL, comm, allgatherv_block(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm));
    ML_FORWARD(MPI_Allgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_others(NULL, comm, allgatherv_block(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm));
    ML_FORWARD(MPI_Iallgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm)
{
    if (counted(comm))
        to_others(NULL, comm, own_block(sendbuf, sendcount, sendtype, recvcount, recvtype));
    ML_FORWARD(MPI_Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_others(NULL, comm, own_block(sendbuf, sendcount, sendtype, recvcount, recvtype));
    ML_FORWARD(MPI_Ialltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (counted(comm))
        to_others(NULL, comm, alltoallv_blocks(sendbuf, sendcounts, sendtype, recvcounts, recvtype));
    ML_FORWARD(MPI_Alltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    if (counted(comm))
        to_others(NULL, comm, alltoallv_blocks(sendbuf, sendcounts, sendtype, recvcounts, recvtype));
    ML_FORWARD(MPI_Ialltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
               request);
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                  void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                  MPI_Comm comm)
{
    if (counted(comm))
        to_others(NULL, comm, alltoallw_blocks(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes));
    ML_FORWARD(MPI_Alltoallw, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_others(NULL, comm, alltoallw_blocks(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes));
    ML_FORWARD(MPI_Ialltoallw, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
               comm, request);
}

/* ---- Gather(v), Scatter(v) ------------------------------------------------------------------- */

/* The root's send arguments (Gather: insignificant at the root, in place or not) are never
 * looked at: from_root and to_root size only what a rank sends. */

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (counted(comm))
        to_root(NULL, comm, root, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Gather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_root(NULL, comm, root, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Igather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (counted(comm))
        to_root(NULL, comm, root, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Gatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_root(NULL, comm, root, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Igatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
               request);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (counted(comm))
        from_root(NULL, comm, root, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Scatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        from_root(NULL, comm, root, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Iscatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (counted(comm))
        from_root(NULL, comm, root, per_rank(sendcounts, sendtype));
    ML_FORWARD(MPI_Scatterv, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        from_root(NULL, comm, root, per_rank(sendcounts, sendtype));
    ML_FORWARD(MPI_Iscatterv, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
               request);
}

/* ---- neighbourhood --------------------------------------------------------------------------- */

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm)
{
    if (counted(comm))
        to_neighbours(NULL, comm, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Neighbor_allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_neighbours(NULL, comm, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Ineighbor_allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (counted(comm))
        to_neighbours(NULL, comm, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Neighbor_allgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    if (counted(comm))
        to_neighbours(NULL, comm, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Ineighbor_allgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
               request);
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm)
{
    if (counted(comm))
        to_neighbours(NULL, comm, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Neighbor_alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_neighbours(NULL, comm, uniform(sendcount, sendtype));
    ML_FORWARD(MPI_Ineighbor_alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm)
{
    if (counted(comm))
        to_neighbours(NULL, comm, per_rank(sendcounts, sendtype));
    ML_FORWARD(MPI_Neighbor_alltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
               recvtype, comm);
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request *request)
{
    if (counted(comm))
        to_neighbours(NULL, comm, per_rank(sendcounts, sendtype));
    ML_FORWARD(MPI_Ineighbor_alltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
               recvtype, comm, request);
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (counted(comm))
        to_neighbours(NULL, comm, per_rank_typed(sendcounts, sendtypes));
    ML_FORWARD(MPI_Neighbor_alltoallw, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
               recvtypes, comm);
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request)
{
    if (counted(comm))
        to_neighbours(NULL, comm, per_rank_typed(sendcounts, sendtypes));
    ML_FORWARD(MPI_Ineighbor_alltoallw, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
               recvtypes, comm, request);
}

/* ---- persistent (MPI-4) ---------------------------------------------------------------------- */

#if MPI_VERSION >= 4
/* Each form: forward, then, if the request was made and is counted, keep the pattern's messages
 * for its starts (the arguments are the same as the blocking form's). */

/* Out of memory, the request goes uncounted rather than counted short. */
static void keep(plan_t *plan, MPI_Request request)
{
    if (!plan->failed && plan->n > 0)
        ml_persistent_add(request, ML_COLL, plan->messages, plan->n);
    free(plan->messages);
}

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Barrier_init)(comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_others(&plan, comm, uniform(0, MPI_DATATYPE_NULL));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                   MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Bcast_init)(buffer, count, datatype, root, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        from_root(&plan, comm, root, uniform(count, datatype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Reduce_init)(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_root(&plan, comm, root, uniform(count, datatype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Allreduce_init)(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_others(&plan, comm, uniform(count, datatype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Reduce_scatter_init)(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_others(&plan, comm, per_rank(recvcounts, datatype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Reduce_scatter_block_init)(sendbuf, recvbuf, recvcount, datatype, op, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_others(&plan, comm, uniform(recvcount, datatype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                  MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Scan_init)(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_higher(&plan, comm, uniform(count, datatype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Exscan_init)(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_higher(&plan, comm, uniform(count, datatype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Allgather_init)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                         request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_others(&plan, comm, own_block(sendbuf, sendcount, sendtype, recvcount, recvtype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Allgatherv_init)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                          info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_others(&plan, comm, allgatherv_block(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Alltoall_init)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                        request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_others(&plan, comm, own_block(sendbuf, sendcount, sendtype, recvcount, recvtype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Alltoallv_init)(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                         recvtype, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_others(&plan, comm, alltoallv_blocks(sendbuf, sendcounts, sendtype, recvcounts, recvtype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                       const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Alltoallw_init)(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                         recvtypes, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_others(&plan, comm, alltoallw_blocks(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Gather_init)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                                      request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_root(&plan, comm, root, uniform(sendcount, sendtype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Gatherv_init)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                                       comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_root(&plan, comm, root, uniform(sendcount, sendtype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Scatter_init)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                                       request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        from_root(&plan, comm, root, uniform(sendcount, sendtype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Scatterv_init)(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                                        comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        from_root(&plan, comm, root, per_rank(sendcounts, sendtype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Neighbor_allgather_init)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                                  info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_neighbours(&plan, comm, uniform(sendcount, sendtype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Neighbor_allgatherv_init)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                                   recvtype, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_neighbours(&plan, comm, uniform(sendcount, sendtype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Neighbor_alltoall_init)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                                 info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_neighbours(&plan, comm, uniform(sendcount, sendtype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Neighbor_alltoallv_init)(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                                  rdispls, recvtype, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_neighbours(&plan, comm, per_rank(sendcounts, sendtype));
        keep(&plan, *request);
    }
    return rc;
}

int MPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    int rc = ML_NEXT(MPI_Neighbor_alltoallw_init)(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                                  rdispls, recvtypes, comm, info, request);
    if (rc == MPI_SUCCESS && counted(comm)) {
        plan_t plan = {0};
        to_neighbours(&plan, comm, per_rank_typed(sendcounts, sendtypes));
        keep(&plan, *request);
    }
    return rc;
}
#endif
