/* The real machine (topology NULL): mpilens_map_topology_of_comm and a reordering on it.
 * Under make test it runs on one host; tests/cluster runs it across the test cluster's nodes,
 * whose host names are real (test_reorder_hosts.c fakes them on one machine).
 *
 * What the launcher did is read, not assumed (Open MPI binds to cores here, MPICH's hydra does
 * not bind), and printed; the checks follow from it: every rank gets the same valid slots; on one
 * host the machine is this node's hwloc tree; a rank bound to one CPU sits on that CPU's slot;
 * all_bound says whether every rank is bound; when no rank is bound at all, rank r is on slot
 * r % slots (free slots in order, then round again). The reordering of the pattern gives a
 * permutation that the split matches, redistributes correctly and costs no more than before. */
#include <sched.h>

#include "maptest.h"

/* This process's affinity: the number of CPUs it may run on, and the first of them. */
static int affinity(int *cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    *cpu = -1;
    for (int c = 0; c < CPU_SETSIZE && *cpu < 0; c++)
        if (CPU_ISSET(c, &set))
            *cpu = c;
    return CPU_COUNT(&set);
}

static void check_same_everywhere(const long *values, int count)
{
    long *root = malloc((size_t)count * sizeof *root);
    REQUIRE(root);
    memcpy(root, values, (size_t)count * sizeof *root);
    MPI_Bcast(root, count, MPI_LONG, 0, MPI_COMM_WORLD);
    CHECK(memcmp(root, values, (size_t)count * sizeof *root) == 0);
    free(root);
}

/* On one host the machine is this node's own tree. */
static void check_single_node(const mpilens_map_topology_t *machine)
{
    mpilens_map_topology_t *node;
    char described[512], expected[512];
    MAP_OK(mpilens_map_topology_hwloc(&node));
    MAP_OK(mpilens_map_topology_describe(machine, described, sizeof described));
    MAP_OK(mpilens_map_topology_describe(node, expected, sizeof expected));
    CHECK(strcmp(described, expected) == 0);
    MAP_OK(mpilens_map_topology_free(node));
}

/* Across hosts: one "node" per host, in order of their lowest rank, each a copy of this node's
 * tree, every rank on a slot of the host MPI_Get_processor_name names for it. */
static void check_several_hosts(const mpilens_map_topology_t *machine, const long *slot_of_rank, int rank, int size)
{
    char mine[MPI_MAX_PROCESSOR_NAME], *names = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    int length, hosts = 0, arity, depth, node_depth;
    long node_slots;
    const char *level;
    REQUIRE(names);
    memset(mine, 0, sizeof mine);
    MPI_Get_processor_name(mine, &length);
    MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
    mpilens_map_topology_t *node;
    MAP_OK(mpilens_map_topology_hwloc(&node));
    MAP_OK(mpilens_map_topology_slots(node, &node_slots));
    MAP_OK(mpilens_map_topology_depth(node, &node_depth));
    MAP_OK(mpilens_map_topology_depth(machine, &depth));
    MAP_OK(mpilens_map_topology_arity(machine, 0, &arity));
    MAP_OK(mpilens_map_topology_level_name(machine, 0, &level));
    /* first[r]: the lowest rank on r's host; the host's node is the count of hosts before it */
    int *first = malloc((size_t)size * sizeof *first);
    REQUIRE(first);
    for (int r = 0; r < size; r++) {
        const char *name = names + (size_t)r * MPI_MAX_PROCESSOR_NAME, *host;
        int node_index = 0, core, pu;
        for (first[r] = 0; strcmp(names + (size_t)first[r] * MPI_MAX_PROCESSOR_NAME, name) != 0; first[r]++)
            ;
        for (int q = 0; q < first[r]; q++)
            node_index += first[q] == q;
        hosts += first[r] == r;
        MAP_OK(mpilens_map_topology_slot_place(machine, slot_of_rank[r], &host, &core, &pu));
        CHECK(strcmp(host, name) == 0);
        CHECK(slot_of_rank[r] / node_slots == node_index);
    }
    free(first);
    CHECK(strcmp(level, "node") == 0 && arity == hosts && depth == node_depth + 1);
    if (rank == 0)
        printf("%d hosts joined under \"node\", %ld slots each\n", hosts, node_slots);
    MAP_OK(mpilens_map_topology_free(node));
    free(names);
}

static void check_machine(int rank, int size)
{
    mpilens_map_topology_t *machine;
    long *slot_of_rank = malloc((size_t)size * sizeof *slot_of_rank), slots;
    int all_bound;
    REQUIRE(slot_of_rank);
    MAP_OK(mpilens_map_topology_of_comm(MPI_COMM_WORLD, &machine, slot_of_rank, &all_bound));
    MAP_OK(mpilens_map_topology_slots(machine, &slots));
    for (int r = 0; r < size; r++)
        CHECK(slot_of_rank[r] >= 0 && slot_of_rank[r] < slots);
    check_same_everywhere(slot_of_rank, size);
    long bound_flag = all_bound;
    check_same_everywhere(&bound_flag, 1);

    int cpu, cpus = affinity(&cpu);
    int on_one_cpu = cpus == 1, everyone_on_one_cpu, unbound = cpus >= slots, everyone_unbound;
    MPI_Allreduce(&on_one_cpu, &everyone_on_one_cpu, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Allreduce(&unbound, &everyone_unbound, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    const char *host;
    int core, pu;
    MAP_OK(mpilens_map_topology_slot_place(machine, slot_of_rank[rank], &host, &core, &pu));
    printf("rank %d: %d CPU(s) allowed (first %d), slot %ld (core %d, PU %d)%s\n", rank, cpus, cpu, slot_of_rank[rank],
           core, pu, rank == 0 ? (all_bound ? ", all ranks bound" : ", not all ranks bound") : "");
    if (on_one_cpu)
        CHECK(pu == cpu);
    if (everyone_on_one_cpu)
        CHECK(all_bound);
    if (!on_one_cpu && slots > 1 && unbound)
        CHECK(!all_bound);
    if (mpitest_one_host()) {
        check_single_node(machine);
        for (int r = 0; everyone_unbound && r < size; r++)
            CHECK(slot_of_rank[r] == r % slots);
    } else {
        check_several_hosts(machine, slot_of_rank, rank, size);
    }
    MAP_OK(mpilens_map_topology_free(machine));
    free(slot_of_rank);
}

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    setvbuf(stdout, NULL, _IOLBF, 0);
    check_machine(rank, size);

    unsigned long *row = malloc((size_t)size * sizeof *row);
    int *new_rank_of = malloc((size_t)size * sizeof *new_rank_of);
    REQUIRE(row && new_rank_of);
    pattern_row(rank, size, row);
    MPI_Comm newcomm = MPI_COMM_NULL;
    mpilens_map_cost_t before, after;
    MAP_OK(
        mpilens_map_reorder(MPI_COMM_WORLD, row, NULL, MPILENS_MAP_TREEMATCH, &newcomm, new_rank_of, &before, &after));
    check_permutation(MPI_COMM_WORLD, new_rank_of, size);
    check_split(MPI_COMM_WORLD, newcomm, new_rank_of, size);
    check_redistribution(MPI_COMM_WORLD, new_rank_of, size);
    CHECK(before.total_bytes == size * (double)(HEAVY + LIGHT) && after.total_bytes == before.total_bytes);
    CHECK(after.weighted_bytes <= before.weighted_bytes);
    /* Across hosts, partners r and r + N/2 are split by a block placement; whatever the
     * placement, the best mapping leaves no partner pair across hosts. */
    if (!mpitest_one_host() && size % 4 == 0)
        CHECK(after.bytes_at_level[0] < (double)HEAVY);
    if (rank == 0)
        printf("weighted bytes: %g before, %g after; between nodes: %g before, %g after\n", before.weighted_bytes,
               after.weighted_bytes, before.bytes_at_level[0], after.bytes_at_level[0]);
    MPI_Comm_free(&newcomm);

    free(row);
    free(new_rank_of);
    return mpitest_finish();
}
