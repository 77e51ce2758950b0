/* What the reordering tests share: a pattern whose best mapping is known, and the checks every
 * reordering must pass whatever mapping it chose.
 *
 * The pattern: each rank r of N sends HEAVY bytes to its partner r + N/2 (mod N) and LIGHT bytes
 * to its ring neighbour r + 1. On "node:2 core:N/2" with rank r on slot r, the partners sit on
 * different nodes; the best mapping brings them together. */
#ifndef MPILENS_TEST_MAPTEST_H
#define MPILENS_TEST_MAPTEST_H

#include <stdlib.h>

#include "mpilens/map.h"
#include "mpitest.h"

enum { HEAVY = 1000, LIGHT = 1 };

/* A library call that must succeed, else the test cannot go on. */
#define MAP_OK(call)                                                                                                   \
    do {                                                                                                               \
        int s_ = (call);                                                                                               \
        if (s_ != MPILENS_MAP_OK) {                                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, mpilens_map_status_string(s_));              \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                              \
        }                                                                                                              \
    } while (0)

/* A call that must fail with `expected` (the same on every rank: each rank checks its own). */
#define MAP_FAILS(expected, call)                                                                                      \
    do {                                                                                                               \
        int s_ = (call);                                                                                               \
        if (s_ != (expected)) {                                                                                        \
            int r_;                                                                                                    \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                                        \
            fprintf(stderr, "rank %d: %s:%d: %s: %s, expected %s\n", r_, __FILE__, __LINE__, #call,                    \
                    mpilens_map_status_string(s_), mpilens_map_status_string(expected));                               \
            check_failures++;                                                                                          \
        }                                                                                                              \
    } while (0)

static inline int partner_of(int rank, int size) { return (rank + size / 2) % size; }

/* Bytes sent from one rank to another: the pattern, or any other traffic a test makes up. */
typedef unsigned long (*traffic_t)(int from, int to, int size);

/* The pattern (at 2 ranks the partner is the neighbour: HEAVY + LIGHT). */
static inline unsigned long pattern_bytes(int from, int to, int size)
{
    return (to == partner_of(from, size) ? HEAVY : 0) + (to == (from + 1) % size ? LIGHT : 0);
}

static inline void traffic_row(traffic_t traffic, int rank, int size, unsigned long *row)
{
    for (int to = 0; to < size; to++)
        row[to] = traffic(rank, to, size);
}

static inline void pattern_row(int rank, int size, unsigned long *row) { traffic_row(pattern_bytes, rank, size, row); }

/* The two-node topology of the pattern, with costs 10 between nodes and 1 within a node. */
static inline mpilens_map_topology_t *pattern_topology(int size)
{
    char spec[64];
    mpilens_map_topology_t *topology;
    snprintf(spec, sizeof spec, "node:2 core:%d cost=10,1", size / 2);
    MAP_OK(mpilens_map_topology_synthetic(spec, &topology));
    return topology;
}

/* What the pattern costs (weighted bytes) on pattern_topology, rank r on slot r, and after the
 * best mapping. At 2 ranks there is one slot per node: nothing can improve. With N a multiple
 * of 4, before: every heavy message crosses nodes, and 2 light ones (N/2 - 1 -> N/2 and
 * N - 1 -> 0); after: partners share a node, the pairs (r, r + N/2) form a ring of N/2 pairs that
 * two nodes cut in two places, 2 light messages each way. */
static inline double pattern_cost_before(int size)
{
    if (size == 2)
        return 2.0 * (HEAVY + LIGHT) * 10;
    return size * HEAVY * 10.0 + 2 * LIGHT * 10.0 + (size - 2) * LIGHT * 1.0;
}

static inline double pattern_cost_after(int size)
{
    if (size == 2)
        return pattern_cost_before(size);
    return size * HEAVY * 1.0 + 4 * LIGHT * 10.0 + (size - 4) * LIGHT * 1.0;
}

/* The process of comm that now plays role `role` (has new rank `role`). */
static inline int player_of(const int *new_rank_of, int size, int role)
{
    for (int q = 0; q < size; q++)
        if (new_rank_of[q] == role)
            return q;
    return -1;
}

/* What the traffic costs on pattern_topology once reordered, computed here from new_rank_of
 * alone: role j is played by the process of old rank q = player_of(j), which runs on slot q.
 * Equal to the library's `after` only if the library and the test read new_rank_of the same way
 * (rank r becomes new_rank_of[r]), which co-location alone cannot tell when the new order is its
 * own inverse. */
static inline double placed_cost(traffic_t traffic, const int *new_rank_of, int size)
{
    int half = size / 2;
    double cost = 0;
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++) {
            int p = player_of(new_rank_of, size, i), q = player_of(new_rank_of, size, j);
            cost += traffic(i, j, size) * (p == q ? 0.0 : p / half == q / half ? 1.0 : 10.0);
        }
    return cost;
}

/* new_rank_of is a permutation of 0..size-1, the same on every rank. */
static inline void check_permutation(MPI_Comm comm, const int *new_rank_of, int size)
{
    int *seen = calloc((size_t)size, sizeof *seen), *root = malloc((size_t)size * sizeof *root);
    REQUIRE(seen && root);
    for (int r = 0; r < size; r++) {
        int role = new_rank_of[r];
        CHECK(role >= 0 && role < size);
        if (role >= 0 && role < size) {
            CHECK(!seen[role]);
            seen[role] = 1;
        }
    }
    memcpy(root, new_rank_of, (size_t)size * sizeof *root);
    MPI_Bcast(root, size, MPI_INT, 0, comm);
    CHECK(memcmp(root, new_rank_of, (size_t)size * sizeof *root) == 0);
    free(seen);
    free(root);
}

/* The header's promise, for every rank at once: rank r of comm is rank new_rank_of[r] of
 * newcomm. */
static inline void check_split(MPI_Comm comm, MPI_Comm newcomm, const int *new_rank_of, int size)
{
    REQUIRE(newcomm != MPI_COMM_NULL);
    int rank, new_rank, new_size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_rank(newcomm, &new_rank);
    MPI_Comm_size(newcomm, &new_size);
    CHECK(new_size == size);
    CHECK(new_rank == new_rank_of[rank]);
    MPI_Group old_group, new_group;
    MPI_Comm_group(comm, &old_group);
    MPI_Comm_group(newcomm, &new_group);
    int *ranks = malloc((size_t)size * sizeof *ranks), *translated = malloc((size_t)size * sizeof *translated);
    REQUIRE(ranks && translated);
    for (int r = 0; r < size; r++)
        ranks[r] = r;
    MPI_Group_translate_ranks(old_group, size, ranks, new_group, translated);
    for (int r = 0; r < size; r++)
        CHECK(translated[r] == new_rank_of[r]);
    MPI_Group_free(&old_group);
    MPI_Group_free(&new_group);
    free(ranks);
    free(translated);
}

/* The redistribution map.h prescribes: each rank sends its data (here: its rank) to the process
 * whose new rank is its rank, and so receives the data of the part it now plays. */
static inline void check_redistribution(MPI_Comm comm, const int *new_rank_of, int size)
{
    int rank, received = -1;
    MPI_Comm_rank(comm, &rank);
    int successor = player_of(new_rank_of, size, rank);
    REQUIRE(successor >= 0);
    MPI_Status status;
    MPI_Sendrecv(&rank, 1, MPI_INT, successor, 17, &received, 1, MPI_INT, new_rank_of[rank], 17, comm, &status);
    CHECK(received == new_rank_of[rank]);
}

/* Partners (roles j and j + N/2) are now played by processes on the same node (slot = old rank,
 * node = slot / (N/2)); meaningless at 2 ranks, where each node has one slot. */
static inline void check_partners_together(const int *new_rank_of, int size)
{
    int half = size / 2;
    for (int j = 0; half > 1 && j < half; j++)
        CHECK(player_of(new_rank_of, size, j) / half == player_of(new_rank_of, size, j + half) / half);
}

/* Everything a reordering of the pattern on pattern_topology must give. */
static inline void check_pattern_reordering(MPI_Comm comm, MPI_Comm newcomm, const int *new_rank_of, int size,
                                            const mpilens_map_cost_t *before, const mpilens_map_cost_t *after)
{
    check_permutation(comm, new_rank_of, size);
    check_split(comm, newcomm, new_rank_of, size);
    check_partners_together(new_rank_of, size);
    CHECK(before->total_bytes == size * (double)(HEAVY + LIGHT));
    CHECK(after->total_bytes == before->total_bytes);
    CHECK(before->weighted_bytes == pattern_cost_before(size));
    CHECK(after->weighted_bytes == pattern_cost_after(size));
    CHECK(after->weighted_bytes <= before->weighted_bytes);
    CHECK(placed_cost(pattern_bytes, new_rank_of, size) == after->weighted_bytes);
    check_redistribution(comm, new_rank_of, size);
}

#endif
