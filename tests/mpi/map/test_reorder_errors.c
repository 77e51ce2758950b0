/* Misuses of the reordering, in a program without libmpilens-monitor. Each must give the same
 * code on every rank, even when only one rank is wrong, leave the outputs untouched, and leave
 * no rank waiting or message in flight: a good reordering at the end still works. */
#include "maptest.h"

typedef struct {
    int size;
    unsigned long *row;
    MPI_Comm newcomm;
    int *new_rank_of;
    mpilens_map_cost_t before, after;
} outputs_t;

static void outputs_reset(outputs_t *o)
{
    o->newcomm = MPI_COMM_NULL;
    for (int r = 0; r < o->size; r++)
        o->new_rank_of[r] = -7;
    o->before.total_bytes = o->after.total_bytes = -1;
}

static void outputs_untouched(const outputs_t *o)
{
    CHECK(o->newcomm == MPI_COMM_NULL);
    for (int r = 0; r < o->size; r++)
        CHECK(o->new_rank_of[r] == -7);
    CHECK(o->before.total_bytes == -1 && o->after.total_bytes == -1);
}

/* mpilens_map_reorder with these arguments (NULL newcomm or new_rank_of where asked) must fail
 * with `expected` on this rank. */
static void reorder_fails(int expected, outputs_t *o, const unsigned long *row, const mpilens_map_topology_t *topology,
                          mpilens_map_algo_t algo, int null_newcomm, int null_new_rank_of)
{
    outputs_reset(o);
    MAP_FAILS(expected, mpilens_map_reorder(MPI_COMM_WORLD, row, topology, algo, null_newcomm ? NULL : &o->newcomm,
                                            null_new_rank_of ? NULL : o->new_rank_of, &o->before, &o->after));
    outputs_untouched(o);
}

static void topology_of_comm_fails(int size)
{
    mpilens_map_topology_t *machine = NULL;
    long *slot_of_rank = malloc((size_t)size * sizeof *slot_of_rank);
    int all_bound = -7;
    REQUIRE(slot_of_rank);
    MAP_FAILS(MPILENS_MAP_ERR_ARG, mpilens_map_topology_of_comm(MPI_COMM_NULL, &machine, slot_of_rank, &all_bound));
    MAP_FAILS(MPILENS_MAP_ERR_ARG, mpilens_map_topology_of_comm(MPI_COMM_WORLD, NULL, slot_of_rank, &all_bound));
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* only the last rank forgets its array */
    MAP_FAILS(MPILENS_MAP_ERR_ARG, mpilens_map_topology_of_comm(MPI_COMM_WORLD, &machine,
                                                                rank == size - 1 ? NULL : slot_of_rank, &all_bound));
    CHECK(machine == NULL && all_bound == -7);
    free(slot_of_rank);
}

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    REQUIRE(size == 2 || size % 4 == 0);
    outputs_t o = {.size = size,
                   .row = malloc((size_t)size * sizeof *o.row),
                   .newcomm = MPI_COMM_NULL,
                   .new_rank_of = malloc((size_t)size * sizeof *o.new_rank_of)};
    REQUIRE(o.row && o.new_rank_of);
    pattern_row(rank, size, o.row);
    mpilens_map_topology_t *topology = pattern_topology(size);
    const mpilens_map_algo_t treematch = MPILENS_MAP_TREEMATCH;

    /* null outputs, everywhere or on one rank; a null row on one rank */
    reorder_fails(MPILENS_MAP_ERR_ARG, &o, o.row, topology, treematch, 1, 0);
    reorder_fails(MPILENS_MAP_ERR_ARG, &o, o.row, topology, treematch, 0, rank == 1);
    reorder_fails(MPILENS_MAP_ERR_ARG, &o, rank == size - 1 ? NULL : o.row, topology, treematch, 0, 0);
    /* a topology on rank 0 only: the others would look for the machine in a collective the root
     * never enters */
    reorder_fails(MPILENS_MAP_ERR_ARG, &o, o.row, rank == 0 ? topology : NULL, treematch, 0, 0);
    /* ranks that disagree on the algorithm, and an algorithm that does not exist */
    reorder_fails(MPILENS_MAP_ERR_ARG, &o, o.row, topology, rank == 0 ? MPILENS_MAP_GREEDY : treematch, 0, 0);
    reorder_fails(MPILENS_MAP_ERR_ARG, &o, o.row, topology, (mpilens_map_algo_t)99, 0, 0);
    outputs_reset(&o);
    MAP_FAILS(MPILENS_MAP_ERR_ARG, mpilens_map_reorder(MPI_COMM_NULL, o.row, topology, treematch, &o.newcomm,
                                                       o.new_rank_of, &o.before, &o.after));
    outputs_untouched(&o);

    int scotch;
    MAP_OK(mpilens_map_algo_available(MPILENS_MAP_SCOTCH, &scotch));
    if (!scotch)
        reorder_fails(MPILENS_MAP_ERR_UNSUPPORTED, &o, o.row, topology, MPILENS_MAP_SCOTCH, 0, 0);

    /* no libmpilens-monitor in this program */
    outputs_reset(&o);
    MAP_FAILS(MPILENS_MAP_ERR_MONITOR,
              mpilens_map_reorder_session(MPI_COMM_WORLD, 0, MPI_M_P2P_ONLY, topology, treematch, &o.newcomm,
                                          o.new_rank_of, &o.before, &o.after));
    MAP_FAILS(MPILENS_MAP_ERR_ARG, mpilens_map_reorder_session(MPI_COMM_NULL, 0, MPI_M_P2P_ONLY, topology, treematch,
                                                               &o.newcomm, o.new_rank_of, &o.before, &o.after));
    outputs_untouched(&o);

    topology_of_comm_fails(size);

    /* after all that, a reordering still goes through */
    MAP_OK(mpilens_map_reorder(MPI_COMM_WORLD, o.row, topology, treematch, &o.newcomm, o.new_rank_of, &o.before,
                               &o.after));
    check_pattern_reordering(MPI_COMM_WORLD, o.newcomm, o.new_rank_of, size, &o.before, &o.after);
    MPI_Comm_free(&o.newcomm);

    MAP_OK(mpilens_map_topology_free(topology));
    free(o.row);
    free(o.new_rank_of);
    return mpitest_finish();
}
