/* The API after MPI_Finalize, when the program never called MPI_M_finalize: every call answers
 * MPI_M_MPIT_FAIL (MPI is gone, so nothing can be done), and none aborts the process, as MPICH
 * did when the library called MPI anyway. Each rank judges itself: MPI cannot gather the verdicts
 * any more, and the launcher fails the run if one rank exits non-zero. */
#include "montest.h"

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    MPI_M_msid m, other;
    CHECK(MPI_M_init() == MPI_SUCCESS);
    CHECK(MPI_M_start(MPI_COMM_WORLD, &m) == MPI_SUCCESS);
    CHECK(MPI_M_suspend(m) == MPI_SUCCESS);
    MPI_Finalize();

    unsigned long row[2];
    char prefix[] = "/nonexistent-mpilens-dir/never";
    int provided, array_size, backend;
    CHECK(MPI_M_start(MPI_COMM_WORLD, &other) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_continue(m) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_suspend(m) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_reset(m) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_get_info(m, &provided, &array_size) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_get_backend(MPI_M_P2P_ONLY, &backend) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_get_data(m, row, row, MPI_M_P2P_ONLY) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_allgather_data(m, MPI_M_DATA_IGNORE, MPI_M_DATA_IGNORE, MPI_M_P2P_ONLY) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_rootgather_data(m, 0, MPI_M_DATA_IGNORE, MPI_M_DATA_IGNORE, MPI_M_P2P_ONLY) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_flush(m, prefix, MPI_M_P2P_ONLY) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_rootflush(m, 0, prefix, MPI_M_P2P_ONLY) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_free(m) == MPI_M_MPIT_FAIL);
    CHECK(MPI_M_finalize() == MPI_M_MPIT_FAIL);
    fprintf(stderr, check_failures ? "rank %d: FAILED: %d check(s)\n" : "rank %d: passed\n", rank, check_failures);
    return check_failures != 0;
}
