/* mpilens_map_reorder_session in a program linked with libmpilens-monitor: the pattern of
 * maptest.h is really sent, watched by a session, and the suspended session's rows are reordered
 * with the checks of test_reorder. A second session left active meanwhile sees the reordering's
 * own messages (as reorder.c says it will). Then the misuses, each ERR_MONITOR on every rank with
 * the outputs untouched and nobody left waiting: an active session, an unknown msid (on every rank,
 * then on rank 0 only), a session on another communicator, flags the monitor refuses. */
#include "maptest.h"
#include "mpi_monitoring.h"

#define MON_OK(call) REQUIRE((call) == MPI_SUCCESS)

/* The pattern, as messages: HEAVY bytes to the partner (tag 1), LIGHT to the next rank (tag 2). */
static void send_pattern(int rank, int size)
{
    char *out = calloc(HEAVY + LIGHT, 1), *in = calloc(HEAVY + LIGHT, 1);
    REQUIRE(out && in);
    int partner = partner_of(rank, size), next = (rank + 1) % size, previous = (rank + size - 1) % size;
    MPI_Request requests[4];
    MPI_Status statuses[4];
    MPI_Irecv(in, HEAVY, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(in + HEAVY, LIGHT, MPI_BYTE, previous, 2, MPI_COMM_WORLD, &requests[1]);
    MPI_Isend(out, HEAVY, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &requests[2]);
    MPI_Isend(out + HEAVY, LIGHT, MPI_BYTE, next, 2, MPI_COMM_WORLD, &requests[3]);
    MPI_Waitall(4, requests, statuses);
    free(out);
    free(in);
}

/* A reordering that must fail with ERR_MONITOR everywhere and leave the outputs as they were. */
static void refused(MPI_M_msid msid, int flags, const mpilens_map_topology_t *topology, int size)
{
    MPI_Comm newcomm = MPI_COMM_NULL;
    int *new_rank_of = malloc((size_t)size * sizeof *new_rank_of);
    REQUIRE(new_rank_of);
    for (int r = 0; r < size; r++)
        new_rank_of[r] = -7;
    mpilens_map_cost_t before = {.total_bytes = -1}, after = {.total_bytes = -1};
    MAP_FAILS(MPILENS_MAP_ERR_MONITOR,
              mpilens_map_reorder_session(MPI_COMM_WORLD, msid, flags, topology, MPILENS_MAP_TREEMATCH, &newcomm,
                                          new_rank_of, &before, &after));
    CHECK(newcomm == MPI_COMM_NULL);
    for (int r = 0; r < size; r++)
        CHECK(new_rank_of[r] == -7);
    CHECK(before.total_bytes == -1 && after.total_bytes == -1);
    free(new_rank_of);
}

/* Whether some rank's session saw any message of any kind. */
static int anything_seen(MPI_M_msid msid, int size)
{
    unsigned long *counts = calloc((size_t)size, sizeof *counts);
    REQUIRE(counts);
    MON_OK(MPI_M_get_data(msid, counts, MPI_M_DATA_IGNORE, MPI_M_ALL_COMM));
    int mine = 0, anyone;
    for (int r = 0; r < size; r++)
        mine |= counts[r] != 0;
    MPI_Allreduce(&mine, &anyone, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    free(counts);
    return anyone;
}

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    REQUIRE(size == 2 || size % 4 == 0);
    MON_OK(MPI_M_init());
    mpilens_map_topology_t *topology = pattern_topology(size);

    MPI_M_msid id, watch;
    MON_OK(MPI_M_start(MPI_COMM_WORLD, &id));
    send_pattern(rank, size);
    MON_OK(MPI_M_suspend(id));
    MON_OK(MPI_M_start(MPI_COMM_WORLD, &watch));

    MPI_Comm newcomm = MPI_COMM_NULL;
    int *new_rank_of = malloc((size_t)size * sizeof *new_rank_of);
    REQUIRE(new_rank_of);
    mpilens_map_cost_t before, after;
    MAP_OK(mpilens_map_reorder_session(MPI_COMM_WORLD, id, MPI_M_P2P_ONLY, topology, MPILENS_MAP_TREEMATCH, &newcomm,
                                       new_rank_of, &before, &after));
    MON_OK(MPI_M_suspend(watch));
    check_pattern_reordering(MPI_COMM_WORLD, newcomm, new_rank_of, size, &before, &after);
    CHECK(anything_seen(watch, size));
    MPI_Comm_free(&newcomm);
    free(new_rank_of);

    MON_OK(MPI_M_continue(id));
    refused(id, MPI_M_P2P_ONLY, topology, size);
    MON_OK(MPI_M_suspend(id));
    refused(id + 100, MPI_M_P2P_ONLY, topology, size);
    refused(rank == 0 ? id + 100 : id, MPI_M_P2P_ONLY, topology, size);
    refused(id, 0, topology, size);

    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_M_msid half_id;
    MON_OK(MPI_M_start(half, &half_id));
    MON_OK(MPI_M_suspend(half_id));
    refused(half_id, MPI_M_P2P_ONLY, topology, size);
    MON_OK(MPI_M_free(half_id));
    MPI_Comm_free(&half);

    MON_OK(MPI_M_free(MPI_M_ALL_MSID));
    MON_OK(MPI_M_finalize());
    MAP_OK(mpilens_map_topology_free(topology));
    return mpitest_finish();
}
