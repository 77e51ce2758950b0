/* The machine of a communicator that spans several hosts, on one machine: this program answers
 * MPI_Get_processor_name itself (libmpilens-map's call resolves to the program's definition
 * before the MPI library's), giving even ranks the host "even-host" and odd ranks "odd-host".
 *
 * mpilens_map_topology_of_comm must then join two copies of this machine's tree under a "node"
 * level, the nodes in order of their lowest rank (even-host first), and put every rank on a slot
 * of its own host. A reordering with that topology (NULL) of heavy pairs (r, r xor 1), which
 * the launch splits across the two hosts, must bring each pair onto one host at 4 ranks, where
 * each host holds two ranks. */
#include "maptest.h"

static const char *host_of_rank(int rank) { return rank % 2 ? "odd-host" : "even-host"; }

int MPI_Get_processor_name(char *name, int *length)
{
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    *length = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", host_of_rank(rank));
    return MPI_SUCCESS;
}

static void check_joined_machine(int size)
{
    mpilens_map_topology_t *machine, *node;
    long *slot_of_rank = malloc((size_t)size * sizeof *slot_of_rank), slots, node_slots;
    int all_bound, depth, node_depth, arity;
    const char *name;
    REQUIRE(slot_of_rank);
    MAP_OK(mpilens_map_topology_of_comm(MPI_COMM_WORLD, &machine, slot_of_rank, &all_bound));
    MAP_OK(mpilens_map_topology_hwloc(&node));
    MAP_OK(mpilens_map_topology_depth(machine, &depth));
    MAP_OK(mpilens_map_topology_depth(node, &node_depth));
    MAP_OK(mpilens_map_topology_arity(machine, 0, &arity));
    MAP_OK(mpilens_map_topology_level_name(machine, 0, &name));
    MAP_OK(mpilens_map_topology_slots(machine, &slots));
    MAP_OK(mpilens_map_topology_slots(node, &node_slots));
    CHECK(depth == node_depth + 1 && arity == 2 && strcmp(name, "node") == 0 && slots == 2 * node_slots);
    for (int r = 0; r < size; r++) {
        const char *host;
        int core, pu;
        MAP_OK(mpilens_map_topology_slot_place(machine, slot_of_rank[r], &host, &core, &pu));
        CHECK(strcmp(host, host_of_rank(r)) == 0);
        CHECK(slot_of_rank[r] / node_slots == r % 2); /* even-host is node 0: it has rank 0 */
    }
    MAP_OK(mpilens_map_topology_free(node));
    MAP_OK(mpilens_map_topology_free(machine));
    free(slot_of_rank);
}

static unsigned long neighbour_pairs(int from, int to, int size)
{
    return (to == (from ^ 1) ? HEAVY : 0) + (size > 2 && to == (from + 2) % size ? LIGHT : 0);
}

static void check_pairs_brought_together(int rank, int size)
{
    unsigned long *row = malloc((size_t)size * sizeof *row);
    int *new_rank_of = malloc((size_t)size * sizeof *new_rank_of);
    REQUIRE(row && new_rank_of);
    traffic_row(neighbour_pairs, rank, size, row);
    MPI_Comm newcomm;
    mpilens_map_cost_t before, after;
    MAP_OK(
        mpilens_map_reorder(MPI_COMM_WORLD, row, NULL, MPILENS_MAP_TREEMATCH, &newcomm, new_rank_of, &before, &after));
    check_permutation(MPI_COMM_WORLD, new_rank_of, size);
    check_split(MPI_COMM_WORLD, newcomm, new_rank_of, size);
    CHECK(before.bytes_at_level[0] == size * (double)HEAVY);
    if (size % 4 == 0) {
        /* the process playing role j sits on host (its old rank) % 2 */
        for (int j = 0; j < size; j += 2)
            CHECK(player_of(new_rank_of, size, j) % 2 == player_of(new_rank_of, size, j + 1) % 2);
        CHECK(after.bytes_at_level[0] < (double)HEAVY);
    }
    MPI_Comm_free(&newcomm);
    free(row);
    free(new_rank_of);
}

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    REQUIRE(size % 2 == 0);
    check_joined_machine(size);
    check_pairs_brought_together(rank, size);
    return mpitest_finish();
}
