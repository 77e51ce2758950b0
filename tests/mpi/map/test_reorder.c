/* mpilens_map_reorder on a synthetic topology, where the best mapping of the pattern is known
 * (maptest.h): with each algorithm that finds it, the new order is a permutation agreed by every
 * rank, MPI_Comm_split gave exactly it, partners now share a node, the costs are the hand-computed
 * ones, and the prescribed redistribution hands each process the data of its new part. With
 * uneven traffic and every algorithm, the costs are those of the order returned. Then the
 * identity keeps everyone in place, and, with more ranks than slots (rank r on slot r % slots),
 * partners end on the same slot. Runs at 2 ranks or a multiple of 4. */
#include "maptest.h"

/* Reorders the pattern with `algo` and checks everything maptest.h knows about it. */
static void reorder_pattern(mpilens_map_algo_t algo, const mpilens_map_topology_t *topology, const unsigned long *row,
                            int size)
{
    MPI_Comm newcomm = MPI_COMM_NULL;
    int *new_rank_of = malloc((size_t)size * sizeof *new_rank_of);
    REQUIRE(new_rank_of);
    mpilens_map_cost_t before, after;
    MAP_OK(mpilens_map_reorder(MPI_COMM_WORLD, row, topology, algo, &newcomm, new_rank_of, &before, &after));
    check_pattern_reordering(MPI_COMM_WORLD, newcomm, new_rank_of, size, &before, &after);
    MPI_Comm_free(&newcomm);
    free(new_rank_of);
}

/* Uneven traffic, no two pairs alike: whatever order an algorithm picks, the library's figures
 * must be what that order costs when read as map.h says (see placed_cost). */
static unsigned long uneven_bytes(int from, int to, int size)
{
    (void)size;
    return from == to ? 0 : 1 + (unsigned long)((from * 7 + to * 3) % 11) * 100;
}

static void reorder_uneven(mpilens_map_algo_t algo, const mpilens_map_topology_t *topology, int rank, int size)
{
    unsigned long *row = malloc((size_t)size * sizeof *row);
    int *new_rank_of = malloc((size_t)size * sizeof *new_rank_of), *unmoved = malloc((size_t)size * sizeof *unmoved);
    REQUIRE(row && new_rank_of && unmoved);
    traffic_row(uneven_bytes, rank, size, row);
    for (int r = 0; r < size; r++)
        unmoved[r] = r;
    MPI_Comm newcomm = MPI_COMM_NULL;
    mpilens_map_cost_t before, after;
    MAP_OK(mpilens_map_reorder(MPI_COMM_WORLD, row, topology, algo, &newcomm, new_rank_of, &before, &after));
    check_permutation(MPI_COMM_WORLD, new_rank_of, size);
    check_split(MPI_COMM_WORLD, newcomm, new_rank_of, size);
    CHECK(before.weighted_bytes == placed_cost(uneven_bytes, unmoved, size));
    CHECK(after.weighted_bytes == placed_cost(uneven_bytes, new_rank_of, size));
    check_redistribution(MPI_COMM_WORLD, new_rank_of, size);
    MPI_Comm_free(&newcomm);
    free(row);
    free(new_rank_of);
    free(unmoved);
}

/* The identity mapping: nobody moves, and the costs are the current placement's. */
static void reorder_identity(const mpilens_map_topology_t *topology, const unsigned long *row, int size)
{
    MPI_Comm newcomm = MPI_COMM_NULL;
    int *new_rank_of = malloc((size_t)size * sizeof *new_rank_of);
    REQUIRE(new_rank_of);
    mpilens_map_cost_t before, after;
    MAP_OK(mpilens_map_reorder(MPI_COMM_WORLD, row, topology, MPILENS_MAP_IDENTITY, &newcomm, new_rank_of, &before,
                               &after));
    for (int r = 0; r < size; r++)
        CHECK(new_rank_of[r] == r);
    check_split(MPI_COMM_WORLD, newcomm, new_rank_of, size);
    CHECK(before.weighted_bytes == pattern_cost_before(size));
    CHECK(after.weighted_bytes == before.weighted_bytes);
    MPI_Comm_free(&newcomm);
    free(new_rank_of);
}

/* Four ranks on "node:2", two slots: rank r on slot r % 2, so partners (r, r + 2) already share
 * a slot and only the 4 light messages cross nodes (a slot with itself costs nothing). The best
 * mapping cannot do better, and must keep partners on one slot. */
static void reorder_oversubscribed(const unsigned long *row)
{
    enum { SIZE = 4 };
    mpilens_map_topology_t *two_slots;
    MAP_OK(mpilens_map_topology_synthetic("node:2 cost=10", &two_slots));
    MPI_Comm newcomm = MPI_COMM_NULL;
    int new_rank_of[SIZE];
    mpilens_map_cost_t before, after;
    MAP_OK(mpilens_map_reorder(MPI_COMM_WORLD, row, two_slots, MPILENS_MAP_TREEMATCH, &newcomm, new_rank_of, &before,
                               &after));
    check_permutation(MPI_COMM_WORLD, new_rank_of, SIZE);
    check_split(MPI_COMM_WORLD, newcomm, new_rank_of, SIZE);
    for (int j = 0; j < SIZE / 2; j++)
        CHECK(player_of(new_rank_of, SIZE, j) % 2 == player_of(new_rank_of, SIZE, j + 2) % 2);
    CHECK(before.weighted_bytes == 4 * LIGHT * 10.0);
    CHECK(after.weighted_bytes == 4 * LIGHT * 10.0);
    check_redistribution(MPI_COMM_WORLD, new_rank_of, SIZE);
    MPI_Comm_free(&newcomm);
    MAP_OK(mpilens_map_topology_free(two_slots));
}

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    REQUIRE(size == 2 || size % 4 == 0);
    unsigned long *row = malloc((size_t)size * sizeof *row);
    REQUIRE(row);
    pattern_row(rank, size, row);
    mpilens_map_topology_t *topology = pattern_topology(size);

    const mpilens_map_algo_t algos[] = {MPILENS_MAP_TREEMATCH, MPILENS_MAP_GREEDY, MPILENS_MAP_SCOTCH};
    for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
        int available;
        MAP_OK(mpilens_map_algo_available(algos[a], &available));
        if (available)
            reorder_pattern(algos[a], topology, row, size);
    }
    for (int algo = MPILENS_MAP_TREEMATCH; algo <= MPILENS_MAP_RANDOM; algo++) {
        int available;
        MAP_OK(mpilens_map_algo_available((mpilens_map_algo_t)algo, &available));
        if (available)
            reorder_uneven((mpilens_map_algo_t)algo, topology, rank, size);
    }
    reorder_identity(topology, row, size);
    if (size == 4)
        reorder_oversubscribed(row);

    MAP_OK(mpilens_map_topology_free(topology));
    free(row);
    return mpitest_finish();
}
