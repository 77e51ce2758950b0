/* Which backend produces collective data, and what it sees (docs/monitor.md).
 *
 * usage: test_monitor_backend tree|flat|logical
 * - tree / flat: the Open MPI backend must be active (run with pml_monitoring_enable=1 and the
 *   tuned broadcast forced to binomial (6) or linear (1)); a 1000-byte broadcast from rank 0 must
 *   show as the messages Open MPI really sent: the binomial tree (parent of rank i is i minus its
 *   highest power of two) or one message from the root to each rank;
 * - logical: the backend is PMPI (MPICH, or an Open MPI whose monitoring cannot be read); the
 *   broadcast shows as its logical pattern, root to every other rank.
 * In every case the program's own point-to-point message (100 bytes, 0 to 1) is in P2P data
 * only, and the library's own traffic (gathering another session's data while this one is
 * active) is in no session's data. */
#include <stdlib.h>
#include <string.h>

#include "mpi_monitoring.h"
#include "mpitest.h"

static int highest_power_of_two(int i)
{
    int p = 1;
    while (p * 2 <= i)
        p *= 2;
    return p;
}

/* The expected COLL bytes matrix of the broadcast. */
static void expected_bcast(const char *mode, int size, unsigned long *m)
{
    memset(m, 0, sizeof *m * (size_t)size * (size_t)size);
    for (int i = 1; i < size; i++) {
        int from = strcmp(mode, "tree") == 0 ? i - highest_power_of_two(i) : 0;
        m[from * size + i] = 1000;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, backend;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(argc == 2 && size >= 2);
    const char *mode = argv[1];
    int decomposed = strcmp(mode, "logical") != 0;

    REQUIRE(MPI_M_init() == MPI_SUCCESS);
    CHECK(MPI_M_get_backend(MPI_M_COLL_ONLY, &backend) == MPI_SUCCESS);
    CHECK(backend == (decomposed ? MPI_M_BACKEND_OMPI_MPIT : MPI_M_BACKEND_PMPI));
    CHECK(MPI_M_get_backend(MPI_M_P2P_ONLY, &backend) == MPI_SUCCESS && backend == MPI_M_BACKEND_PMPI);

    MPI_M_msid watched, other;
    REQUIRE(MPI_M_start(MPI_COMM_WORLD, &other) == MPI_SUCCESS);
    REQUIRE(MPI_M_suspend(other) == MPI_SUCCESS);
    REQUIRE(MPI_M_start(MPI_COMM_WORLD, &watched) == MPI_SUCCESS);

    char buf[1000];
    memset(buf, rank, sizeof buf);
    if (rank == 0)
        MPI_Send(buf, 100, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(buf, 100, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Bcast(buf, 1000, MPI_CHAR, 0, MPI_COMM_WORLD);
    /* the library's own traffic while `watched` is active: gathering the other session */
    unsigned long *scratch = malloc(sizeof *scratch * (size_t)size * (size_t)size);
    CHECK(MPI_M_allgather_data(other, scratch, MPI_M_DATA_IGNORE, MPI_M_ALL_COMM) == MPI_SUCCESS);
    REQUIRE(MPI_M_suspend(watched) == MPI_SUCCESS);

    unsigned long *coll = malloc(sizeof *coll * (size_t)size * (size_t)size);
    unsigned long *p2p = malloc(sizeof *p2p * (size_t)size * (size_t)size);
    unsigned long *expected = malloc(sizeof *expected * (size_t)size * (size_t)size);
    CHECK(MPI_M_allgather_data(watched, MPI_M_DATA_IGNORE, coll, MPI_M_COLL_ONLY) == MPI_SUCCESS);
    CHECK(MPI_M_allgather_data(watched, MPI_M_DATA_IGNORE, p2p, MPI_M_P2P_ONLY) == MPI_SUCCESS);
    expected_bcast(mode, size, expected);
    int same = memcmp(coll, expected, sizeof *coll * (size_t)size * (size_t)size) == 0;
    if (!same && rank == 0)
        for (int i = 0; i < size; i++)
            for (int j = 0; j < size; j++)
                if (coll[i * size + j] != expected[i * size + j])
                    fprintf(stderr, "COLL bytes %d -> %d: %lu, expected %lu\n", i, j, coll[i * size + j],
                            expected[i * size + j]);
    CHECK(same);
    for (int i = 0; i < size * size; i++)
        CHECK(p2p[i] == (i == 1 ? 100ul : 0ul));

    CHECK(MPI_M_free(MPI_M_ALL_MSID) == MPI_SUCCESS);
    CHECK(MPI_M_finalize() == MPI_SUCCESS);
    free(scratch);
    free(coll);
    free(p2p);
    free(expected);
    return mpitest_finish();
}
