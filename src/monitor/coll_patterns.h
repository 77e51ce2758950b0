/* Collectives by their logical pattern (coll_patterns.c): what the monitor's collective hooks in
 * wrapped.spec call. A hook names the pattern and the data each destination gets:
 *
 *     ML_COLL_NOW(ml_from_root, comm, root, ml_uniform(count, datatype));    blocking, non-blocking
 *     ML_COLL_KEEP(ml_from_root, comm, root, ml_uniform(count, datatype));   persistent (after the
 *                                                                            call: needs *request)
 *
 * Count arrays may be int (the MPI-3 forms) or MPI_Count (MPI-4's large-count forms): the block
 * constructors take either. */
#ifndef MPILENS_MONITOR_COLL_PATTERNS_H
#define MPILENS_MONITOR_COLL_PATTERNS_H

#include "monitor.h"

/* A persistent collective's messages, gathered to be counted at each start. The patterns take a
 * plan, or NULL to count each message at once. */
typedef struct {
    ml_message_t *messages;
    int n, capacity, failed;
} ml_plan_t;

/* Per-destination counts, of either width. */
typedef struct {
    const int *small;
    const MPI_Count *large;
} ml_counts_t;

static inline ml_counts_t ml_counts_small(const int *counts) { return (ml_counts_t){.small = counts}; }
static inline ml_counts_t ml_counts_large(const MPI_Count *counts) { return (ml_counts_t){.large = counts}; }
#define ML_COUNTS(counts)                                                                                              \
    _Generic((counts),                                                                                                 \
        const int *: ml_counts_small,                                                                                  \
        int *: ml_counts_small,                                                                                        \
        const MPI_Count *: ml_counts_large,                                                                            \
        MPI_Count *: ml_counts_large)(counts)

/* The data for destination k (a rank, or the k-th neighbour): count x type, counts[k] x type or
 * counts[k] x types[k]. Sizes are asked for only for the destinations a rank really sends to, as
 * the other arguments may be insignificant (a Gather's send type at the root, a Scatter's at the
 * other ranks). */
typedef struct {
    MPI_Count count;
    ml_counts_t counts; /* per destination, when set */
    MPI_Datatype type;
    const MPI_Datatype *types;
} ml_blocks_t;

static inline ml_blocks_t ml_uniform(MPI_Count count, MPI_Datatype type)
{
    return (ml_blocks_t){.count = count, .type = type};
}
ml_blocks_t ml_per_rank_of(ml_counts_t counts, MPI_Datatype type);
ml_blocks_t ml_per_rank_typed_of(ml_counts_t counts, const MPI_Datatype *types);
/* Allgather, Alltoall: in place, a rank sends (part of) its receive buffer, described by the
 * receive arguments. */
ml_blocks_t ml_own_block(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, MPI_Count recvcount,
                         MPI_Datatype recvtype);
ml_blocks_t ml_allgatherv_block_of(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   ml_counts_t recvcounts, MPI_Datatype recvtype, MPI_Comm comm);
ml_blocks_t ml_alltoallv_blocks_of(const void *sendbuf, ml_counts_t sendcounts, MPI_Datatype sendtype,
                                   ml_counts_t recvcounts, MPI_Datatype recvtype);
ml_blocks_t ml_alltoallw_blocks_of(const void *sendbuf, ml_counts_t sendcounts, const MPI_Datatype *sendtypes,
                                   ml_counts_t recvcounts, const MPI_Datatype *recvtypes);
#define ml_per_rank(counts, type) ml_per_rank_of(ML_COUNTS(counts), type)
#define ml_per_rank_typed(counts, types) ml_per_rank_typed_of(ML_COUNTS(counts), types)
#define ml_allgatherv_block(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm)                                  \
    ml_allgatherv_block_of(sendbuf, sendcount, sendtype, ML_COUNTS(recvcounts), recvtype, comm)
#define ml_alltoallv_blocks(sendbuf, sendcounts, sendtype, recvcounts, recvtype)                                       \
    ml_alltoallv_blocks_of(sendbuf, ML_COUNTS(sendcounts), sendtype, ML_COUNTS(recvcounts), recvtype)
#define ml_alltoallw_blocks(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes)                                     \
    ml_alltoallw_blocks_of(sendbuf, ML_COUNTS(sendcounts), sendtypes, ML_COUNTS(recvcounts), recvtypes)

/* The patterns. */
void ml_to_others(ml_plan_t *plan, MPI_Comm comm, ml_blocks_t b);           /* every rank to every other */
void ml_from_root(ml_plan_t *plan, MPI_Comm comm, int root, ml_blocks_t b); /* Bcast, Scatter(v) */
void ml_to_root(ml_plan_t *plan, MPI_Comm comm, int root, ml_blocks_t b);   /* Reduce, Gather(v) */
void ml_to_higher(ml_plan_t *plan, MPI_Comm comm, ml_blocks_t b);           /* Scan, Exscan */
void ml_to_neighbours(ml_plan_t *plan, MPI_Comm comm, ml_blocks_t b);       /* neighbourhood */

/* Whether a collective on comm is counted: only while the engine counts (it translates ranks),
 * and only on intracommunicators. */
int ml_coll_counted(MPI_Comm comm);
/* A persistent collective's plan registered for its request's starts. */
void ml_plan_keep(ml_plan_t *plan, MPI_Request request);

#define ML_COLL_NOW(pattern, comm, ...)                                                                                \
    do {                                                                                                               \
        if (ml_coll_counted(comm))                                                                                     \
            pattern(NULL, comm, __VA_ARGS__);                                                                          \
    } while (0)

#define ML_COLL_KEEP(pattern, comm, ...)                                                                               \
    do {                                                                                                               \
        if (ml_coll_counted(comm)) {                                                                                   \
            ml_plan_t plan_ = {0};                                                                                     \
            pattern(&plan_, comm, __VA_ARGS__);                                                                        \
            ml_plan_keep(&plan_, *request);                                                                            \
        }                                                                                                              \
    } while (0)

#endif
